"""The operator on real Apache Kafka: `kto run` (no embedded controller) as a subprocess, kopf
against the API emulator, Kafka's own controller doing the rest; what a real client sees is
asked of the brokers with confluent_kafka. Two clusters: Kafka 3.9 in ZooKeeper mode (the
operator on `--zookeeper`) and Kafka 4.x in KRaft mode (the operator on `--bootstrap-servers`,
Kafka's Admin API); tests that apply to both take the parametrized `operator` fixture."""

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
from kto_dev.apache_kafka.kraft import KRaftCluster
from kube_api_emulator import ApiServer

ROOT = Path(__file__).resolve().parents[2]
GROUP, VERSION = "kto.dev", "v1"
TOPICS, REBALANCES = "kafkatopics", "kafkarebalances"
TIMEOUT = 60.0
READY = ("True", "Created", "The topic is as declared")


class Operator:
    """`kto run` against `cluster`, with the Kubernetes client beside it, and a ZooKeeper
    client for a ZooKeeper-mode cluster."""

    def __init__(self, api: ApiServer, cluster: KafkaCluster | KRaftCluster, root: Path) -> None:
        from kubernetes import client, config

        self.cluster, self.root = cluster, root
        self.kubeconfig = api.write_kubeconfig(root / "kubeconfig")
        config.load_kube_config(str(self.kubeconfig))
        self.api = client.CustomObjectsApi()
        self.zk = ZkClient(cluster.zookeeper) if isinstance(cluster, KafkaCluster) else None
        self.process: subprocess.Popen[bytes] | None = None
        # The brokers to reach instead, once a ZooKeeper-mode cluster was migrated to KRaft.
        self.migrated_to: str | None = None

    @property
    def kraft(self) -> bool:
        return isinstance(self.cluster, KRaftCluster)

    @property
    def zookeeper(self) -> ZkClient:
        """The ZooKeeper client, for what only a ZooKeeper-mode cluster shows."""
        assert self.zk is not None, "a ZooKeeper-mode cluster's test"
        return self.zk

    @property
    def kafka_cluster(self) -> KafkaCluster:
        """The ZooKeeper-mode cluster, for what only it has (its brokers' log files...)."""
        assert isinstance(self.cluster, KafkaCluster), "a ZooKeeper-mode cluster's test"
        return self.cluster

    @property
    def zookeeper_connect(self) -> str:
        return self.kafka_cluster.zookeeper

    # ---- brokers ---------------------------------------------------------------------------

    def stop_broker(self, broker: int) -> None:
        """A controlled shutdown."""
        if isinstance(self.cluster, KRaftCluster):
            self.cluster.stop_node(broker)
        else:
            self.cluster.brokers[broker].stop()

    def kill_broker(self, broker: int) -> None:
        if isinstance(self.cluster, KRaftCluster):
            self.cluster.kill_node(broker)
        else:
            self.cluster.brokers[broker].kill()

    def start_broker(self, broker: int) -> None:
        if isinstance(self.cluster, KRaftCluster):
            self.cluster.start_node(broker)
        else:
            self.cluster.brokers[broker].start()

    def start_every_broker(self) -> None:
        """After a test that stopped some (and failed half-way, perhaps)."""
        if self.migrated_to is not None:
            return  # the migration's brokers now, no longer the cluster's
        if isinstance(self.cluster, KRaftCluster):
            for node in self.cluster.specs:
                self.cluster.start_node(node)
            return
        for broker in self.cluster.brokers.values():
            if not broker.running:
                broker.start()

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
        if self.migrated_to is not None:
            where = ["--bootstrap-servers", self.migrated_to]
        elif isinstance(self.cluster, KRaftCluster):
            where = ["--bootstrap-servers", self.cluster.bootstrap]
        else:
            where = ["--zookeeper", self.cluster.zookeeper, "--session-timeout", "6"]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kafka_topic_operator.cli", "run", *where, "--liveness", "",
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
def operating(cluster: KafkaCluster | KRaftCluster, root: Path, *extra: str) -> Iterator[Operator]:
    """The API emulator with the CRDs, and `kto run` pointed at the cluster (its ZooKeeper
    chroot, or its brokers)."""
    root.mkdir(parents=True, exist_ok=True)
    with ApiServer() as api:
        operator = Operator(api, cluster, root)
        from kubernetes import client

        ext = client.ApiextensionsV1Api()
        for crd_file in sorted((ROOT / "crds").glob("*.yaml")):
            ext.create_custom_resource_definition(yaml.safe_load(crd_file.read_text()))
        if operator.zk is not None:
            operator.zk.start()
        operator.start(*extra)
        try:
            yield operator
        finally:
            operator.stop()
            if operator.zk is not None:
                operator.zk.stop()
            operator.start_every_broker()
            print((root / "operator.log").read_text()[-20000:])  # shown when a test fails


@pytest.fixture(scope="module")
def zk_operator(
    kafka_cluster: KafkaCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Operator]:
    """One operator for a module's tests, on the session's ZooKeeper-mode Kafka cluster."""
    with operating(kafka_cluster, tmp_path_factory.mktemp("operator")) as op:
        yield op


@pytest.fixture(scope="module")
def kraft_operator(
    kraft_cluster: KRaftCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Operator]:
    """One operator for a module's tests, on the session's KRaft cluster (Kafka's Admin API)."""
    with operating(kraft_cluster, tmp_path_factory.mktemp("kraft-operator")) as op:
        yield op


@pytest.fixture(scope="module", params=["zookeeper", "kraft"])
def operator(request: pytest.FixtureRequest) -> Operator:
    """The operator on each kind of cluster, for what both must do alike."""
    kind = "zk" if request.param == "zookeeper" else "kraft"
    found: Operator = request.getfixturevalue(f"{kind}_operator")
    return found
