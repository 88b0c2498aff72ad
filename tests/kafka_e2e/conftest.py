"""The operator on real Apache Kafka: `kto run` (no embedded controller) as a subprocess, kopf
against the API emulator, Kafka's own controller doing the rest; what a real client sees is
asked of the brokers with confluent_kafka."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kto_testing import eventually

from kafka_topic_operator.zk.client import ZkClient
from kto_dev.apache_kafka.cluster import KafkaCluster
from kube_api_emulator import ApiServer

ROOT = Path(__file__).resolve().parents[2]
GROUP, VERSION = "kto.dev", "v1"
TOPICS, REBALANCES = "kafkatopics", "kafkarebalances"
TIMEOUT = 60.0
READY = ("True", "Created", "The topic is as declared")


class Operator:
    """`kto run` against `cluster`, with the Kubernetes client and a ZooKeeper client beside it."""

    def __init__(self, api: ApiServer, cluster: KafkaCluster, root: Path) -> None:
        from kubernetes import client, config

        self.cluster, self.root = cluster, root
        self.kubeconfig = api.write_kubeconfig(root / "kubeconfig")
        config.load_kube_config(str(self.kubeconfig))
        self.api = client.CustomObjectsApi()
        self.zk = ZkClient(cluster.zookeeper)
        self.process: subprocess.Popen[bytes] | None = None

    # ---- KafkaTopics -----------------------------------------------------------------------

    def apply(self, name: str, **spec: Any) -> None:
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KafkaTopic",
                "metadata": {"name": name}, "spec": spec}  # fmt: skip
        self.api.create_namespaced_custom_object(GROUP, VERSION, "default", TOPICS, body)

    def patch(self, name: str, spec: dict[str, Any], plural: str = TOPICS) -> None:
        self.api.patch_namespaced_custom_object(
            GROUP, VERSION, "default", plural, name, {"spec": spec}
        )

    def delete(self, name: str) -> None:
        self.api.delete_namespaced_custom_object(GROUP, VERSION, "default", TOPICS, name)

    def get(self, name: str, plural: str = TOPICS) -> dict[str, Any] | None:
        from kubernetes.client.exceptions import ApiException

        try:
            found: dict[str, Any] = self.api.get_namespaced_custom_object(
                GROUP, VERSION, "default", plural, name
            )
        except ApiException as e:
            if e.status == 404:
                return None
            raise
        return found

    def condition(
        self, name: str, obj: dict[str, Any] | None = None
    ) -> tuple[str, str, str] | None:
        """The Ready condition of `obj`, else of the resource as it is now."""
        found = obj if obj is not None else self.get(name)
        for c in ((found or {}).get("status") or {}).get("conditions") or []:
            if c["type"] == "Ready":
                return c["status"], c["reason"], c.get("message", "")
        return None

    def ready(self, name: str, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The resource once Ready for its current generation (one read: its status is the
        Ready one)."""

        def condition() -> dict[str, Any] | None:
            obj = self.get(name)
            if obj is None:
                return None
            status = obj.get("status") or {}
            current = status.get("observedGeneration") == obj["metadata"]["generation"]
            return obj if current and self.condition(name, obj) == READY else None

        return eventually(condition, f"KafkaTopic {name} Ready", timeout)

    def reason(self, name: str, reason: str, timeout: float = TIMEOUT) -> tuple[str, str, str]:
        def check() -> tuple[str, str, str] | None:
            found = self.condition(name)
            return found if found and found[1] == reason else None

        return eventually(check, f"{name} with reason {reason}", timeout)

    def gone(self, name: str, timeout: float = TIMEOUT) -> None:
        eventually(lambda: self.get(name) is None, f"KafkaTopic {name} released", timeout)

    # ---- the process -----------------------------------------------------------------------

    def start(self, *extra: str) -> None:
        log = (self.root / "operator.log").open("ab")
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kafka_topic_operator.cli", "run",
             "--zookeeper", self.cluster.zookeeper, "--liveness", "", "--session-timeout", "6",
             "--metrics-port", "0", *extra],
            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.root,
        )  # fmt: skip
        log.close()

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None


@contextlib.contextmanager
def operating(cluster: KafkaCluster, root: Path, *extra: str) -> Iterator[Operator]:
    """The API emulator with the CRDs, and `kto run` pointed at the cluster's chroot."""
    root.mkdir(parents=True, exist_ok=True)
    with ApiServer() as api:
        operator = Operator(api, cluster, root)
        from kubernetes import client

        ext = client.ApiextensionsV1Api()
        for crd_file in sorted((ROOT / "crds").glob("*.yaml")):
            ext.create_custom_resource_definition(yaml.safe_load(crd_file.read_text()))
        operator.zk.start()
        operator.start(*extra)
        try:
            yield operator
        finally:
            operator.stop()
            operator.zk.stop()
            for broker in cluster.brokers.values():  # a test that failed half-way
                if not broker.running:
                    broker.start()
            print((root / "operator.log").read_text()[-20000:])  # shown when a test fails


@pytest.fixture(scope="module")
def operator(
    kafka_cluster: KafkaCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Operator]:
    """One operator for a module's tests, on the session's Kafka cluster."""
    with operating(kafka_cluster, tmp_path_factory.mktemp("operator")) as op:
        yield op
