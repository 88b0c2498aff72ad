"""The exact planner: on random small clusters (racks of unequal size, mixed replication factors,
skewed placements, brokers drained and added, capacity limits, excluded topics) every plan keeps
the hard goals and equals the best assignment found by trying them all: the most even counts,
then the fewest moves; leaders the same way."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from brute_force import best_leaders, best_replicas
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.exact import (
    NoPlacement,
    balance_leaders,
    balance_replicas,
    fewest_moves,
)
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel, max_per_rack, moves


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


@dataclass(frozen=True)
class Case:
    assignment: dict[TopicPartition, tuple[int, ...]]
    brokers: tuple[int, ...]
    racks: dict[int, str] = field(default_factory=dict)
    fixed: frozenset[TopicPartition] = frozenset()
    receivers: tuple[int, ...] | None = None
    ceiling: int | None = None


@st.composite
def cases(draw: st.DrawFn) -> Case:
    registered = list(range(draw(st.integers(2, 6))))
    drained = draw(st.lists(st.sampled_from(registered), unique=True, max_size=1))
    eligible = tuple(b for b in registered if b not in drained)
    racks = {}
    if draw(st.booleans()):  # racks of unequal size, some perhaps empty after the drain
        racks = {b: draw(st.sampled_from("abc")) for b in registered}
    # Skewed: partitions start on a few brokers (some perhaps drained), new brokers empty.
    crowded = draw(st.lists(st.sampled_from(registered), unique=True, min_size=1))
    assignment = {}
    for p in range(draw(st.integers(1, 4))):
        rf = draw(st.integers(1, min(3, len(registered))))
        pool = crowded if len(crowded) >= rf else registered
        replicas = tuple(draw(st.permutations(pool))[:rf])
        assignment[tp(draw(st.sampled_from(["audit", "orders", "logs"])), p)] = replicas
    fixed = frozenset(t for t in assignment if t.topic == "audit" and draw(st.booleans()))
    receivers = None
    if draw(st.booleans()):  # add-brokers: only these take replicas
        receivers = tuple(draw(st.lists(st.sampled_from(eligible), unique=True, min_size=1)))
    ceiling = draw(st.none() | st.integers(1, 5))
    return Case(assignment, eligible, racks, fixed, receivers, ceiling)


def check_hard_goals(case: Case, after: dict[TopicPartition, tuple[int, ...]]) -> None:
    eligible = set(case.brokers)
    rack_count = len({case.racks[b] for b in eligible}) if case.racks else 1
    takers = eligible if case.receivers is None else set(case.receivers)
    for partition, before in case.assignment.items():
        replicas = after[partition]
        if partition in case.fixed:
            assert replicas == before
            continue
        assert len(replicas) == len(set(replicas)) == len(before)
        assert all(b in eligible and (b in takers or b in before) for b in replicas)
        if case.racks:
            crowd = max(Counter(case.racks[b] for b in replicas).values())
            assert crowd <= max_per_rack(len(before), rack_count)
    counts = Counter(b for r in after.values() for b in r)
    if case.ceiling is not None:
        assert max(counts[b] for b in eligible) <= case.ceiling


@settings(max_examples=300, deadline=None)
@given(cases())
def test_the_plan_is_the_best_of_every_assignment(case: Case) -> None:
    best = best_replicas(case.assignment, case.brokers, case.racks, case.fixed, case.receivers,
                         case.ceiling)  # fmt: skip
    try:
        plan = balance_replicas(
            case.assignment,
            case.brokers,
            racks=case.racks,
            fixed=case.fixed,
            receivers=case.receivers,
            max_replicas_per_broker=case.ceiling,
        )
    except NoPlacement:
        assert best is None
        return
    assert best is not None
    check_hard_goals(case, plan.assignment)
    counts = Counter(b for r in plan.assignment.values() for b in r)
    assert (max(counts[b] for b in case.brokers), min(counts[b] for b in case.brokers)) == (
        plan.high,
        plan.low,
    )
    assert (plan.high, plan.low, moves(case.assignment, plan.assignment)) == best
    # Leaders next, on the placement just planned: the most even, then the fewest changes.
    leaders = balance_leaders(case.assignment, plan.assignment, case.brokers, fixed=case.fixed)
    for partition, replicas in leaders.assignment.items():
        assert sorted(replicas) == sorted(plan.assignment[partition])
        if partition in case.fixed:
            assert replicas == plan.assignment[partition]
    led = Counter(r[0] for r in leaders.assignment.values())
    changes = sum(1 for t, r in leaders.assignment.items() if r[0] != case.assignment[t][0])
    assert (leaders.high, leaders.low) == (
        max(led[b] for b in case.brokers),
        min(led[b] for b in case.brokers),
    )
    assert (leaders.high, leaders.low, changes) == best_leaders(
        case.assignment, plan.assignment, case.brokers, case.fixed
    )


def test_a_rack_violation_is_fixed_with_the_fewest_moves() -> None:
    # Both partitions sit in one rack: each must move one replica to the other rack.
    racks = {0: "a", 1: "a", 2: "b", 3: "b"}
    before = {tp("t", 0): (0, 1), tp("t", 1): (2, 3)}
    plan = balance_replicas(before, (0, 1, 2, 3), racks=racks)
    assert moves(before, plan.assignment) == 2
    assert all(len({racks[b] for b in r}) == 2 for r in plan.assignment.values())
    # The leader replica stays, and a moved replica takes the place of the one it replaces.
    assert [r[0] for r in plan.assignment.values()] == [0, 2]


def test_three_empty_brokers_in_three_racks_are_filled_to_within_one() -> None:
    # 9 brokers over racks a, b, c hold 60 rack-aware partitions; 3 empty ones join, one a rack.
    racks = {b: "abc"[b % 3] for b in range(12)}
    before = {tp("t", p): (p % 9, (p + 4) % 9, (p + 8) % 9) for p in range(60)}
    assert all(len({racks[b] for b in r}) == 3 for r in before.values())
    plan = balance_replicas(before, tuple(range(12)), racks=racks)
    counts = Counter(b for r in plan.assignment.values() for b in r)
    assert (plan.low, plan.high) == (15, 15) and set(counts.values()) == {15}
    assert moves(before, plan.assignment) == 45  # what the new brokers take: the lower bound


def test_a_capacity_limit_keeps_the_band_as_even_as_it_allows() -> None:
    # Broker 2 may only keep what it has (add-brokers to 3): counts cannot be within one.
    before = {tp("t", p): (0, 1, 2) for p in range(6)}
    plan = balance_replicas(before, (0, 1, 2, 3), receivers=(3,))
    assert (plan.low, plan.high) == (4, 5)
    assert moves(before, plan.assignment) == 4
    # A ceiling below the even share cannot be kept: no placement.
    try:
        balance_replicas(before, (0, 1, 2, 3), max_replicas_per_broker=4)
    except NoPlacement:
        pass
    else:
        raise AssertionError("18 replicas fit 4 brokers of 4 each")


def test_fewest_moves_answers_none_when_within_one_is_out_of_reach() -> None:
    model = ClusterModel({tp("t", 0): (0, 1), tp("t", 1): (0, 1)}, {0: "a", 1: "a", 2: "b"})
    assert fewest_moves(model, (0, 1, 2)) == 2
    # Rack a is broker 0 alone: it holds every partition, 3 against 1 on the others.
    lone = {tp("t", p): (1, 2) for p in range(3)}
    assert fewest_moves(ClusterModel(lone, {0: "a", 1: "b", 2: "b", 3: "b"}), (0, 1, 2, 3)) is None
