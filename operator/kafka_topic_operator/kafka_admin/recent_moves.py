"""The reassignments a backend asked for or saw listed, remembered until a read shows them
ended (pure: the caller gives the time).

On KRaft the end of a reassignment is known to the controller first: ListPartitionReassignments
(answered by the controller) stops listing it while DescribeTopics (answered by a broker, from
its copy of the metadata log) may still show the replicas of the move, old and new together,
for as long as that broker lags (tens of milliseconds here; more under load). Read together
that looks like a larger replication factor with nothing moving, and a replication factor
change planned from it undoes the move (the KRaft drain test caught a KafkaTopic's reconcile
putting a just-drained partition back onto the drained broker). Nothing in the Admin API
reads a partition's replicas from the controller, so the backend remembers each move's target:
a partition described otherwise while nothing lists it is taken as still being reassigned
until a broker shows the target, or until `lag` seconds have passed since the move was last
seen (a move cancelled, or replaced by someone else's that ended unseen, is not waited for
beyond that).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Final

from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.topic_partition import TopicPartition

METADATA_LAG: Final = 10.0  # seconds a broker's metadata may lag the controller's


class RecentMoves:
    """Each partition's last known reassignment target and when it was last seen."""

    def __init__(self, lag: float = METADATA_LAG) -> None:
        if lag <= 0:
            raise ValueError(f"lag {lag} is not positive")
        self.lag = lag
        self._targets: dict[TopicPartition, tuple[tuple[int, ...], float]] = {}

    def __len__(self) -> int:
        return len(self._targets)

    def saw(self, targets: Mapping[TopicPartition, Sequence[int]], now: float) -> None:
        """Reassignments asked for, or listed in progress, at `now`, with their targets."""
        for tp, target in targets.items():
            self._targets[TopicPartition(tp.topic, tp.partition)] = (tuple(target), now)

    def unfinished(
        self,
        described: Iterable[Mapping[str, Any]],
        listed: Collection[TopicPartition],
        now: float,
    ) -> dict[TopicPartition, dict[str, list[int]]]:
        """The remembered partitions that describe_topics() (`described`) shows away from their
        target, or at it with a target replica out of the ISR, while no listing names them,
        each as Kafka's controller lists a reassignment (every replica, target first; the
        adding and the removing ones). A partition shown at its target with every target
        replica in the ISR, or remembered longer than `lag`, is forgotten."""
        self._targets = {tp: seen for tp, seen in self._targets.items() if now - seen[1] < self.lag}
        unfinished: dict[TopicPartition, dict[str, list[int]]] = {}
        for topic in described:
            if topic.get("error_code"):
                continue
            for partition in topic.get("partitions") or ():
                tp = TopicPartition(str(topic["name"]), int(partition["partition_index"]))
                remembered = self._targets.get(tp)
                if remembered is None or tp in listed:
                    continue
                target = list(remembered[0])
                replicas = list(partition.get("replica_nodes") or ())
                isr = set(partition.get("isr_nodes") or ())
                if replicas == target and isr.issuperset(target):
                    del self._targets[tp]
                    continue
                if replicas == target:
                    # Kafka ends a move once every target replica is in the ISR: a broker that
                    # shows the target with a shorter ISR has not seen the end yet.
                    replicas = [r for r in target if r in isr]
                moving = ReplicaAssignment.from_origin_and_target(replicas, target)
                unfinished[tp] = {
                    "replicas": list(moving.replicas),
                    "adding_replicas": list(moving.adding_replicas),
                    "removing_replicas": list(moving.removing_replicas),
                }
        return unfinished
