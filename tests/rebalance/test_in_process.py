"""Plans without Spark: on random clusters (TopicReplicaDistribution too) the same plan and
result as the Spark job's, and above the exact plan's limit the Spark job's rounds take over
(and the in-process plan declines)."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest

from kafka_topic_operator.cli.plan import drain_text
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance import job
from kafka_topic_operator.rebalance.algorithms import exact
from kafka_topic_operator.rebalance.algorithms.bounds import spread
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel
from kafka_topic_operator.rebalance.in_process import plan_in_process
from kafka_topic_operator.rebalance.planning_io import PlanningInput, ProposalFailed
from kto_dev.yardsticks.samples import grown_cluster

pytestmark = [
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


def random_request(seed: int) -> PlanningInput:
    """A grown cluster, with racks or not, perhaps a drain, excluded topics or add-brokers,
    perhaps TopicReplicaDistribution."""
    rng = random.Random(seed)
    old, new = rng.randint(3, 7), rng.randint(0, 3)
    model = grown_cluster(seed, old, new, topics=(2, 6), partitions=(1, 10))[0]
    brokers = tuple(range(old + new))
    racks = {b: "abc"[b % 3] for b in brokers} if rng.random() < 0.5 else {}
    kind = rng.choice(["full", "drain", "excluded", "add"])
    assignment = dict(model.assignment)  # with racks, some partitions crowd one to begin with
    request = PlanningInput(assignment, brokers, racks=racks)
    if kind == "drain":
        gone = rng.choice(brokers[:old])
        request = PlanningInput(assignment, tuple(b for b in brokers if b != gone), racks,
                                removed=(gone,))  # fmt: skip
    elif kind == "excluded":
        topic = sorted({tp.topic for tp in assignment})[0]
        request = PlanningInput(assignment, brokers, racks, excluded_topics=topic)
    elif kind == "add" and new:
        request = PlanningInput(assignment, brokers, racks, receivers=brokers[old:])
    if rng.random() < 0.5:
        request = dataclasses.replace(request, swap_goals=("TopicReplicaDistribution",))
    return request


@pytest.mark.spark
@pytest.mark.parametrize("seed", range(16))
def test_the_plan_without_spark_is_the_spark_jobs(spark: Any, tmp_path: Path, seed: int) -> None:
    request = random_request(seed)
    try:
        alone = plan_in_process(request)
    except ProposalFailed as refused:  # an impossible drain: refused alike
        with pytest.raises(ProposalFailed) as on_spark_too:
            job.plan(spark, request, tmp_path)
        assert str(on_spark_too.value) == str(refused)
        return
    assert alone is not None
    on_spark = job.plan(spark, request, tmp_path)
    assert alone.changes == on_spark.changes
    assert alone.result == on_spark.result
    after = dict(request.assignment)
    after.update({c.partition: c.after for c in alone.changes})
    if not alone.result.unbalanced:
        assert spread(ClusterModel(after).replica_counts(), request.brokers) <= 1


@pytest.mark.spark
def test_above_the_limit_the_spark_rounds_plan_and_the_driver_declines(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = grown_cluster(3, 5, 2, topics=(2, 6), partitions=(1, 10))[0]
    request = PlanningInput(dict(model.assignment), tuple(range(7)))
    monkeypatch.setattr(exact, "EXACT_LIMIT", 10)
    assert plan_in_process(request) is None
    output = job.plan(spark, request, tmp_path)
    assert output.rounds and output.rounds[0]["phase"] == "replicas"
    assert output.result.replica_moves == output.result.replica_lower_bound


def test_disk_balance_always_goes_to_spark() -> None:
    assignment = {TopicPartition("t", p): (0, 1) for p in range(4)}
    sizes = dict.fromkeys(assignment, 100)
    for goals in [
        ("DiskUsageDistribution",),
        ("TopicReplicaDistribution", "DiskUsageDistribution"),
    ]:
        request = PlanningInput(assignment, (0, 1, 2), swap_goals=goals, sizes=sizes)
        assert plan_in_process(request) is None


def test_an_impossible_request_is_refused_without_spark() -> None:
    request = PlanningInput({TopicPartition("t", 0): (0, 1, 2)}, (0, 1), removed=(2,))
    with pytest.raises(ProposalFailed, match="cannot keep replication factor 3"):
        plan_in_process(request)
    # A broker added to rack a cannot fix a partition crowding rack a: only it takes replicas.
    racks = {0: "a", 1: "a", 2: "b", 3: "a"}
    crowded = PlanningInput({TopicPartition("t", 0): (0, 1), TopicPartition("t", 1): (1, 2)},
                            (0, 1, 2, 3), racks, receivers=(3,))  # fmt: skip
    with pytest.raises(ProposalFailed) as refused:
        plan_in_process(crowded)
    assert str(refused.value) == (
        "partition t-0 cannot place its 2 replicas with at most 1 in a rack on the brokers it "
        "may use (0, 1, 3): only the brokers being added (3) may take replicas"
    )


def test_a_drain_reports_its_moves_apart_from_those_balance_needs() -> None:
    # Broker 3 goes; brokers 0, 1 and 2 stay, broker 0 crowded: 10 replicas end 4, 3, 3.
    on = {0: 6, 1: 1, 2: 1, 3: 2}
    held = [b for b, n in on.items() for _ in range(n)]
    assignment = {TopicPartition("t", p): (b,) for p, b in enumerate(held)}
    request = PlanningInput(assignment, (0, 1, 2), removed=(3,))
    output = plan_in_process(request)
    assert output is not None
    result = output.result
    assert (result.replica_moves, result.drain_moves) == (4, 2)
    assert result.to_status()["drainReplicaMoves"] == 2
    assert drain_text(result) == " (2 off the brokers being removed, 2 to balance)"
    full = plan_in_process(PlanningInput(assignment, (0, 1, 2, 3)))
    assert full is not None
    assert full.result.drain_moves == 0
    assert "drainReplicaMoves" not in full.result.to_status()
    # As the README gives it.
    assert (result.replica_lower_bound, result.leader_moves) == (4, 4)
