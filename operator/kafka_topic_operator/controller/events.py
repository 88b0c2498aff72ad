"""The controller's events (ControllerEventManager's ControllerEvent subclasses).

Watch callbacks and timers only put these on the queue; the event thread processes them one at a
time and each re-reads what it needs from ZooKeeper.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_topic_operator.controller.channel_sender import Undelivered
from kafka_topic_operator.kafka.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class Startup:
    pass


@dataclass(frozen=True, slots=True)
class Reelect:
    """A new session (or a deposed controller) competes again."""


@dataclass(frozen=True, slots=True)
class Expire:
    """ZooKeeper session `session` expired: resign at once, if the epoch was won in it.
    (Kafka handles expiry before the new session starts; here the new session's events may be
    handled first, and an election won in it must not be undone by the old session's end.)"""

    session: int = 0


@dataclass(frozen=True, slots=True)
class ControllerChange:
    pass


@dataclass(frozen=True, slots=True)
class RequestUndelivered:
    """The request sender found no queue at a request's broker."""

    lost: Undelivered


@dataclass(frozen=True, slots=True)
class Rewatch:
    """The connection dropped and came back within the session: kazoo called every watch
    once without a path and forgot them. Those set on single znodes are set again."""


@dataclass(frozen=True, slots=True)
class BrokerChange:
    pass


@dataclass(frozen=True, slots=True)
class BrokerModifications:
    """A live broker's registration changed (its data, not its existence)."""

    broker_id: int


@dataclass(frozen=True, slots=True)
class TopicChange:
    pass


@dataclass(frozen=True, slots=True)
class PartitionModifications:
    topic: str


@dataclass(frozen=True, slots=True)
class TopicDeletion:
    pass


@dataclass(frozen=True, slots=True)
class ZkPartitionReassignment:
    """`/admin/reassign_partitions` was created, or the controller deleted it (after which it
    may already exist again): reassignments start. `created` False only sets the watch again."""

    created: bool = True


@dataclass(frozen=True, slots=True)
class PartitionReassignmentIsrChange:
    partition: TopicPartition


@dataclass(frozen=True, slots=True)
class IsrChangeNotification:
    pass


@dataclass(frozen=True, slots=True)
class LogDirEventNotification:
    """A broker wrote `/log_dir_event_notification/log_dir_event_<n>`: a log dir failed."""


@dataclass(frozen=True, slots=True)
class ConfigChanges:
    """`/config/changes` has children: a broker's ZkConfigManager reads the new ones."""


@dataclass(frozen=True, slots=True)
class ReplicaLeaderElection:
    """`/admin/preferred_replica_election` appeared (ZkTriggered)."""


@dataclass(frozen=True, slots=True)
class AutoPreferredReplicaLeaderElection:
    pass


@dataclass(frozen=True, slots=True)
class ControlledShutdown:
    pass


@dataclass(frozen=True, slots=True)
class BrokerResponses:
    broker_id: int


@dataclass(frozen=True, slots=True)
class ShutdownEventThread:
    pass


ControllerEvent = (
    Startup
    | Reelect
    | Expire
    | ControllerChange
    | RequestUndelivered
    | Rewatch
    | BrokerChange
    | BrokerModifications
    | TopicChange
    | PartitionModifications
    | TopicDeletion
    | ZkPartitionReassignment
    | PartitionReassignmentIsrChange
    | IsrChangeNotification
    | LogDirEventNotification
    | ConfigChanges
    | ReplicaLeaderElection
    | AutoPreferredReplicaLeaderElection
    | ControlledShutdown
    | BrokerResponses
    | ShutdownEventThread
)
