"""`kto dev-cluster up --kubernetes`: a real one-node Kubernetes cluster, real Kafka where its
pods reach it, and the operator installed by the Helm chart; driven as a user drives it, with the
project's kubectl and the kubeconfig `up` writes, and stopped leaving nothing on the machine."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kto_testing import eventually
from node_traces import NOTHING, node_traces

from kto_dev import cluster
from kto_dev.apache_kafka.broker import alive
from kto_dev.cluster_api import kubectl
from kto_dev.cluster_kubernetes import NAMESPACE, NODE_PROCESSES, node_pids
from kto_dev.cluster_processes import DevClusterError
from kto_dev.node import network

TOPIC = """
apiVersion: kto.dev/v1
kind: KafkaTopic
metadata:
  name: orders
spec:
  partitions: 3
  replicas: 3
"""

# All a KafkaRebalance in the release's namespace names: the chart's values give the rest.
REBALANCE = """
apiVersion: kto.dev/v1
kind: KafkaRebalance
metadata:
  name: even-out
spec:
  engine: {type: kubernetes, executors: 2, executorMemory: 1Gi}
"""


def kto(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafka_topic_operator.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


class DevCluster:
    """One started in `directory` with the defaults (.kto/dev-cluster, .kto/kubeconfig)."""

    def __init__(self, directory: Path, started: subprocess.CompletedProcess[str]) -> None:
        self.directory = directory
        self.hints = started.stdout
        self.state: dict[str, Any] = json.loads(self.state_file.read_text())
        self.env = {**os.environ, "KUBECONFIG": str(directory / ".kto" / "kubeconfig")}

    @property
    def state_file(self) -> Path:
        return self.directory / ".kto" / "dev-cluster" / "state.json"

    def kubectl(self, *args: str, stdin: str | None = None, timeout: float = 60) -> str:
        done = subprocess.run([kubectl(), *args], input=stdin, env=self.env, capture_output=True,
                              text=True, timeout=timeout)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    def status(self) -> subprocess.CompletedProcess[str]:
        return kto("dev-cluster", "status", cwd=self.directory)


def up(directory: Path, *extra: str) -> DevCluster:
    started = kto("dev-cluster", "up", "--kubernetes", *extra, cwd=directory, timeout=900)
    assert started.returncode == 0, started.stderr + started.stdout
    return DevCluster(directory, started)


def down_leaves_nothing(dev: DevCluster) -> None:
    index = int(dev.state["kubernetes"]["network"].removeprefix(network.PREFIX))
    during = node_traces(index, dev.directory.resolve())
    assert during["processes"] and during["namespace"] and during["cgroups"]
    pids = [*dev.state["pids"], *node_pids(dev.directory / ".kto" / "dev-cluster").values()]
    assert len(pids) == len(dev.state["pids"]) + len(NODE_PROCESSES)
    stopped = kto("dev-cluster", "down", cwd=dev.directory, timeout=300)
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout.strip() == "dev cluster stopped"
    assert node_traces(index, dev.directory.resolve()) == NOTHING
    assert [pid for pid in pids if alive(pid)] == []
    assert not dev.state_file.exists()
    assert kto("dev-cluster", "status", cwd=dev.directory).stdout.startswith("no dev cluster")


def hint_output(dev: DevCluster, hint: str) -> str:
    """What a command `up` printed prints, run as printed (after the printed export)."""
    done = subprocess.run(shlex.split(hint), env=dev.env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def operator_ready(dev: DevCluster) -> str:
    """The operator's one pod, Ready; its name."""
    pods = json.loads(dev.kubectl("get", "pods", "-n", NAMESPACE, "-o", "json"))["items"]
    (pod,) = pods
    ready = [c for c in pod["status"]["conditions"] if c["type"] == "Ready"]
    assert ready and ready[0]["status"] == "True"
    return str(pod["metadata"]["name"])


@pytest.mark.node
@pytest.mark.kafka
@pytest.mark.zookeeper
def test_up_on_a_node_with_kafka_on_zookeeper_then_down_leaves_nothing(tmp_path: Path) -> None:
    dev = up(tmp_path)
    try:
        state = dev.state
        host = state["kubernetes"]["host"]
        assert state["zookeeper"].startswith(f"{host}:")
        assert all(b.startswith(f"{host}:") for b in state["bootstrap"].split(","))
        # The node, Ready, seen with the kubeconfig `up` wrote.
        (node,) = json.loads(dev.kubectl("get", "nodes", "-o", "json"))["items"]
        (ready,) = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready["status"] == "True"
        pod = operator_ready(dev)
        # Rebalancing on, its work volume bound.
        deployment = json.loads(dev.kubectl("get", "deployment", "-n", NAMESPACE, "-o", "json"))
        (container,) = deployment["items"][0]["spec"]["template"]["spec"]["containers"]
        assert "--no-rebalance" not in container["args"]
        claims = dev.kubectl(
            "get", "pvc", "-n", NAMESPACE, "-o", "jsonpath={.items[*].status.phase}"
        )
        assert claims == "Bound"

        dev.kubectl("apply", "-f", "-", stdin=TOPIC)
        dev.kubectl("wait", "kafkatopic/orders", "--for=condition=Ready", "--timeout=120s",
                    timeout=150)  # fmt: skip

        # A KafkaRebalance naming only its engine's type and size plans: its Job has the
        # chart's volume, work directory and CPU requests (tests/node/test_rebalance.py follows
        # such a Job to its plan).
        dev.kubectl("apply", "-n", NAMESPACE, "-f", "-", stdin=REBALANCE)
        (job,) = eventually(lambda: json.loads(dev.kubectl(
            "get", "jobs", "-n", NAMESPACE, "-l", "kto.dev/rebalance=even-out", "-o", "json"
        ))["items"], "the KafkaRebalance's Job", timeout=120)  # fmt: skip
        args = job["spec"]["template"]["spec"]["containers"][0]["args"]
        claim = "spark.kubernetes.executor.volumes.persistentVolumeClaim.workdir"
        assert f"{claim}.options.claimName=kto-rebalance-work" in args
        assert "spark.kubernetes.executor.request.cores=250m" in args
        assert "spark.kubernetes.driver.request.cores=250m" in args
        dev.kubectl("delete", "-n", NAMESPACE, "kafkarebalance/even-out", "--timeout=120s",
                    timeout=150)  # fmt: skip

        status = dev.status()
        assert status.returncode == 0, status.stdout + status.stderr
        lines = status.stdout.splitlines()
        assert lines[0].startswith("dev cluster: 11 of 11 processes running; Kubernetes node")
        for name in NODE_PROCESSES:
            assert any(line.startswith(f"  {name}: running (pid ") for line in lines), name
        assert any(line.startswith(f"  ZooKeeper {state['zookeeper']}: running") for line in lines)
        for broker in ("0", "1", "2"):
            where = state["kafka"][broker]["bootstrap"]
            assert any(line.startswith(f"  Kafka broker {broker} {where} rack ") and
                       ": running (pid " in line for line in lines), broker  # fmt: skip
        assert f"  operator pod {pod} (release kto in {NAMESPACE}): Running, Ready" in lines

        # The hints work as printed: the kubeconfig's export, kubectl, the operator's log.
        hinted = {line.strip().split("    #")[0] for line in dev.hints.splitlines()}
        assert f"export KUBECONFIG={(tmp_path / '.kto' / 'kubeconfig').resolve()}" in hinted
        assert f"{kubectl()} get kt" in hinted
        (logs,) = [h for h in hinted if h.startswith(f"{kubectl()} logs ")]
        assert "orders" in hint_output(dev, logs)
        (describe,) = [h for h in hinted if " describe --zookeeper " in h]
        assert "orders" in hint_output(dev, describe)
        assert "took " in dev.hints and " node " in dev.hints and " chart " in dev.hints

        # A broker stopped and started again, as with --kafka.
        stopped = kto("dev-cluster", "stop-broker", "--id", "1", cwd=tmp_path)
        assert stopped.stdout.strip() == "broker 1 stopped", stopped.stderr
        assert dev.status().returncode == 1
        started = kto("dev-cluster", "start-broker", "--id", "1", cwd=tmp_path, timeout=180)
        assert started.stdout.strip() == "broker 1 started", started.stderr
        assert dev.status().returncode == 0
    finally:
        down_leaves_nothing(dev)


@pytest.mark.node
@pytest.mark.kafka
def test_up_on_a_node_with_kafka_on_kraft(tmp_path: Path) -> None:
    dev = up(tmp_path, "--kraft")
    try:
        state = dev.state
        host = state["kubernetes"]["host"]
        assert state["kraft"]["voters"].count(f"@{host}:") == 3
        assert "zookeeper" not in state
        operator_ready(dev)
        dev.kubectl("apply", "-f", "-", stdin=TOPIC)
        dev.kubectl("wait", "kafkatopic/orders", "--for=condition=Ready", "--timeout=120s",
                    timeout=150)  # fmt: skip
        hinted = [line.strip().split("    #")[0] for line in dev.hints.splitlines()]
        (describe,) = [h for h in hinted if h.endswith(" --describe")]
        assert "Topic: orders" in hint_output(dev, describe)
        lines = dev.status().stdout.splitlines()
        assert sum(line.startswith("  KRaft node ") and ": running (pid " in line
                   for line in lines) == 3  # fmt: skip
        assert any(line.startswith("  operator pod ") and line.endswith("Running, Ready")
                   for line in lines)  # fmt: skip
    finally:
        down_leaves_nothing(dev)


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--apiserver", "real"], "--kubernetes and --apiserver exclude each other: the "
         "Kubernetes node runs its own kube-apiserver"),
        (["--apiserver", "emulator"], "--kubernetes and --apiserver exclude each other"),
        (["--kafka"], "--kubernetes and --kafka exclude each other: with --kubernetes the "
         "brokers are always real Apache Kafka"),
    ],
)  # fmt: skip
def test_kubernetes_excludes_apiserver_and_kafka(
    tmp_path: Path, extra: list[str], said: str
) -> None:
    refused = kto("dev-cluster", "up", "--kubernetes", *extra, cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.splitlines()[-1].startswith(f"kto dev-cluster: error: {said}")
    assert not (tmp_path / ".kto").exists()


def test_up_refuses_the_same_combinations(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    with pytest.raises(DevClusterError, match=r"^--kubernetes and --kafka exclude each other$"):
        cluster.up(tmp_path, kubeconfig, kubernetes=True, kafka=True)
    with pytest.raises(DevClusterError, match=r"^--kubernetes and --apiserver exclude each other$"):
        cluster.up(tmp_path, kubeconfig, kubernetes=True, apiserver="real")
    assert list(tmp_path.iterdir()) == []
