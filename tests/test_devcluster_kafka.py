"""`kto dev-cluster up --kafka`: real Kafka brokers under Kafka's own controller, driven with
real kubectl and seen through a real Kafka client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kto_testing import eventually

from kafka_topic_operator.zk.client import ZkClient
from kto_dev.apache_kafka.broker import alive

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[1]
KUBECTL = ROOT / ".kto" / "bin" / "kubectl"

TOPIC = """
apiVersion: kto.dev/v1
kind: KafkaTopic
metadata:
  name: payments
spec:
  partitions: 6
  replicas: 3
  config:
    retention.ms: 3600000
    min.insync.replicas: 2
"""


def kto(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafka_topic_operator.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=180)  # fmt: skip


class Cluster:
    def __init__(self, directory: Path, state: dict[str, Any]) -> None:
        self.directory = directory
        self.state = state
        self.env = {**os.environ, "KUBECONFIG": str(directory / ".kto" / "kubeconfig")}

    def kubectl(self, *args: str, stdin: str | None = None) -> str:
        done = subprocess.run([str(KUBECTL), *args], input=stdin, env=self.env,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    def kto(self, *args: str) -> subprocess.CompletedProcess[str]:
        return kto(*args, cwd=self.directory)

    def zk(self) -> ZkClient:
        client = ZkClient(self.state["zookeeper"])
        client.start()
        return client

    def saved_state(self) -> dict[str, Any]:
        state: dict[str, Any] = json.loads(
            (self.directory / ".kto" / "dev-cluster" / "state.json").read_text()
        )
        return state


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    subprocess.run(["bash", str(ROOT / "scripts" / "fetch-k8s-binaries.sh")], check=True)
    directory = Path(tmp_path_factory.mktemp("dev-cluster-kafka"))
    started = kto("dev-cluster", "up", "--kafka", cwd=directory)
    assert started.returncode == 0, started.stderr
    state = json.loads((directory / ".kto" / "dev-cluster" / "state.json").read_text())
    cluster = Cluster(directory, state)
    # Applied here, not only by the test that checks it: make test's workers may split this
    # module's tests, each worker with a cluster of its own, and the later tests need payments.
    cluster.kubectl("apply", "-f", "-", stdin=TOPIC)
    ready = '{.status.conditions[?(@.type=="Ready")].status}'
    eventually(lambda: cluster.kubectl("get", "kt", "payments", "-o", f"jsonpath={ready}")
               == "True", "payments Ready", timeout=60)  # fmt: skip
    yield cluster
    kto("dev-cluster", "down", cwd=directory)


def describe(bootstrap: str, topic: str) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """Replicas and ISR per partition, as a Kafka client's metadata request sees them."""
    from confluent_kafka.admin import AdminClient

    metadata = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0}).list_topics(
        topic, timeout=10
    )
    partitions = metadata.topics[topic].partitions
    return (
        {p: list(m.replicas) for p, m in partitions.items()},
        {p: list(m.isrs) for p, m in partitions.items()},
    )


def test_the_state_names_real_broker_jvms(cluster: Cluster) -> None:
    state = cluster.state
    assert state["kafka"]["1"]["bootstrap"] == f"127.0.0.1:{state['kafka']['1']['port']}"
    assert [state["kafka"][b]["rack"] for b in "012"] == ["a", "b", "c"]
    for pid in state["brokers"].values():
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert b"kafka.Kafka" in command
    status = cluster.kto("dev-cluster", "status")
    assert status.returncode == 0, status.stdout + status.stderr
    zk = cluster.zk()
    try:
        node = zk.get("/controller")
        assert node is not None
        controller = json.loads(node.data)["brokerid"]
    finally:
        zk.stop()
    # Kafka's controller, not ours: the operator runs without --embedded-controller.
    assert f"Kafka broker {controller} " in status.stdout
    brokers = [line for line in status.stdout.splitlines() if "Kafka broker" in line]
    assert [line.endswith(", controller") for line in brokers] == [
        b == controller for b in (0, 1, 2)
    ]


def test_a_kafkatopic_is_a_real_topic_as_asked(cluster: Cluster) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, ConfigResource

    cluster.kubectl("apply", "-f", "-", stdin=TOPIC)
    ready = '{.status.conditions[?(@.type=="Ready")].status}'
    eventually(lambda: cluster.kubectl("get", "kt", "payments", "-o", f"jsonpath={ready}")
               == "True", "payments Ready", timeout=60)  # fmt: skip

    # Ready follows Kafka's znodes; the brokers learn of the topic from their controller's
    # UpdateMetadata a moment later.
    # Each call may ask another broker: keep the answer that listed the topic.
    def listed() -> tuple[dict[int, list[int]], dict[int, list[int]]] | None:
        found = describe(cluster.state["bootstrap"], "payments")
        return found if len(found[0]) == 6 else None

    described = eventually(listed, "the brokers' metadata to list payments", timeout=30)
    replicas, isr = described
    assert sorted(replicas) == list(range(6))
    assert all(sorted(r) == [0, 1, 2] for r in replicas.values())
    assert all(sorted(i) == [0, 1, 2] for i in isr.values())
    admin = AdminClient({"bootstrap.servers": cluster.state["bootstrap"], "log_level": 0})
    resource = ConfigResource(ConfigResource.Type.TOPIC, "payments")

    # The broker asked may not have the topic in its metadata yet (UNKNOWN_TOPIC_OR_PART).
    def configs_of() -> Any:
        try:
            return admin.describe_configs([resource])[resource].result(timeout=10)
        except KafkaException:
            return None

    configs = eventually(configs_of, "payments' configs from a broker that knows it", timeout=30)
    assert configs["retention.ms"].value == "3600000"
    assert configs["min.insync.replicas"].value == "2"


def test_stop_and_start_a_broker(cluster: Cluster) -> None:
    pid = cluster.state["brokers"]["1"]
    stopped = cluster.kto("dev-cluster", "stop-broker", "--id", "1")
    assert stopped.returncode == 0, stopped.stderr
    # SIGTERM: Kafka's controlled shutdown, which ends with the JVM and its registration.
    assert not alive(pid)
    zk = cluster.zk()
    try:
        assert sorted(zk.children("/brokers/ids") or []) == ["0", "2"]
    finally:
        zk.stop()
    bootstrap = ",".join(cluster.state["kafka"][b]["bootstrap"] for b in ("0", "2"))
    _, isr = describe(bootstrap, "payments")
    assert all(1 not in i for i in isr.values())
    assert "Kafka broker 1 " in cluster.kto("dev-cluster", "status").stdout
    assert cluster.kto("dev-cluster", "status").returncode == 1  # a process is down

    started = cluster.kto("dev-cluster", "start-broker", "--id", "1")
    assert started.returncode == 0, started.stderr
    restarted = cluster.saved_state()
    assert restarted["brokers"]["1"] != pid
    assert restarted["kafka"]["1"]["port"] == cluster.state["kafka"]["1"]["port"]
    cluster.state = restarted
    eventually(lambda: all(sorted(i) == [0, 1, 2]
                           for i in describe(restarted["bootstrap"], "payments")[1].values()),
               "broker 1 back in every ISR", timeout=60)  # fmt: skip
    assert cluster.kto("dev-cluster", "status").returncode == 0


def test_down_leaves_no_process(tmp_path: Path) -> None:
    started = kto("dev-cluster", "up", "--kafka", cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    state = json.loads((tmp_path / ".kto" / "dev-cluster" / "state.json").read_text())
    killed = kto("dev-cluster", "stop-broker", "--id", "2", "--kill", cwd=tmp_path)
    assert killed.returncode == 0 and not alive(state["brokers"]["2"])
    stopped = kto("dev-cluster", "down", cwd=tmp_path)
    assert stopped.returncode == 0 and stopped.stdout.strip() == "dev cluster stopped"
    assert not any(alive(pid) for pid in state["pids"])
    ours = str(tmp_path)
    left = subprocess.run(["pgrep", "-af", "kafka.Kafka"], capture_output=True, text=True).stdout
    assert ours not in left
