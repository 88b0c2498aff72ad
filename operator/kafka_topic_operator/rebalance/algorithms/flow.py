"""Maximum flow by Dinic's algorithm, the flow each arc carries, and the minimum cut it leaves
(pure).

Used by the feasibility check (a node per replication factor, rack and broker, capacities up to
millions of replicas: Dinic's running time depends on nodes and arcs, never on capacities) and by
the leader balance (a node per broker; augmenting paths are found iteratively, since the chains
of handovers can be long).
"""

from __future__ import annotations

from collections import deque


class FlowNetwork:
    """A residual graph in flat lists: arc i runs to `_head[i]`, and arc i ^ 1 is its reverse."""

    def __init__(self, nodes: int = 0) -> None:
        self._out: list[list[int]] = [[] for _ in range(nodes)]  # arc ids out of each node
        self._head: list[int] = []
        self._left: list[int] = []  # residual capacity
        self._capacity: list[int] = []

    def node(self) -> int:
        self._out.append([])
        return len(self._out) - 1

    def arc(self, a: int, b: int, capacity: int) -> int:
        """An arc a → b and its empty reverse; returns the arc, for `flow`."""
        arc = len(self._head)
        for tail, head, left in ((a, b, capacity), (b, a, 0)):
            self._out[tail].append(len(self._head))
            self._head.append(head)
            self._left.append(left)
            self._capacity.append(left)
        return arc

    def flow(self, arc: int) -> int:
        return self._capacity[arc] - self._left[arc]

    def max_flow(self, source: int, sink: int) -> int:
        """Sends the most flow it can from `source` to `sink`; returns how much."""
        total = 0
        while True:
            level = self._levels(source)
            if level[sink] < 0:
                return total
            cursor = [0] * len(self._out)  # the next arc to try out of each node
            while pushed := self._push(source, sink, level, cursor):
                total += pushed

    def source_side(self, source: int) -> set[int]:
        """The nodes the source still reaches once the flow is maximum: their arcs to the rest
        form a minimum cut."""
        return {n for n, d in enumerate(self._levels(source)) if d >= 0}

    def _levels(self, source: int) -> list[int]:
        """Breadth-first distance from `source` over arcs with capacity left (-1: unreached)."""
        level = [-1] * len(self._out)
        level[source] = 0
        queue = deque([source])
        while queue:
            node = queue.popleft()
            for arc in self._out[node]:
                if self._left[arc] > 0 and level[self._head[arc]] < 0:
                    level[self._head[arc]] = level[node] + 1
                    queue.append(self._head[arc])
        return level

    def _push(self, source: int, sink: int, level: list[int], cursor: list[int]) -> int:
        """One augmenting path along the level graph, iteratively; the flow it sent (0: none)."""
        path: list[int] = []
        node = source
        while node != sink:
            arcs = self._out[node]
            while cursor[node] < len(arcs):
                arc = arcs[cursor[node]]
                if self._left[arc] > 0 and level[self._head[arc]] == level[node] + 1:
                    break
                cursor[node] += 1
            else:
                if node == source:
                    return 0
                level[node] = -1  # a dead end for the rest of this phase
                node = self._head[path.pop() ^ 1]
                continue
            path.append(arcs[cursor[node]])
            node = self._head[path[-1]]
        amount = min(self._left[arc] for arc in path)
        for arc in path:
            self._left[arc] -= amount
            self._left[arc ^ 1] += amount
        return amount
