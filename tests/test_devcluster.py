"""`kto dev-cluster up|status|down` for real, driven with real kubectl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from kto_testing import eventually

pytestmark = [pytest.mark.zookeeper, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[1]
KUBECTL = ROOT / ".kto" / "bin" / "kubectl"

TOPIC = """
apiVersion: kto.dev/v1
kind: KafkaTopic
metadata:
  name: orders
spec:
  partitions: 6
  replicas: 3
---
apiVersion: kto.dev/v1
kind: KafkaTopic
metadata:
  name: placed
spec:
  replicaAssignment: [[0, 1], [1, 2]]
"""


def kto(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafka_topic_operator.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_up_kubectl_and_down(tmp_path: Path) -> None:
    subprocess.run(["bash", str(ROOT / "scripts" / "fetch-k8s-binaries.sh")], check=True)
    started = kto("dev-cluster", "up", cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    try:
        state = json.loads((tmp_path / ".kto" / "dev-cluster" / "state.json").read_text())
        assert kto("dev-cluster", "status", cwd=tmp_path).returncode == 0
        # The hints work as printed: full paths, and the operator's endpoints answer.
        hints = started.stdout
        assert f"{Path(sys.executable).parent / 'kto'} describe --zookeeper" in hints
        assert f"{KUBECTL} get kt" in hints
        assert f"operator metrics {state['metrics']}, liveness {state['liveness']}" in hints
        with urllib.request.urlopen(state["metrics"], timeout=10) as answer:
            assert b"kto_" in answer.read()
        with urllib.request.urlopen(state["liveness"], timeout=10) as answer:
            assert answer.status == 200
        assert state["metrics"] in kto("dev-cluster", "status", cwd=tmp_path).stdout
        env = {**os.environ, "KUBECONFIG": str(tmp_path / ".kto" / "kubeconfig")}

        def kubectl(*args: str, stdin: str | None = None) -> str:
            done = subprocess.run([str(KUBECTL), *args], input=stdin, env=env,
                                  capture_output=True, text=True, timeout=60)  # fmt: skip
            assert done.returncode == 0, done.stderr
            return done.stdout

        kubectl("apply", "-f", "-", stdin=TOPIC)
        ready = '{.status.conditions[?(@.type=="Ready")].status}'
        eventually(lambda: kubectl("get", "kt", "orders", "-o", f"jsonpath={ready}") == "True",
                   "orders Ready through kubectl", timeout=60)  # fmt: skip
        # The kafka category spans KafkaTopics and KafkaRebalances: names come with their kind.
        table = kubectl("get", "kafka")
        assert table.split("\n")[0].split() == [
            "NAME",
            "TOPIC",
            "PARTITIONS",
            "REPLICAS",
            "READY",
            "REASON",
            "AGE",
        ]
        assert table.split("\n")[1].split()[:6] == [
            "kafkatopic.kto.dev/orders", "orders", "6", "3", "True", "Created",
        ]  # fmt: skip
        # Partitions and replicas as Kafka has them, for a topic placed by hand too.
        eventually(lambda: kubectl("get", "kt", "placed", "-o", f"jsonpath={ready}") == "True",
                   "placed Ready through kubectl", timeout=60)  # fmt: skip
        assert kubectl("get", "kt", "placed").split("\n")[1].split()[:5] == [
            "placed", "placed", "2", "2", "True",
        ]  # fmt: skip
        described = kto("describe", "--zookeeper", state["zookeeper"], "orders", cwd=tmp_path)
        assert "PartitionCount: 6" in described.stdout
        # A broker stopped (killed), stopped again, and started at once: the start waits for
        # the killed one's registration to expire instead of exiting on it.
        assert kto("dev-cluster", "stop-broker", "--id", "2", cwd=tmp_path).returncode == 0
        again = kto("dev-cluster", "stop-broker", "--id", "2", cwd=tmp_path)
        assert (again.returncode, again.stderr) == (1, "kto dev-cluster: broker 2 is not running\n")
        restarted = kto("dev-cluster", "start-broker", "--id", "2", cwd=tmp_path)
        assert restarted.returncode == 0, restarted.stderr
        assert restarted.stdout.splitlines()[-1] == "broker 2 started"
        running = kto("dev-cluster", "status", cwd=tmp_path)
        assert running.returncode == 0, running.stdout
        lines = running.stdout.splitlines()
        assert lines[0] == "dev cluster: 6 of 6 processes running"
        assert [line.split(":")[0].split()[0] for line in lines[1:4]] == [
            "ZooKeeper", "API", "operator",
        ]  # fmt: skip
        assert all(": running (pid " in line for line in lines[1:7]), lines
        assert lines[4].startswith("  dev broker 0: running (pid ")
    finally:
        stopped = kto("dev-cluster", "down", cwd=tmp_path)
    assert stopped.returncode == 0 and stopped.stdout.strip() == "dev cluster stopped"
    for pid in state["pids"]:
        assert (
            not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
        )
    # Stopped, the cluster keeps its data: `up` brings its topics back. `down --reset` removes
    # it, so the next `up` (as the demo does each run) starts empty.
    directory = tmp_path / ".kto" / "dev-cluster"
    assert (directory / "apiserver.json").exists() and (directory / "zookeeper").is_dir()
    reset = kto("dev-cluster", "down", "--reset", cwd=tmp_path)
    assert reset.returncode == 0, reset.stderr
    assert reset.stdout.splitlines()[-1] == (
        f"its data removed from {Path('.kto') / 'dev-cluster'}: the next `up` starts empty"
    )
    assert sorted(p.name for p in directory.iterdir()) == []


@pytest.mark.apiserver
def test_up_on_a_real_kube_apiserver_keeps_its_resources_across_restarts(tmp_path: Path) -> None:
    """`--apiserver real`: etcd and kube-apiserver instead of the emulator, with TLS and a token;
    kubectl and the operator work through the kubeconfig `up` writes, and a second `up` finds
    the resources the first one left."""
    subprocess.run(["bash", str(ROOT / "scripts" / "fetch-k8s-binaries.sh")], check=True)
    env = {**os.environ, "KUBECONFIG": str(tmp_path / ".kto" / "kubeconfig")}
    ready = '{.status.conditions[?(@.type=="Ready")].status}'

    def kubectl(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run([str(KUBECTL), *args], input=stdin, env=env,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    for attempt in range(2):
        started = kto("dev-cluster", "up", "--apiserver", "real", cwd=tmp_path)
        assert started.returncode == 0, started.stderr
        try:
            state = json.loads((tmp_path / ".kto" / "dev-cluster" / "state.json").read_text())
            assert state["api"].startswith("https://127.0.0.1:")
            lines = kto("dev-cluster", "status", cwd=tmp_path).stdout.splitlines()
            assert lines[0] == "dev cluster: 7 of 7 processes running"  # etcd beside the server
            assert lines[2].startswith(f"  kube-apiserver {state['api']}: running (pid ")
            assert "Server Version: v1.33." in kubectl("version")
            if attempt == 0:
                kubectl("apply", "-f", "-", stdin=TOPIC)
            eventually(lambda: kubectl("get", "kt", "orders", "-o", f"jsonpath={ready}") == "True",
                       "orders Ready on the real server", timeout=90)  # fmt: skip
        finally:
            stopped = kto("dev-cluster", "down", cwd=tmp_path)
        assert stopped.returncode == 0, stopped.stderr
    assert kto("dev-cluster", "down", "--reset", cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in (tmp_path / ".kto" / "dev-cluster").iterdir()) == []


def test_up_on_a_real_kube_apiserver_not_built_says_how_and_starts_nothing(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kafka_topic_operator.cli", "dev-cluster", "up", "--apiserver",
         "real"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={**os.environ, "KTO_KUBE_CACHE": str(tmp_path / "empty-cache")},
    )  # fmt: skip
    assert done.returncode == 1
    assert "run `make kube-apiserver`" in done.stderr
    assert not (tmp_path / ".kto" / "dev-cluster").exists()
