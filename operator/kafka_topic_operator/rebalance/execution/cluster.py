"""What a KafkaRebalance needs of the cluster, whichever way it is reached.

Planning reads the whole cluster once (`snapshot`); the executor reads the plan's partitions
before each step (`now`), throttles replication while data moves (KIP-73: the throttled-replica
lists of the moving topics and the rates of the brokers involved, as kafka-reassign-partitions
sets and removes them), submits a batch of reassignments or preferred leader elections, and
waits until what is in flight is done.

Two implementations: ZooKeeper (`execution.zookeeper`: the znodes kafka-reassign-partitions and
kafka-preferred-replica-election write, watched) and Kafka's Admin API (`execution.admin_api`:
AlterPartitionReassignments, IncrementalAlterConfigs, ElectLeaders, ListPartitionReassignments
polled), for KRaft clusters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from kafka_topic_operator.kafka.snapshot import ClusterSnapshot
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.execution.steps import ClusterNow
from kafka_topic_operator.rebalance.results.summary import PartitionMove


class RebalanceCluster(Protocol):
    def snapshot(self) -> ClusterSnapshot:
        """The brokers and every topic in full, to plan over."""

    def now(self, plan: Sequence[PartitionMove]) -> ClusterNow:
        """The plan's partitions as they are, and what is in flight (anyone's)."""

    def set_throttles(self, batch: Sequence[PartitionMove], rate: int) -> None:
        """The batch's replicas added to its topics' throttled-replica lists, and `rate` (bytes
        a second) on every broker sending or receiving."""

    def clear_throttles(self, plan: Sequence[PartitionMove]) -> None:
        """The throttled-replica lists of the plan's topics and the rates of its brokers
        removed, where set."""

    def reassign(self, targets: Mapping[TopicPartition, Sequence[int]]) -> bool:
        """Submits the reassignments; False when another request got there first (nothing was
        submitted: the next read shows it in flight)."""

    def elect_preferred(self, partitions: Sequence[TopicPartition]) -> bool:
        """Asks for the preferred leaders; False when another request got there first."""

    def wait_in_flight(self, now: ClusterNow, timeout: float) -> bool:
        """Until what `now` shows in flight is done (True), at most `timeout` seconds (False)."""


def now_of(snapshot: ClusterSnapshot, election_pending: bool) -> ClusterNow:
    """The executor's view of a snapshot: each partition's replicas and leader, and the
    partitions being reassigned (requested and not yet taken up, or moving)."""
    assignment: dict[TopicPartition, tuple[int, ...]] = {}
    leaders: dict[TopicPartition, int] = {}
    reassigning = set(snapshot.pending_reassignments)
    for name, topic in snapshot.topics.items():
        for p, partition in topic.partitions.items():
            tp = TopicPartition(name, p)
            assignment[tp] = partition.replicas
            leaders[tp] = partition.leader
            if partition.assignment.is_being_reassigned:
                reassigning.add(tp)
    return ClusterNow(assignment, leaders, frozenset(reassigning), election_pending)
