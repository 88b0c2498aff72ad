"""The rendered chart installed into the Kubernetes API emulator with real kubectl, and the operator
started the way its Deployment starts it (the image's entrypoint, the container's args, its
environment with Secrets resolved) reconciling a KafkaTopic on a real ZooKeeper with dev
brokers."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import IO, Any

import pytest
from chart_testing import CHART, HELM, NAMESPACE, ROOT, ensure_binaries, kubectl
from kto_testing import eventually

from kto_dev.ports import free_port
from kube_api_emulator import ApiServer

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


def render(*sets: str) -> str:
    """`helm template` of the chart into NAMESPACE with these --set values."""
    args = [a for value in sets for a in ("--set", value)]
    return subprocess.run([str(HELM), "template", "kto", str(CHART), "--namespace", NAMESPACE,
                           *args], capture_output=True, text=True, check=True,
                          timeout=60).stdout  # fmt: skip


def start_operator(cluster: Cluster, log: IO[str], cwd: Path) -> subprocess.Popen[bytes]:
    """The operator as its Deployment starts it: the image's entrypoint, the container's args
    and its environment with Secrets resolved."""
    deployment = cluster.get("deployment", "kto-kafka-topic-operator", "-n", NAMESPACE)
    (c,) = deployment["spec"]["template"]["spec"]["containers"]
    env = container_environment(cluster, NAMESPACE, c["env"])
    # $(VAR) in args is expanded from the container's env, as the kubelet does.
    args = [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], a) for a in c["args"]]
    kto, *entry_args = image_entrypoint("operator")
    assert kto == "kto"  # the console script this package installs
    return subprocess.Popen(
        [sys.executable, "-m", "kafka_topic_operator.cli", *entry_args, *args],
        env={**cluster.env, **env}, stdout=log, stderr=subprocess.STDOUT, cwd=cwd,
    )  # fmt: skip


def stop_operator(operator: subprocess.Popen[bytes], log: IO[str]) -> None:
    operator.terminate()
    operator.wait(30)
    log.close()
    print(Path(log.name).read_text()[-10000:])  # shown when the test fails


def test_the_chart_installs_and_the_operator_reconciles_as_deployed(
    zk_chroot: str, tmp_path: Path, dev_brokers: None
) -> None:
    ensure_binaries()
    liveness, readiness, metrics = free_port(), free_port(), free_port()
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
        rendered = render("zookeeper.connectSecret.name=kafka-zookeeper",
                          "embeddedController.enabled=true", "watch.namespaces={team-a}",
                          "replicaCount=2", f"liveness.port={liveness}",
                          f"readiness.port={readiness}",
                          f"metrics.port={metrics}")  # fmt: skip
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

        log = (tmp_path / "operator.log").open("w")
        operator = start_operator(cluster, log, tmp_path)
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
            with urllib.request.urlopen(f"http://127.0.0.1:{readiness}/readyz", timeout=10) as r:
                assert r.status == 200
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=10) as r:
                assert 'kto_reconciles_total{result="ok"}' in r.read().decode()
            # The replica announced itself in the chart's peering object.
            peering = cluster.get("kopfpeering", "kafka-topic-operator", "-n", "team-a")
            assert peering.get("status"), "the operator did not join the peering"
        finally:
            stop_operator(operator, log)


# Planned by a Job of the chart's planner (format with work_dir).
JOB_REBALANCE = """
apiVersion: kto.dev/v1
kind: KafkaRebalance
metadata:
  name: even-out
  namespace: team-a
spec:
  engine:
    type: kubernetes
    workDir: {work_dir}
    volume: kto-plans
"""
REBALANCES = (
    JOB_REBALANCE
    + """---
apiVersion: kto.dev/v1
kind: KafkaRebalance
metadata:
  name: in-process
  namespace: team-a
spec: {{}}
"""
)


def test_with_rebalancing_enabled_the_operator_plans_with_a_job_of_the_charts_planner(
    zk_chroot: str, tmp_path: Path, dev_brokers: None
) -> None:
    """What the chart sets up for KafkaRebalances works together: the operator's engines, its
    default planner image and service account (made by the chart where the Job runs), and the
    work directory mounted where KafkaRebalances say (here a directory of this machine)."""
    ensure_binaries()
    work_dir = tmp_path / "plans"
    work_dir.mkdir()
    with ApiServer() as api:
        cluster = Cluster(api.write_kubeconfig(tmp_path / "kubeconfig"))
        cluster.kubectl("apply", "-f", str(CHART / "crds"))
        for namespace in (NAMESPACE, "team-a"):
            cluster.kubectl("create", "namespace", namespace)
        rendered = render(f"zookeeper.connect={zk_chroot}", "embeddedController.enabled=true",
                          "watch.namespaces={team-a}", f"liveness.port={free_port()}",
                          f"readiness.port={free_port()}",
                          "metrics.enabled=false", "rebalance.enabled=true",
                          "rebalance.workVolume.claimName=kto-plans",
                          f"rebalance.workDir={work_dir}")  # fmt: skip
        applied = cluster.kubectl("apply", "-f", "-", stdin=rendered)
        assert "serviceaccount/kto-planner created" in applied
        assert "rolebinding.rbac.authorization.k8s.io/kto-kafka-topic-operator-planner created" in (
            applied
        )
        log = (tmp_path / "operator.log").open("w")
        operator = start_operator(cluster, log, tmp_path)
        try:
            cluster.kubectl("apply", "-f", "-", stdin=REBALANCES.format(work_dir=work_dir))

            def job() -> Any:
                jobs = cluster.get("jobs", "-n", "team-a", "-l", "kto.dev/rebalance=even-out")
                return jobs["items"][0] if jobs["items"] else None

            created = eventually(job, "the planner's Job", timeout=90)
            pod = created["spec"]["template"]["spec"]
            account = pod["serviceAccountName"]
            assert account == "kto-planner"
            assert cluster.get("serviceaccount", account, "-n", "team-a")  # the chart's
            assert pod["containers"][0]["image"] == "kafka-topic-operator-spark:0.1.0"
            assert {"name": "workdir", "persistentVolumeClaim": {"claimName": "kto-plans"}} in (
                pod["volumes"]
            )
            (proposal,) = [p.name for p in (work_dir / "team-a" / "even-out").iterdir()]
            assert (work_dir / "team-a" / "even-out" / proposal / "input.json").is_file()

            reason = "{.status.conditions[0].reason}"
            eventually(
                lambda: cluster.kubectl("get", "kr", "in-process", "-n", "team-a", "-o",
                                        f"jsonpath={reason}") == "EngineNotEnabled",
                "the local engine refused", timeout=60,
            )  # fmt: skip
        finally:
            stop_operator(operator, log)
