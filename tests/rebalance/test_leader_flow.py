"""Leaderships handed along the broker graph: a maximum flow within the edges, the givers'
surplus and the takers' deficit, checked against the minimum cut found by brute force."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given
from hypothesis import strategies as st

from kafka_topic_operator.rebalance.algorithms.leader_flow import leadership_flows


def test_a_direct_handover_is_used_before_a_chain() -> None:
    edges = {(0, 2): 5, (0, 1): 5, (1, 2): 5}
    assert leadership_flows(edges, {0: 2}, {2: 2}) == {(0, 2): 2}


def test_a_chain_through_a_broker_at_its_target_where_no_edge_joins_giver_and_taker() -> None:
    # 0 leads partitions only 1 follows; 1 leads partitions 2 follows: 1 takes one, gives one.
    edges = {(0, 1): 3, (1, 2): 1, (2, 0): 4}
    assert leadership_flows(edges, {0: 2}, {2: 2}) == {(0, 1): 1, (1, 2): 1}


def test_nothing_flows_without_a_path() -> None:
    assert leadership_flows({(1, 0): 4}, {0: 1}, {1: 1}) == {}
    assert leadership_flows({}, {0: 1}, {1: 1}) == {}


def test_a_long_chain() -> None:
    edges = {(b, b + 1): 1 for b in range(500)}
    assert leadership_flows(edges, {0: 1}, {500: 1}) == edges


@st.composite
def networks(draw: st.DrawFn) -> tuple[dict[tuple[int, int], int], dict[int, int], dict[int, int]]:
    n = draw(st.integers(2, 7))
    pairs = [(a, b) for a in range(n) for b in range(n) if a != b]
    edges = draw(st.dictionaries(st.sampled_from(pairs), st.integers(0, 4), max_size=len(pairs)))
    roles = draw(st.lists(st.sampled_from(("give", "take", "stay")), min_size=n, max_size=n))
    amounts = draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
    surplus = {b: amounts[b] for b in range(n) if roles[b] == "give"}
    deficit = {b: amounts[b] for b in range(n) if roles[b] == "take"}
    return edges, surplus, deficit


def min_cut(
    edges: dict[tuple[int, int], int], surplus: dict[int, int], deficit: dict[int, int]
) -> int:
    nodes = sorted({n for e in edges for n in e} | set(surplus) | set(deficit))
    best = sum(surplus.values())
    for size in range(len(nodes) + 1):
        for side in map(set, combinations(nodes, size)):  # the source's side of the cut
            cut = sum(a for b, a in surplus.items() if b not in side)
            cut += sum(a for b, a in deficit.items() if b in side)
            cut += sum(c for (a, b), c in edges.items() if a in side and b not in side)
            best = min(best, cut)
    return best


@given(networks())
def test_the_flow_is_legal_and_maximal(
    network: tuple[dict[tuple[int, int], int], dict[int, int], dict[int, int]],
) -> None:
    edges, surplus, deficit = network
    flows = leadership_flows(edges, surplus, deficit)
    net: dict[int, int] = {}  # leaderships given minus taken
    for (a, b), f in flows.items():
        assert 0 < f <= edges[(a, b)]
        assert (b, a) not in flows
        net[a] = net.get(a, 0) + f
        net[b] = net.get(b, 0) - f
    for b, given_away in net.items():
        if b in surplus:
            assert 0 <= given_away <= surplus[b]
        elif b in deficit:
            assert 0 <= -given_away <= deficit[b]
        else:
            assert given_away == 0
    assert sum(v for v in net.values() if v > 0) == min_cut(edges, surplus, deficit)
