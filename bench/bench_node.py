"""1,000 KafkaTopics (12 partitions, replication factor 3) applied at once until every one is
Ready, with the operator as users run it: a pod of the image built from the Dockerfile,
installed by the chart on the real node. The anchor, in the same run: the same operator as a
process on the host (`kto run`, as `make bench`'s operator figure runs it) against the same
kube-apiserver, ZooKeeper and dev brokers. Both embed this project's controller, so the figure
is the operator's, not Kafka's. Readiness is listed every half second.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench_support import scratch_dir, wait_idle
from kto_dev.cluster_processes import wait_for
from kto_dev.node import chart
from kto_dev.node.images import node_images
from kto_dev.node.launcher import KubernetesNode
from kto_dev.ports import free_port
from kto_dev.zookeeper_server import ZooKeeperServer

TOPICS = 1000
PARTITIONS = 12


class Api:
    """The node's kube-apiserver as its administrator."""

    def __init__(self, node: KubernetesNode) -> None:
        assert node.api is not None
        self.url, self.token = node.api.url, node.api.admin_token
        self.context: ssl.SSLContext = node.api.ssl_context()

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method,
            headers={"Content-Type": "application/json",
                     "Authorization": f"Bearer {self.token}"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=60, context=self.context) as answer:
            return json.loads(answer.read() or b"null")


def topics_path(namespace: str) -> str:
    return f"/apis/kto.dev/v1/namespaces/{namespace}/kafkatopics"


def ready_count(api: Api, namespace: str) -> int:
    listed = api.call("GET", topics_path(namespace))["items"]
    return sum(
        any(c["type"] == "Ready" and c["status"] == "True"
            for c in (item.get("status") or {}).get("conditions") or [])
        for item in listed
    )  # fmt: skip


def apply_and_wait(api: Api, namespace: str) -> float:
    """Seconds from the first POST until every KafkaTopic is Ready."""
    bodies = [
        {"apiVersion": "kto.dev/v1", "kind": "KafkaTopic", "metadata": {"name": f"topic-{i}"},
         "spec": {"partitions": PARTITIONS, "replicas": 3}}
        for i in range(TOPICS)
    ]  # fmt: skip
    began = time.monotonic()
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda b: api.call("POST", topics_path(namespace), b), bodies))
    deadline = began + 900
    while ready_count(api, namespace) < TOPICS:
        if time.monotonic() > deadline:
            raise RuntimeError(f"not every KafkaTopic in {namespace} Ready within 900 s")
        time.sleep(0.5)
    return time.monotonic() - began


def dev_brokers(work: Path, connect: str) -> list[subprocess.Popen[bytes]]:
    return [
        subprocess.Popen(
            [sys.executable, "-m", "kafka_topic_operator.cli", "dev-broker", "--zookeeper",
             connect, "--id", str(b), "--rack", f"rack-{b}", "--log-dir",
             str(work / f"data-{b}"), "--log-level", "WARNING"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        for b in (0, 1, 2)
    ]  # fmt: skip


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        process.wait(60)


def in_pod(node: KubernetesNode, api: Api, connect: str) -> float:
    namespace = "bench-pod"
    chart.install(node, namespace, namespace, {
        "zookeeper": {"connect": connect}, "embeddedController": {"enabled": True},
        "watch": {"namespaces": [namespace]}, "logLevel": "WARNING",
    })  # fmt: skip
    try:
        return apply_and_wait(api, namespace)
    finally:
        chart.uninstall(node, namespace, namespace)


def on_host(node: KubernetesNode, api: Api, connect: str, work: Path) -> float:
    namespace = "bench-host"
    node.kubectl("create", "namespace", namespace)
    liveness = f"http://127.0.0.1:{free_port()}/healthz"
    with (work / "operator.log").open("w") as log:
        operator = subprocess.Popen(
            [sys.executable, "-m", "kafka_topic_operator.cli", "run", "--zookeeper", connect,
             "--embedded-controller", f"--namespace={namespace}", "--liveness", liveness,
             "--metrics-port", "0", "--no-rebalance", "--log-level", "WARNING"],
            stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "KUBECONFIG": str(node.kubeconfig)},
        )  # fmt: skip
    try:
        wait_for(lambda: urllib.request.urlopen(liveness, timeout=2), "the operator on the host",
                 work / "operator.log")  # fmt: skip
        return apply_and_wait(api, namespace)
    finally:
        stop([operator])


def with_brokers(
    node: KubernetesNode, zookeeper: ZooKeeperServer, work: Path, run: Callable[[str], float]
) -> float:
    """`run(connect)` on three dev brokers of a fresh chroot; then waits for a quiet node."""
    connect = f"{zookeeper.connect_string}/{work.name}"
    brokers = dev_brokers(work, connect)
    try:
        return run(connect)
    finally:
        stop(brokers)
        wait_idle(node.pids["kube-apiserver"])


def main() -> None:
    with scratch_dir("kto-bench-node-") as tmp:
        work = Path(tmp)
        with (
            KubernetesNode(work / "node", node_images()) as node,
            ZooKeeperServer(work / "zk", host=node.host_address) as zookeeper,
        ):
            api = Api(node)
            pod = with_brokers(node, zookeeper, work / "pod",
                               lambda connect: in_pod(node, api, connect))  # fmt: skip
            host = with_brokers(node, zookeeper, work / "host",
                                lambda connect: on_host(node, api, connect, work))  # fmt: skip
            print(
                f"node, {TOPICS} KafkaTopics x {PARTITIONS} partitions x RF3 Ready: the "
                f"operator as a pod of the chart on the real node {pod:.1f} s, as a process on "
                f"the host {host:.1f} s (same run, same kube-apiserver, ZooKeeper and dev "
                f"brokers): ratio {pod / host:.2f}; the node Ready in {node.started_in:.1f} s"
            )


if __name__ == "__main__":
    main()
