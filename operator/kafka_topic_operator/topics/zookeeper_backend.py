"""The ZooKeeper backend: Kafka's znodes, written as AdminZkClient writes them (`zk.admin`) and
read in pipelined rounds (`zk.snapshot_reader`), for ZooKeeper-mode clusters."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace

from kafka_topic_operator.kafka.ids import new_topic_id
from kafka_topic_operator.kafka.new_topic import NewTopic
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot, Expected
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import admin, znodes
from kafka_topic_operator.zk.client import ZkClient
from kafka_topic_operator.zk.snapshot_reader import read_cluster


class ZooKeeperBackend:
    def __init__(self, zk: ZkClient) -> None:
        self.zk = zk

    @property
    def where(self) -> str:
        return f"ZooKeeper at {self.zk.hosts}"

    @property
    def unavailable_reason(self) -> str:
        return "ZooKeeperUnavailable"

    @property
    def deletion_is_marked(self) -> bool:
        return True

    def position(self) -> int:
        return int(self.zk.raw.last_zxid)

    def read(
        self,
        topics: Iterable[str],
        *,
        list_topics: bool,
        expected: Expected | None = None,
    ) -> ClusterSnapshot:
        return read_cluster(self.zk, topics, list_topics=list_topics, expected=expected)

    def topic_names(self) -> list[str]:
        return self.zk.children_many([znodes.TOPICS_PATH])[0] or []

    def create_topics(self, topics: Sequence[NewTopic]) -> dict[str, Exception | None]:
        # Each with its topic id, as a 3.9 broker creates topics (ZkAdminManager passes
        # usesTopicId, true from IBP 2.8): the controller then has no id to write back, so a
        # topic is not written twice nor changed under its watches.
        return admin.create_topics(
            self.zk, [replace(t, topic_id=t.topic_id or new_topic_id()) for t in topics]
        )

    def change_config(self, topic: str, config: Mapping[str, str]) -> None:
        admin.change_topic_config(self.zk, topic, config)

    def add_partitions(self, topic: str, new: Mapping[int, Sequence[int]]) -> None:
        admin.add_partitions(self.zk, topic, new)

    def reassign(
        self,
        targets: Mapping[TopicPartition, Sequence[int]],
        expected: Mapping[TopicPartition, Sequence[int]] | None = None,
    ) -> None:
        # `expected` is not compared: a topic znode holds the adding and removing replicas with
        # the replicas, so the plan's read is never torn (as a KRaft read of two requests is).
        admin.reassign_partitions(self.zk, targets)

    def delete_topic(self, topic: str) -> None:
        admin.delete_topic(self.zk, topic)

    def topic_exists(self, topic: str) -> bool:
        return self.zk.exists(znodes.topic_path(topic))

    def deletion_requested(self, topic: str) -> bool:
        return self.zk.exists(znodes.delete_topic_path(topic))

    def wait_for_partitions(
        self, partitions: Collection[TopicPartition], limit: float, idle: float
    ) -> bool:
        paths = [znodes.topic_partition_state_path(tp) for tp in partitions]
        arrived = self.zk.wait_until_exist(paths, limit, idle=idle)
        if paths:
            # Watch events carry no zxid: one request brings `position` past the partitions
            # made meanwhile.
            self.zk.exists(paths[-1])
        return arrived
