"""The exact fewest replica moves for a balanced, rack-aware placement, by min-cost flow (pure;
small clusters: it is the yardstick the planners are measured against in tests).

Network (the reference page's formulation, without the per-topic tier):
source → partition p (capacity RF_p) → (p, rack k) (capacity: the replicas a rack may hold) →
broker b (capacity 1; cost 1 unless b holds p now) → sink. A broker's arc to the
sink is split in two: q units at a large negative cost, which fills every broker to q first, and
one unit at no cost for the r brokers that hold q + 1. Both constraint families nest (partition
⊃ rack ⊃ pair; broker ⊃ pair), so the integer optimum is the flow optimum. Successive shortest
paths with Bellman-Ford (costs may be negative; the network has no cycles to begin with).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_topic_operator.rebalance.bounds import balanced_counts
from kafka_topic_operator.rebalance.model import ClusterModel, max_per_rack


@dataclass
class _Edge:
    to: int
    capacity: int
    cost: int
    reverse: int  # index of the reverse edge in graph[to]


class _Network:
    def __init__(self) -> None:
        self.graph: list[list[_Edge]] = []

    def node(self) -> int:
        self.graph.append([])
        return len(self.graph) - 1

    def edge(self, a: int, b: int, capacity: int, cost: int) -> None:
        self.graph[a].append(_Edge(b, capacity, cost, len(self.graph[b])))
        self.graph[b].append(_Edge(a, 0, -cost, len(self.graph[a]) - 1))

    def min_cost_flow(self, source: int, sink: int, amount: int) -> tuple[int, int]:
        """(flow sent, total cost), sending up to `amount` along cheapest paths."""
        flow = cost = 0
        while flow < amount:
            distance = [float("inf")] * len(self.graph)
            previous: list[tuple[int, int] | None] = [None] * len(self.graph)
            distance[source] = 0
            changed = True
            while changed:  # Bellman-Ford: residual arcs may cost less than nothing
                changed = False
                for a, edges in enumerate(self.graph):
                    if distance[a] == float("inf"):
                        continue
                    for i, e in enumerate(edges):
                        if e.capacity > 0 and distance[a] + e.cost < distance[e.to]:
                            distance[e.to] = distance[a] + e.cost
                            previous[e.to] = (a, i)
                            changed = True
            if distance[sink] == float("inf"):
                break
            push, node = amount - flow, sink
            while (step := previous[node]) is not None:
                push = min(push, self.graph[step[0]][step[1]].capacity)
                node = step[0]
            node = sink
            while (step := previous[node]) is not None:
                e = self.graph[step[0]][step[1]]
                e.capacity -= push
                self.graph[e.to][e.reverse].capacity += push
                node = step[0]
            flow += push
            cost += push * int(distance[sink])
        return flow, cost


def fewest_moves(model: ClusterModel, brokers: tuple[int, ...]) -> int | None:
    """The fewest replica moves after which every partition keeps its replication factor, no
    rack holds more of a partition than allowed (when every broker has a rack), and replica
    counts over `brokers` differ by at most one; None when no such placement exists."""
    total = sum(len(r) for r in model.assignment.values())
    q = balanced_counts(total, len(brokers))[0]
    racked = model.rack_aware(brokers)
    racks = sorted({model.rack_of(b) or "" for b in brokers}) if racked else [""]
    big = total + 1  # outweighs every move: filling each broker to q comes first
    net = _Network()
    source, sink = net.node(), net.node()
    broker_node = {b: net.node() for b in brokers}
    for node in broker_node.values():
        net.edge(node, sink, q, -big)
        net.edge(node, sink, 1, 0)
    for _, replicas in sorted(model.assignment.items()):
        p = net.node()
        net.edge(source, p, len(replicas), 0)
        limit = max_per_rack(len(replicas), len(racks)) if racked else len(replicas)
        rack_node: dict[str, int] = {}
        for b in brokers:
            rack = (model.rack_of(b) or "") if racked else ""
            if rack not in rack_node:
                rack_node[rack] = net.node()
                net.edge(p, rack_node[rack], limit, 0)
            # One unit: never a broker twice in a partition.
            net.edge(rack_node[rack], broker_node[b], 1, 0 if b in replicas else 1)
    flow, cost = net.min_cost_flow(source, sink, total)
    if flow < total or cost > -big * q * len(brokers) + total:
        return None
    return cost + big * q * len(brokers)
