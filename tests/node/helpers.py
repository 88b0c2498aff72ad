"""What the node's chart tests do as a user would: a namespace of their own, the chart installed
there watching it, KafkaTopics applied with kubectl, and waits on what kubectl shows."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

import yaml
from kto_testing import eventually
from node_session import NodeSession

from kto_dev.node import chart
from kto_dev.node.launcher import KubernetesNode

OPERATOR_IMAGE = "docker.io/library/kafka-topic-operator:0.1.0"


@dataclass
class Release:
    """One installed release of the chart, in a namespace of its own that it alone watches."""

    node: KubernetesNode
    name: str
    namespace: str
    values: dict[str, Any]

    @property
    def fullname(self) -> str:
        return (
            self.name
            if "kafka-topic-operator" in self.name
            else (f"{self.name}-kafka-topic-operator")
        )

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        return self.node.kubectl("--namespace", self.namespace, *args, stdin=stdin, check=check)

    def get(self, kind: str, name: str) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self.kubectl("get", kind, name, "-o", "json"))
        return found

    def apply(self, *documents: dict[str, Any]) -> None:
        self.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(documents))

    def pods(self) -> list[dict[str, Any]]:
        selector = f"app.kubernetes.io/instance={self.name}"
        listed = json.loads(self.kubectl("get", "pods", "-l", selector, "-o", "json"))
        return [p for p in listed["items"] if not p["metadata"].get("deletionTimestamp")]

    def upgrade(self, **changes: Any) -> None:
        self.values = {**self.values, **changes}
        chart.upgrade(self.node, self.name, self.namespace, self.values)

    def ready_topic(self, name: str, timeout: float = 90) -> dict[str, Any]:
        """The KafkaTopic once its Ready condition is True."""

        def ready() -> dict[str, Any] | None:
            topic = self.get("kafkatopic", name)
            conditions = topic.get("status", {}).get("conditions", [])
            return topic if any(c["type"] == "Ready" and c["status"] == "True"
                                for c in conditions) else None  # fmt: skip

        return eventually(ready, f"KafkaTopic {name} Ready", timeout)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def install(session: NodeSession, prefix: str, **values: Any) -> Release:
    """The chart on ZooKeeper mode (the session's Kafka), watching a new namespace only; other
    `values` are added (or, for kafka.bootstrapServers, replace ZooKeeper)."""
    namespace = unique(prefix)
    defaults: dict[str, Any] = {"watch": {"namespaces": [namespace]}}
    if "kafka" not in values:
        defaults["zookeeper"] = {"connect": session.kafka_zookeeper}
    # The release named as its namespace: a release's cluster-scoped objects (its ClusterRole)
    # carry its name, and releases in several namespaces share the node.
    release = Release(session.node, namespace, namespace, {**defaults, **values})
    chart.install(session.node, release.name, namespace, release.values)
    return release


def kafka_topic(name: str, partitions: int = 3, replicas: int = 3, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "kto.dev/v1", "kind": "KafkaTopic", "metadata": {"name": name},
            "spec": {"partitions": partitions, "replicas": replicas, **spec}}  # fmt: skip


def operator_pod(name: str, namespace: str, command: list[str]) -> dict[str, Any]:
    """A pod of the operator's image running `command`, under the restricted profile."""
    container = {"name": "main", "image": OPERATOR_IMAGE, "imagePullPolicy": "Never",
                 "command": command,
                 "securityContext": {"allowPrivilegeEscalation": False,
                                     "readOnlyRootFilesystem": True,
                                     "capabilities": {"drop": ["ALL"]}}}  # fmt: skip
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
        "spec": {"restartPolicy": "Never", "containers": [container],
                 "securityContext": {"runAsNonRoot": True, "runAsUser": 10001,
                                     "seccompProfile": {"type": "RuntimeDefault"}}},
    }  # fmt: skip


def phase(node: KubernetesNode, name: str, namespace: str) -> str:
    return str(node.kubectl("get", "pod", name, "-n", namespace, "-o",
                            "jsonpath={.status.phase}"))  # fmt: skip


def run_pod(node: KubernetesNode, namespace: str, name: str, command: list[str]) -> str:
    """A pod of the operator's image that runs `command` to its end; its log."""
    node.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(operator_pod(name, namespace, command)))
    ended = eventually(lambda: phase(node, name, namespace) in ("Succeeded", "Failed"),
                       "the pod's end", timeout=90)  # fmt: skip
    logs = node.kubectl("logs", name, "-n", namespace)
    assert ended and phase(node, name, namespace) == "Succeeded", logs
    return logs


SCRAPE = (
    "import sys, urllib.request; "
    "print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())"
)


def scraped_metrics(release: Release) -> str:
    """The release's metrics Service, read from another pod by its cluster DNS name."""
    url = f"http://{release.fullname}-metrics.{release.namespace}.svc.cluster.local:9090/metrics"
    return run_pod(release.node, release.namespace, "scrape", ["python3", "-c", SCRAPE, url])


def upgrade_rolls_the_pod(release: Release, topic: str, before: dict[str, Any]) -> None:
    """`helm upgrade` to a changed value (the log level) rolls the operator's pod, and the
    KafkaTopic, `before` the upgrade, stays Ready with the same conditions."""
    (pod,) = release.pods()
    name = pod["metadata"]["name"]
    release.upgrade(logLevel="DEBUG")
    eventually(lambda: [p["metadata"]["name"] for p in release.pods()] not in ([], [name]),
               "a new operator pod", timeout=60)  # fmt: skip
    (rolled,) = release.pods()
    assert "--log-level=DEBUG" in rolled["spec"]["containers"][0]["args"]
    after = release.ready_topic(topic)
    assert after["status"]["conditions"] == before["status"]["conditions"]


def uninstall_keeps_the_kafka_topic(release: Release, topic: str) -> None:
    """`helm uninstall` removes the operator's pod and leaves the KafkaTopic."""
    chart.uninstall(release.node, release.name, release.namespace)
    assert release.pods() == []
    assert release.get("kafkatopic", topic)["metadata"]["name"] == topic
