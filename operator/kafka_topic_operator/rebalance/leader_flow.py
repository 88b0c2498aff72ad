"""How many preferred leaderships to hand along each broker-to-broker edge (pure).

An edge a → b carries the partitions a leads and b follows: handing one over makes b lead it.
Brokers leading too many give, brokers leading too few take, and where no edge joins them
directly a chain through brokers at their target does (each of those takes one and gives one,
so its count stays). That is a maximum flow from the givers to the takers over the broker
graph; Dinic's algorithm finds the shortest chains first, so direct handovers are used before
chains of two, and so on. The graph has a node per broker, never a partition: it stays small
however many partitions there are.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping


def leadership_flows(
    edges: Mapping[tuple[int, int], int],
    surplus: Mapping[int, int],
    deficit: Mapping[int, int],
) -> dict[tuple[int, int], int]:
    """{(giver, taker): leaderships} along `edges` ({(a, b): partitions a leads and b follows})
    moving as much of `surplus` to `deficit` as the edges allow; no edge carries more than it
    holds, no broker gives more than its surplus or takes more than its deficit, every other
    broker gives as many as it takes, and never both ways along a pair."""
    nodes = sorted({n for e in edges for n in e} | set(surplus) | set(deficit))
    index = {n: i + 2 for i, n in enumerate(nodes)}  # 0: source, 1: sink
    graph = _Graph(len(nodes) + 2)
    arcs = {}
    for (a, b), capacity in sorted(edges.items()):
        if a != b and capacity > 0:
            arcs[(a, b)] = graph.add(index[a], index[b], capacity)
    for b, amount in sorted(surplus.items()):
        if amount > 0:
            graph.add(0, index[b], amount)
    for b, amount in sorted(deficit.items()):
        if amount > 0:
            graph.add(index[b], 1, amount)
    graph.max_flow(0, 1)
    flows = {pair: graph.flow(arc) for pair, arc in arcs.items()}
    out = {}
    for (a, b), f in flows.items():
        net = f - flows.get((b, a), 0)  # a handover both ways between two brokers cancels
        if net > 0:
            out[(a, b)] = net
    return out


class _Graph:
    """A residual graph in flat lists: arc i and its reverse i ^ 1."""

    def __init__(self, size: int) -> None:
        self.out: list[list[int]] = [[] for _ in range(size)]
        self.to: list[int] = []
        self.left: list[int] = []  # residual capacity
        self.capacity: list[int] = []

    def add(self, a: int, b: int, capacity: int) -> int:
        """An arc a → b and its reverse (empty); returns the arc."""
        arc = len(self.to)
        self._arc(a, b, capacity)
        self._arc(b, a, 0)
        return arc

    def _arc(self, tail: int, head: int, capacity: int) -> None:
        self.out[tail].append(len(self.to))
        self.to.append(head)
        self.left.append(capacity)
        self.capacity.append(capacity)

    def flow(self, arc: int) -> int:
        return self.capacity[arc] - self.left[arc]

    def max_flow(self, source: int, sink: int) -> None:
        while True:
            level = self._levels(source)
            if level[sink] < 0:
                return
            cursor = [0] * len(self.out)
            while self._push(source, sink, level, cursor):
                pass

    def _levels(self, source: int) -> list[int]:
        level = [-1] * len(self.out)
        level[source] = 0
        queue = deque([source])
        while queue:
            node = queue.popleft()
            for arc in self.out[node]:
                if self.left[arc] > 0 and level[self.to[arc]] < 0:
                    level[self.to[arc]] = level[node] + 1
                    queue.append(self.to[arc])
        return level

    def _push(self, source: int, sink: int, level: list[int], cursor: list[int]) -> bool:
        """One augmenting path along the level graph (iterative: chains can be long)."""
        path: list[int] = []
        node = source
        while node != sink:
            arcs = self.out[node]
            while cursor[node] < len(arcs):
                arc = arcs[cursor[node]]
                if self.left[arc] > 0 and level[self.to[arc]] == level[node] + 1:
                    break
                cursor[node] += 1
            else:
                if node == source:
                    return False
                level[node] = -1  # a dead end for the rest of this phase
                node = self.to[path.pop() ^ 1]
                continue
            path.append(arcs[cursor[node]])
            node = self.to[path[-1]]
        amount = min(self.left[arc] for arc in path)
        for arc in path:
            self.left[arc] -= amount
            self.left[arc ^ 1] += amount
        return True
