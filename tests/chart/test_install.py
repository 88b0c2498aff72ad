"""The rendered chart installed into the Kubernetes API emulator with real kubectl, and the operator
started the way its Deployment starts it (the image's entrypoint, the container's args, its
environment with Secrets resolved) reconciling a KafkaTopic on a real ZooKeeper with dev
brokers."""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from chart_testing import CHART, HELM, NAMESPACE, ROOT, ensure_binaries, kubectl
from kto_testing import eventually

from kafka_topic_operator.apiserver import ApiServer

pytestmark = [pytest.mark.zookeeper, pytest.mark.e2e]

TOPIC = """
apiVersion: kto.dev/v1
kind: KafkaTopic
metadata:
  name: payments
  namespace: team-a
spec:
  partitions: 3
  replicas: 3
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def image_entrypoint(target: str) -> list[str]:
    """The ENTRYPOINT of a Dockerfile stage (exec form)."""
    stage = None
    entrypoint: list[str] = []
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if m := re.match(r"FROM \S+ AS (\S+)", line):
            stage = m.group(1)
        elif line.startswith("ENTRYPOINT ") and stage == target:
            entrypoint = json.loads(line.removeprefix("ENTRYPOINT "))
    assert entrypoint, f"no ENTRYPOINT in stage {target}"
    return entrypoint


class Cluster:
    def __init__(self, kubeconfig: Path) -> None:
        self.kubeconfig = kubeconfig
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig)}

    def kubectl(self, *args: str, stdin: str | None = None) -> str:
        return kubectl(*args, kubeconfig=self.kubeconfig, stdin=stdin)

    def get(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", *args, "-o", "json"))


def container_environment(
    cluster: Cluster, namespace: str, env: list[dict[str, Any]]
) -> dict[str, str]:
    """A container's env as the kubelet gives it: values, and Secret keys read."""
    resolved = {}
    for var in env:
        if "value" in var:
            resolved[var["name"]] = var["value"]
        else:
            ref = var["valueFrom"]["secretKeyRef"]
            secret = cluster.get("secret", ref["name"], "-n", namespace)
            resolved[var["name"]] = base64.b64decode(secret["data"][ref["key"]]).decode()
    return resolved


def test_the_chart_installs_and_the_operator_reconciles_as_deployed(
    zk_chroot: str, tmp_path: Path, dev_brokers: None
) -> None:
    ensure_binaries()
    liveness, metrics = free_port(), free_port()
    with ApiServer() as api:
        cluster = Cluster(api.write_kubeconfig(tmp_path / "kubeconfig"))
        # As helm install does: the CRDs of crds/ first, then the templates.
        applied = cluster.kubectl("apply", "-f", str(CHART / "crds"))
        assert "customresourcedefinition.apiextensions.k8s.io/kafkatopics.kto.dev created" in (
            applied
        )
        for namespace in (NAMESPACE, "team-a"):
            cluster.kubectl("create", "namespace", namespace)
        cluster.kubectl("create", "secret", "generic", "kafka-zookeeper", "-n", NAMESPACE,
                        f"--from-literal=connect={zk_chroot}")  # fmt: skip
        rendered = subprocess.run(
            [str(HELM), "template", "kto", str(CHART), "--namespace", NAMESPACE,
             "--set", "zookeeper.connectSecret.name=kafka-zookeeper",
             "--set", "embeddedController.enabled=true", "--set", "watch.namespaces={team-a}",
             "--set", "replicaCount=2", "--set", f"liveness.port={liveness}",
             "--set", f"metrics.port={metrics}"],
            capture_output=True, text=True, check=True, timeout=60,
        ).stdout  # fmt: skip
        applied = cluster.kubectl("apply", "-f", "-", stdin=rendered)
        for accepted in (
            "serviceaccount/kto-kafka-topic-operator created",
            "clusterrole.rbac.authorization.k8s.io/kto-kafka-topic-operator-cluster created",
            "clusterrolebinding.rbac.authorization.k8s.io/kto-kafka-topic-operator-cluster created",
            "role.rbac.authorization.k8s.io/kto-kafka-topic-operator created",
            "rolebinding.rbac.authorization.k8s.io/kto-kafka-topic-operator created",
            "service/kto-kafka-topic-operator-metrics created",
            "deployment.apps/kto-kafka-topic-operator created",
            "poddisruptionbudget.policy/kto-kafka-topic-operator created",
            "kopfpeering.kopf.dev/kafka-topic-operator created",
        ):
            assert accepted in applied
        role = cluster.get("role", "kto-kafka-topic-operator", "-n", "team-a")
        assert {"apiGroups": ["kto.dev"], "resources": ["kafkatopics"],
                "verbs": ["get", "list", "watch", "patch"]} in role["rules"]  # fmt: skip

        deployment = cluster.get("deployment", "kto-kafka-topic-operator", "-n", NAMESPACE)
        (c,) = deployment["spec"]["template"]["spec"]["containers"]
        env = container_environment(cluster, NAMESPACE, c["env"])
        # $(VAR) in args is expanded from the container's env, as the kubelet does.
        args = [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], a) for a in c["args"]]
        kto, *entry_args = image_entrypoint("operator")
        assert kto == "kto"  # the console script this package installs
        log = (tmp_path / "operator.log").open("w")
        operator = subprocess.Popen(
            [sys.executable, "-m", "kafka_topic_operator.cli", *entry_args, *args],
            env={**cluster.env, **env}, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path,
        )  # fmt: skip
        try:
            cluster.kubectl("apply", "-f", "-", stdin=TOPIC)
            ready = '{.status.conditions[?(@.type=="Ready")].status}'
            eventually(
                lambda: cluster.kubectl("get", "kt", "payments", "-n", "team-a", "-o",
                                        f"jsonpath={ready}") == "True",
                "payments Ready", timeout=90,
            )  # fmt: skip
            with urllib.request.urlopen(f"http://127.0.0.1:{liveness}/healthz", timeout=10) as r:
                assert r.status == 200
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=10) as r:
                assert 'kto_reconciles_total{result="ok"}' in r.read().decode()
            # The replica announced itself in the chart's peering object.
            peering = cluster.get("kopfpeering", "kafka-topic-operator", "-n", "team-a")
            assert peering.get("status"), "the operator did not join the peering"
        finally:
            operator.terminate()
            operator.wait(30)
            log.close()
            print((tmp_path / "operator.log").read_text()[-10000:])
