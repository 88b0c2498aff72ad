"""The Spark count planner against the lower bound and the reference planner, on a shared local
session."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.bounds import move_lower_bound, spread, targets
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel, max_per_rack, moves
from kafka_topic_operator.rebalance.spark.planner import plan_counts, plan_leaders
from kto_dev.yardsticks.samples import grown_cluster

# PySpark leaves its Python-JVM sockets to the garbage collector (collected after each Spark
# test by conftest.py): their warnings are PySpark's, not this project's.
pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


def grown(seed: int, old: int, new: int) -> ClusterModel:
    return grown_cluster(seed, old, new, topics=(3, 10), partitions=(1, 20), racks=3)[0]


def to_frame(spark: Any, model: ClusterModel) -> Any:
    rows = [(tp.topic, tp.partition, i, b) for tp, replicas in model.assignment.items()
            for i, b in enumerate(replicas)]  # fmt: skip
    return spark.createDataFrame(rows, "topic string, partition int, position int, broker int")


def from_frame(frame: Any) -> dict[TopicPartition, tuple[int, ...]]:
    by_partition: dict[TopicPartition, dict[int, int]] = {}
    for row in frame.collect():
        by_partition.setdefault(TopicPartition(row.topic, row.partition), {})[row.position] = (
            row.broker
        )
    return {tp: tuple(p[i] for i in sorted(p)) for tp, p in by_partition.items()}


def test_targets_give_the_extra_slots_to_the_fullest() -> None:
    assert targets({0: 7, 1: 6, 2: 0, 3: 0}, [0, 1, 2, 3]) == {0: 4, 1: 3, 2: 3, 3: 3}
    assert targets({0: 5, 9: 4}, [0, 1, 2]) == {0: 3, 1: 3, 2: 3, 9: 0}


@pytest.mark.parametrize(("seed", "old", "new"), [(1, 5, 1), (2, 6, 2), (3, 9, 3), (4, 4, 0)])
def test_the_moves_are_the_lower_bound_and_counts_balance(
    spark: Any, seed: int, old: int, new: int
) -> None:
    model = ClusterModel(grown(seed, old, new).assignment)
    brokers = tuple(range(old + new))
    result = plan_counts(spark, to_frame(spark, model), brokers)
    after = from_frame(result.replicas)
    assert result.unbalanced is None
    assert after.keys() == model.assignment.keys()
    for tp, replicas in after.items():
        assert len(replicas) == len(model.assignment[tp]) == len(set(replicas))
    assert moves(model.assignment, after) == move_lower_bound(model.replica_counts(), brokers)
    assert spread(model.replica_counts(after), brokers) <= 1
    # Deterministic: the same input plans the same moves.
    again = from_frame(plan_counts(spark, to_frame(spark, model), brokers).replicas)
    assert again == after


def test_a_drained_broker_is_emptied(spark: Any) -> None:
    model = ClusterModel(grown(5, 6, 0).assignment)
    result = plan_counts(spark, to_frame(spark, model), (0, 1, 2, 3, 4))
    after = from_frame(result.replicas)
    counts = model.replica_counts(after)
    assert counts[5] == 0 and spread(counts, range(5)) <= 1
    assert moves(model.assignment, after) >= move_lower_bound(model.replica_counts(), range(5))


def test_with_racks_no_partition_crowds_a_rack(spark: Any) -> None:
    model = grown(6, 6, 3)  # racks r0, r1, r2 of three brokers each
    brokers = tuple(range(9))
    # Start rack-aware, as Kafka's rack-aware placement would: only new brokers are empty.
    racked = {tp: r for tp, r in model.assignment.items()
              if len({b % 3 for b in r}) == len(r)}  # fmt: skip
    model = ClusterModel(racked, model.racks)
    result = plan_counts(spark, to_frame(spark, model), brokers, racks=dict(model.racks))
    after = from_frame(result.replicas)
    assert result.unbalanced is None
    for replicas in after.values():
        per_rack = Counter(b % 3 for b in replicas)
        assert max(per_rack.values()) <= max_per_rack(len(replicas), 3)
    assert spread(model.replica_counts(after), brokers) <= 1


@pytest.mark.parametrize(("seed", "old", "new"), [(1, 5, 1), (2, 6, 2), (3, 9, 3)])
def test_leaders_balance_by_reordering_after_the_moves(
    spark: Any, seed: int, old: int, new: int
) -> None:
    model = ClusterModel(grown(seed, old, new).assignment)
    brokers = tuple(range(old + new))
    placed = plan_counts(spark, to_frame(spark, model), brokers)
    placed_assignment = from_frame(placed.replicas)
    result = plan_leaders(spark, placed.replicas, brokers)
    after = from_frame(result.replicas)
    assert result.unbalanced is None
    for tp, replicas in after.items():
        assert sorted(replicas) == sorted(placed_assignment[tp])  # only the order changed
    assert spread(model.leader_counts(after), brokers) <= 1
    assert spread(model.replica_counts(after), brokers) <= 1
    assert moves(model.assignment, after) == move_lower_bound(model.replica_counts(), brokers)


def test_leaders_pass_along_a_chain_where_no_direct_swap_exists(spark: Any) -> None:
    # Broker 0 leads three partitions only broker 1 follows, broker 2 leads one: no partition
    # joins 0 and 2, but 1 can take one of 0's and hand one of its own to 2.
    before = {
        TopicPartition("a", 0): (0, 1),
        TopicPartition("a", 1): (0, 1),
        TopicPartition("a", 2): (0, 1),
        TopicPartition("b", 0): (1, 2),
        TopicPartition("b", 1): (1, 0),
        TopicPartition("c", 0): (2, 0),
    }
    model = ClusterModel(before)
    result = plan_leaders(spark, to_frame(spark, model), (0, 1, 2))
    after = from_frame(result.replicas)
    assert result.unbalanced is None
    assert model.leader_counts(after) == {0: 2, 1: 2, 2: 2}
    assert sum(after[tp][0] != before[tp][0] for tp in before) == 2  # 0 hands one to 1, 1 one to 2
    assert all(sorted(after[tp]) == sorted(before[tp]) for tp in before)


def round_robin(partitions: int, brokers: int) -> ClusterModel:
    """Kafka's placement with a per-topic shift, as the scale benchmark places its replicas."""
    assignment = {}
    for i in range(partitions):
        topic = i // 50
        shift = 1 + topic % (brokers - 1)
        assignment[TopicPartition(f"t{topic}", i % 50)] = tuple(
            (i + k * shift) % brokers for k in range(3)
        )
    return ClusterModel(assignment)


def test_leaders_balance_where_direct_swaps_stall(spark: Any) -> None:
    # Direct swaps alone stop here with leader counts spread by 4.
    model = round_robin(2_000, 60)
    brokers = tuple(range(72))  # twelve brokers added empty
    placed = plan_counts(spark, to_frame(spark, model), brokers)
    result = plan_leaders(spark, placed.replicas, brokers)
    after = from_frame(result.replicas)
    assert result.unbalanced is None
    assert spread(model.leader_counts(after), brokers) <= 1
    assert spread(model.replica_counts(after), brokers) <= 1
    placed_assignment = from_frame(placed.replicas)
    assert all(sorted(after[tp]) == sorted(placed_assignment[tp]) for tp in after)
