"""The operator (`kto run`, no embedded controller) against the API emulator and real Kafka
brokers under Kafka's own controller, with a Kafka client to see what users see."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from kto_testing import eventually

from kafka_topic_operator.apache_kafka.cluster import KafkaCluster
from kafka_topic_operator.apiserver import ApiServer

ROOT = Path(__file__).resolve().parents[2]
GROUP, VERSION = "kto.dev", "v1"


class OperatorOnKafka:
    def __init__(self, api: ApiServer, cluster: KafkaCluster, root: Path) -> None:
        from kubernetes import client, config

        self.cluster = cluster
        self.kubeconfig = api.write_kubeconfig(root / "kubeconfig")
        config.load_kube_config(str(self.kubeconfig))
        self.api = client.CustomObjectsApi()
        self.ext = client.ApiextensionsV1Api()
        self._admin: Any = None

    # ---- Kubernetes -------------------------------------------------------------------------

    def apply(self, name: str, *, plural: str = "kafkatopics", kind: str = "KafkaTopic",
              annotations: dict[str, str] | None = None, **spec: Any) -> None:  # fmt: skip
        metadata = {"name": name, "annotations": annotations or {}}
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": kind, "metadata": metadata,
                "spec": spec}  # fmt: skip
        self.api.create_namespaced_custom_object(GROUP, VERSION, "default", plural, body)

    def patch(self, name: str, body: dict[str, Any], plural: str = "kafkatopics") -> None:
        self.api.patch_namespaced_custom_object(GROUP, VERSION, "default", plural, name, body)

    def delete(self, name: str, plural: str = "kafkatopics") -> None:
        self.api.delete_namespaced_custom_object(GROUP, VERSION, "default", plural, name)

    def get(self, name: str, plural: str = "kafkatopics") -> dict[str, Any] | None:
        from kubernetes.client.exceptions import ApiException

        try:
            obj: dict[str, Any] = self.api.get_namespaced_custom_object(
                GROUP, VERSION, "default", plural, name
            )
        except ApiException as e:
            if e.status == 404:
                return None
            raise
        return obj

    def condition(self, name: str) -> tuple[str, str, str] | None:
        status = (self.get(name) or {}).get("status") or {}
        for c in status.get("conditions") or []:
            if c["type"] == "Ready":
                return c["status"], c["reason"], c.get("message", "")
        return None

    def ready(self, name: str, timeout: float = 60) -> dict[str, Any]:
        """The resource once Ready for its current generation."""

        def done() -> dict[str, Any] | None:
            obj = self.get(name) or {}
            status = obj.get("status") or {}
            current = status.get("observedGeneration") == obj.get("metadata", {}).get("generation")
            return obj if current and (self.condition(name) or ("",))[0] == "True" else None

        return eventually(done, f"KafkaTopic {name} Ready", timeout=timeout)

    def ready_everywhere(self, name: str, timeout: float = 60) -> dict[str, Any]:
        """Ready, and every running broker's metadata has the topic's partitions: Ready follows
        Kafka's znodes, and each broker hears of a change from the controller a moment later."""
        obj = self.ready(name, timeout)
        topic = obj["spec"].get("topicName", name)
        total = obj["status"]["partitionCounts"]["total"]
        eventually(lambda: all(len(self.metadata(topic, broker.spec.bootstrap)) == total
                               for broker in self.cluster.brokers.values() if broker.running),
                   f"every broker's metadata to list {total} partitions of {topic}")  # fmt: skip
        return obj

    # ---- what a Kafka client sees -----------------------------------------------------------

    def admin(self) -> Any:
        """One client for the module (a result's future dies with its client); every broker
        is named, so that it works while any one of them is down."""
        from confluent_kafka.admin import AdminClient

        if self._admin is None:
            brokers = ",".join(b.spec.bootstrap for b in self.cluster.brokers.values())
            # Quiet: brokers stopped on purpose would fill the output with connection errors.
            self._admin = AdminClient({"bootstrap.servers": brokers, "log_level": 0})
        return self._admin

    def metadata(self, topic: str, broker: str | None = None) -> dict[int, Any]:
        """Partition metadata (leader, replicas, isrs) from a metadata request (to `broker`
        alone when given); {} if unknown."""
        admin = self.admin()
        if broker is not None:
            from confluent_kafka.admin import AdminClient

            admin = AdminClient({"bootstrap.servers": broker, "log_level": 0})
        found = admin.list_topics(topic, timeout=10).topics.get(topic)
        if found is None or found.error is not None:
            return {}
        return dict(found.partitions)

    def topics(self) -> set[str]:
        return set(self.admin().list_topics(timeout=10).topics)

    def configs(self, topic: str) -> dict[str, str]:
        from confluent_kafka.admin import ConfigResource

        resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
        entries = self.admin().describe_configs([resource])[resource].result(timeout=10)
        return {name: entry.value for name, entry in entries.items()}


@contextlib.contextmanager
def operator_on_kafka(cluster: KafkaCluster, root: Path, *extra: str) -> Iterator[OperatorOnKafka]:
    with ApiServer() as api:
        setup = OperatorOnKafka(api, cluster, root)
        for crd_file in sorted((ROOT / "crds").glob("*.yaml")):
            setup.ext.create_custom_resource_definition(yaml.safe_load(crd_file.read_text()))
        log = (root / "operator.log").open("a")
        env = {**os.environ, "KUBECONFIG": str(setup.kubeconfig)}
        operator = subprocess.Popen(
            [sys.executable, "-m", "kafka_topic_operator.cli", "run", "--zookeeper",
             cluster.zookeeper, "--liveness", "", "--metrics-port", "0",
             "--drift-interval", "2", *extra],
            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root,
        )  # fmt: skip
        try:
            yield setup
        finally:
            operator.terminate()
            try:
                operator.wait(timeout=20)
            except subprocess.TimeoutExpired:
                operator.kill()
                operator.wait()
            log.close()
