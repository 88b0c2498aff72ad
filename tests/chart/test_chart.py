"""The Helm chart through the real helm: lint, values schema, rendered manifests validated against
Kubernetes' own schemas, the security context, least-privilege RBAC and the probes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml
from chart_testing import (
    CHART,
    NAMESPACE,
    ROOT,
    VALUES_FILES,
    container,
    ensure_binaries,
    flag,
    helm,
    of_kind,
    one,
    render,
)

KUBERNETES_VERSION = "1.33.0"
# Validated elsewhere (PrometheusRule: by promtool, in test_prometheusrule.py).
CUSTOM_KINDS = {"ClusterKopfPeering", "KopfPeering", "ServiceMonitor", "PrometheusRule"}
VALUES_IDS = [p.name.removesuffix("-values.yaml") for p in VALUES_FILES]


@pytest.fixture(scope="module", autouse=True)
def binaries() -> Iterator[None]:
    ensure_binaries()
    yield


def values_args(path: Path) -> list[str]:
    return ["-f", str(path)]


def test_every_option_has_a_values_file() -> None:
    assert set(VALUES_IDS) >= {"default", "namespaced", "ha", "ha-namespaced", "secrets", "sasl",
                               "monitoring", "embedded-controller", "rebalance",
                               "rebalance-namespaced"}  # fmt: skip


def test_the_charts_crds_are_the_projects_crds_byte_for_byte() -> None:
    ours = {p.name: p.read_bytes() for p in (ROOT / "crds").glob("*.yaml")}
    charted = {p.name: p.read_bytes() for p in (CHART / "crds").glob("*.yaml")}
    assert charted == ours
    assert "kafkatopics.yaml" in ours


@pytest.mark.parametrize("values", VALUES_FILES, ids=VALUES_IDS)
def test_helm_lint_passes(values: Path) -> None:
    done = helm("lint", "--strict", str(CHART), *values_args(values))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 chart(s) linted, 0 chart(s) failed" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "at '/zookeeper/connect': minLength: got 0, want 1"),
        (["--set", "zookeeper.connect=zk"], "at '/zookeeper/connect': 'zk' does not match"),
        (["--set", "zookeeper.connect=zk:2181/kafka/"], "at '/zookeeper/connect'"),
        (["--set", "zookeeper.connect=zk:2181", "--set", "zookeeper.conect=x"],
         "additional properties 'conect' not allowed"),
        (["--set", "zookeeper.connect=zk:2181", "--set", "replicaCount=0"],
         "at '/replicaCount': minimum: got 0, want 1"),
        (["--set", "zookeeper.connect=zk:2181", "--set", "logLevel=LOUD"], "at '/logLevel'"),
        (["--set", "zookeeper.connect=zk:2181", "--set", "watch.selector=team"],
         "at '/watch/selector'"),
        (["--set", "zookeeper.connect=zk:2181", "--set", "watch.namespaces={Team_A}"],
         "at '/watch/namespaces/0'"),
        (["--set", "zookeeper.connect=zk:2181", "--set", "rebalance.enabled=true"],
         "rebalance.workVolume.claimName is required with rebalance.enabled"),
        (["--set", "zookeeper.connect=zk:2181", "--set", "rebalance.engines={local}"],
         "at '/rebalance/engines/0': value must be one of 'kubernetes', 'sparkApplication'"),
        (["--set", "zookeeper.connect=zk:2181", "--set", "rebalance.workDir=plans"],
         "at '/rebalance/workDir'"),
        (["--set", "zookeeper.connect=zk:2181", "--set", "rebalance.workVolume.claimName=Plans"],
         "at '/rebalance/workVolume/claimName'"),
        (["--set", "zookeeper.connect=zk:2181", "--set", "zookeeper.setAcl=true"],
         "zookeeper.setAcl needs zookeeper.digestSecret.name or zookeeper.saslSecret.name"),
        (["--set", "zookeeper.connect=zk:2181", "--set", "zookeeper.digestSecret.name=a",
          "--set", "zookeeper.saslSecret.name=b"],
         "zookeeper.digestSecret and zookeeper.saslSecret exclude each other"),
        (["--set", "zookeeper.connect=zk:2181", "--set", "metrics.port=70000"],
         "at '/metrics/port': maximum: got 70,000, want 65,535"),
    ],
)  # fmt: skip
def test_bad_values_are_refused_with_the_reason(args: list[str], message: str) -> None:
    done = helm("template", "kto", str(CHART), *args)
    assert done.returncode != 0
    assert message in done.stderr


@pytest.mark.parametrize("values", VALUES_FILES, ids=VALUES_IDS)
def test_rendered_manifests_validate_against_kubernetes_schemas(values: Path) -> None:
    docs = render(*values_args(values), crds=True)
    for doc in docs:
        if doc["kind"] in CUSTOM_KINDS:
            continue
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    kinds = {d["kind"] for d in docs}
    assert {"CustomResourceDefinition", "Deployment", "ServiceAccount", "ClusterRole"} <= kinds


@pytest.mark.parametrize("values", VALUES_FILES, ids=VALUES_IDS)
def test_the_pod_runs_under_the_restricted_security_standard(values: Path) -> None:
    docs = render(*values_args(values))
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert not {"hostNetwork", "hostPID", "hostIPC"} & set(pod)
    c = container(docs)
    assert c["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert c["resources"]["requests"] and c["resources"]["limits"]["memory"]
    # A read-only root filesystem: /tmp is the only writable place, and small.
    assert {"name": "tmp", "mountPath": "/tmp"} in c["volumeMounts"]
    assert {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}} in pod["volumes"]


def rules_of(doc: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for rule in doc["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


TOPIC_RULES = {
    *(("kto.dev", "kafkatopics", v) for v in ("get", "list", "watch", "patch")),
    ("kto.dev", "kafkatopics/status", "patch"),  # never read: kopf and the follower only patch
    ("", "events", "create"),
}
CRD_READ = {("apiextensions.k8s.io", "customresourcedefinitions", v) for v in ("list", "watch")}


def peering_rules(plural: str) -> set[tuple[str, str, str]]:
    # kopf lists, watches and patches its peering object, never reads it by name.
    return {("kopf.dev", plural, v) for v in ("list", "watch", "patch")}


REBALANCE_RULES = {
    # The daemon works on kopf's watched body: no get on them or their status.
    *(("kto.dev", "kafkarebalances", v) for v in ("list", "watch", "patch")),
    ("kto.dev", "kafkarebalances/status", "patch"),
    # Owner references with blockOwnerDeletion, where OwnerReferencesPermissionEnforcement is on.
    ("kto.dev", "kafkarebalances/finalizers", "update"),
    *(("", "configmaps", v) for v in ("get", "list", "create", "update", "delete")),
}
JOB_RULES = {
    *(("batch", "jobs", v) for v in ("get", "create", "delete")),
    ("", "pods", "deletecollection"),  # spark-submit's driver pod, which no Job owns
}
SPARK_APPLICATION_RULES = {("sparkoperator.k8s.io", "sparkapplications", v)
                           for v in ("get", "create", "delete")}  # fmt: skip
# What Spark on Kubernetes' submitter and driver do with the planner's service account (the
# Spark operator's chart grants its Spark jobs the same).
PLANNER_RULES = {
    ("", resource, verb)
    for resource in ("pods", "services", "configmaps", "persistentvolumeclaims")
    for verb in ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
}


def rebalance_rules(values: Path) -> set[tuple[str, str, str]]:
    """The rules the operator needs for KafkaRebalances with this values file's engines."""
    name = values.name
    if not name.startswith("rebalance"):
        return set()
    engines = JOB_RULES | (SPARK_APPLICATION_RULES if name == "rebalance-values.yaml" else set())
    return REBALANCE_RULES | engines


def is_planners(role: dict[str, Any]) -> bool:
    return str(role["metadata"]["name"]).endswith("-planner")


@pytest.mark.parametrize("values", VALUES_FILES, ids=VALUES_IDS)
def test_rbac_grants_only_what_the_operator_uses(values: Path) -> None:
    docs = render(*values_args(values))
    roles = of_kind(docs, "ClusterRole") + of_kind(docs, "Role")
    for role in roles:
        for rule in role["rules"]:
            for key in ("apiGroups", "resources", "verbs"):
                assert "*" not in rule[key], f"wildcard in {role['metadata']['name']}"
            assert "resourceNames" not in rule and "nonResourceURLs" not in rule
    never = {"create", "update", "delete", "deletecollection", "escalate", "bind", "impersonate"}
    operator_roles = [r for r in roles if not is_planners(r)]
    for role in operator_roles:
        granted = rules_of(role) - {("", "events", "create")} - rebalance_rules(values)
        assert not {verb for _, _, verb in granted} & never
    (cluster_role,) = of_kind(docs, "ClusterRole")
    namespaces = [r["metadata"]["namespace"] for r in of_kind(docs, "Role") if not is_planners(r)]
    ha = values.name.startswith("ha")
    if values.name.startswith(("namespaced", "ha-namespaced", "rebalance-namespaced")):
        # Nothing on KafkaTopics cluster-wide: read CRDs, and which namespaces exist.
        assert rules_of(cluster_role) == CRD_READ | {("", "namespaces", "list"),
                                                     ("", "namespaces", "watch")}  # fmt: skip
        assert sorted(namespaces) == ["team-a", "team-b"]
        for role in (r for r in of_kind(docs, "Role") if not is_planners(r)):
            expected = TOPIC_RULES | rebalance_rules(values)
            assert rules_of(role) == expected | (peering_rules("kopfpeerings") if ha else set())
        bindings = [b for b in of_kind(docs, "RoleBinding") if not is_planners(b)]
        assert sorted(b["metadata"]["namespace"] for b in bindings) == ["team-a", "team-b"]
    else:
        expected = CRD_READ | TOPIC_RULES | rebalance_rules(values)
        expected |= peering_rules("clusterkopfpeerings") if ha else set()
        assert rules_of(cluster_role) == expected
        assert namespaces == []
    service_account = one(docs, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"]
    accounts = [a["metadata"]["name"] for a in of_kind(docs, "ServiceAccount")]
    assert service_account in accounts
    bindings = of_kind(docs, "ClusterRoleBinding") + of_kind(docs, "RoleBinding")
    for binding in (b for b in bindings if not is_planners(b)):
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": service_account, "namespace": NAMESPACE}
        ]


@pytest.mark.parametrize("values", VALUES_FILES, ids=VALUES_IDS)
def test_the_probe_and_the_metrics_point_at_the_operators_endpoints(values: Path) -> None:
    docs = render(*values_args(values))
    c = container(docs)
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    liveness = urlsplit(flag(c["args"], "liveness") or "")
    probe = c["livenessProbe"]["httpGet"]
    assert (probe["path"], ports[probe["port"]]) == (liveness.path, liveness.port)
    readiness = urlsplit(flag(c["args"], "readiness") or "")
    probe = c["readinessProbe"]["httpGet"]
    assert (probe["path"], ports[probe["port"]]) == (readiness.path, readiness.port)
    assert readiness.port != liveness.port
    metrics_port = int(flag(c["args"], "metrics-port") or "0")
    services = of_kind(docs, "Service")
    if values.name.startswith("embedded-controller"):
        assert metrics_port == 0 and "metrics" not in ports and not services
        return
    assert ports["metrics"] == metrics_port
    (service,) = services
    assert service["spec"]["ports"][0]["targetPort"] == "metrics"
    assert service["spec"]["selector"] == one(docs, "Deployment")["spec"]["selector"]["matchLabels"]
    for monitor in of_kind(docs, "ServiceMonitor"):
        assert monitor["spec"]["endpoints"][0]["port"] == service["spec"]["ports"][0]["name"]
        assert monitor["spec"]["endpoints"][0]["path"] == "/metrics"
        selects = monitor["spec"]["selector"]["matchLabels"].items()
        assert selects <= service["metadata"]["labels"].items()


def test_zookeeper_settings_reach_the_operators_flags() -> None:
    docs = render("-f", str(CHART / "ci" / "secrets-values.yaml"))
    c = container(docs)
    assert flag(c["args"], "zookeeper") == "$(KTO_ZOOKEEPER_CONNECT)"
    (connect,) = [e for e in c["env"] if e["name"] == "KTO_ZOOKEEPER_CONNECT"]
    assert connect["valueFrom"] == {"secretKeyRef": {"name": "kafka-zookeeper", "key": "connect"}}
    assert_credentials_file(docs, "zookeeper-digest-file", "kafka-zookeeper", "digest")
    assert flag(c["args"], "zookeeper-sasl-file") is None
    assert "--zookeeper-set-acl" in c["args"]
    docs = render("-f", str(CHART / "ci" / "sasl-values.yaml"))
    assert_credentials_file(docs, "zookeeper-sasl-file", "kafka-zookeeper-sasl", "sasl")
    assert flag(container(docs)["args"], "zookeeper-digest-file") is None
    assert "--zookeeper-set-acl" in container(docs)["args"]
    docs = render("-f", str(CHART / "ci" / "default-values.yaml"))
    assert not [m for m in container(docs)["volumeMounts"] if m["name"] != "tmp"]


def assert_credentials_file(docs: list[dict[str, Any]], option: str, secret: str, key: str) -> None:
    """Credentials are a file from the Secret, group-readable for the pod's fsGroup, never an
    environment variable."""
    c = container(docs)
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    path = Path(flag(c["args"], option) or "")
    (mount,) = [m for m in c["volumeMounts"] if m["name"] == "zookeeper-credentials"]
    assert path.parent == Path(mount["mountPath"]) and mount["readOnly"] is True
    (volume,) = [v for v in pod["volumes"] if v["name"] == "zookeeper-credentials"]
    assert volume["secret"]["secretName"] == secret
    assert volume["secret"]["items"] == [{"key": key, "path": path.name}]
    assert volume["secret"]["defaultMode"] == 0o440
    assert not any(s in e["name"].lower() for e in c["env"] for s in ("digest", "sasl"))


def test_selector_namespaces_and_the_embedded_controller_reach_the_flags() -> None:
    c = container(render("-f", str(CHART / "ci" / "namespaced-values.yaml")))
    assert [a for a in c["args"] if a.startswith("--namespace=")] == [
        "--namespace=team-a",
        "--namespace=team-b",
    ]
    assert flag(c["args"], "selector") == "kto.dev/cluster=prod"
    assert "--embedded-controller" not in c["args"]
    c = container(render("-f", str(CHART / "ci" / "embedded-controller-values.yaml")))
    assert "--embedded-controller" in c["args"] and flag(c["args"], "controller-id") == "7"


def test_two_replicas_elect_one_through_kopf_peering() -> None:
    docs = render("-f", str(CHART / "ci" / "ha-values.yaml"))
    assert one(docs, "Deployment")["spec"]["replicas"] == 2
    assert flag(container(docs)["args"], "peering") == "kafka-topic-operator"
    assert one(docs, "ClusterKopfPeering")["metadata"]["name"] == "kafka-topic-operator"
    assert one(docs, "PodDisruptionBudget")["spec"]["minAvailable"] == 1
    docs = render("-f", str(CHART / "ci" / "ha-namespaced-values.yaml"))
    assert sorted(p["metadata"]["namespace"] for p in of_kind(docs, "KopfPeering")) == [
        "team-a",
        "team-b",
    ]
    # One replica: no peering, and no budget that would block every node drain.
    docs = render("-f", str(CHART / "ci" / "default-values.yaml"))
    assert flag(container(docs)["args"], "peering") is None
    assert not of_kind(docs, "PodDisruptionBudget") and not of_kind(docs, "ClusterKopfPeering")


def test_the_network_policy_opens_only_dns_the_api_zookeeper_and_the_ports() -> None:
    docs = render("-f", str(CHART / "ci" / "monitoring-values.yaml"))
    policy = one(docs, "NetworkPolicy")["spec"]
    assert policy["policyTypes"] == ["Ingress", "Egress"]
    egress_ports = sorted(p["port"] for rule in policy["egress"] for p in rule["ports"])
    assert egress_ports == [53, 53, 443, 2181]
    (zookeeper,) = [r for r in policy["egress"] if r["ports"][0]["port"] == 2181]
    assert zookeeper["to"] == [{"ipBlock": {"cidr": "10.0.0.0/16"}}]
    ingress_ports = sorted(p["port"] for rule in policy["ingress"] for p in rule["ports"])
    assert ingress_ports == [8080, 8081, 9090]
    (metrics,) = [r for r in policy["ingress"] if r["ports"][0]["port"] == 9090]
    assert metrics["from"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
    ]


def test_the_network_policy_opens_the_brokers_listeners_that_zookeeper_mode_ready_asks() -> None:
    peers = "networkPolicy.kafkaPeers[0].podSelector.matchLabels.app=kafka"
    docs = render("-f", str(CHART / "ci" / "monitoring-values.yaml"),
                  "--set", "networkPolicy.brokerPorts={9092,9093}", "--set", peers)  # fmt: skip
    policy = one(docs, "NetworkPolicy")["spec"]
    egress_ports = sorted(p["port"] for rule in policy["egress"] for p in rule["ports"])
    assert egress_ports == [53, 53, 443, 2181, 9092, 9093]
    (brokers,) = [r for r in policy["egress"] if r["ports"][0]["port"] == 9092]
    assert brokers["to"] == [{"podSelector": {"matchLabels": {"app": "kafka"}}}]


def test_notes_tell_the_user_what_to_do_next() -> None:
    done = helm("install", "kto", str(CHART), "--dry-run=client", "--namespace", NAMESPACE,
                "-f", str(CHART / "ci" / "namespaced-values.yaml"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    notes = done.stdout.split("NOTES:", 1)[1]
    assert "kubectl -n kto-system rollout status deployment/kto-kafka-topic-operator" in notes
    assert "namespaces team-a, team-b labelled kto.dev/cluster=prod" in notes
    assert "namespace: team-a" in notes and 'kto.dev/cluster: "prod"' in notes


@pytest.mark.parametrize(
    "values", [v for v in VALUES_FILES if not v.name.startswith("rebalance")],
    ids=[i for i in VALUES_IDS if not i.startswith("rebalance")],
)  # fmt: skip
def test_the_operator_leaves_kafkarebalances_alone_without_their_permissions(values: Path) -> None:
    docs = render(*values_args(values))
    assert "--no-rebalance" in container(docs)["args"]
    rules = [r for kind in ("ClusterRole", "Role") for d in of_kind(docs, kind) for r in d["rules"]]
    assert not [r for r in rules if "kafkarebalances" in r.get("resources", [])]
    assert not [a for a in of_kind(docs, "ServiceAccount") if "planner" in a["metadata"]["name"]]


def test_rebalancing_with_the_kubernetes_engines_mounts_the_work_volume() -> None:
    docs = render("-f", str(CHART / "ci" / "rebalance-values.yaml"))
    c = container(docs)
    args = c["args"]
    assert "--no-rebalance" not in args
    assert flag(args, "rebalance-engines") == "kubernetes,sparkApplication"  # never local
    assert flag(args, "planner-image") == "registry.example/kafka-topic-operator-spark:1.2.3"
    assert flag(args, "planner-service-account") == "kto-planner"
    # The defaults of a KafkaRebalance's engine: the claim serves the release's namespace.
    assert flag(args, "planner-work-dir") == "/var/lib/kto/rebalance"
    assert flag(args, "planner-volume") == f"{NAMESPACE}/kto-plans"
    assert not [a for a in args if "cpu-request" in a]  # Spark's own unless told
    (mount,) = [m for m in c["volumeMounts"] if m["name"] == "rebalance-work"]
    assert mount == {"name": "rebalance-work", "mountPath": "/var/lib/kto/rebalance"}
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "rebalance-work"]
    assert volume["persistentVolumeClaim"] == {"claimName": "kto-plans"}
    assert pod["securityContext"]["fsGroup"] == 10001  # the planner's pods write as this group
    # The planner's image defaults to the chart's version, like the operator's.
    docs = render("-f", str(CHART / "ci" / "rebalance-values.yaml"),
                  "--set", "rebalance.plannerImage.tag=")  # fmt: skip
    app_version = yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"]
    assert flag(container(docs)["args"], "planner-image") == (
        f"registry.example/kafka-topic-operator-spark:{app_version}"
    )


@pytest.mark.parametrize(
    ("values", "namespaces"),
    [("rebalance-values.yaml", [NAMESPACE]), ("rebalance-namespaced-values.yaml",
                                               ["team-a", "team-b"])],
)  # fmt: skip
def test_the_planners_service_account_may_run_spark_where_kafkarebalances_are(
    values: str, namespaces: list[str]
) -> None:
    docs = render("-f", str(CHART / "ci" / values))
    accounts = [
        a for a in of_kind(docs, "ServiceAccount") if a["metadata"]["name"] == "kto-planner"
    ]
    assert sorted(a["metadata"]["namespace"] for a in accounts) == namespaces
    roles = [r for r in of_kind(docs, "Role") if is_planners(r)]
    assert sorted(r["metadata"]["namespace"] for r in roles) == namespaces
    for role in roles:
        assert rules_of(role) == PLANNER_RULES
    bindings = [b for b in of_kind(docs, "RoleBinding") if is_planners(b)]
    for binding in bindings:
        namespace = binding["metadata"]["namespace"]
        assert binding["roleRef"]["name"] == "kto-kafka-topic-operator-planner"
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "kto-planner", "namespace": namespace}
        ]
    assert sorted(b["metadata"]["namespace"] for b in bindings) == namespaces
    # Bring your own account: none made, the operator still names it.
    docs = render("-f", str(CHART / "ci" / values),
                  "--set", "rebalance.plannerServiceAccount.create=false",
                  "--set", "rebalance.plannerServiceAccount.name=spark")  # fmt: skip
    assert not [r for r in of_kind(docs, "Role") if is_planners(r)]
    assert flag(container(docs)["args"], "planner-service-account") == "spark"


def test_the_planners_cpu_requests_are_passed_as_set() -> None:
    docs = render("-f", str(CHART / "ci" / "rebalance-values.yaml"),
                  "--set", "rebalance.plannerResources.executorCpuRequest=250m",
                  "--set", "rebalance.plannerResources.driverCpuRequest=0.5")  # fmt: skip
    args = container(docs)["args"]
    assert flag(args, "planner-executor-cpu-request") == "250m"
    assert flag(args, "planner-driver-cpu-request") == "0.5"
    refused = helm("template", "kto", str(CHART), "-f", str(CHART / "ci" / "rebalance-values.yaml"),
                   "--set", "rebalance.plannerResources.executorCpuRequest=1 core")  # fmt: skip
    assert refused.returncode != 0
    assert "at '/rebalance/plannerResources/executorCpuRequest'" in refused.stderr


def test_the_notes_show_the_engine_settings_for_a_kafkarebalance() -> None:
    done = helm("install", "kto", str(CHART), "--dry-run=client", "--namespace", NAMESPACE,
                "-f", str(CHART / "ci" / "rebalance-values.yaml"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    notes = done.stdout.split("NOTES:", 1)[1]
    # In the release's namespace the type is enough; elsewhere, a claim of that namespace.
    assert f"A KafkaRebalance in {NAMESPACE} needs only the engine's type" in notes
    assert "type: kubernetes\n         executors: 2\n" in notes
    assert "workDir: /var/lib/kto/rebalance" in notes
    assert "volume: <a claim in that namespace>" in notes


# A KRaft cluster through Kafka's Admin API (kafka.bootstrapServers) instead of ZooKeeper.
KAFKA_VALUES = [v for v in VALUES_FILES if v.name.startswith("kafka")]
KAFKA_IDS = [v.name.removesuffix("-values.yaml") for v in KAFKA_VALUES]
ZOOKEEPER_ONLY_FLAGS = ("--zookeeper", "--session-timeout", "--embedded-controller",
                        "--controller-id")  # fmt: skip
KAFKA = ["--set", "kafka.bootstrapServers=kafka:9092"]
KAFKA_SECRET = ["--set", "kafka.bootstrapServersSecret.name=k"]
ZOOKEEPER_SECRET = ["--set", "zookeeper.connectSecret.name=zk"]
SASL_SSL = [*KAFKA, "--set", "kafka.securityProtocol=SASL_SSL",
            "--set", "kafka.sasl.mechanism=SCRAM-SHA-512", "--set", "kafka.sasl.username=kto",
            "--set", "kafka.sasl.passwordSecret.name=kto"]  # fmt: skip


def test_every_backend_has_a_values_file() -> None:
    assert set(VALUES_IDS) >= {"kafka", "kafka-sasl-ssl", "kafka-mtls"}
    assert set(KAFKA_IDS) == {"kafka", "kafka-sasl-ssl", "kafka-mtls"}


@pytest.mark.parametrize("values", KAFKA_VALUES, ids=KAFKA_IDS)
def test_kafka_mode_runs_the_admin_api_backend_and_nothing_of_zookeepers(values: Path) -> None:
    docs = render(*values_args(values))
    c = container(docs)
    assert flag(c["args"], "bootstrap-servers") == "$(KTO_KAFKA_BOOTSTRAP_SERVERS)"
    assert not [a for a in c["args"] if a.startswith(ZOOKEEPER_ONLY_FLAGS)]
    assert [e["name"] for e in c["env"]] == ["KTO_KAFKA_BOOTSTRAP_SERVERS",
                                             "PYTHONDONTWRITEBYTECODE"]  # fmt: skip
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert not [m for m in c["volumeMounts"] if m["name"].startswith("zookeeper")]
    assert not [v for v in pod["volumes"] if v["name"].startswith("zookeeper")]
    # Every Kafka file is read-only, from a Secret, readable by the pod's fsGroup only.
    for mount in (m for m in c["volumeMounts"] if m["name"] != "tmp"):
        assert mount["readOnly"] is True and mount["mountPath"].startswith("/etc/kto/kafka/")
        (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
        assert volume["secret"]["defaultMode"] == 0o440
    # Passwords are files: nothing but the bootstrap servers in the environment.
    assert not [e for e in c["env"] if "PASSWORD" in e["name"]]


def test_kafka_mode_with_the_defaults_connects_in_plaintext() -> None:
    docs = render("-f", str(CHART / "ci" / "kafka-values.yaml"))
    c = container(docs)
    (bootstrap,) = [e for e in c["env"] if e["name"] == "KTO_KAFKA_BOOTSTRAP_SERVERS"]
    assert bootstrap["value"] == "kafka-0.kafka:9092,kafka-1.kafka:9092,kafka-2.kafka:9092"
    assert [a for a in c["args"] if a.startswith("--kafka-")] == [
        "--kafka-security-protocol=PLAINTEXT"
    ]
    assert [m["name"] for m in c["volumeMounts"]] == ["tmp"]
    assert "--no-rebalance" in c["args"] and flag(c["args"], "drift-interval") == "60"


def assert_secret_files(
    docs: list[dict[str, Any]], volume_name: str, secret: str, files: dict[str, str]
) -> None:
    """Each `--option` names the file of its key in `secret`, mounted read-only as
    `volume_name` with only those keys."""
    c = container(docs)
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    (mount,) = [m for m in c["volumeMounts"] if m["name"] == volume_name]
    assert mount["readOnly"] is True
    (volume,) = [v for v in pod["volumes"] if v["name"] == volume_name]
    assert volume["secret"]["secretName"] == secret
    assert volume["secret"]["defaultMode"] == 0o440
    items = []
    for option, key in files.items():
        path = Path(flag(c["args"], option) or "")
        assert path.parent == Path(mount["mountPath"]) and path.name == key
        items.append({"key": key, "path": key})
    assert volume["secret"]["items"] == items


def test_kafka_sasl_over_tls_reads_the_ca_and_the_password_from_their_secrets() -> None:
    docs = render("-f", str(CHART / "ci" / "kafka-sasl-ssl-values.yaml"))
    c = container(docs)
    (bootstrap,) = [e for e in c["env"] if e["name"] == "KTO_KAFKA_BOOTSTRAP_SERVERS"]
    assert bootstrap["valueFrom"] == {
        "secretKeyRef": {"name": "kto-kafka", "key": "bootstrapServers"}
    }
    assert flag(c["args"], "kafka-security-protocol") == "SASL_SSL"
    assert_secret_files(docs, "kafka-ca", "my-cluster-cluster-ca-cert",
                        {"kafka-ssl-cafile": "ca.crt"})  # fmt: skip
    assert flag(c["args"], "kafka-sasl-mechanism") == "SCRAM-SHA-512"
    assert flag(c["args"], "kafka-sasl-username") == "kto"
    assert_secret_files(docs, "kafka-sasl-password", "kto",
                        {"kafka-sasl-password-file": "password"})  # fmt: skip
    # Hostname verification stays on; no client certificate.
    assert "--kafka-ssl-no-hostname-check" not in c["args"]
    assert flag(c["args"], "kafka-ssl-certfile") is None
    assert flag(c["args"], "kafka-ssl-keyfile") is None


def test_kafka_mutual_tls_mounts_the_client_certificate_and_its_key() -> None:
    docs = render("-f", str(CHART / "ci" / "kafka-mtls-values.yaml"))
    c = container(docs)
    assert flag(c["args"], "kafka-security-protocol") == "SSL"
    assert_secret_files(docs, "kafka-ca", "kto-client-tls", {"kafka-ssl-cafile": "ca.crt"})
    client_files = {"kafka-ssl-certfile": "tls.crt", "kafka-ssl-keyfile": "tls.key"}
    assert_secret_files(docs, "kafka-client-certificate", "kto-client-tls", client_files)
    assert "--kafka-ssl-no-hostname-check" in c["args"]
    assert not [a for a in c["args"] if a.startswith("--kafka-sasl")]
    # A Strimzi KafkaUser's keys, and the system CAs (no CA Secret).
    docs = render("-f", str(CHART / "ci" / "kafka-mtls-values.yaml"),
                  "--set", "kafka.tls.caSecret.name=",
                  "--set", "kafka.tls.clientCertSecret.name=kto",
                  "--set", "kafka.tls.clientCertSecret.certificate=user.crt",
                  "--set", "kafka.tls.clientCertSecret.privateKey=user.key")  # fmt: skip
    assert flag(container(docs)["args"], "kafka-ssl-cafile") is None
    client_files = {"kafka-ssl-certfile": "user.crt", "kafka-ssl-keyfile": "user.key"}
    assert_secret_files(docs, "kafka-client-certificate", "kto", client_files)


def test_zookeeper_tls_mounts_the_ca_and_the_client_certificate_beside_the_credentials() -> None:
    docs = render("-f", str(CHART / "ci" / "zookeeper-tls-values.yaml"))
    c = container(docs)
    assert "--zookeeper-tls" in c["args"]
    assert_secret_files(docs, "zookeeper-ca", "kafka-cluster-ca-cert",
                        {"zookeeper-tls-cafile": "ca.crt"})  # fmt: skip
    assert_secret_files(
        docs,
        "zookeeper-client-certificate",
        "kto-zookeeper-tls",
        {"zookeeper-tls-certfile": "tls.crt", "zookeeper-tls-keyfile": "tls.key"},
    )
    assert flag(c["args"], "zookeeper-sasl-file") == "/etc/kto/zookeeper/sasl"
    assert "--zookeeper-tls-no-hostname-check" not in c["args"]
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    # The system CAs, no client certificate, no hostname check.
    docs = render("--set", "zookeeper.connect=zk:2281", "--set", "zookeeper.tls.enabled=true",
                  "--set", "zookeeper.tls.hostnameVerification=false")  # fmt: skip
    args = container(docs)["args"]
    assert [a for a in args if a.startswith("--zookeeper-tls")] == [
        "--zookeeper-tls", "--zookeeper-tls-no-hostname-check"]  # fmt: skip
    # Plaintext unless asked.
    plain = container(render("--set", "zookeeper.connect=zk:2181"))
    assert not [a for a in plain["args"] if a.startswith("--zookeeper-tls")]


def test_kafka_sasl_without_tls_and_an_odd_username_render_valid_args() -> None:
    docs = render(*SASL_SSL, "--set", "kafka.securityProtocol=SASL_PLAINTEXT",
                  "--set-string", "kafka.sasl.username=kto: #ops")  # fmt: skip
    c = container(docs)
    assert flag(c["args"], "kafka-security-protocol") == "SASL_PLAINTEXT"
    assert flag(c["args"], "kafka-sasl-username") == "kto: #ops"
    assert not [a for a in c["args"] if a.startswith("--kafka-ssl")]
    assert [m["name"] for m in c["volumeMounts"]] == ["tmp", "kafka-sasl-password"]


@pytest.mark.parametrize(
    ("args", "messages"),
    [
        # Neither backend: the schema names both ways.
        ([], ["at '/zookeeper/connect': minLength: got 0, want 1",
              "at '/kafka/bootstrapServers': minLength: got 0, want 1",
              "at '/kafka/bootstrapServersSecret/name': minLength: got 0, want 1"]),
        # Both backends: each side's value is pointed at.
        (["--set", "zookeeper.connect=zk:2181", *KAFKA],
         ["at '/zookeeper/connect': value must be ''",
          "at '/kafka/bootstrapServers': value must be ''"]),
        ([*ZOOKEEPER_SECRET, *KAFKA_SECRET],
         ["at '/zookeeper/connectSecret/name': value must be ''",
          "at '/kafka/bootstrapServersSecret/name': value must be ''"]),
        ([*KAFKA, "--set", "embeddedController.enabled=true"],
         ["at '/embeddedController/enabled': value must be false"]),
        ([*KAFKA, "--set", "zookeeper.digestSecret.name=d", "--set", "zookeeper.setAcl=true"],
         ["at '/zookeeper/digestSecret/name': value must be ''",
          "at '/zookeeper/setAcl': value must be false"]),
        ([*KAFKA, "--set", "zookeeper.saslSecret.name=s"],
         ["at '/zookeeper/saslSecret/name': value must be ''"]),
        ([*KAFKA, "--set", "zookeeper.tls.caSecret.name=ca", "--set", "zookeeper.tls.enabled=true"],
         ["at '/zookeeper/tls/caSecret/name': value must be ''",
          "at '/zookeeper/tls/enabled': value must be false"]),
        # SASL needs the mechanism, the user and the password's Secret.
        ([*SASL_SSL, "--set", "kafka.sasl.passwordSecret.name="],
         ["at '/kafka/sasl/passwordSecret/name': minLength: got 0, want 1"]),
        ([*KAFKA, "--set", "kafka.securityProtocol=SASL_PLAINTEXT"],
         ["at '/kafka/sasl/mechanism': minLength: got 0, want 1",
          "at '/kafka/sasl/username': minLength: got 0, want 1",
          "at '/kafka/sasl/passwordSecret/name': minLength: got 0, want 1"]),
        # SASL and TLS settings need a protocol that uses them.
        ([*SASL_SSL, "--set", "kafka.securityProtocol=SSL"],
         ["at '/kafka/securityProtocol': value must be one of 'SASL_PLAINTEXT', 'SASL_SSL'"]),
        ([*KAFKA, "--set", "kafka.tls.caSecret.name=ca"],
         ["at '/kafka/securityProtocol': value must be one of 'SSL', 'SASL_SSL'"]),
        ([*KAFKA, "--set", "kafka.tls.hostnameVerification=false"],
         ["at '/kafka/securityProtocol': value must be one of 'SSL', 'SASL_SSL'"]),
        # Kafka's settings without Kafka.
        (["--set", "zookeeper.connect=zk:2181", "--set", "kafka.securityProtocol=SSL"],
         ["at '/kafka/securityProtocol': value must be 'PLAINTEXT'"]),
        (["--set", "zookeeper.connect=zk:2181", "--set", "kafka.sasl.username=kto"],
         ["at '/kafka/sasl/username': value must be ''"]),
        # Enums, addresses, keys and ports.
        ([*KAFKA, "--set", "kafka.securityProtocol=TLS"],
         ["at '/kafka/securityProtocol': value must be one of 'PLAINTEXT', 'SSL', "
          "'SASL_PLAINTEXT', 'SASL_SSL'"]),
        ([*SASL_SSL, "--set", "kafka.sasl.mechanism=GSSAPI"],
         ["at '/kafka/sasl/mechanism': value must be one of '', 'PLAIN', 'SCRAM-SHA-256', "
          "'SCRAM-SHA-512'"]),
        (["--set", "kafka.bootstrapServers=kafka"],
         ["at '/kafka/bootstrapServers': 'kafka' does not match"]),
        (["--set", "kafka.bootstrapServers=kafka:9092/kafka"], ["at '/kafka/bootstrapServers'"]),
        ([*KAFKA, "--set", "kafka.tls.clientCertSecret.privateKey=keys/tls.key"],
         ["at '/kafka/tls/clientCertSecret/privateKey'"]),
        ([*KAFKA, "--set", "kafka.tlss.caSecret.name=ca"],
         ["additional properties 'tlss' not allowed"]),
        ([*KAFKA, "--set", "networkPolicy.kafkaPorts={0}"],
         ["at '/networkPolicy/kafkaPorts/0': minimum: got 0, want 1"]),
        ([*KAFKA_SECRET, "--set", "networkPolicy.enabled=true"],
         ["at '/networkPolicy/kafkaPorts': minItems: got 0, want 1"]),
    ],
)  # fmt: skip
def test_bad_kafka_values_are_refused_by_the_schema(args: list[str], messages: list[str]) -> None:
    done = helm("template", "kto", str(CHART), *args)
    assert done.returncode != 0
    assert "values don't meet the specifications of the schema" in done.stderr
    for message in messages:
        assert message in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "zookeeper.connect (or zookeeper.connectSecret.name) is required: the Kafka "
             "cluster's ZooKeeper, HOST:PORT[/chroot]; for a KRaft cluster set "
             "kafka.bootstrapServers (or kafka.bootstrapServersSecret.name) instead"),
        (["--set", "zookeeper.connect=zk:2181", *KAFKA],
         "zookeeper.connect (or zookeeper.connectSecret.name) and kafka.bootstrapServers (or "
         "kafka.bootstrapServersSecret.name) exclude each other"),
        ([*ZOOKEEPER_SECRET, *KAFKA_SECRET], "exclude each other"),
        ([*KAFKA, "--set", "embeddedController.enabled=true"],
         "embeddedController.enabled needs zookeeper.connect"),
        ([*KAFKA, "--set", "zookeeper.setAcl=true"],
         "zookeeper.digestSecret, zookeeper.saslSecret and zookeeper.setAcl apply only with "
         "zookeeper.connect"),
        ([*SASL_SSL, "--set", "kafka.sasl.passwordSecret.name="],
         "kafka.sasl.passwordSecret.name is required with kafka.securityProtocol SASL_SSL"),
        ([*SASL_SSL, "--set", "kafka.sasl.username="],
         "kafka.sasl.username is required with kafka.securityProtocol SASL_SSL"),
        ([*KAFKA, "--set", "kafka.securityProtocol=SASL_PLAINTEXT"],
         "kafka.sasl.mechanism is required with kafka.securityProtocol SASL_PLAINTEXT"),
        ([*SASL_SSL, "--set", "kafka.securityProtocol=SSL"],
         "kafka.sasl needs kafka.securityProtocol SASL_PLAINTEXT or SASL_SSL"),
        ([*KAFKA, "--set", "kafka.tls.clientCertSecret.name=c"],
         "kafka.tls needs kafka.securityProtocol SSL or SASL_SSL"),
        (["--set", "zookeeper.connect=zk:2181", "--set", "kafka.sasl.mechanism=PLAIN"],
         "kafka.securityProtocol, kafka.tls and kafka.sasl apply only with kafka.bootstrapServers"),
        ([*KAFKA_SECRET, "--set", "networkPolicy.enabled=true"],
         "networkPolicy.kafkaPorts is required with networkPolicy.enabled and "
         "kafka.bootstrapServersSecret.name"),
        ([*KAFKA, "--set", "zookeeper.tls.caSecret.name=ca"],
         "zookeeper.tls applies only with zookeeper.connect: with kafka.bootstrapServers use "
         "kafka.tls"),
        (["--set", "zookeeper.connect=zk:2181",
          "--set", "zookeeper.tls.hostnameVerification=false"],
         "zookeeper.tls.hostnameVerification applies only with TLS"),
        (["--set", "zookeeper.connect=zk:2181", "--set", "zookeeper.tls.clientCertSecret.name=c",
          "--set", "zookeeper.tls.clientCertSecret.privateKey=tls.crt"],
         "zookeeper.tls.clientCertSecret.certificate and zookeeper.tls.clientCertSecret.privateKey "
         "name the same key"),
    ],
)  # fmt: skip
def test_the_templates_refuse_bad_kafka_values_without_the_schema(
    args: list[str], message: str
) -> None:
    """The same refusals with a precise sentence, for `helm template --skip-schema-validation`
    and tools that render without the schema."""
    done = helm("template", "kto", str(CHART), "--skip-schema-validation", *args)
    assert done.returncode != 0
    assert message in done.stderr


def test_the_client_certificate_and_its_key_are_two_keys() -> None:
    done = helm("template", "kto", str(CHART), *KAFKA, "--set", "kafka.securityProtocol=SSL",
                "--set", "kafka.tls.clientCertSecret.name=c",
                "--set", "kafka.tls.clientCertSecret.privateKey=tls.crt")  # fmt: skip
    assert done.returncode != 0
    assert (
        "kafka.tls.clientCertSecret.certificate and kafka.tls.clientCertSecret.privateKey name "
        "the same key"
    ) in done.stderr


def test_the_default_values_still_run_the_zookeeper_backend() -> None:
    c = container(render("-f", str(CHART / "ci" / "default-values.yaml")))
    assert flag(c["args"], "zookeeper") == "$(KTO_ZOOKEEPER_CONNECT)"
    assert flag(c["args"], "session-timeout") == "18"
    assert flag(c["args"], "zookeeper-retry-seconds") == "10"
    assert not [a for a in c["args"] if a.startswith(("--bootstrap-servers", "--kafka-"))]
    assert not [e for e in c["env"] if e["name"].startswith("KTO_KAFKA")]


@pytest.mark.parametrize(
    ("values", "args", "ports", "peers"),
    [
        ("kafka-values.yaml", [], [9092],
         [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "kafka"}}}]),
        ("kafka-sasl-ssl-values.yaml", [], [9093],
         [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kafka"}}}]),
        # The ports of the bootstrap servers, once each (an IPv6 address among them).
        ("kafka-mtls-values.yaml", ["--set", "networkPolicy.enabled=true"], [9093], None),
        ("kafka-values.yaml", ["--set", r"kafka.bootstrapServers=a:9092\,b:9094\,[fd00::1]:9092"],
         [9092, 9094], [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "kafka"}}}]),
        ("kafka-values.yaml", ["--set", "networkPolicy.kafkaPorts={9092,19092}"], [9092, 19092],
         [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "kafka"}}}]),
    ],
)  # fmt: skip
def test_the_network_policy_opens_the_brokers_ports_instead_of_zookeepers(
    values: str, args: list[str], ports: list[int], peers: list[dict[str, Any]] | None
) -> None:
    docs = render("-f", str(CHART / "ci" / values), *args)
    policy = one(docs, "NetworkPolicy")["spec"]
    kubernetes_validate.validate(one(docs, "NetworkPolicy"), KUBERNETES_VERSION, strict=True)
    (dns, api, brokers) = policy["egress"]
    assert sorted(p["port"] for p in dns["ports"]) == [53, 53]
    assert [p["port"] for p in api["ports"]] == [443]
    assert brokers["ports"] == [{"port": port, "protocol": "TCP"} for port in ports]
    assert brokers.get("to") == peers
    assert 2181 not in [p["port"] for rule in policy["egress"] for p in rule["ports"]]


def test_the_notes_name_the_kafka_cluster() -> None:
    done = helm("install", "kto", str(CHART), "--dry-run=client", "--namespace", NAMESPACE,
                "-f", str(CHART / "ci" / "kafka-sasl-ssl-values.yaml"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    notes = done.stdout.split("NOTES:", 1)[1]
    assert "on the KRaft Kafka cluster at the bootstrap servers in Secret kto-kafka" in notes
    assert "through Kafka's Admin API (SASL_SSL, SCRAM-SHA-512 as kto)" in notes
    assert "reaches the Kafka cluster" in notes and "ZooKeeper" not in notes
    done = helm("install", "kto", str(CHART), "--dry-run=client", "--namespace", NAMESPACE,
                "-f", str(CHART / "ci" / "default-values.yaml"))  # fmt: skip
    notes = done.stdout.split("NOTES:", 1)[1]
    assert "on the ZooKeeper-mode Kafka cluster at zookeeper-0.zookeeper:2181" in notes
    assert "Kafka's Admin API" not in notes
