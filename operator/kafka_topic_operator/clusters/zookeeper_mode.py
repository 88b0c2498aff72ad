"""A ZooKeeper-mode cluster (Kafka 3.x), reached through its ZooKeeper: one kazoo session for the
reconciler, the status follower's watches and the rebalance's znodes, and a second one for the
health checks."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import Future

from kafka_topic_operator.broker_channel.metadata_leaders import decode_metadata_leaders
from kafka_topic_operator.broker_channel.paths import metadata_path
from kafka_topic_operator.clusters.cluster import ConnectionListener, HealthCheck, NoClusterThere
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot
from kafka_topic_operator.kafka_admin.brokers_metadata import BrokersMetadata
from kafka_topic_operator.rebalance.execution.admin_api import Interruption
from kafka_topic_operator.rebalance.execution.cluster import RebalanceCluster
from kafka_topic_operator.rebalance.execution.zookeeper import ZooKeeperCluster
from kafka_topic_operator.topics.backend import Changed, StatusFollowing
from kafka_topic_operator.topics.follow import StatusFollower
from kafka_topic_operator.topics.status import Shown
from kafka_topic_operator.topics.zookeeper_backend import ZooKeeperBackend
from kafka_topic_operator.zk.client import ZkClient, ZkConnectionError, is_connected_state
from kafka_topic_operator.zk.snapshot_reader import read_cluster

log = logging.getLogger(__name__)

PROBE_CONNECT_TIMEOUT = 5.0


class ZooKeeperModeCluster:
    def __init__(self, zk: ZkClient) -> None:
        """`zk`: started by the caller; `close` stops it."""
        self.zk = zk
        self._backend = ZooKeeperBackend(zk)
        # Each dev broker's published metadata as last decoded, by the znode's (czxid, version).
        self._published_leaders: dict[int, tuple[tuple[int, int], dict[str, dict[int, int]]]] = {}
        self._brokers_metadata = BrokersMetadata(self._published)

    @property
    def where(self) -> str:
        return self._backend.where

    @property
    def backend(self) -> ZooKeeperBackend:
        return self._backend

    def check(self) -> None:
        if not self.zk.exists("/"):
            raise NoClusterThere(
                f"{self.zk.hosts}: the chroot does not exist in ZooKeeper, so no Kafka cluster "
                "keeps its data there (--zookeeper takes what the brokers' zookeeper.connect says)"
            )

    def follower(self, changed: Changed) -> StatusFollowing:
        return StatusFollower(self.zk, changed)

    def health_check(self) -> HealthCheck:
        """Checked on a session of its own (else the main one, if that cannot be opened now),
        and kazoo's state changes of the main session taken at once."""
        zk = self.zk
        probe = _started(zk.sibling())

        def listen(listener: ConnectionListener) -> None:
            zk.add_state_listener(
                lambda state: listener(is_connected_state(state), f"connection {state.lower()}")
            )

        return HealthCheck(
            what="ZooKeeper",
            where=self.where,
            answers=(probe or zk).answers,
            up=zk.connected,
            connected=lambda: zk.connected,
            listen=listen,
            close=probe.stop if probe is not None else lambda: None,
        )

    def snapshot(self, topics: Sequence[str] | None = None) -> ClusterSnapshot:
        return read_cluster(self.zk, topics)

    def brokers_show(self, topic: str, snapshot: ClusterSnapshot) -> Future[Shown] | None:
        """Every registered broker is asked through its PLAINTEXT listener; a dev broker's
        metadata is what it publishes (`_published`)."""
        found = snapshot.topics.get(topic)
        partitions = len(found.partitions) if found is not None else 0
        return self._brokers_metadata.confirm(topic, partitions, snapshot.brokers)

    def _published(self, broker: int) -> dict[str, dict[int, int]] | None:
        """A dev broker's metadata as it published it (it publishes before it registers); None
        for a broker that publishes none: a Kafka broker, to be asked on its listener."""
        path = metadata_path(broker)
        node = self.zk.get(path)
        if node is None:
            return None
        # Asked every round while topics wait; decoded again only when the broker wrote again.
        known = self._published_leaders.get(broker)
        if known is None or known[0] != (node.czxid, node.version):
            known = (node.czxid, node.version), decode_metadata_leaders(path, node.data)
            self._published_leaders[broker] = known
        return known[1]

    def rebalance_cluster(self, stop: Interruption) -> RebalanceCluster:
        del stop  # its waits are on watches, which the executor's own timeouts bound
        return ZooKeeperCluster(self.zk)

    def close(self) -> None:
        self._brokers_metadata.close()
        self.zk.stop()


def _started(probe: ZkClient) -> ZkClient | None:
    """`probe` connected, or None (the checks then use the main session) if it cannot be now."""
    try:
        probe.start(PROBE_CONNECT_TIMEOUT)
    except ZkConnectionError as e:
        log.warning("ZooKeeper health checks share the main connection: %s", e)
        return None
    return probe
