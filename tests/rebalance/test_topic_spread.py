"""TopicReplicaDistribution on the driver (`topic_spread`): on 200 random small clusters (racks,
excluded topics, a disk band to keep, only some brokers swapping) every hard goal and count is
kept, nothing goes further from its band, unmet is said exactly when it is, and an unmet plan
stops only when no single legal swap (tried by brute force) would help; on a grown cluster of
tens of thousands of replicas every topic ends within its band."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from swap_goals_testing import (
    Sizes,
    helps,
    met,
    no_further,
    one_swap_away,
    rack_legal,
    topic_misses,
)

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.exact import balance_replicas
from kafka_topic_operator.rebalance.algorithms.goals import DISK_USAGE_DISTRIBUTION as DISK
from kafka_topic_operator.rebalance.algorithms.goals import TOPIC_REPLICA_DISTRIBUTION as TOPICS
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel
from kafka_topic_operator.rebalance.algorithms.topic_spread import Spread, spread_topics
from kto_dev.yardsticks.samples import grown_cluster

Case = tuple[ClusterModel, tuple[int, ...], Sizes | None, str | None, tuple[int, ...] | None]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """Replica counts need not be even (swaps keep them as they are); racks or not; a disk band
    to keep or not; an excluded topic or none; every broker swapping or only some."""
    brokers = draw(st.integers(2, 6))
    assignment: dict[TopicPartition, tuple[int, ...]] = {}
    for t in range(draw(st.integers(1, 5))):
        rf = draw(st.integers(1, min(3, brokers)))
        for p in range(draw(st.integers(1, 7))):
            assignment[TopicPartition(f"t{t}", p)] = tuple(
                draw(st.permutations(range(brokers)))[:rf]
            )
    racks = {b: f"r{b % 3}" for b in range(brokers)} if draw(st.booleans()) else {}
    sizes = None
    if draw(st.booleans()):
        sizes = {tp: draw(st.integers(0, 1000)) for tp in sorted(assignment)}
    excluded = draw(st.sampled_from([None, "t0", "t[12]"]))
    eligible = tuple(range(brokers))
    swapping = None
    if draw(st.booleans()):
        swapping = tuple(sorted(draw(st.sets(st.sampled_from(eligible), min_size=2))))
    return ClusterModel(assignment, racks), eligible, sizes, excluded, swapping


def fixed(model: ClusterModel, excluded: str | None) -> frozenset[TopicPartition]:
    if excluded is None:
        return frozenset()
    return frozenset(tp for tp in model.assignment if re.fullmatch(excluded, tp.topic))


def spread_case(case: Case) -> Spread:
    model, brokers, sizes, excluded, swapping = case
    return spread_topics(model.assignment, brokers, racks=model.racks,
                         fixed=fixed(model, excluded), receivers=swapping, sizes=sizes)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(cases())
def test_every_guarantee_and_no_single_swap_left_that_helps(case: Case) -> None:
    model, brokers, sizes, excluded, swapping = case
    spread = spread_case(case)
    after = spread.assignment
    again = spread_case(case)  # deterministic
    assert (again.assignment, again.unbalanced) == (after, spread.unbalanced)
    # Hard goals, replication factors, excluded topics and brokers that do not swap.
    assert after.keys() == model.assignment.keys()
    for tp, replicas in after.items():
        before = model.assignment[tp]
        assert len(replicas) == len(before) == len(set(replicas))
        if tp in fixed(model, excluded):
            assert replicas == before
        if model.racks and rack_legal(model, before, brokers):
            assert rack_legal(model, replicas, brokers)
        if swapping is not None:
            assert {b for b in before if b not in swapping} <= set(replicas)
    assert model.replica_counts(after) == model.replica_counts()
    # Nothing further from its band, nor from the disk band when that goal came first.
    earlier = (DISK,) if sizes is not None else ()
    for goal in (*earlier, TOPICS):
        assert no_further(goal, model.assignment, after, sizes or {}, brokers)
    assert (spread.unbalanced is None) == met(TOPICS, after, sizes or {}, brokers)
    assert spread.report.surplus == sum(topic_misses(model.assignment, brokers).values())
    left = sum(topic_misses(after, brokers).values())
    assert spread.report.moved == spread.report.surplus - left
    assert 4 * spread.swaps >= spread.report.moved  # a swap changes four counts
    if spread.unbalanced is not None:
        assert spread.unbalanced.startswith("topic replica counts outside their bands in ")
        for option in one_swap_away(model, after, brokers, excluded, swapping):
            assert not helps(TOPICS, earlier, after, option, sizes or {}, brokers)


def test_swaps_keep_leaders_where_a_follower_can_go() -> None:
    # Broker 0 holds two replicas of t (band 1-1 on two brokers), leading t-0 and following
    # t-1; broker 1 holds u-0 and u-1. The swap sends t-1's follower, not t-0's leader.
    tp = TopicPartition
    assignment = {tp("t", 0): (0,), tp("t", 1): (2, 0), tp("u", 0): (1,), tp("u", 1): (1, 2)}
    spread = spread_topics(assignment, (0, 1))
    assert spread.unbalanced is None
    assert spread.assignment[tp("t", 0)] == (0,)
    assert spread.assignment[tp("t", 1)] == (2, 1)
    assert (spread.swaps, spread.report.moved) == (1, 4)  # t and u now 1 and 1


def test_a_count_that_no_swap_can_fix_is_named() -> None:
    # Both of t's replicas on broker 0 and nothing on broker 1 that could come back.
    tp = TopicPartition
    spread = spread_topics({tp("t", 0): (0,), tp("t", 1): (0,)}, (0, 1))
    assert spread.unbalanced == (
        "topic replica counts outside their bands in 2 places (t has 2 on broker 0 (band 1), "
        "t has 0 on broker 1 (band 1)): no legal swap brings them in"
    )


def test_a_grown_cluster_of_tens_of_thousands_of_replicas_ends_within_every_band() -> None:
    model, brokers = grown_cluster(7, 24, 8, topics=(300, 300), partitions=(20, 60))
    counted = balance_replicas(model.assignment, brokers).assignment
    assert sum(map(len, counted.values())) > 20_000
    assert sum(topic_misses(counted, brokers).values()) > 1000
    spread = spread_topics(counted, brokers)
    assert spread.unbalanced is None
    assert not any(topic_misses(spread.assignment, brokers).values())
    assert (
        ClusterModel(spread.assignment).replica_counts() == ClusterModel(counted).replica_counts()
    )
