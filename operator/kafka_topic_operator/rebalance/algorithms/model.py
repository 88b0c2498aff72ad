"""A cluster as the planners see it (pure): each partition's replicas (preferred leader first),
the brokers' racks, and the brokers a plan may place replicas on."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kafka_topic_operator.kafka.topic_partition import TopicPartition

Assignment = Mapping[TopicPartition, tuple[int, ...]]


@dataclass(frozen=True)
class ClusterModel:
    assignment: Assignment
    racks: Mapping[int, str | None] = field(default_factory=dict)

    def replica_counts(self, assignment: Assignment | None = None) -> Counter[int]:
        return Counter(b for replicas in (assignment or self.assignment).values() for b in replicas)

    def leader_counts(self, assignment: Assignment | None = None) -> Counter[int]:
        return Counter(replicas[0] for replicas in (assignment or self.assignment).values()
                       if replicas)  # fmt: skip

    def rack_of(self, broker: int) -> str | None:
        return self.racks.get(broker)

    def rack_aware(self, brokers: Iterable[int]) -> bool:
        """Racks matter only when every broker involved has one."""
        return all(self.racks.get(b) is not None for b in brokers)


def max_per_rack(replication_factor: int, racks: int) -> int:
    """Replicas of one partition a rack may hold: one each while there are enough racks, else
    as evenly as possible (Cruise Control's RackAwareGoal, relaxed as RackAwareDistributionGoal
    when the replication factor exceeds the racks)."""
    return max(1, -(-replication_factor // max(racks, 1)))


def moves(before: Assignment, after: Assignment) -> int:
    """Replica moves: each broker a partition gains is one replica copied."""
    return sum(len(set(after[tp]) - set(before.get(tp, ()))) for tp in after)


def leader_changes(before: Assignment, after: Assignment) -> int:
    return sum(1 for tp in after if after[tp] and before.get(tp, (None,))[0] != after[tp][0])
