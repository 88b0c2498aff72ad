"""Fixtures for controller tests: the state machines wired to a real ZooKeeper chroot, with the
requests they send read back from the brokers' queues."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

from kafka_topic_operator.controller.context import ControllerContext
from kafka_topic_operator.controller.partition_state_machine import PartitionStateMachine
from kafka_topic_operator.controller.replica_state_machine import ReplicaStateMachine
from kafka_topic_operator.controller.request_batch import RequestBatch
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import broker_channel as bc
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import ZkClient

CONTROLLER_ID = 5
CONTROLLER_EPOCH = 50


@pytest.fixture
def zk(zk_chroot: str) -> Iterator[ZkClient]:
    client = ZkClient(zk_chroot)
    client.start()
    yield client
    client.stop()


class Harness:
    """Kafka's state machine tests' setup: controller 5 at epoch 50, on a real ZooKeeper."""

    def __init__(self, zk: ZkClient, topic_configs: Mapping[str, Mapping[str, str]]) -> None:
        self.zk = zk
        zk.create(znodes.CONTROLLER_EPOCH_PATH, znodes.encode_controller_epoch(CONTROLLER_EPOCH))
        self.ctx = ControllerContext(epoch=CONTROLLER_EPOCH, epoch_zk_version=0)
        self.batch = RequestBatch(self.ctx, zk, CONTROLLER_ID)
        self.batch.reset_correlation_ids()
        self.configs = dict(topic_configs)
        self.partitions = PartitionStateMachine(
            self.ctx, zk, self.batch, CONTROLLER_ID, lambda topics: self.configs
        )
        self.replicas = ReplicaStateMachine(self.ctx, zk, self.batch, CONTROLLER_ID)

    def add_brokers(self, *ids: int) -> None:
        for broker in ids:
            endpoint = znodes.EndPoint("PLAINTEXT", f"broker-{broker}", 9092,
                                       znodes.SecurityProtocol.PLAINTEXT)  # fmt: skip
            self.ctx.live_brokers[broker] = znodes.BrokerInfo(broker, (endpoint,))
            self.ctx.broker_epochs[broker] = 100 + broker
            self.zk.ensure_path(bc.requests_path(broker))

    def assign(self, tp: TopicPartition, *replicas: int) -> None:
        self.ctx.set_assignment(tp, ReplicaAssignment(tuple(replicas)))
        self.zk.ensure_path(znodes.topic_path(tp.topic))

    def write_state(
        self, tp: TopicPartition, lai: LeaderAndIsr, epoch: int = CONTROLLER_EPOCH
    ) -> int:
        """The state znode as a previous controller left it; returns its version."""
        path = znodes.topic_partition_state_path(tp)
        data = znodes.encode_partition_state(LeaderIsrAndControllerEpoch(lai, epoch))
        if self.zk.exists(path):
            return self.zk.set(path, data)
        self.zk.create(path, data, makepath=True)
        return 0

    def cache_state(self, tp: TopicPartition, lai: LeaderAndIsr) -> None:
        version = self.write_state(tp, lai)
        self.ctx.leadership[tp] = LeaderIsrAndControllerEpoch(
            lai.with_partition_epoch(version), CONTROLLER_EPOCH
        )

    def read_state(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        node = self.zk.get(znodes.topic_partition_state_path(tp))
        if node is None:
            return None
        return znodes.decode_partition_state(node.path, node.data, node.version)

    def requests(self, broker: int) -> list[bc.Request]:
        """Every request queued for `broker` so far, in order, consumed."""
        path = bc.requests_path(broker)
        names = self.zk.children(path) or []
        nodes = self.zk.get_many(f"{path}/{n}" for n in names)
        out = [bc.decode_request(n.path, n.data) for n in nodes if n is not None]
        for name in names:
            self.zk.delete(f"{path}/{name}")
        return out


@pytest.fixture
def harness(zk: ZkClient) -> Harness:
    return Harness(zk, {})
