"""Reliability with real processes: `kto controller` and `kto dev-broker` run as separate
processes against a real ZooKeeper, and the tests kill -9 them, stop them past their session
timeout, and restart ZooKeeper itself."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kto_testing import Waiter, eventually

from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import admin, znodes
from kafka_topic_operator.zk.client import ZkClient
from kto_dev.zookeeper_server import ZooKeeperServer

pytestmark = [pytest.mark.zookeeper, pytest.mark.e2e]

SESSION_TIMEOUT = "3"
T0 = TopicPartition("t", 0)


class Processes:
    def __init__(self, connect: str, root: Path) -> None:
        self.connect = connect
        self.root = root
        self.running: list[subprocess.Popen[bytes]] = []
        self.logs: dict[str, Path] = {}

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = self.root / f"{name}-{len(self.running)}.log"
        self.logs[name] = log
        with log.open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=out,
            )
        self.running.append(process)
        return process

    def controller(self, controller_id: int, *extra: str) -> subprocess.Popen[bytes]:
        return self._start(
            f"controller-{controller_id}",
            ["kafka_topic_operator.controller", "--zookeeper", self.connect,
             "--id", str(controller_id), "--session-timeout", SESSION_TIMEOUT,
             "--auto-leader-rebalance-enable", "false", *extra],
        )  # fmt: skip

    def broker(self, broker_id: int) -> subprocess.Popen[bytes]:
        return self._start(
            f"broker-{broker_id}",
            ["kto_dev.devbroker", "--zookeeper", self.connect,
             "--id", str(broker_id), "--log-dir", str(self.log_dir(broker_id)),
             "--session-timeout", SESSION_TIMEOUT, "--controlled-shutdown-retry-backoff-ms", "200"],
        )  # fmt: skip

    def log_dir(self, broker_id: int) -> Path:
        return self.root / f"data-{broker_id}"

    def has_log(self, broker_id: int, tp: TopicPartition) -> bool:
        return (self.log_dir(broker_id) / f"{tp.topic}-{tp.partition}").is_dir()

    def output(self, name: str) -> str:
        return self.logs[name].read_text()

    def stop_all(self) -> None:
        for process in self.running:
            if process.poll() is None:
                process.kill()
            process.wait()


@pytest.fixture
def procs(zk_chroot: str, tmp_path: Path) -> Iterator[Processes]:
    running = Processes(zk_chroot, tmp_path)
    yield running
    running.stop_all()
    for name, log in running.logs.items():  # pytest shows this only when the test failed
        print(f"----- {name}\n{log.read_text()[-20000:]}")


def read_state(
    zk: ZkClient, tp: TopicPartition, watch: object = None
) -> LeaderIsrAndControllerEpoch | None:
    path = znodes.topic_partition_state_path(tp)
    while True:
        if not zk.exists(path, watch=watch):  # type: ignore[arg-type]
            return None
        node = zk.get(path, watch=watch)  # type: ignore[arg-type]
        if node is not None:
            return znodes.decode_partition_state(node.path, node.data, node.version)


def wait_state(zk: ZkClient, tp: TopicPartition, done, timeout: float = 30.0) -> LeaderAndIsr:  # type: ignore[no-untyped-def]
    state = Waiter(zk).until(
        lambda watch: read_state(zk, tp, watch),
        lambda s: s is not None and done(s.leader_and_isr),
        f"the state of {tp}",
        timeout,
    )
    assert state is not None
    return state.leader_and_isr


def controller_epoch(zk: ZkClient) -> int:
    node = zk.get(znodes.CONTROLLER_EPOCH_PATH)
    assert node is not None
    return znodes.decode_controller_epoch(node.path, node.data)


def wait_brokers(zk: ZkClient, *ids: int) -> None:
    """Every broker registered, so assignments see them all from the start."""

    def read(watch: object) -> list[str]:
        # A missing znode takes no child watch: watch for its creation instead.
        if not zk.exists(znodes.BROKER_IDS_PATH, watch=watch):  # type: ignore[arg-type]
            return []
        return zk.children(znodes.BROKER_IDS_PATH, watch=watch) or []  # type: ignore[arg-type]

    Waiter(zk).until(
        read,
        lambda names: {str(i) for i in ids} <= set(names),
        f"brokers {ids} registered",
    )


def wait_controller(zk: ZkClient, controller_id: int, timeout: float = 30.0) -> None:
    def read(watch: object) -> int | None:
        if not zk.exists(znodes.CONTROLLER_PATH, watch=watch):  # type: ignore[arg-type]
            return None
        node = zk.get(znodes.CONTROLLER_PATH)
        return None if node is None else znodes.decode_controller(node.path, node.data).broker_id

    Waiter(zk).until(read, lambda c: c == controller_id, f"controller {controller_id}", timeout)


def assert_consistent(zk: ZkClient) -> None:
    """No orphans: every partition of every topic znode has a state, every partitions znode
    belongs to a topic, and no deletion marker or reassignment is left over."""
    for topic in zk.children(znodes.TOPICS_PATH) or []:
        node = zk.get(znodes.topic_path(topic))
        assert node is not None
        data = znodes.decode_topic(node.path, node.data)
        assert data.topic_id is not None, topic
        assert not any(a.is_being_reassigned for a in data.partitions.values()), topic
        for partition in data.partitions:
            state = read_state(zk, TopicPartition(topic, partition))
            assert state is not None, f"{topic}-{partition} has no state"
    assert not zk.children(znodes.DELETE_TOPICS_PATH)
    assert not zk.exists(znodes.REASSIGN_PARTITIONS_PATH)


def test_kill_9_broker_fails_over_leaders_and_the_broker_comes_back(
    procs: Processes, zk: ZkClient
) -> None:
    for broker in (0, 1, 2):
        procs.broker(broker)
    wait_brokers(zk, 0, 1, 2)
    procs.controller(100)
    admin.create_topic_with_assignment(zk, "t", {0: [0, 1, 2]})
    admin.create_topic_with_assignment(zk, "solo", {0: [0]})
    solo = TopicPartition("solo", 0)
    wait_state(zk, T0, lambda lai: lai.leader == 0)
    wait_state(zk, solo, lambda lai: lai.leader == 0)
    eventually(lambda: procs.has_log(0, T0), "broker 0 hosting t-0")
    procs.running[0].send_signal(signal.SIGKILL)
    lai = wait_state(zk, T0, lambda lai: lai.leader == 1)
    assert lai.isr == (1, 2)
    offline = wait_state(zk, solo, lambda lai: lai.leader == -1)
    assert offline.isr == (0,)  # never below one member
    procs.broker(0)
    assert wait_state(zk, T0, lambda lai: lai.isr == (1, 2, 0)).leader == 1
    assert wait_state(zk, solo, lambda lai: lai.leader == 0).isr == (0,)


def test_deletion_with_a_killed_broker_halts_then_completes(procs: Processes, zk: ZkClient) -> None:
    for broker in (0, 1):
        procs.broker(broker)
    wait_brokers(zk, 0, 1)
    procs.controller(100)
    admin.create_topic_with_assignment(zk, "t", {0: [0, 1], 1: [1, 0]}, {"retention.ms": "60000"})
    for p in (0, 1):  # both brokers in both ISRs: broker 0 alone can then lead t-0
        wait_state(zk, TopicPartition("t", p), lambda lai: set(lai.isr) == {0, 1})
    eventually(lambda: procs.has_log(1, T0), "broker 1 hosting t-0")
    procs.running[1].send_signal(signal.SIGKILL)
    wait_state(zk, T0, lambda lai: lai.isr == (0,))
    admin.delete_topic(zk, "t")
    eventually(lambda: not procs.has_log(0, T0), "broker 0's replicas deleted")
    assert zk.exists(znodes.topic_path("t")) and zk.exists(znodes.delete_topic_path("t"))
    assert "Halted deletion of topics t due to offline replicas" in procs.output("controller-100")
    procs.broker(1)
    waiter = Waiter(zk)
    for path in (
        znodes.topic_path("t"),
        znodes.topic_config_path("t"),
        znodes.delete_topic_path("t"),
    ):
        waiter.exists(path, present=False, timeout=30)
    eventually(lambda: not procs.has_log(1, T0) and not procs.has_log(1, TopicPartition("t", 1)),
               "the returning broker's replicas deleted")  # fmt: skip


def test_kill_9_controller_while_creating_many_topics(procs: Processes, zk: ZkClient) -> None:
    for broker in (0, 1, 2):
        procs.broker(broker)
    wait_brokers(zk, 0, 1, 2)
    first = procs.controller(100)
    wait_controller(zk, 100)
    procs.controller(101)
    topics = [f"topic-{i:03d}" for i in range(150)]
    for i, topic in enumerate(topics):
        admin.create_topic_with_assignment(
            zk, topic, {p: [(i + p) % 3, (i + p + 1) % 3] for p in range(4)}
        )
        if i == 60:
            first.send_signal(signal.SIGKILL)
    wait_controller(zk, 101)
    assert controller_epoch(zk) == 2
    for topic in topics:
        for p in range(4):
            wait_state(zk, TopicPartition(topic, p), lambda lai: lai.leader >= 0)
    assert_consistent(zk)


def test_kill_9_controller_in_the_middle_of_a_deletion(procs: Processes, zk: ZkClient) -> None:
    for broker in (0, 1):
        procs.broker(broker)
    wait_brokers(zk, 0, 1)
    first = procs.controller(100)
    wait_controller(zk, 100)
    procs.controller(101)
    topics = [f"d{i}" for i in range(40)]
    for topic in topics:
        admin.create_topic_with_assignment(zk, topic, {0: [0, 1], 1: [1, 0]})
    for topic in topics:
        wait_state(zk, TopicPartition(topic, 1), lambda lai: lai.leader >= 0)
    for topic in topics:
        admin.delete_topic(zk, topic)
    first.send_signal(signal.SIGKILL)
    wait_controller(zk, 101)
    waiter = Waiter(zk)
    waiter.children(znodes.TOPICS_PATH, lambda names: not names, timeout=30)
    waiter.children(znodes.DELETE_TOPICS_PATH, lambda names: not names, timeout=30)
    assert not zk.children(znodes.config_entity_type_path("topics"))
    eventually(
        lambda: not any(d for b in (0, 1) for d in procs.log_dir(b).glob("d*-*")),
        "every partition directory gone",
    )
    assert_consistent(zk)


def test_kill_9_controller_in_the_middle_of_a_reassignment(procs: Processes, zk: ZkClient) -> None:
    for broker in (0, 1, 2):
        procs.broker(broker)
    wait_brokers(zk, 0, 1, 2)
    first = procs.controller(100)
    wait_controller(zk, 100)
    procs.controller(101)
    admin.create_topic_with_assignment(zk, "t", {p: [0, 1] for p in range(20)})
    for p in range(20):
        wait_state(zk, TopicPartition("t", p), lambda lai: set(lai.isr) == {0, 1})
    admin.reassign_partitions(zk, {TopicPartition("t", p): [2, 1] for p in range(20)})
    first.send_signal(signal.SIGKILL)
    wait_controller(zk, 101)
    Waiter(zk).exists(znodes.REASSIGN_PARTITIONS_PATH, present=False, timeout=30)
    for p in range(20):
        lai = wait_state(zk, TopicPartition("t", p), lambda lai: lai.isr in ((2, 1), (1, 2)))
        assert lai.leader in (1, 2)
    node = zk.get(znodes.topic_path("t"))
    assert node is not None
    assert {
        p: a.replicas for p, a in znodes.decode_topic(node.path, node.data).partitions.items()
    } == {p: (2, 1) for p in range(20)}
    eventually(lambda: not any(procs.log_dir(0).glob("t-*")), "the moved replicas deleted")
    assert_consistent(zk)


def test_a_stopped_controller_loses_its_session_and_its_late_writes_fail(
    procs: Processes, zk: ZkClient
) -> None:
    procs.broker(0)
    first = procs.controller(100)
    wait_controller(zk, 100)
    procs.controller(101)
    admin.create_topic_with_assignment(zk, "t", {0: [0]})
    wait_state(zk, T0, lambda lai: lai.leader == 0)
    first.send_signal(signal.SIGSTOP)
    try:
        wait_controller(zk, 101)
        admin.create_topic_with_assignment(zk, "u", {0: [0]})  # the paused one saw this too
        wait_state(zk, TopicPartition("u", 0), lambda lai: lai.leader == 0)
    finally:
        first.send_signal(signal.SIGCONT)
    eventually(
        lambda: "Resigning" in procs.output("controller-100"), "the old controller to resign"
    )
    admin.create_topic_with_assignment(zk, "v", {0: [0]})
    state = None

    def v_state() -> LeaderIsrAndControllerEpoch | None:
        return read_state(zk, TopicPartition("v", 0))

    state = eventually(v_state, "v online")
    assert state.controller_epoch == 2  # only the new controller writes
    assert controller_epoch(zk) == 2
    assert_consistent(zk)


def test_zookeeper_restart(tmp_path: Path) -> None:
    with ZooKeeperServer(tmp_path / "zk") as server:
        procs = Processes(server.connect_string, tmp_path)
        zk = ZkClient(server.connect_string)
        zk.start()
        try:
            procs.broker(0)
            procs.controller(100)
            admin.create_topic_with_assignment(zk, "t", {0: [0]})
            wait_state(zk, T0, lambda lai: lai.leader == 0)
            server.stop()
            server.start()
            admin.create_topic_with_assignment(zk, "after", {0: [0]})
            wait_state(zk, TopicPartition("after", 0), lambda lai: lai.leader == 0, timeout=40)
            assert_consistent(zk)
        finally:
            procs.stop_all()
            zk.stop()
