"""Fixtures for controller tests: the state machines wired to a real ZooKeeper chroot, with the
requests they send read back from the brokers' queues."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from kto_testing import Waiter

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.controller import events as ev
from kafka_topic_operator.controller.context import ControllerContext
from kafka_topic_operator.controller.kafka_controller import ControllerConfig, KafkaController
from kafka_topic_operator.controller.partition_state_machine import PartitionStateMachine
from kafka_topic_operator.controller.replica_state_machine import ReplicaStateMachine
from kafka_topic_operator.controller.request_batch import RequestBatch
from kafka_topic_operator.kafka.brokers import BrokerInfo, EndPoint, SecurityProtocol
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.topics.zookeeper_backend import ZooKeeperBackend
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import ZkClient
from kto_dev.devbroker.broker import BrokerConfig, DevBroker
from kto_dev.devbroker.log_dirs import LogDir

CONTROLLER_ID = 5
CONTROLLER_EPOCH = 50


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
            endpoint = EndPoint("PLAINTEXT", f"broker-{broker}", 9092,
                                       SecurityProtocol.PLAINTEXT)  # fmt: skip
            self.ctx.live_brokers[broker] = BrokerInfo(broker, (endpoint,))
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


# ---- an in-process cluster: the controller and dev brokers on one real ZooKeeper ----------------


class FlakyLogDir(LogDir):
    """A disk whose deletes fail while `failing` is set."""

    failing = False

    def delete_log(self, partition: TopicPartition) -> bool:
        if self.failing:
            raise OSError(f"Input/output error: {self.partition_dir(partition)}")
        return super().delete_log(partition)


def assignment(cluster: Cluster, topic: str) -> dict[int, tuple[int, ...]]:
    node = cluster.zk.get(znodes.topic_path(topic))
    assert node is not None
    return {p: a.replicas for p, a in znodes.decode_topic(node.path, node.data).partitions.items()}


class Cluster:
    SESSION_TIMEOUT = 4.0

    def __init__(self, connect: str, root: Path, zk: ZkClient) -> None:
        self.connect = connect
        self.root = root
        self.zk = zk
        self.backend = ZooKeeperBackend(zk)  # what the operator's reconciler is given
        self.waiter = Waiter(zk)
        self.controllers: dict[int, KafkaController] = {}
        self.brokers: dict[int, DevBroker] = {}
        self.log_dirs: dict[int, FlakyLogDir] = {}

    def start_controller(self, controller_id: int = 100, **settings: object) -> KafkaController:
        settings = {"auto_leader_rebalance_enable": False, **settings}
        config = ControllerConfig(
            self.connect,
            broker_id=controller_id,
            session_timeout=self.SESSION_TIMEOUT,
            **settings,  # type: ignore[arg-type]
        )
        controller = KafkaController(config)
        controller.start()
        self.controllers[controller_id] = controller
        return controller

    def start_broker(self, broker_id: int, rack: str | None = None) -> DevBroker:
        path = self.root / f"broker-{broker_id}"
        log_dir = self.log_dirs.get(broker_id) or FlakyLogDir(path)
        self.log_dirs[broker_id] = log_dir
        config = BrokerConfig(
            self.connect,
            broker_id,
            path,
            rack=rack,
            session_timeout=self.SESSION_TIMEOUT,
            controlled_shutdown_retry_backoff=0.2,
            controlled_shutdown_timeout=10.0,
        )
        broker = DevBroker(config, log_dir=log_dir)
        broker.start()
        self.brokers[broker_id] = broker
        return broker

    def stop_broker(self, broker_id: int, *, controlled: bool = False) -> bool:
        return self.brokers.pop(broker_id).shutdown(controlled=controlled)

    def stop(self) -> None:
        for broker in self.brokers.values():
            broker.shutdown(controlled=False)
        for controller in self.controllers.values():
            controller.stop()

    # ---- reading and waiting ------------------------------------------------------------------

    def state(self, tp: TopicPartition, watch: object = None) -> LeaderIsrAndControllerEpoch | None:
        path = znodes.topic_partition_state_path(tp)
        node = self.zk.get(path, watch=watch)  # type: ignore[arg-type]
        # A read of a missing znode leaves no watch; exists() does.
        while node is None:
            if not self.zk.exists(path, watch=watch):  # type: ignore[arg-type]
                return None
            node = self.zk.get(path, watch=watch)  # type: ignore[arg-type]
        return znodes.decode_partition_state(node.path, node.data, node.version)

    def wait_state(
        self,
        tp: TopicPartition,
        done: Callable[[LeaderAndIsr], bool],
        what: str = "",
        timeout: float = 20.0,
    ) -> LeaderAndIsr:
        state = self.waiter.until(
            lambda watch: self.state(tp, watch),
            lambda s: s is not None and done(s.leader_and_isr),
            what or f"the state of {tp}",
            timeout,
        )
        assert state is not None
        return state.leader_and_isr

    def wait_online(self, topic: str, partitions: int, timeout: float = 20.0) -> None:
        for p in range(partitions):
            self.wait_state(TopicPartition(topic, p), lambda lai: lai.leader >= 0, timeout=timeout)

    def wait_gone(self, path: str, timeout: float = 20.0) -> None:
        self.waiter.exists(path, present=False, timeout=timeout)

    def wait_controller(self, timeout: float = 20.0) -> int:
        """The epoch of the controller that holds /controller once one does."""
        self.waiter.exists(znodes.CONTROLLER_PATH, timeout=timeout)
        node = self.zk.get(znodes.CONTROLLER_EPOCH_PATH)
        assert node is not None
        return znodes.decode_controller_epoch(node.path, node.data)

    def settle(self, controller: KafkaController, timeout: float = 20.0) -> None:
        """Until the controller's queue is empty (it may refill: then wait again)."""
        assert controller.idle.wait(timeout), "the controller did not go idle"

    def has_log(self, broker_id: int, tp: TopicPartition) -> bool:
        return (self.root / f"broker-{broker_id}" / f"{tp.topic}-{tp.partition}").is_dir()


@pytest.fixture
def cluster(zk_chroot: str, zk: ZkClient, tmp_path: Path) -> Iterator[Cluster]:
    running = Cluster(zk_chroot, tmp_path, zk)
    yield running
    running.stop()


# ---- the controller driven on the test's thread ------------------------------------------------


class Bare:
    """The controller with no event thread: the test dispatches each event itself and requests
    are written before `dispatch` returns. Brokers are registrations the test writes; what the
    controller asked of them is read back from their queues."""

    def __init__(self, connect: str, zk: ZkClient, **settings: object) -> None:
        self.zk = zk
        settings = {"auto_leader_rebalance_enable": False, **settings}
        config = ControllerConfig(connect, broker_id=100, **settings)  # type: ignore[arg-type]
        self.controller = KafkaController(config)
        self.controller.zk.start()
        self.controller.batch.sender = None  # requests written synchronously

    def register(self, broker: int, host: str | None = None, port: int = 9092) -> None:
        endpoint = EndPoint(
            "PLAINTEXT", host or f"broker-{broker}", port, SecurityProtocol.PLAINTEXT
        )
        data = znodes.encode_broker(BrokerInfo(broker, (endpoint,), timestamp=1))
        path = znodes.broker_path(broker)
        if self.zk.exists(path):
            self.zk.set(path, data)
        else:
            self.zk.create(path, data, ephemeral=True, makepath=True)

    def unregister(self, broker: int) -> None:
        self.zk.delete(znodes.broker_path(broker))

    def elect(self) -> None:
        self.dispatch(ev.Startup())
        assert self.controller.is_active

    def dispatch(self, event: ev.ControllerEvent) -> None:
        """As the event thread would process it (exceptions logged, not raised)."""
        self.controller._process(event)

    @property
    def ctx(self) -> ControllerContext:
        return self.controller.ctx

    def requests(self, broker: int) -> list[bc.Request]:
        """Every request queued for `broker` so far, in order, consumed."""
        path = bc.requests_path(broker)
        names = sorted(self.zk.children(path) or [])
        nodes = self.zk.get_many(f"{path}/{n}" for n in names)
        out = [bc.decode_request(n.path, n.data) for n in nodes if n is not None]
        for name in names:
            self.zk.delete(f"{path}/{name}")
        return out

    def answer(self, broker: int, response: bc.Response) -> None:
        """`broker` answers, as a dev broker writes its answers."""
        data = bc.pack(bc.encode_response(response))
        self.zk.create(bc.response_prefix(broker), data, sequence=True)
        self.dispatch(ev.BrokerResponses(broker))

    def stop(self) -> None:
        self.controller.zk.stop()


@pytest.fixture
def bare(zk_chroot: str, zk: ZkClient) -> Iterator[Bare]:
    running = Bare(zk_chroot, zk)
    yield running
    running.stop()
