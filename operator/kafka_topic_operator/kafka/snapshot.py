"""A point-in-time view of a ZooKeeper-mode cluster as Kafka's znodes describe it.

Pure data plus derived questions (is a partition online, under-replicated, why does a deletion
wait); `zk.snapshot_reader` fills it from ZooKeeper, `describe` and the operator's status read it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from kafka_topic_operator.kafka.brokers import BrokerInfo
from kafka_topic_operator.kafka.leader_and_isr import LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.topic_partition import TopicPartition


class PartitionStatus(StrEnum):
    """What a reader can tell from the znodes (the controller's own states live in memory)."""

    ONLINE = "Online"  # a leader that is a live broker
    OFFLINE = "Offline"  # a state znode, but no live leader
    NEW = "New"  # no state znode yet: the controller has not brought it online


@dataclass(frozen=True, slots=True)
class PartitionSnapshot:
    partition: int
    assignment: ReplicaAssignment
    state: LeaderIsrAndControllerEpoch | None
    state_version: int | None = None

    @property
    def replicas(self) -> tuple[int, ...]:
        return self.assignment.replicas

    @property
    def leader(self) -> int:
        return self.state.leader_and_isr.leader if self.state else -1

    @property
    def isr(self) -> tuple[int, ...]:
        return self.state.leader_and_isr.isr if self.state else ()

    def status(self, live_brokers: frozenset[int]) -> PartitionStatus:
        if self.state is None:
            return PartitionStatus.NEW
        return PartitionStatus.ONLINE if self.leader in live_brokers else PartitionStatus.OFFLINE

    def under_replicated(self) -> bool:
        return self.state is not None and len(self.isr) < len(self.assignment.target_replicas)

    def offline_replicas(self, live_brokers: frozenset[int]) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in live_brokers)


@dataclass(frozen=True, slots=True)
class TopicSnapshot:
    name: str
    topic_id: str | None
    partitions: Mapping[int, PartitionSnapshot]
    config: Mapping[str, str] = field(default_factory=dict)
    marked_for_deletion: bool = False

    @property
    def replication_factor(self) -> int:
        first = self.partitions.get(0)
        return len(first.assignment.target_replicas) if first else 0

    @property
    def being_reassigned(self) -> tuple[int, ...]:
        return tuple(
            p for p, s in sorted(self.partitions.items()) if s.assignment.is_being_reassigned
        )


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    brokers: Mapping[int, BrokerInfo]
    topics: Mapping[str, TopicSnapshot]
    controller_id: int | None = None
    controller_epoch: int | None = None
    pending_reassignments: Mapping[TopicPartition, tuple[int, ...]] = field(default_factory=dict)
    pending_preferred_elections: frozenset[TopicPartition] = frozenset()
    deletion_markers: frozenset[str] = frozenset()
    problems: tuple[str, ...] = ()
    """Znodes that could not be read (malformed JSON written by someone else), with their paths."""
    topic_names: frozenset[str] = frozenset()
    """Every topic in the cluster, also those the snapshot was not asked to read."""
    unreadable: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per topic, its znodes among `problems` (its own, its config, its partition states)."""

    @property
    def live_brokers(self) -> frozenset[int]:
        return frozenset(self.brokers)

    def deletion_blockers(self, topic: str) -> list[str]:
        """Why TopicDeletionManager would not finish deleting `topic` now (empty: nothing)."""
        snapshot = self.topics.get(topic)
        if snapshot is None:
            return []
        reasons: list[str] = []
        dead = sorted(
            {r for p in snapshot.partitions.values() for r in p.offline_replicas(self.live_brokers)}
        )
        if dead:
            reasons.append(
                "replicas on offline brokers " + ", ".join(map(str, dead)) + " (deletion resumes "
                "when they return)"
            )
        reassigning = snapshot.being_reassigned or tuple(
            tp.partition for tp in self.pending_reassignments if tp.topic == topic
        )
        if reassigning:
            reasons.append(
                "partition reassignment in progress for partitions "
                + ", ".join(map(str, sorted(set(reassigning))))
            )
        if self.controller_id is None:
            reasons.append("no active controller")
        return reasons


@dataclass(frozen=True, slots=True)
class Expected:
    """What a reader expects to find (the brokers of its last read, the partitions it just
    wrote): read in the first round, so a right guess saves the second. A wrong guess costs
    nothing but the extra paths; the snapshot is the same either way."""

    brokers: Collection[int] = ()
    partitions: Mapping[str, Collection[int]] = field(default_factory=dict)
