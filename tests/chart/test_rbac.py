"""The chart's RBAC proven on a real kube-apiserver (RBAC authorization, an audit log): the
rendered chart applied, the operator started as its Deployment starts it but holding only a token
of the chart's ServiceAccount (two replicas' values: kopf peering too), a KafkaTopic created,
grown and deleted (and a KafkaRebalance planned with a Job, approved and carried out), then the
audit log read: every request the operator made was allowed, is one the chart's roles grant, and
the roles grant nothing it does not use; requests outside them are refused. Cluster-wide and
namespace-scoped (watch.namespaces)."""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_testing import CHART, KUBECTL, NAMESPACE, ensure_binaries
from kto_testing import eventually

from kafka_topic_operator.rebalance.engines.manifests import Paths, local_command
from kto_dev.kube_apiserver.launcher import KubeApiServer

from .test_install import (
    JOB_REBALANCE,
    TOPIC,
    Cluster,
    container_environment,
    free_port,
    image_entrypoint,
    render,
    stop_operator,
)

pytestmark = [pytest.mark.zookeeper, pytest.mark.e2e, pytest.mark.apiserver]

ACCOUNT = "kto-kafka-topic-operator"  # the chart's ServiceAccount for the release "kto"
OPERATOR = f"system:serviceaccount:{NAMESPACE}:{ACCOUNT}"
WATCHED, UNWATCHED = "team-a", "team-b"
MODES = {"cluster-wide": (), "namespaced": (f"watch.namespaces={{{WATCHED}}}",)}

# Grants used by code paths a run need not take: the status follower reads a KafkaTopic after
# Kafka's controller changed its topic; the parts of an earlier, larger plan are deleted.
NOT_ALWAYS_EXERCISED = {("kto.dev", "kafkatopics", "get"), ("", "configmaps", "delete")}
# Grants no request uses: OwnerReferencesPermissionEnforcement checks them when the operator
# creates a ConfigMap or Job owned (blockOwnerDeletion) by a KafkaRebalance. The api fixture turns
# the plugin on, so the rebalance test fails without it.
CHECKED_ON_ADMISSION = {("kto.dev", "kafkarebalances/finalizers", "update")}

Call = tuple[str, str, str, str]  # (namespace or "", apiGroup, resource[/subresource], verb)


@pytest.fixture
def api(tmp_path: Path) -> Iterator[KubeApiServer]:
    ensure_binaries()
    # OwnerReferencesPermissionEnforcement (off by default, on in OpenShift): setting
    # blockOwnerDeletion on an owner reference needs update on the owner's finalizers.
    plugins = "--enable-admission-plugins=OwnerReferencesPermissionEnforcement"
    with KubeApiServer(tmp_path / "kube", audit=True, extra_args=(plugins,)) as server:
        yield server


def install(api: KubeApiServer, tmp_path: Path, zk_chroot: str, *sets: str) -> Cluster:
    """As helm install does, as the administrator: the chart's CRDs (kopf's peering ones among
    them), then its rendered templates. Every kind the chart renders with these values is one
    the bare server serves (no ServiceMonitor: metrics.serviceMonitor stays off, its CRD is the
    Prometheus Operator's), so nothing is left out."""
    admin = Cluster(api.write_kubeconfig(tmp_path / "admin.kubeconfig"))
    admin.kubectl("apply", "-f", str(CHART / "crds"))
    admin.kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
    for namespace in (NAMESPACE, WATCHED, UNWATCHED):
        admin.kubectl("create", "namespace", namespace)
    admin.kubectl("create", "secret", "generic", "kafka-zookeeper", "-n", NAMESPACE,
                  f"--from-literal=connect={zk_chroot}")  # fmt: skip
    rendered = render("zookeeper.connectSecret.name=kafka-zookeeper",
                      "embeddedController.enabled=true", "replicaCount=2",
                      f"liveness.port={free_port()}", f"readiness.port={free_port()}",
                      f"metrics.port={free_port()}", *sets)  # fmt: skip
    kinds = {doc["kind"] for doc in yaml.safe_load_all(rendered) if doc}
    assert "ServiceMonitor" not in kinds
    admin.kubectl("apply", "-f", "-", stdin=rendered)
    return admin


def operator_kubeconfig(api: KubeApiServer, admin: Cluster, tmp_path: Path) -> Path:
    """A kubeconfig holding only a token of the chart's ServiceAccount (TokenRequest API)."""
    token = admin.kubectl("create", "token", ACCOUNT, "-n", NAMESPACE, "--duration=1h").strip()
    return api.write_kubeconfig(tmp_path / "operator.kubeconfig", token=token, user="operator")


def start_operator(
    admin: Cluster, kubeconfig: Path, log: Any, cwd: Path
) -> subprocess.Popen[bytes]:
    """As test_install's start_operator: the image's entrypoint, the container's args and env
    (read by the administrator), but with the ServiceAccount's kubeconfig, as the kubelet mounts
    its token; never in-cluster credentials of this machine."""
    deployment = admin.get("deployment", ACCOUNT, "-n", NAMESPACE)
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == ACCOUNT
    (c,) = pod["containers"]
    env = container_environment(admin, NAMESPACE, c["env"])
    args = [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], a) for a in c["args"]]
    kto, *entry_args = image_entrypoint("operator")
    assert kto == "kto"
    base = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}
    return subprocess.Popen(
        [sys.executable, "-m", "kafka_topic_operator.cli", *entry_args, *args],
        env={**base, **env, "KUBECONFIG": str(kubeconfig)}, stdout=log,
        stderr=subprocess.STDOUT, cwd=cwd,
    )  # fmt: skip


# -- the audit log ----------------------------------------------------------------------------


def audit_events(api: KubeApiServer, user: str) -> list[dict[str, Any]]:
    """The user's requests, one event each (a watch's ResponseStarted and ResponseComplete are
    one request: the last stage logged is kept)."""
    by_id: dict[str, dict[str, Any]] = {}
    for line in api.audit_log.read_text().splitlines():
        event = json.loads(line)
        if event["user"]["username"] == user:
            by_id[event["auditID"]] = event
    return list(by_id.values())


def call_of(event: dict[str, Any]) -> Call | None:
    """A resource request's (namespace, group, resource, verb); None for /api, /apis, /version
    (discovery, which every authenticated user may read)."""
    ref = event.get("objectRef")
    if ref is None:
        return None
    resource = ref["resource"] + (f"/{ref['subresource']}" if ref.get("subresource") else "")
    return ref.get("namespace", ""), ref.get("apiGroup", ""), resource, event["verb"]


def code_of(event: dict[str, Any]) -> int:
    return int(event.get("responseStatus", {}).get("code", 0))


def described(event: dict[str, Any]) -> str:
    return f"{event['verb']} {event['requestURI']} -> {code_of(event)}"


# -- what the chart grants --------------------------------------------------------------------


def operator_roles(admin: Cluster) -> tuple[set[tuple[str, str, str]], dict[str, set[Any]]]:
    """The rules bound to the operator's ServiceAccount, read back from the server: the
    ClusterRole's (cluster-wide) and each namespace's Role's."""

    def rules(role: dict[str, Any]) -> set[tuple[str, str, str]]:
        return {(g, r, v) for rule in role["rules"] for g in rule["apiGroups"]
                for r in rule["resources"] for v in rule["verbs"]}  # fmt: skip

    def binds_operator(binding: dict[str, Any]) -> bool:
        return {"kind": "ServiceAccount", "name": ACCOUNT, "namespace": NAMESPACE} in binding.get(
            "subjects", []
        )

    cluster: set[tuple[str, str, str]] = set()
    for binding in admin.get("clusterrolebindings")["items"]:
        if binds_operator(binding):
            cluster |= rules(admin.get("clusterrole", binding["roleRef"]["name"]))
    namespaced: dict[str, set[Any]] = {}
    for binding in admin.get("rolebindings", "-A")["items"]:
        if binds_operator(binding):
            namespace = binding["metadata"]["namespace"]
            role = admin.get("role", binding["roleRef"]["name"], "-n", namespace)
            namespaced.setdefault(namespace, set()).update(rules(role))
    return cluster, namespaced


def granted(call: Call, cluster: set[Any], namespaced: dict[str, set[Any]]) -> bool:
    namespace, group, resource, verb = call
    return (
        (group, resource, verb) in cluster | namespaced.get(namespace, set())
        if namespace
        else ((group, resource, verb) in cluster)
    )


def check_the_operators_calls(api: KubeApiServer, admin: Cluster) -> set[Call]:
    """Every request of the operator's ServiceAccount was allowed and is granted by its roles;
    returns the calls, printed."""
    events = audit_events(api, OPERATOR)
    assert events, "no request of the operator's ServiceAccount in the audit log"
    forbidden = [described(e) for e in events if code_of(e) == 403]
    assert not forbidden, "refused to the operator:\n" + "\n".join(forbidden)
    assert not [e for e in events if code_of(e) == 401], "a request was not authenticated"
    calls = {c for e in events if (c := call_of(e)) is not None}
    print(f"the operator's calls ({len(events)} requests):")
    for namespace, group, resource, verb in sorted(calls):
        print(f"  {verb:>16} {group or 'core'}/{resource} in {namespace or '(cluster)'}")
    cluster, namespaced = operator_roles(admin)
    beyond = sorted(c for c in calls if not granted(c, cluster, namespaced))
    assert not beyond, f"allowed but not granted by the chart's roles: {beyond}"
    used = {(g, r, v) for _, g, r, v in calls}
    unused = (cluster | set().union(*namespaced.values())) - used
    print("granted and not used in this run:", sorted(unused))
    # Nothing granted the operator never uses: what a run may not exercise is a code path of
    # its own, and nothing else.
    allowed_unused = NOT_ALWAYS_EXERCISED | CHECKED_ON_ADMISSION
    assert unused <= allowed_unused, sorted(unused - allowed_unused)
    return calls


# -- refusals ---------------------------------------------------------------------------------


def refused(kubeconfig: Path, *args: str, stdin: str | None = None) -> None:
    """`kubectl args` with the operator's token is refused by RBAC (403 Forbidden)."""
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    done = subprocess.run([str(KUBECTL), *args], input=stdin, env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode != 0, f"kubectl {' '.join(args)} was allowed: {done.stdout}"
    assert "forbidden" in done.stderr.lower(), done.stderr


def refused_patch(api: KubeApiServer, kubeconfig: Path, path: str, body: dict[str, Any]) -> None:
    """A merge patch sent as is (kubectl patch reads the object first, and that GET would be
    what is refused): 403 from RBAC."""
    token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]
    headers = {"Authorization": f"Bearer {token}",
               "Content-Type": "application/merge-patch+json"}  # fmt: skip
    request = urllib.request.Request(api.url + path, data=json.dumps(body).encode(),
                                     method="PATCH", headers=headers)  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(request, timeout=10, context=api.ssl_context())
    with answer.value as error:
        assert error.code == 403, error.read()


EVENT = f"""
apiVersion: v1
kind: Event
metadata: {{name: intruder, namespace: {UNWATCHED}}}
involvedObject: {{kind: KafkaTopic, name: payments, namespace: {UNWATCHED}}}
reason: Test
"""


def check_refusals(api: KubeApiServer, kubeconfig: Path, mode: str) -> None:
    # kubectl's requests, then merge patches sent as they are.
    """Requests outside the chart's roles, with the operator's token: each refused, and seen
    refused in the audit log as the operator's (what the first check relies on)."""
    before = {e["auditID"] for e in audit_events(api, OPERATOR)}
    attempts: list[tuple[tuple[str, ...], str | None]] = [
        (("get", "secrets", "-n", NAMESPACE), None),
        (("get", "secret", "kafka-zookeeper", "-n", NAMESPACE), None),
        (("delete", "crd", "kafkatopics.kto.dev"), None),
        (("create", "deployment", "intruder", "--image=busybox", "-n", WATCHED), None),
        (("create", "clusterrolebinding", "escalate", "--clusterrole=cluster-admin",
          f"--serviceaccount={NAMESPACE}:{ACCOUNT}"), None),
        (("get", "pods", "-n", WATCHED), None),
        # The operator never creates nor deletes KafkaTopics: people do.
        (("create", "-f", "-"), TOPIC),
        (("delete", "kafkatopic", "anything", "-n", WATCHED), None),
        # Nor reads a status subresource (no get granted on it).
        (("get", "kafkatopic", "payments", "-n", WATCHED, "--subresource=status"), None),
    ]  # fmt: skip
    if mode == "namespaced":
        attempts += [
            (("get", "kafkatopics", "-n", UNWATCHED), None),
            (("get", "kafkatopics", "--all-namespaces"), None),
            (("create", "-f", "-"), EVENT),
        ]  # fmt: skip
    for args, stdin in attempts:
        refused(kubeconfig, *args, stdin=stdin)
    topics = f"/apis/kto.dev/v1/namespaces/{UNWATCHED}/kafkatopics/payments"
    patches = [("/api/v1/namespaces/kube-system", {"metadata": {"labels": {"x": "y"}}}),
               (f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{ACCOUNT}",
                {"metadata": {"annotations": {"x": "y"}}})]  # fmt: skip
    if mode == "namespaced":
        patches += [(topics, {"metadata": {"finalizers": ["x"]}}),
                    (topics + "/status", {"status": {"topicName": "x"}})]  # fmt: skip
    for path, body in patches:
        refused_patch(api, kubeconfig, path, body)
    after = [e for e in audit_events(api, OPERATOR) if e["auditID"] not in before]
    denied = [e for e in after if code_of(e) == 403]
    print("refused to the operator's token:")
    for event in denied:
        print("  " + described(event))
    assert len(denied) >= len(attempts) + len(patches), [described(e) for e in after]


# -- the tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_the_operator_needs_no_more_than_the_charts_rbac_and_gets_no_more(
    mode: str, api: KubeApiServer, zk_chroot: str, tmp_path: Path, dev_brokers: None
) -> None:
    admin = install(api, tmp_path, zk_chroot, *MODES[mode])
    kubeconfig = operator_kubeconfig(api, admin, tmp_path)
    log = (tmp_path / "operator.log").open("w")
    operator = start_operator(admin, kubeconfig, log, tmp_path)
    try:
        admin.kubectl("apply", "-f", "-", stdin=TOPIC)
        topic = ("kafkatopic/payments", "-n", WATCHED)
        admin.kubectl("wait", *topic, "--for=condition=Ready", "--timeout=90s")
        admin.kubectl("patch", *topic, "--type=merge", "-p", '{"spec":{"partitions":6}}')
        admin.kubectl("wait", *topic, "--for=jsonpath={.status.partitionCounts.total}=6",
                      "--timeout=90s")  # fmt: skip
        admin.kubectl("wait", *topic, "--for=jsonpath={.status.observedGeneration}=2",
                      "--timeout=30s")  # fmt: skip
        admin.kubectl("wait", *topic, "--for=condition=Ready", "--timeout=30s")
        admin.kubectl("delete", *topic, "--wait=false")
        # The finalizer released once the topic is gone from Kafka: the resource goes.
        admin.kubectl("wait", *topic, "--for=delete", "--timeout=90s")
        peering = "clusterkopfpeering" if mode == "cluster-wide" else "kopfpeering"
        where = () if mode == "cluster-wide" else ("-n", WATCHED)
        assert admin.get(peering, "kafka-topic-operator", *where).get("status"), "no peering"
    finally:
        stop_operator(operator, log)
    calls = check_the_operators_calls(api, admin)
    used = {(g, r, v) for _, g, r, v in calls}
    assert {
        ("kto.dev", "kafkatopics", "watch"),
        ("kto.dev", "kafkatopics", "patch"),
        ("kto.dev", "kafkatopics/status", "patch"),
        ("", "events", "create"),
    } <= used
    namespaces = {ns for ns, _, r, _ in calls if r.startswith("kafkatopics")}
    if mode == "namespaced":
        assert namespaces == {WATCHED}, "the operator looked beyond its namespace"
    check_refusals(api, kubeconfig, mode)


def run_the_planners_job(admin: Cluster, job: dict[str, Any]) -> None:
    """What the Job controller and the kubelet would do, as the Job's planning job in this
    process's Python (the exact planner, no Spark for a cluster this small), then the Job marked
    complete as the Job controller marks it."""
    (c,) = job["spec"]["template"]["spec"]["containers"]
    args = c["args"]
    paths = Paths(input=args[args.index("--input") + 1], output=args[args.index("--output") + 1])
    subprocess.run(local_command(sys.executable, paths), check=True, timeout=300)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    done = {"type": "Complete", "status": "True", "lastProbeTime": now,
            "lastTransitionTime": now}  # fmt: skip
    met = {**done, "type": "SuccessCriteriaMet"}
    status = {"startTime": now, "completionTime": now, "succeeded": 1, "active": 0,
              "ready": 0, "terminating": 0, "conditions": [met, done]}  # fmt: skip
    name = job["metadata"]["name"]
    admin.kubectl("patch", "job", name, "-n", WATCHED, "--subresource=status", "--type=merge",
                  "-p", json.dumps({"status": status}))  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
def test_rebalancing_needs_no_more_than_the_charts_rbac_and_gets_no_more(
    mode: str, api: KubeApiServer, zk_chroot: str, tmp_path: Path, dev_brokers: None
) -> None:
    """With rebalance.enabled: a KafkaRebalance planned with the chart's planner Job (run here,
    there being no Job controller), its plan saved in ConfigMaps, approved and carried out."""
    work_dir = tmp_path / "plans"
    work_dir.mkdir()
    rebalance = ("rebalance.enabled=true", "rebalance.workVolume.claimName=kto-plans",
                 f"rebalance.workDir={work_dir}")  # fmt: skip
    admin = install(api, tmp_path, zk_chroot, *MODES[mode], *rebalance)
    kubeconfig = operator_kubeconfig(api, admin, tmp_path)
    log = (tmp_path / "operator.log").open("w")
    operator = start_operator(admin, kubeconfig, log, tmp_path)
    try:
        admin.kubectl("apply", "-f", "-", stdin=TOPIC)
        topic = ("kafkatopic/payments", "-n", WATCHED)
        admin.kubectl("wait", *topic, "--for=condition=Ready", "--timeout=90s")
        admin.kubectl("apply", "-f", "-", stdin=JOB_REBALANCE.format(work_dir=work_dir))
        rebalance_ = ("kafkarebalance/even-out", "-n", WATCHED)

        def job() -> Any:
            jobs = admin.get("jobs", "-n", WATCHED, "-l", "kto.dev/rebalance=even-out")
            return jobs["items"][0] if jobs["items"] else None

        planner = eventually(job, "the planner's Job", timeout=90)
        assert planner["spec"]["template"]["spec"]["serviceAccountName"] == "kto-planner"
        run_the_planners_job(admin, planner)
        admin.kubectl("wait", *rebalance_, "--for=condition=ProposalReady", "--timeout=90s")
        # The plan is in its ConfigMap: the operator deleted its planner.
        admin.kubectl("wait", "job", planner["metadata"]["name"], "-n", WATCHED,
                      "--for=delete", "--timeout=60s")  # fmt: skip
        assert admin.get("configmap", "even-out-plan", "-n", WATCHED)
        admin.kubectl("annotate", *rebalance_, "kto.dev/rebalance=approve")
        admin.kubectl("wait", *rebalance_, "--for=condition=Ready", "--timeout=90s")
    finally:
        stop_operator(operator, log)
    calls = check_the_operators_calls(api, admin)
    used = {(g, r, v) for _, g, r, v in calls}
    assert {("kto.dev", "kafkarebalances", "watch"), ("kto.dev", "kafkarebalances/status", "patch"),
            ("batch", "jobs", "create"), ("batch", "jobs", "delete"),
            ("", "pods", "deletecollection"), ("", "configmaps", "create")} <= used  # fmt: skip
    if mode == "namespaced":
        assert {ns for ns, *_ in calls} <= {WATCHED, ""}
    check_refusals(api, kubeconfig, mode)
