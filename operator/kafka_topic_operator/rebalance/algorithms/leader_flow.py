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

from collections.abc import Mapping

from kafka_topic_operator.rebalance.algorithms.flow import FlowNetwork


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
    graph = FlowNetwork(len(nodes) + 2)
    arcs = {}
    for (a, b), capacity in sorted(edges.items()):
        if a != b and capacity > 0:
            arcs[(a, b)] = graph.arc(index[a], index[b], capacity)
    for b, amount in sorted(surplus.items()):
        if amount > 0:
            graph.arc(0, index[b], amount)
    for b, amount in sorted(deficit.items()):
        if amount > 0:
            graph.arc(index[b], 1, amount)
    graph.max_flow(0, 1)
    flows = {pair: graph.flow(arc) for pair, arc in arcs.items()}
    out = {}
    for (a, b), f in flows.items():
        net = f - flows.get((b, a), 0)  # a handover both ways between two brokers cancels
        if net > 0:
            out[(a, b)] = net
    return out
