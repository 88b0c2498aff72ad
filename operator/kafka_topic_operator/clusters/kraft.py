"""A KRaft cluster (Kafka 4.x), reached through its brokers' Admin API: a client for the
reconciler (and the rebalance), two for the status follower (its full reads, and librdkafka's
for its cheap ones: `kafka_admin.metadata`), one for the health checks, so that none waits
behind another's requests."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future

from kafka_topic_operator.clusters.cluster import HealthCheck
from kafka_topic_operator.kafka.errors import ClusterUnavailableError
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot
from kafka_topic_operator.kafka_admin.backend import KafkaAdminBackend
from kafka_topic_operator.kafka_admin.connection import KafkaConnection
from kafka_topic_operator.kafka_admin.follow import (
    CONFIG_INTERVAL,
    INTERVAL,
    PollingStatusFollower,
    ReadLog,
)
from kafka_topic_operator.kafka_admin.metadata import MetadataClient
from kafka_topic_operator.rebalance.execution.admin_api import AdminApiCluster, Interruption
from kafka_topic_operator.rebalance.execution.cluster import RebalanceCluster
from kafka_topic_operator.topics.backend import Changed, StatusFollowing
from kafka_topic_operator.topics.status import Shown

CHECK_TIMEOUT = 1.0  # the health check's client: a read not answered in a second is an outage


class KRaftCluster:
    def __init__(
        self,
        connection: KafkaConnection,
        *,
        timeout: float | None = None,
        poll_interval: float = INTERVAL,
        config_interval: float = CONFIG_INTERVAL,
    ) -> None:
        """`timeout`: how long a request may take (the backend's default for None);
        `poll_interval`: the status follower's shortest period; `config_interval`: its
        configs' (the drift interval)."""
        self.connection = connection
        self.poll_interval = poll_interval
        self.config_interval = config_interval
        self._timeout = timeout
        self._reads = ReadLog()
        self._backend = self._client()
        self._others: list[KafkaAdminBackend | MetadataClient] = []

    def _client(self, timeout: float | None = None) -> KafkaAdminBackend:
        chosen = timeout if timeout is not None else self._timeout
        if chosen is None:
            return KafkaAdminBackend(self.connection, reads=self._reads)
        return KafkaAdminBackend(self.connection, timeout=chosen, reads=self._reads)

    @property
    def where(self) -> str:
        return self._backend.where

    @property
    def backend(self) -> KafkaAdminBackend:
        return self._backend

    def check(self) -> None:
        """One read: the brokers answer, or ClusterUnavailableError says why."""
        self._backend.read([], list_topics=False)

    def follower(self, changed: Changed) -> StatusFollowing:
        reader = self._client()
        source = MetadataClient(self.connection, timeout=reader.timeout)
        self._others += [reader, source]
        return PollingStatusFollower(reader, self._reads, changed, source, self.poll_interval,
                                     config_interval=self.config_interval)  # fmt: skip

    def health_check(self) -> HealthCheck:
        """A read of the brokers on a client of its own, with the check's timeout; the brokers
        answered when the operator started (`check`)."""
        probe = KafkaAdminBackend(self.connection, timeout=CHECK_TIMEOUT)
        self._others.append(probe)

        def answers(_timeout: float) -> bool:
            try:
                probe.read([], list_topics=False)
            except ClusterUnavailableError:
                return False
            return True

        return HealthCheck(what="Kafka", where=self.where, answers=answers, close=probe.close)

    def snapshot(self, topics: Sequence[str] | None = None) -> ClusterSnapshot:
        if topics is None:
            return self._backend.read(self._backend.topic_names(), list_topics=True)
        return self._backend.read(topics, list_topics=False)

    def rebalance_cluster(self, stop: Interruption) -> RebalanceCluster:
        return AdminApiCluster(self._backend, stop=stop)

    def brokers_show(self, topic: str, snapshot: ClusterSnapshot) -> Future[Shown] | None:
        del topic, snapshot  # read from the brokers' metadata: Ready is what a client sees
        return None

    def close(self) -> None:
        for client in [self._backend, *self._others]:
            client.close()
