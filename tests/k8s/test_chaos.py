"""Chaos: kill -9 of the operator, the controller and a broker at random points of bulk
creation, expansion, reassignment and deletion; ZooKeeper frozen, restarted, and every session
expired by a network partition. Afterwards no topic is lost, created twice or left half-made, no
znode is orphaned, and every resource is Ready (all processes run again at the end).

Each process runs on its own as in production (`kto run`, `kto controller`, `kto dev-broker`)
and reaches ZooKeeper through a TCP proxy the test can cut. The random points come from a seed
the test prints; `KTO_CHAOS_SEED=<seed>` replays a run."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from kto_testing import eventually
from network_partition import NetworkPartition

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import ZkClient
from kto_dev.zookeeper_server import ZooKeeperServer
from kube_api_emulator import ApiServer

from .test_operator import GROUP, PLURAL, ROOT, VERSION, Setup

pytestmark = [pytest.mark.zookeeper, pytest.mark.e2e, pytest.mark.chaos]

TOPICS = 30
BROKERS = (0, 1, 2)
PACE = 0.05  # s between the test's requests: faults land among them, not after them all
SESSION_TIMEOUT = 6.0  # the operator's and controller's; the brokers' is 4 s
TOPIC_CONFIGS = f"{znodes.CONFIG_PATH}/topics"


class Chaos:
    """The operator, the controller and three brokers as processes of their own."""

    def __init__(self, setup: Setup, connect: str, rng: random.Random) -> None:
        self.setup, self.connect, self.rng = setup, connect, rng
        self.root = setup.root
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.kills: list[str] = []

    def command(self, name: str) -> list[str]:
        kto = [sys.executable, "-m", "kafka_topic_operator.cli"]
        timeout = ["--session-timeout", str(SESSION_TIMEOUT)]
        if name == "operator":
            return [*kto, "run", "--zookeeper", self.connect, "--liveness", "",
                    "--metrics-port", "0", "--zookeeper-retry-seconds", "2", *timeout]  # fmt: skip
        if name == "controller":
            return [*kto, "controller", "--zookeeper", self.connect, *timeout]
        broker = name.removeprefix("broker-")
        return [*kto, "dev-broker", "--zookeeper", self.connect, "--id", broker,
                "--rack", f"rack-{broker}", "--log-dir", str(self.root / name),
                "--session-timeout", "4"]  # fmt: skip

    def start(self, name: str) -> None:
        if name.startswith("broker-"):
            # A broker killed a moment ago is registered until its session expires; Kafka's
            # broker started again waits for that too.
            path = f"{znodes.BROKER_IDS_PATH}/{name.removeprefix('broker-')}"
            eventually(lambda: not self.setup.zk.exists(path), f"{name} unregistered", 30)
        env = {**os.environ, "KUBECONFIG": str(self.setup.kubeconfig)}
        with (self.root / f"{name}.log").open("a") as log:
            self.processes[name] = subprocess.Popen(
                self.command(name), stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.root
            )

    def kill_and_restart(self, name: str) -> None:
        process = self.processes.pop(name)
        process.send_signal(signal.SIGKILL)
        process.wait()
        self.kills.append(name)
        self.start(name)

    def stop_all(self) -> None:
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextlib.contextmanager
def chaos_cluster(tmp_path: Path) -> Iterator[tuple[Chaos, ZooKeeperServer, NetworkPartition]]:
    seed = int(os.environ.get("KTO_CHAOS_SEED") or random.SystemRandom().randrange(2**32))
    print(f"chaos seed {seed} (KTO_CHAOS_SEED={seed} replays it)")
    with ZooKeeperServer(tmp_path / "zookeeper") as server, ApiServer() as api:
        partition = NetworkPartition(server.port)
        zk = ZkClient(server.connect_string)  # the test's own view: never through the proxy
        zk.start()
        setup = Setup(api, zk, server.connect_string, tmp_path)
        for crd_file in sorted((ROOT / "crds").glob("*.yaml")):
            setup.ext.create_custom_resource_definition(yaml.safe_load(crd_file.read_text()))
        chaos = Chaos(setup, f"127.0.0.1:{partition.port}", random.Random(seed))
        try:
            for name in ["controller", *(f"broker-{b}" for b in BROKERS), "operator"]:
                chaos.start(name)
            # Every process up and working before the faults begin.
            setup.apply("warm-up", partitions=1, replicas=3)
            setup.ready("warm-up")
            setup.api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "warm-up")
            eventually(lambda: setup.get("warm-up") is None, "warm-up deleted", timeout=30)
            yield chaos, server, partition
        finally:
            partition.heal()
            chaos.stop_all()
            partition.close()
            zk.stop()
            print("killed:", ", ".join(chaos.kills) or "nothing")
            for log in sorted(tmp_path.glob("*.log")):
                print(f"--- {log.name}\n{log.read_text()[-4000:]}")


def names() -> list[str]:
    return [f"chaos-{i}" for i in range(TOPICS)]


def topics_now(zk: ZkClient) -> dict[str, dict[int, tuple[int, ...]]]:
    found = {}
    for topic in zk.children(znodes.TOPICS_PATH) or []:
        node = zk.get(znodes.topic_path(topic))
        if node is not None:
            decoded = znodes.decode_topic(node.path, node.data)
            found[topic] = {p: a.replicas for p, a in decoded.partitions.items()}
    return found


def during(
    chaos: Chaos,
    act: Callable[[], None],
    done: Callable[[], int],
    faults: dict[str, Callable[[], None]],
) -> None:
    """Starts `act` and lets each fault strike when `done()` (out of TOPICS) reaches a random
    point; a fault whose point is never reached strikes at the end."""
    points = {fault: chaos.rng.randint(1, TOPICS - 1) for fault in faults}
    acting = threading.Thread(target=act)
    began = time.monotonic()
    acting.start()
    while points:
        progress = done()
        for fault, point in sorted(points.items(), key=lambda item: item[1]):
            if progress >= point or progress >= TOPICS:
                print(f"{fault} at {progress}/{TOPICS}, {time.monotonic() - began:.1f} s in")
                faults[fault]()
                del points[fault]
        time.sleep(0.05)
    acting.join()


def patch_all(chaos: Chaos, spec: dict[str, int]) -> None:
    for name in names():
        chaos.setup.api.patch_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, name, {"spec": spec}
        )
        time.sleep(PACE)


def delete_all(chaos: Chaos) -> None:
    for name in names():
        chaos.setup.api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, name)
        time.sleep(PACE)


def apply_all(chaos: Chaos) -> None:
    for name in names():
        chaos.setup.apply(name, partitions=2, replicas=2)
        time.sleep(PACE)


def converged(chaos: Chaos, partitions: int, replicas: int, ids: dict[str, str]) -> None:
    """Every resource Ready as declared; the topics exactly the resources' (none lost, none
    extra, none created twice: the topic ids are the first ones); nothing half-made or left
    waiting in /admin; every partition led by one of its replicas."""
    zk = chaos.setup.zk
    all_ready(chaos)
    topics = eventually(
        lambda: (
            (found := topics_now(zk))
            and all(len(found.get(n, {})) == partitions for n in names())
            and all(len(r) == replicas for p in found.values() for r in p.values())
            and found
        ),
        f"{TOPICS} topics of {partitions} partitions and {replicas} replicas",
        timeout=90,
    )
    assert sorted(topics) == sorted(names())
    for name, assignment in topics.items():
        for partition, assigned in assignment.items():
            assert len(set(assigned)) == replicas, (name, partition, assigned)
            state = zk.get(znodes.topic_partition_state_path(TopicPartition(name, partition)))
            assert state is not None, (name, partition)
            decoded = znodes.decode_partition_state(state.path, state.data, state.version)
            leader = decoded.leader_and_isr.leader
            assert leader in assigned, (name, partition, leader)
        node = zk.get(znodes.topic_path(name))
        assert node is not None
        topic_id = znodes.decode_topic(node.path, node.data).topic_id
        assert ids.setdefault(name, str(topic_id)) == str(topic_id), f"{name} created again"
    assert sorted(zk.children(TOPIC_CONFIGS) or []) == sorted(names())
    assert not zk.children(znodes.DELETE_TOPICS_PATH)
    assert not zk.exists(znodes.REASSIGN_PARTITIONS_PATH)


def all_ready(chaos: Chaos) -> None:
    def waiting() -> dict[str, object]:
        found = {}
        for name in names():
            resource = chaos.setup.get(name) or {}
            status = resource.get("status") or {}
            ready = [c for c in status.get("conditions") or [] if c["type"] == "Ready"]
            generation = (resource.get("metadata") or {}).get("generation")
            if (
                not ready
                or ready[0]["status"] != "True"
                or (status.get("observedGeneration") != generation)
            ):
                found[name] = (ready, status.get("observedGeneration"), generation)
        return found

    try:
        eventually(lambda: not waiting(), "every resource Ready", timeout=90)
    except AssertionError as e:
        raise AssertionError(f"not Ready: {waiting()}") from e


def all_gone(chaos: Chaos) -> None:
    zk = chaos.setup.zk
    for name in names():
        eventually(lambda n=name: chaos.setup.get(n) is None, f"{name} deleted", timeout=90)
    assert not zk.children(znodes.TOPICS_PATH)
    # A controller killed between a topic's znodes and its config leaves the config and the
    # marker to its successor, which finishes the deletion once elected.
    eventually(lambda: not zk.children(TOPIC_CONFIGS), "no config znode left", timeout=60)
    eventually(lambda: not zk.children(znodes.DELETE_TOPICS_PATH), "no marker left", timeout=60)


def count_with(chaos: Chaos, test: Callable[[dict[int, tuple[int, ...]]], bool]) -> int:
    found = topics_now(chaos.setup.zk)
    return sum(1 for n in names() if n in found and test(found[n]))


def test_kill_9_of_operator_controller_and_a_broker_at_random_points(tmp_path: Path) -> None:
    with chaos_cluster(tmp_path) as (chaos, _, _):

        def kills() -> dict[str, Callable[[], None]]:
            broker = f"broker-{chaos.rng.choice(BROKERS)}"
            return {v: (lambda v=v: chaos.kill_and_restart(v))  # type: ignore[misc]
                    for v in ("operator", "controller", broker)}  # fmt: skip

        ids: dict[str, str] = {}
        during(chaos, lambda: apply_all(chaos), lambda: count_with(chaos, bool), kills())
        converged(chaos, 2, 2, ids)
        during(chaos, lambda: patch_all(chaos, {"partitions": 4}),
               lambda: count_with(chaos, lambda t: len(t) == 4), kills())  # fmt: skip
        converged(chaos, 4, 2, ids)
        during(chaos, lambda: patch_all(chaos, {"replicas": 3}),
               lambda: count_with(chaos, lambda t: all(len(r) == 3 for r in t.values())),
               kills())  # fmt: skip
        converged(chaos, 4, 3, ids)
        during(chaos, lambda: delete_all(chaos),
               lambda: TOPICS - count_with(chaos, bool), kills())  # fmt: skip
        all_gone(chaos)


def test_zookeeper_frozen_restarted_and_every_session_expired_at_random_points(
    tmp_path: Path,
) -> None:
    with chaos_cluster(tmp_path) as (chaos, server, partition):

        def freeze() -> None:
            server.freeze()
            time.sleep(3)  # the fault itself: nothing to wait for
            server.thaw()

        def restart() -> None:
            server.stop()
            server.start()

        def expire_every_session() -> None:
            partition.cut()
            # Cut off past every session timeout: the server expires them all.
            time.sleep(SESSION_TIMEOUT + 2)
            partition.heal()

        ids: dict[str, str] = {}
        during(chaos, lambda: apply_all(chaos), lambda: count_with(chaos, bool),
               {"freeze": freeze})  # fmt: skip
        converged(chaos, 2, 2, ids)
        during(chaos, lambda: patch_all(chaos, {"partitions": 4}),
               lambda: count_with(chaos, lambda t: len(t) == 4), {"restart": restart})  # fmt: skip
        converged(chaos, 4, 2, ids)
        during(chaos, lambda: patch_all(chaos, {"replicas": 3}),
               lambda: count_with(chaos, lambda t: all(len(r) == 3 for r in t.values())),
               {"expiry": expire_every_session})  # fmt: skip
        converged(chaos, 4, 3, ids)
        during(chaos, lambda: delete_all(chaos), lambda: TOPICS - count_with(chaos, bool),
               {"freeze": freeze, "expiry": expire_every_session})  # fmt: skip
        all_gone(chaos)
