"""DiskUsageDistribution on Spark, on the shared local session, in turn with
TopicReplicaDistribution (on the driver) as the job runs them: their guarantees on random small
clusters (hypothesis, few examples: each costs Spark rounds), determinism, and how well they do
on grown clusters beside the reference planner."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from swap_goals_testing import (
    Sizes,
    from_frame,
    grown_with_sizes,
    loads,
    met,
    no_further,
    rack_legal,
    to_frame,
    topic_misses,
)

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.goals import DISK_USAGE_DISTRIBUTION as DISK
from kafka_topic_operator.rebalance.algorithms.goals import TOPIC_REPLICA_DISTRIBUTION as TOPICS
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel
from kafka_topic_operator.rebalance.algorithms.topic_spread import spread_topics
from kafka_topic_operator.rebalance.spark.planner import plan_counts
from kafka_topic_operator.rebalance.spark.swaps import plan_disk_usage
from kto_dev.yardsticks.reference_planner import PlanRequest, plan

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


def sizes_frame(spark: Any, sizes: Sizes) -> Any:
    rows = [(tp.topic, tp.partition, size) for tp, size in sorted(sizes.items())]
    return spark.createDataFrame(rows, "topic string, partition int, size long")


def swapped(
    spark: Any,
    model: ClusterModel,
    brokers: tuple[int, ...],
    sizes: Sizes,
    goals: tuple[str, ...],
    excluded: str | None = None,
) -> list[tuple[Any, str | None]]:
    """The replica table and what went unmet after each goal in turn, as the job runs them."""
    racks = dict(model.racks) or None
    frame, size_table = to_frame(spark, model.assignment), sizes_frame(spark, sizes)
    out = []
    for i, goal in enumerate(goals):
        if goal == TOPICS:
            fixed = frozenset(
                tp
                for tp in model.assignment
                if excluded is not None and re.fullmatch(excluded, tp.topic)
            )
            spread = spread_topics(from_frame(frame), brokers, racks=racks, fixed=fixed,
                                   sizes=sizes if DISK in goals[:i] else None)  # fmt: skip
            out.append((to_frame(spark, spread.assignment), spread.unbalanced))
            frame = out[-1][0]
            continue
        done = plan_disk_usage(spark, frame, brokers, size_table, racks=racks,
                               excluded=excluded, guard_topics=TOPICS in goals[:i])  # fmt: skip
        frame = done.replicas
        out.append((frame, done.unbalanced))
    return out


@st.composite
def cases(draw: st.DrawFn) -> tuple[ClusterModel, tuple[int, ...], Sizes, tuple[str, ...]]:
    """A small cluster (its counts need not be even: swaps keep them as they are), racks or
    not, sizes, and the swap goals in either order."""
    brokers = draw(st.integers(2, 5))
    assignment: dict[TopicPartition, tuple[int, ...]] = {}
    for t in range(draw(st.integers(1, 4))):
        rf = draw(st.integers(1, min(3, brokers)))
        for p in range(draw(st.integers(1, 6))):
            assignment[TopicPartition(f"t{t}", p)] = tuple(
                draw(st.permutations(range(brokers)))[:rf]
            )
    racks = {b: f"r{b % 2}" for b in range(brokers)} if draw(st.booleans()) else {}
    sizes = {tp: draw(st.integers(0, 1000)) for tp in sorted(assignment)}
    goals = draw(st.sampled_from([(TOPICS,), (DISK,), (TOPICS, DISK), (DISK, TOPICS)]))
    return ClusterModel(assignment, racks), tuple(range(brokers)), sizes, goals


@settings(max_examples=6, deadline=None)
@given(cases())
def test_the_spark_swap_goals_keep_every_guarantee(
    spark: Any, case: tuple[ClusterModel, tuple[int, ...], Sizes, tuple[str, ...]]
) -> None:
    model, brokers, sizes, goals = case
    excluded = "t0"
    steps = swapped(spark, model, brokers, sizes, goals, excluded)
    found = dict(model.assignment)
    for goal, (frame, unbalanced) in zip(goals, steps, strict=True):
        now = from_frame(frame)
        # Hard goals, replication factors, excluded topics, and every broker's count.
        assert now.keys() == found.keys()
        for tp, replicas in now.items():
            assert len(replicas) == len(found[tp]) == len(set(replicas))
            if re.fullmatch(excluded, tp.topic):
                assert replicas == model.assignment[tp]
            if model.racks and rack_legal(model, found[tp], brokers):
                assert rack_legal(model, replicas, brokers)
        assert model.replica_counts(now) == model.replica_counts()
        # Nothing further from the goal's band, nor from the earlier goals'; unmet said.
        for done in goals[: goals.index(goal) + 1]:
            assert no_further(done, found, now, sizes, brokers)
        assert (unbalanced is None) == met(goal, now, sizes, brokers)
        found = now


def test_the_same_input_swaps_the_same(spark: Any) -> None:
    model, brokers, sizes = grown_with_sizes(1)
    goals = (TOPICS, DISK)
    first = [from_frame(f) for f, _ in swapped(spark, model, brokers, sizes, goals)]
    again = [from_frame(f) for f, _ in swapped(spark, model, brokers, sizes, goals)]
    assert first == again


@pytest.mark.parametrize("seed", [0, 3, 6])
def test_on_grown_clusters_spark_meets_both_goals_about_as_cheaply_as_the_reference(
    spark: Any, seed: int
) -> None:
    model, brokers, sizes = grown_with_sizes(seed)
    counted = from_frame(plan_counts(spark, to_frame(spark, model.assignment), brokers).replicas)
    goals = (TOPICS, DISK)
    steps = swapped(spark, ClusterModel(counted), brokers, sizes, goals)
    after = from_frame(steps[-1][0])
    assert [unbalanced for _, unbalanced in steps] == [None, None]
    assert not any(topic_misses(after, brokers).values())
    assert met(DISK, after, sizes, brokers)
    assert model.replica_counts(after) == model.replica_counts(counted)
    # The reference planner from the same balanced counts: swaps only.
    reference = plan(PlanRequest(ClusterModel(counted), brokers, swap_goals=goals, sizes=sizes))
    ours = sum(len(set(after[tp]) - set(counted[tp])) for tp in after)
    assert ours <= 1.5 * reference.replica_moves + 4


def test_the_swaps_of_a_route_never_carry_a_broker_past_the_mean(spark: Any) -> None:
    # 130 bytes against 30: two swaps of 60 for 10 would each fit the 50 to move, together
    # they would carry broker 0 to 30. One swap balances both at 80.
    tp = TopicPartition
    assignment = {tp("a", 0): (0,), tp("a", 1): (0,), tp("a", 2): (0,),
                  tp("b", 0): (1,), tp("b", 1): (1,), tp("b", 2): (1,)}  # fmt: skip
    sizes = {tp("a", 0): 60, tp("a", 1): 60, tp("a", 2): 10,
             tp("b", 0): 10, tp("b", 1): 10, tp("b", 2): 10}  # fmt: skip
    done = plan_disk_usage(spark, to_frame(spark, assignment), (0, 1), sizes_frame(spark, sizes),
                           max_rounds=3)  # fmt: skip
    after = from_frame(done.replicas)
    assert done.unbalanced is None
    assert loads(after, sizes, (0, 1)) == {0: 80, 1: 80}
    assert [r.moved for r in done.rounds] == [50]  # bytes shifted in the one round
