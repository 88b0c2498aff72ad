"""Maximum flow by Dinic's algorithm, and the minimum cut it leaves (pure).

For the feasibility check's small networks (a node per replication factor, rack and broker, not
per partition), whose capacities may be millions of replicas: Dinic's running time depends on
the nodes and arcs only, never on the capacities.
"""

from __future__ import annotations

from collections import deque


class FlowNetwork:
    def __init__(self) -> None:
        # Arc i runs to _head[i]; arc i ^ 1 is its reverse (capacity 0 to begin with).
        self._head: list[int] = []
        self._left: list[int] = []  # residual capacity
        self._arcs: list[list[int]] = []  # arc ids out of each node

    def node(self) -> int:
        self._arcs.append([])
        return len(self._arcs) - 1

    def arc(self, a: int, b: int, capacity: int) -> None:
        for tail, head, left in ((a, b, capacity), (b, a, 0)):
            self._arcs[tail].append(len(self._head))
            self._head.append(head)
            self._left.append(left)

    def max_flow(self, source: int, sink: int) -> int:
        flow = 0
        while (level := self._levels(source)).get(sink) is not None:
            following = [0] * len(self._arcs)  # the next arc to try out of each node
            while pushed := self._push(source, sink, None, level, following):
                flow += pushed
        return flow

    def source_side(self, source: int) -> set[int]:
        """The nodes the source still reaches once the flow is maximum: their arcs to the rest
        form a minimum cut."""
        return set(self._levels(source))

    def _levels(self, source: int) -> dict[int, int]:
        """Breadth-first distance from `source` over arcs with capacity left."""
        level = {source: 0}
        queue = deque([source])
        while queue:
            a = queue.popleft()
            for i in self._arcs[a]:
                b = self._head[i]
                if self._left[i] > 0 and b not in level:
                    level[b] = level[a] + 1
                    queue.append(b)
        return level

    def _push(self, a: int, sink: int, limit: int | None, level: dict[int, int],
              following: list[int]) -> int:  # fmt: skip
        """Flow sent from `a` to `sink` along one path of the level graph (0: none left)."""
        if a == sink:
            return limit if limit is not None else 0
        arcs = self._arcs[a]
        while following[a] < len(arcs):
            i = arcs[following[a]]
            b = self._head[i]
            if self._left[i] > 0 and level.get(b) == level[a] + 1:
                room = self._left[i] if limit is None else min(limit, self._left[i])
                pushed = self._push(b, sink, room, level, following)
                if pushed:
                    self._left[i] -= pushed
                    self._left[i ^ 1] += pushed
                    return pushed
            following[a] += 1
        return 0
