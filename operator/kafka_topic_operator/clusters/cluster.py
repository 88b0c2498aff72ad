"""What every kind of cluster hands out (`Cluster`), and how its health is checked
(`HealthCheck`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Protocol

from kafka_topic_operator.kafka.snapshot import ClusterSnapshot
from kafka_topic_operator.process.argparsing import UsageError
from kafka_topic_operator.rebalance.execution.admin_api import Interruption
from kafka_topic_operator.rebalance.execution.cluster import RebalanceCluster
from kafka_topic_operator.topics.backend import Changed, StatusFollowing, TopicBackend
from kafka_topic_operator.topics.status import Shown


class NoClusterThere(UsageError):
    """The address answers but keeps no Kafka cluster's metadata: the flag names the wrong
    place."""


# A connection's change: whether it is connected now, and why it changed ("connection lost").
ConnectionListener = Callable[[bool, str], None]


def _nothing() -> None:
    return None


def _always() -> bool:
    return True


def _never_changes(_listener: ConnectionListener) -> None:
    return None


@dataclass(frozen=True, slots=True)
class HealthCheck:
    """How the operator asks whether the cluster answers."""

    what: str  # "ZooKeeper", "Kafka": in messages, and which metric says it
    where: str  # "ZooKeeper at zk:2181"
    # One check within the timeout (seconds), on a connection of its own where one could be
    # opened: a read queued behind the reconciler's big batches is not an outage.
    answers: Callable[[float], bool]
    up: bool = True  # whether it answered when the check was made
    # Whether the main connection is connected (a client that knows: kazoo).
    connected: Callable[[], bool] = _always
    # Registers a listener for the main connection's changes, where the client tells them.
    listen: Callable[[ConnectionListener], None] = _never_changes
    close: Callable[[], None] = _nothing


class Cluster(Protocol):
    @property
    def where(self) -> str:
        """Where the cluster is reached, for messages: "ZooKeeper at zk:2181"."""

    @property
    def backend(self) -> TopicBackend:
        """The reconciler's backend."""

    def check(self) -> None:
        """Raises ClusterUnavailableError unless the cluster answers, NoClusterThere unless it
        keeps a Kafka cluster's metadata where it was named (a ZooKeeper chroot that exists)."""

    def follower(self, changed: Changed) -> StatusFollowing:
        """A status follower, on clients of its own where the kind has them."""

    def health_check(self) -> HealthCheck:
        """The health check, with its own connection when one can be opened now (blocks)."""

    def snapshot(self, topics: Sequence[str] | None = None) -> ClusterSnapshot:
        """The brokers, the controller and the named topics (every topic for None)."""

    def brokers_show(self, topic: str, snapshot: ClusterSnapshot) -> Future[Shown] | None:
        """What the brokers' metadata shows of `topic`, which `snapshot` shows Ready; None
        where `snapshot` was read from the brokers' metadata itself (KRaft)."""

    def rebalance_cluster(self, stop: Interruption) -> RebalanceCluster:
        """What a KafkaRebalance reads and writes; its waits end when `stop` is set."""

    def close(self) -> None:
        """Every client closed."""
