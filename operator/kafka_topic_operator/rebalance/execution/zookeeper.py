"""A rebalance carried out on a ZooKeeper-mode cluster, the way kafka-reassign-partitions and
kafka-preferred-replica-election write it (`/admin/reassign_partitions`,
`/admin/preferred_replica_election`, throttles in the topic and broker config znodes), so that
Kafka's own controller (or this project's) does the moving; waits are on the znodes' watches."""

from __future__ import annotations

import threading
import time
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from kafka_topic_operator.kafka.snapshot import ClusterSnapshot
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.execution import steps as ex
from kafka_topic_operator.rebalance.execution.cluster import RebalanceCluster, now_of
from kafka_topic_operator.rebalance.results.summary import PartitionMove
from kafka_topic_operator.zk import admin, znodes
from kafka_topic_operator.zk.client import NodeExistsError, ZkClient
from kafka_topic_operator.zk.snapshot_reader import read_cluster


def read_now(zk: ZkClient, plan: Sequence[PartitionMove]) -> ex.ClusterNow:
    snapshot = read_cluster(zk, sorted({m.partition.topic for m in plan}), list_topics=False)
    return now_of(snapshot, zk.exists(znodes.PREFERRED_REPLICA_ELECTION_PATH))


def wait_absent(zk: ZkClient, path: str, timeout: float) -> bool:
    """Until `path` does not exist (by its watch, not by polling); False on timeout."""
    changed = threading.Event()
    deadline = time.monotonic() + timeout
    while zk.exists(path, watch=lambda _event: changed.set()):
        left = deadline - time.monotonic()
        if left <= 0 or not changed.wait(left):
            return False
        changed.clear()
    return True


def wait_moved(zk: ZkClient, topic: str, partitions: Collection[int], timeout: float) -> bool:
    """Until the topic znode shows none of `partitions` moving (adding or removing replicas),
    by its watch; False on timeout. Looked at first as it is now: a move that ended between
    the executor's read and this wait is not waited for (a wait for the znode's next change
    would then never end)."""
    changed = threading.Event()

    def fired(_event: object) -> None:
        changed.set()

    deadline = time.monotonic() + timeout
    path = znodes.topic_path(topic)
    # One watcher for every look: kazoo keeps a set of them, so each look does not add another.
    while (node := zk.get(path, watch=fired)) is not None:
        assignments = znodes.decode_topic(path, node.data).partitions
        if not any(p in assignments and assignments[p].is_being_reassigned for p in partitions):
            break
        left = deadline - time.monotonic()
        if left <= 0 or not changed.wait(left):
            return False
        changed.clear()
    return True


def set_throttles(zk: ZkClient, batch: Sequence[PartitionMove], rate: int) -> None:
    """KIP-73's throttles for a batch: replicas per topic, merged with what is there, and the
    rate on every broker involved."""
    for topic, (leaders, followers) in ex.throttled_replicas(batch).items():
        config = admin.topic_config(zk, topic)
        config[ex.LEADER_THROTTLED_REPLICAS] = ex.merge_throttle(
            config.get(ex.LEADER_THROTTLED_REPLICAS), leaders
        )
        config[ex.FOLLOWER_THROTTLED_REPLICAS] = ex.merge_throttle(
            config.get(ex.FOLLOWER_THROTTLED_REPLICAS), followers
        )
        admin.change_topic_config(zk, topic, config)
    for broker in ex.throttled_brokers(batch):
        config = admin.broker_config(zk, broker)
        config[ex.LEADER_THROTTLED_RATE] = config[ex.FOLLOWER_THROTTLED_RATE] = str(rate)
        admin.change_broker_config(zk, broker, config)


def clear_throttles(zk: ZkClient, plan: Sequence[PartitionMove]) -> None:
    """What `kafka-reassign-partitions --verify` removes once a reassignment is done: the
    throttled-replica lists of the plan's topics and the rates of its brokers."""
    for topic in sorted({m.partition.topic for m in plan}):
        if not zk.exists(znodes.topic_path(topic)):
            continue  # deleted meanwhile: its config went with it
        config = admin.topic_config(zk, topic)
        keys = (ex.LEADER_THROTTLED_REPLICAS, ex.FOLLOWER_THROTTLED_REPLICAS)
        if any(k in config for k in keys):
            admin.change_topic_config(zk, topic, {k: v for k, v in config.items() if k not in keys})
    for broker in ex.throttled_brokers(plan):
        config = admin.broker_config(zk, broker)
        keys = (ex.LEADER_THROTTLED_RATE, ex.FOLLOWER_THROTTLED_RATE)
        if any(k in config for k in keys):
            admin.change_broker_config(
                zk, broker, {k: v for k, v in config.items() if k not in keys}
            )


class ZooKeeperCluster:
    """`RebalanceCluster` through ZooKeeper."""

    def __init__(self, zk: ZkClient) -> None:
        self.zk = zk

    def snapshot(self) -> ClusterSnapshot:
        return read_cluster(self.zk)

    def now(self, plan: Sequence[PartitionMove]) -> ex.ClusterNow:
        return read_now(self.zk, plan)

    def set_throttles(self, batch: Sequence[PartitionMove], rate: int) -> None:
        set_throttles(self.zk, batch, rate)

    def clear_throttles(self, plan: Sequence[PartitionMove]) -> None:
        clear_throttles(self.zk, plan)

    def reassign(self, targets: Mapping[TopicPartition, Sequence[int]]) -> bool:
        try:
            admin.reassign_partitions(self.zk, targets)
        except NodeExistsError:
            return False
        return True

    def elect_preferred(self, partitions: Sequence[TopicPartition]) -> bool:
        try:
            admin.elect_preferred_leaders(self.zk, partitions)
        except NodeExistsError:
            return False
        return True

    def wait_in_flight(self, now: ex.ClusterNow, timeout: float) -> bool:
        for path in (znodes.REASSIGN_PARTITIONS_PATH, znodes.PREFERRED_REPLICA_ELECTION_PATH):
            if self.zk.exists(path):
                return wait_absent(self.zk, path, timeout)
        # Moving without the znode (a reassignment made through Kafka's Admin API, KIP-455):
        # its topic znode changes when the move completes.
        topic = min(now.reassigning).topic
        moving = [tp.partition for tp in now.reassigning if tp.topic == topic]
        return wait_moved(self.zk, topic, moving, timeout)


if TYPE_CHECKING:  # mypy checks that it is what the executor takes (structurally)

    def _is_a_rebalance_cluster(cluster: ZooKeeperCluster) -> RebalanceCluster:
        return cluster
