"""What the reconciler needs of a Kafka cluster, whichever way it is reached.

Two backends carry it out: ZooKeeper (`topics.zookeeper_backend`: Kafka's znodes, written as
AdminZkClient writes them, for ZooKeeper-mode clusters) and Kafka's Admin API
(`kafka_admin.backend`, for KRaft clusters). Placement is decided above both: every creation,
partition addition and reassignment carries its explicit assignment, so a preview computed by
the operator holds on either.

Both raise Kafka's own exceptions (`kafka.errors`) for what Kafka refuses, and
`ClusterUnavailableError` when the cluster does not answer in time.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Protocol

from kafka_topic_operator.kafka.new_topic import NewTopic
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot, Expected
from kafka_topic_operator.kafka.topic_partition import TopicPartition

# The status follower's callback: a snapshot, and the topics in it to report.
Changed = Callable[[ClusterSnapshot, Collection[str]], None]


class StatusFollowing(Protocol):
    """Reports followed topics again whenever what their status is made of changes (leaders,
    ISR, partitions, configs, the live brokers), and at once when asked."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def follow(self, topic: str, since: int | None = None) -> None:
        """Reports `topic` now and on each change; with `since` (a `position()` read before the
        caller's own snapshot), only changes after it."""

    def refresh(self, topic: str) -> None: ...

    def unfollow(self, topic: str) -> None: ...

    @property
    def followed(self) -> frozenset[str]: ...


class TopicBackend(Protocol):
    @property
    def where(self) -> str:
        """Where the cluster is reached, for messages: "ZooKeeper at zk:2181"."""

    @property
    def unavailable_reason(self) -> str:
        """The status reason while it does not answer (ZooKeeperUnavailable, KafkaUnavailable)."""

    @property
    def deletion_is_marked(self) -> bool:
        """Whether a deletion request is a marker Kafka's controller acts on when it can
        (ZooKeeper's /admin/delete_topics), rather than done by the brokers at once (KRaft)."""

    def position(self) -> int:
        """A point in the cluster's history that later reads are at or after (ZooKeeper's last
        zxid seen); followers report changes after it."""

    def read(
        self,
        topics: Iterable[str],
        *,
        list_topics: bool,
        expected: Expected | None = None,
    ) -> ClusterSnapshot:
        """The brokers, the controller and `topics` in full (configs, partitions, leaders, ISR,
        reassignments); with `list_topics`, `topic_names` holds every topic's name."""

    def topic_names(self) -> list[str]:
        """Every topic's name (creation's collision check)."""

    def create_topics(self, topics: Sequence[NewTopic]) -> dict[str, Exception | None]:
        """Each topic with its config and explicit assignment: None when created, else what
        Kafka raised (TopicExistsException, ...)."""

    def change_config(self, topic: str, config: Mapping[str, str]) -> None:
        """The topic's dynamic config becomes exactly `config`."""

    def add_partitions(self, topic: str, new: Mapping[int, Sequence[int]]) -> None: ...

    def reassign(
        self,
        targets: Mapping[TopicPartition, Sequence[int]],
        expected: Mapping[TopicPartition, Sequence[int]] | None = None,
    ) -> None:
        """Raises ReassignmentInProgressException where one is in progress already, or where a
        partition's replicas are no longer the `expected` ones the targets were planned from."""

    def delete_topic(self, topic: str) -> None:
        """Requests the deletion. Raises UnknownTopicOrPartitionException,
        TopicAlreadyMarkedForDeletionException, TopicDeletionDisabledException."""

    def topic_exists(self, topic: str) -> bool: ...

    def deletion_requested(self, topic: str) -> bool:
        """Whether a requested deletion is still pending (ZooKeeper's marker); False where a
        deletion takes effect at once (KRaft)."""

    def wait_for_partitions(
        self, partitions: Collection[TopicPartition], limit: float, idle: float
    ) -> bool:
        """Until every partition has a leader state, at most `limit` seconds and as long as one
        appears every `idle` seconds. False if some did not."""
