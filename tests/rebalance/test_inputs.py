"""What a rebalance plans over, from a snapshot and a spec: the sizes kept, the swap goals in
their listed order, and the refusals that name why."""

from __future__ import annotations

import pytest

from kafka_topic_operator.kafka.brokers import BrokerInfo
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot, PartitionSnapshot, TopicSnapshot
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.inputs import planning_input
from kafka_topic_operator.rebalance.planning_io import PlanningError, ProposalFailed
from kafka_topic_operator.rebalance.spec import rebalance_spec

A0, A1 = TopicPartition("a", 0), TopicPartition("a", 1)


def snapshot() -> ClusterSnapshot:
    partitions = {
        p: PartitionSnapshot(p, ReplicaAssignment.of(replicas), None)
        for p, replicas in ((0, (0, 1)), (1, (1, 2)))
    }
    return ClusterSnapshot(
        brokers={b: BrokerInfo(b, ()) for b in (0, 1, 2)},
        topics={"a": TopicSnapshot("a", None, partitions)},
    )


def test_sizes_are_kept_for_the_planned_partitions_and_the_swap_goals_in_order() -> None:
    spec = rebalance_spec({"goals": ["DiskUsageDistribution", "ReplicaDistribution",
                                     "TopicReplicaDistribution"]})  # fmt: skip
    gone = TopicPartition("deleted", 0)
    request = planning_input(snapshot(), spec, {A0: 10, A1: 20, gone: 5})
    assert request.sizes == {A0: 10, A1: 20}
    assert request.swap_goals == ("DiskUsageDistribution", "TopicReplicaDistribution")
    assert planning_input(snapshot(), rebalance_spec({})).swap_goals == ()


def test_disk_balance_without_sizes_or_with_some_missing_is_refused() -> None:
    spec = rebalance_spec({"goals": ["ReplicaDistribution", "DiskUsageDistribution"]})
    with pytest.raises(PlanningError, match="the DiskUsageDistribution goal needs partition"):
        planning_input(snapshot(), spec)
    with pytest.raises(PlanningError) as error:
        planning_input(snapshot(), spec, {A0: 10})
    assert str(error.value) == "partition sizes are missing for 1 partition (a-1)"
    # Sizes without the disk goal still tell the bytes to move.
    assert planning_input(snapshot(), rebalance_spec({}), {A0: 1, A1: 2}).sizes == {A0: 1, A1: 2}


def test_hard_goals_no_plan_can_keep_are_refused_naming_the_removed_brokers() -> None:
    spec = rebalance_spec({"mode": "remove-brokers", "brokers": [1, 2]})
    with pytest.raises(ProposalFailed) as error:
        planning_input(snapshot(), spec)
    assert str(error.value) == (
        "partition a-0 cannot keep replication factor 2: only 1 broker remains after removing "
        "1, 2 (and 1 other partition)"
    )
    assert error.value.reason == "ProposalFailed"
    request = planning_input(snapshot(), rebalance_spec({"mode": "remove-brokers", "brokers": [2]}))
    assert (request.brokers, request.removed) == ((0, 1), (2,))
