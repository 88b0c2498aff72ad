"""The dev broker as a real process (`python -m kto_dev.devbroker`): SIGTERM runs a
controlled shutdown against a test-played controller, SIGKILL leaves the registration to expire
with the session, and a second broker with a live id is refused."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.broker_channel import (
    ControlledShutdownRequest,
    ControlledShutdownResult,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import Node, ZkClient

from .conftest import PlayedController, Waiter

pytestmark = pytest.mark.zookeeper

EXIT_DEADLINE = 30.0
CS_PATH = bc.controlled_shutdown_path(1)


@dataclass
class BrokerProcess:
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text()


Run = Callable[..., BrokerProcess]


def command(zk_chroot: str, broker_id: int, log_dir: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "kto_dev.devbroker",
        "--zookeeper",
        zk_chroot,
        "--id",
        str(broker_id),
        "--log-dir",
        str(log_dir),
        *extra,
    ]


@pytest.fixture
def run(zk_chroot: str, tmp_path: Path) -> Iterator[Run]:
    started: list[BrokerProcess] = []

    def start(broker_id: int = 1, *extra: str) -> BrokerProcess:
        n = len(started)
        log = tmp_path / f"broker-{broker_id}-{n}.log"
        with log.open("wb") as stderr:
            process = subprocess.Popen(
                command(zk_chroot, broker_id, tmp_path / f"data-{broker_id}-{n}", *extra),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        started.append(BrokerProcess(process, log))
        return started[-1]

    yield start
    for broker in started:
        if broker.process.poll() is None:
            broker.process.kill()
            broker.process.wait()


def registration(zk: ZkClient, waiter: Waiter, broker_id: int = 1) -> Node:
    waiter.exists(znodes.broker_path(broker_id))
    node = zk.get(znodes.broker_path(broker_id))
    assert node is not None
    return node


def play_active_controller(zk: ZkClient) -> None:
    zk.create(znodes.CONTROLLER_PATH, znodes.encode_controller(0, 1), ephemeral=True)


def await_shutdown_request(
    zk: ZkClient, waiter: Waiter, after: Node | None = None
) -> tuple[Node, ControlledShutdownRequest]:
    """The next unanswered controlled shutdown request (a new znode if `after` is given)."""

    def read(watch: Callable[[object], None]) -> Node | None:
        return zk.get(CS_PATH) if zk.exists(CS_PATH, watch=watch) else None

    def fresh(node: Node | None) -> bool:
        if node is None or (after is not None and node.czxid == after.czxid):
            return False
        return bc.decode_controlled_shutdown(node.path, node.data).result is None

    node = waiter.until(read, fresh, "a controlled shutdown request")
    assert node is not None
    return node, bc.decode_controlled_shutdown(node.path, node.data).request


def answer(zk: ZkClient, node: Node, result: ControlledShutdownResult) -> None:
    request = bc.decode_controlled_shutdown(node.path, node.data).request
    zk.set(node.path, bc.encode_controlled_shutdown(request, result), version=node.version)


def test_sigterm_asks_the_controller_and_leaves_when_it_answers(
    run: Run, zk: ZkClient, waiter: Waiter, controller: PlayedController
) -> None:
    broker = run(1, "--controlled-shutdown-retry-backoff-ms", "0")
    epoch = registration(zk, waiter).czxid
    play_active_controller(zk)
    lead = LeaderAndIsrPartitionState("t", 0, 1, 1, 0, (1, 2), 0, (1, 2))
    assert controller.call(
        1, LeaderAndIsrRequest(0, 1, epoch, (lead,), correlation_id=1)
    ).error == ("NONE")

    broker.process.send_signal(signal.SIGTERM)
    first, request = await_shutdown_request(zk, waiter)
    assert request == ControlledShutdownRequest(1, epoch)
    assert first.ephemeral_owner != 0
    # While it waits, the broker still serves the controller, which moves leaderships away.
    stop = StopReplicaRequest(
        0, 1, epoch, (StopReplicaPartitionState("t", 0, 1, False),), correlation_id=2
    )
    assert controller.call(1, stop).error == "NONE"

    # Kafka retries while partitions remain (controlled.shutdown.max.retries).
    answer(zk, first, ControlledShutdownResult("NONE", (TopicPartition("t", 0),)))
    second, _ = await_shutdown_request(zk, waiter, after=first)
    answer(zk, second, ControlledShutdownResult("NONE", ()))

    assert broker.process.wait(timeout=EXIT_DEADLINE) == 0
    assert not zk.exists(znodes.broker_path(1))  # the session closed: no wait for expiry
    assert not zk.exists(CS_PATH)
    output = broker.output()
    assert "Starting controlled shutdown" in output
    assert "Remaining partitions to move: t-0" in output
    assert "Retrying controlled shutdown after the previous attempt failed..." in output
    assert "Controlled shutdown succeeded" in output
    assert "unclean shutdown" not in output
    assert "Handled LeaderAndIsr request correlation id 1 from controller 0 epoch 1" in output


def test_the_controller_may_answer_by_deleting_the_request(
    run: Run, zk: ZkClient, waiter: Waiter
) -> None:
    broker = run(1)
    registration(zk, waiter)
    play_active_controller(zk)
    broker.process.send_signal(signal.SIGTERM)
    node, _ = await_shutdown_request(zk, waiter)
    zk.delete(node.path)
    assert broker.process.wait(timeout=EXIT_DEADLINE) == 0
    assert "Controlled shutdown succeeded" in broker.output()


def test_without_a_controller_the_attempts_fail_and_it_leaves_anyway(
    run: Run, zk: ZkClient, waiter: Waiter
) -> None:
    broker = run(1, "--controlled-shutdown-retry-backoff-ms", "0")
    registration(zk, waiter)
    broker.process.send_signal(signal.SIGTERM)
    assert broker.process.wait(timeout=EXIT_DEADLINE) == 0
    output = broker.output()
    assert output.count("No controller present") == 3
    assert (
        "Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed"
        in output
    )
    assert not zk.exists(znodes.broker_path(1))


def test_a_second_signal_stops_waiting_for_the_controller(
    run: Run, zk: ZkClient, waiter: Waiter
) -> None:
    broker = run(1, "--controlled-shutdown-timeout", "600")
    registration(zk, waiter)
    play_active_controller(zk)
    broker.process.send_signal(signal.SIGTERM)
    await_shutdown_request(zk, waiter)
    broker.process.send_signal(signal.SIGTERM)
    assert broker.process.wait(timeout=EXIT_DEADLINE) == 0
    assert "Proceeding to do an unclean shutdown" in broker.output()


def test_sigkill_leaves_the_registration_until_the_session_expires(
    run: Run, zk: ZkClient, waiter: Waiter
) -> None:
    broker = run(1, "--session-timeout", "2")
    registration(zk, waiter)
    broker.process.kill()
    broker.process.wait()
    assert zk.exists(znodes.broker_path(1))  # nothing said goodbye: ZooKeeper waits
    waiter.exists(znodes.broker_path(1), present=False)


def test_a_second_broker_with_a_live_id_exits_with_kafkas_error(
    run: Run, zk: ZkClient, waiter: Waiter, zk_chroot: str, tmp_path: Path
) -> None:
    run(1)
    owner = registration(zk, waiter).ephemeral_owner
    duplicate = subprocess.run(
        command(zk_chroot, 1, tmp_path / "other"),
        capture_output=True,
        text=True,
        timeout=EXIT_DEADLINE,
        check=False,
    )
    assert duplicate.returncode == 1
    assert (
        "Error while creating ephemeral at /brokers/ids/1, node already exists and owner "
        f"'{owner}' does not match current session" in duplicate.stderr
    )
    node = zk.get(znodes.broker_path(1))
    assert node is not None and node.ephemeral_owner == owner
