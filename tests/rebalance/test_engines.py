"""The planning engines' Kubernetes objects (rebalance/engines.py): the local engine's command
(run for real), the kubernetes engine's Job and the sparkApplication engine's SparkApplication,
field by field, and as the API emulator (and Kubernetes 1.33's schema) accepts them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance import job
from kafka_topic_operator.rebalance.engines import manifests as engines
from kafka_topic_operator.rebalance.engines.manifests import (
    JOB_APPLICATION,
    Paths,
    job_state,
    kubernetes_job,
    local_command,
    planner_labels,
    planner_name,
    planning_paths,
    spark_application,
    spark_application_state,
    spark_memory,
)
from kafka_topic_operator.rebalance.planning_io import PlanningInput
from kafka_topic_operator.rebalance.spec import EngineType, RebalanceSpec, rebalance_spec
from kube_api_emulator import Cluster
from kube_api_emulator.errors import ApiError

ROOT = Path(__file__).resolve().parents[2]
REBALANCE_CRD = ROOT / "crds" / "kafkarebalances.yaml"
SPARK_CRD = Path(__file__).with_name("sparkapplications-crd.yaml")
KUBERNETES_VERSION = "1.33.0"

IMAGE = "kafka-topic-operator-spark:0.1.0"
UID = "0d5c6a4e-7b1f-4c8e-9a51-3f2d8e6b7c90"
PROPOSAL = "3f9a1c2b7d4e"
NAME = f"kr-weekly-{PROPOSAL}"
LABELS = {
    "app.kubernetes.io/name": "kafka-topic-operator",
    "app.kubernetes.io/component": "rebalance-planner",
    "kto.dev/rebalance": "weekly",
    "kto.dev/proposal": PROPOSAL,
}
OWNER = {
    "apiVersion": "kto.dev/v1",
    "kind": "KafkaRebalance",
    "name": "weekly",
    "uid": UID,
    "controller": True,
    "blockOwnerDeletion": True,
}
RESTRICTED_CONTAINER = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "seccompProfile": {"type": "RuntimeDefault"},
}
RESTRICTED_POD = {
    "runAsNonRoot": True,
    "runAsUser": 10001,
    "runAsGroup": 10001,
    "fsGroup": 10001,
    "seccompProfile": {"type": "RuntimeDefault"},
}
FULL_ENGINE = {
    "executors": 4,
    "executorCores": 2,
    "executorMemory": "2Gi",
    "driverMemory": "512Mi",
    "serviceAccountName": "kto-planner",
    "workDir": "/plans",
}
PATHS = Paths(input=f"/plans/kafka/weekly/{PROPOSAL}/input.json",
              output=f"/plans/kafka/weekly/{PROPOSAL}")  # fmt: skip


def rebalance(name: str = "weekly", namespace: str = "kafka", uid: str = UID) -> dict[str, Any]:
    return {
        "apiVersion": "kto.dev/v1",
        "kind": "KafkaRebalance",
        "metadata": {"name": name, "namespace": namespace, "uid": uid},
        "spec": {},
    }


def spec_with(**engine: Any) -> RebalanceSpec:
    return rebalance_spec({"engine": engine})


def conf_of(args: list[str]) -> dict[str, str]:
    """spark-submit's --conf key=value pairs."""
    pairs = [args[i + 1] for i, arg in enumerate(args) if arg == "--conf"]
    return dict(pair.split("=", 1) for pair in pairs)


# -- paths, memory sizes, the local engine -------------------------------------------------------


@pytest.mark.parametrize(
    ("work_dir", "directory"),
    [
        ("/plans", "/plans/kafka/weekly/p1"),
        ("/plans/", "/plans/kafka/weekly/p1"),
        ("s3a://bucket/kto", "s3a://bucket/kto/kafka/weekly/p1"),
    ],
)
def test_the_paths_are_the_proposals_directory_under_the_work_dir(
    work_dir: str, directory: str
) -> None:
    paths = planning_paths(work_dir, "kafka", "weekly", "p1")
    assert paths == Paths(input=f"{directory}/input.json", output=directory)
    with pytest.raises(AttributeError):
        paths.input = "/elsewhere"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("size", "spark"),
    [("2Gi", "2g"), ("512Mi", "512m"), ("64Ki", "64k"), ("1Ti", "1t"), ("3Pi", "3p"),
     ("2g", "2g"), ("512m", "512m"), ("10k", "10k")],
)  # fmt: skip
def test_kubernetes_memory_sizes_become_sparks(size: str, spark: str) -> None:
    assert spark_memory(size) == spark


@pytest.mark.parametrize("size", ["2G", "2GB", "2gi", "0g", "1.5Gi", "2Gi ", "", "512"])
def test_sizes_spark_would_misread_are_refused(size: str) -> None:
    with pytest.raises(ValueError, match="not a memory size"):
        spark_memory(size)


def test_the_local_command_runs_the_job_module_under_the_given_python() -> None:
    assert local_command("/venv/bin/python", PATHS) == [
        "/venv/bin/python", "-m", "kafka_topic_operator.rebalance.job",
        "--input", PATHS.input, "--output", PATHS.output,
    ]  # fmt: skip
    assert local_command("py", PATHS, master="local[2]", driver_memory="2Gi")[-4:] == [
        "--master", "local[2]", "--driver-memory", "2g",
    ]  # fmt: skip


def toy_input() -> PlanningInput:
    """Three brokers, the third empty: the plan moves replicas onto it."""
    assignment = {TopicPartition("orders", p): (p % 2, (p + 1) % 2) for p in range(6)}
    return PlanningInput(assignment, brokers=(0, 1, 2))


@pytest.mark.spark
@pytest.mark.e2e
def test_the_local_command_plans_for_real(tmp_path: Path) -> None:
    paths = planning_paths(str(tmp_path), "kafka", "weekly", PROPOSAL)
    Path(paths.output).mkdir(parents=True)
    Path(paths.input).write_text(json.dumps(toy_input().to_json()))
    # 512Mi reaches the JVM as -Xmx512m: unconverted, the JVM would refuse to start.
    command = local_command(sys.executable, paths, master="local[1]", driver_memory="512Mi")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "operator")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    plan = json.loads((Path(paths.output) / "plan.json").read_text())
    result = json.loads((Path(paths.output) / "result.json").read_text())
    assert plan["version"] == 1 and plan["partitions"]
    assert {b for p in plan["partitions"] for b in p["replicas"]} == {0, 1, 2}
    optimization = result["optimizationResult"]
    assert optimization["replicaMoves"] == 4  # 12 replicas: 4 per broker, 4 onto broker 2
    assert json.loads((Path(paths.output) / "changes.json").read_text())


# -- names and labels ----------------------------------------------------------------------------

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def test_a_short_name_is_kr_name_proposal() -> None:
    assert planner_name("weekly", PROPOSAL) == NAME
    assert planner_labels("weekly", PROPOSAL) == LABELS


def test_long_names_are_cut_with_a_hash_and_stay_distinct() -> None:
    first, second = "a" * 70 + "-first", "a" * 70 + "-second"
    names = {planner_name(n, PROPOSAL) for n in (first, second)}
    assert len(names) == 2
    for name in names:
        assert len(name) == 63 and DNS_LABEL.match(name) and name.startswith("kr-aaaa")
    assert planner_name(first, PROPOSAL) == planner_name(first, PROPOSAL)  # deterministic
    assert planner_name(first, PROPOSAL) != planner_name(first, "other")
    # 63 characters exactly still fit as they are.
    fits = "b" * (63 - len(f"kr--{PROPOSAL}"))
    assert planner_name(fits, PROPOSAL) == f"kr-{fits}-{PROPOSAL}"
    assert planner_name(fits + "b", PROPOSAL) != f"kr-{fits}b-{PROPOSAL}"
    # The resource's name label is cut the same way; the full name is in ownerReferences.
    label = planner_labels(first, PROPOSAL)["kto.dev/rebalance"]
    assert len(label) == 63 and label.startswith("a" * 50)
    assert label != planner_labels(second, PROPOSAL)["kto.dev/rebalance"]


def test_dotted_names_and_dashed_proposals_get_a_hash() -> None:
    dotted = planner_name("team.weekly", "p1")
    assert DNS_LABEL.match(dotted) and dotted.startswith("kr-team-weekly-p1-")
    assert dotted != planner_name("team-weekly", "p1") == "kr-team-weekly-p1"
    # "a-b" with proposal "c" and "a" with proposal "b-c" are different objects.
    assert planner_name("a-b", "c") != planner_name("a", "b-c")


@pytest.mark.parametrize("proposal", ["", "UPPER", "a_b", "-a", "x" * 64, "a.b"])
def test_a_proposal_must_be_a_dns_label(proposal: str) -> None:
    with pytest.raises(ValueError, match="DNS-1123 label"):
        planner_name("weekly", proposal)


# -- the kubernetes engine's Job ------------------------------------------------------------------

SUBMIT_PREFIX = [
    "--master", "k8s://https://kubernetes.default.svc", "--deploy-mode", "cluster",
    "--name", NAME,
    "--conf", "spark.kubernetes.namespace=kafka",
]  # fmt: skip
LABEL_CONF = {
    f"spark.kubernetes.{role}.label.{key}": value
    for role in ("driver", "executor")
    for key, value in LABELS.items()
}
APPLICATION_ARGS = [
    "local:///usr/local/lib/python3.11/site-packages/kafka_topic_operator/rebalance/job.py",
    "--input", PATHS.input, "--output", PATHS.output,
]  # fmt: skip


def test_the_job_runs_spark_submit_in_cluster_mode_with_the_engines_settings() -> None:
    spec = spec_with(type="kubernetes", image="planner:1", volume="kto-plans", **FULL_ENGINE)
    built = kubernetes_job(rebalance(), spec, PATHS, default_image=IMAGE, proposal=PROPOSAL)
    container = built["spec"]["template"]["spec"]["containers"][0]
    args = container["args"]
    assert args[: len(SUBMIT_PREFIX)] == SUBMIT_PREFIX
    assert args[-5:] == APPLICATION_ARGS
    claim = "spark.kubernetes.{}.volumes.persistentVolumeClaim.workdir.{}"
    assert conf_of(args) == {
        "spark.kubernetes.namespace": "kafka",
        "spark.kubernetes.container.image": "planner:1",
        "spark.kubernetes.authenticate.driver.serviceAccountName": "kto-planner",
        "spark.executor.instances": "4",
        "spark.executor.cores": "2",
        "spark.executor.memory": "2g",
        "spark.driver.memory": "512m",
        **LABEL_CONF,
        claim.format("driver", "options.claimName"): "kto-plans",
        claim.format("driver", "mount.path"): "/plans",
        claim.format("executor", "options.claimName"): "kto-plans",
        claim.format("executor", "mount.path"): "/plans",
    }
    assert built == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": NAME,
            "namespace": "kafka",
            "labels": LABELS,
            "ownerReferences": [OWNER],
        },
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": 6 * 3600,
            "ttlSecondsAfterFinished": 24 * 3600,
            "template": {
                "metadata": {"labels": LABELS},
                "spec": {
                    "restartPolicy": "Never",
                    "serviceAccountName": "kto-planner",
                    "securityContext": RESTRICTED_POD,
                    "containers": [
                        {
                            "name": "spark-submit",
                            "image": "planner:1",
                            "command": ["spark-submit"],
                            "args": args,
                            "resources": {
                                "requests": {"cpu": "100m", "memory": "512Mi"},
                                "limits": {"memory": "512Mi"},
                            },
                            "securityContext": {
                                **RESTRICTED_CONTAINER,
                                "readOnlyRootFilesystem": True,
                            },
                            "volumeMounts": [
                                {"name": "tmp", "mountPath": "/tmp"},
                                {"name": "workdir", "mountPath": "/plans"},
                            ],
                        }
                    ],
                    "volumes": [
                        {"name": "tmp", "emptyDir": {"sizeLimit": "256Mi"}},
                        {"name": "workdir", "persistentVolumeClaim": {"claimName": "kto-plans"}},
                    ],
                },
            },
        },
    }


def test_a_minimal_job_leaves_sparks_defaults_and_mounts_no_volume() -> None:
    spec = spec_with(type="kubernetes", workDir="s3a://bucket/kto")
    built = kubernetes_job(rebalance(), spec, PATHS, default_image=IMAGE, proposal=PROPOSAL,
                           deadline_seconds=600, ttl_seconds=60)  # fmt: skip
    pod = built["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    assert args == [
        *SUBMIT_PREFIX,
        "--conf", f"spark.kubernetes.container.image={IMAGE}",
        *[item for key, value in LABEL_CONF.items() for item in ("--conf", f"{key}={value}")],
        *APPLICATION_ARGS,
    ]  # fmt: skip
    assert "serviceAccountName" not in pod
    assert pod["volumes"] == [{"name": "tmp", "emptyDir": {"sizeLimit": "256Mi"}}]
    assert pod["containers"][0]["volumeMounts"] == [{"name": "tmp", "mountPath": "/tmp"}]
    assert (built["spec"]["activeDeadlineSeconds"], built["spec"]["ttlSecondsAfterFinished"]) == (
        600,
        60,
    )


def test_the_job_of_a_long_named_rebalance_fits_kubernetes_limits() -> None:
    name = "nightly-full-rebalance-of-the-payments-cluster-in-eu-west-1-after-broker-adds"
    spec = spec_with(type="kubernetes", workDir="/plans")
    built = kubernetes_job(rebalance(name), spec, PATHS, default_image=IMAGE, proposal=PROPOSAL)
    meta = built["metadata"]
    assert len(meta["name"]) <= 63 and DNS_LABEL.match(meta["name"])
    assert all(len(v) <= 63 for v in meta["labels"].values())
    assert meta["ownerReferences"][0]["name"] == name  # the full name
    conf = conf_of(built["spec"]["template"]["spec"]["containers"][0]["args"])
    label = meta["labels"]["kto.dev/rebalance"]
    assert conf["spark.kubernetes.driver.label.kto.dev/rebalance"] == label
    kubernetes_validate.validate(built, KUBERNETES_VERSION, strict=True)


def test_the_image_paths_follow_the_dockerfile() -> None:
    """The application file is where the `spark` target's pip puts the job module, and
    sparkVersion is the pyspark it installs (and the tests run)."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    python = re.search(r"^ARG PYTHON_IMAGE=python:(\d+\.\d+)-", dockerfile, re.MULTILINE)
    pyspark = re.search(r"^ARG PYSPARK_VERSION=(\S+)$", dockerfile, re.MULTILINE)
    assert python and pyspark
    module = Path(*job.__name__.split(".")).with_suffix(".py")
    assert Path(job.__file__ or "").relative_to(ROOT / "operator") == module
    site_packages = f"/usr/local/lib/python{python[1]}/site-packages"
    application, spark_version = JOB_APPLICATION, engines.SPARK_VERSION
    assert application == f"local://{site_packages}/{module}"
    assert spark_version == pyspark[1]
    assert spark_version.split(".")[:2] == version("pyspark").split(".")[:2] == ["3", "5"]


# -- the sparkApplication engine's SparkApplication ---------------------------------------------


def test_the_spark_application_carries_the_engines_settings() -> None:
    spec = spec_with(type="sparkApplication", **FULL_ENGINE)
    built = spark_application(rebalance(), spec, PATHS, default_image=IMAGE, proposal=PROPOSAL)
    assert built == {
        "apiVersion": "sparkoperator.k8s.io/v1beta2",
        "kind": "SparkApplication",
        "metadata": {
            "name": NAME,
            "namespace": "kafka",
            "labels": LABELS,
            "ownerReferences": [OWNER],
        },
        "spec": {
            "type": "Python",
            "pythonVersion": "3",
            "mode": "cluster",
            "image": IMAGE,
            "mainApplicationFile": APPLICATION_ARGS[0],
            "arguments": APPLICATION_ARGS[1:],
            "sparkVersion": "3.5.9",
            "restartPolicy": {"type": "Never"},
            "timeToLiveSeconds": 24 * 3600,  # as the Job's ttlSecondsAfterFinished
            "sparkConf": {"spark.ui.enabled": "false"},
            "driver": {
                "cores": 1,
                "memory": "512m",
                "serviceAccount": "kto-planner",
                "labels": LABELS,
                "podSecurityContext": RESTRICTED_POD,
                "securityContext": RESTRICTED_CONTAINER,
            },
            "executor": {
                "instances": 4,
                "cores": 2,
                "memory": "2g",
                "labels": LABELS,
                "podSecurityContext": RESTRICTED_POD,
                "securityContext": RESTRICTED_CONTAINER,
            },
        },
    }


def test_a_minimal_spark_application_leaves_sparks_defaults() -> None:
    spec = spec_with(type="sparkApplication", workDir="/plans", image="planner:2")
    built = spark_application(rebalance(), spec, PATHS, default_image=IMAGE, proposal=PROPOSAL)
    body = built["spec"]
    assert body["image"] == "planner:2"
    assert set(body["driver"]) == {"cores", "labels", "podSecurityContext", "securityContext"}
    assert set(body["executor"]) == {"labels", "podSecurityContext", "securityContext"}
    assert "volumes" not in body


def test_the_spark_application_mounts_the_volume_when_one_is_set() -> None:
    spec = spec_with(type="sparkApplication", workDir="/plans", volume="kto-plans")
    assert spec.engine.type == EngineType.SPARK_APPLICATION
    body = spark_application(rebalance(), spec, PATHS, default_image=IMAGE, proposal=PROPOSAL)[
        "spec"
    ]
    assert body["volumes"] == [
        {"name": "workdir", "persistentVolumeClaim": {"claimName": "kto-plans"}}
    ]
    for role in ("driver", "executor"):
        assert body[role]["volumeMounts"] == [{"name": "workdir", "mountPath": "/plans"}]


# -- states --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "state"),
    [
        ({}, None),
        ({"status": {}}, None),
        ({"status": {"applicationState": {"state": ""}}}, None),  # the operator's "new"
        ({"status": {"applicationState": {"state": "RUNNING"}}}, "RUNNING"),
        ({"status": {"applicationState": {"state": "COMPLETED"}}}, "COMPLETED"),
        ({"status": {"applicationState": {"state": "SUBMISSION_FAILED",
                                          "errorMessage": "no such image"}}},
         "SUBMISSION_FAILED"),
        ({"status": {"applicationState": "FAILED"}}, None),
    ],
)  # fmt: skip
def test_the_spark_application_state(obj: dict[str, Any], state: str | None) -> None:
    assert spark_application_state(obj) == state


def condition(kind: str, status: str = "True") -> dict[str, str]:
    return {"type": kind, "status": status}


@pytest.mark.parametrize(
    ("conditions", "state"),
    [
        (None, None),
        ([], None),
        ([condition("SuccessCriteriaMet")], None),
        ([condition("FailureTarget")], None),
        ([condition("SuccessCriteriaMet"), condition("Complete")], "Complete"),
        ([condition("FailureTarget"), condition("Failed")], "Failed"),
        ([condition("Failed", "False")], None),
        ([condition("Suspended")], None),
    ],
)
def test_the_job_state(conditions: list[dict[str, str]] | None, state: str | None) -> None:
    obj: dict[str, Any] = {"status": {"active": 1}}
    if conditions is not None:
        obj["status"]["conditions"] = conditions
    assert job_state(obj) == state
    assert job_state({}) is None


# -- against the API emulator and Kubernetes' schema ----------------------------------------------


@pytest.fixture
def cluster() -> Cluster:
    c = Cluster()
    crds = c.info("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    for path in (REBALANCE_CRD, SPARK_CRD):
        c.create(crds, None, yaml.safe_load(path.read_text()))
    c.create(c.info("", "v1", "namespaces"), None, {"metadata": {"name": "kafka"}})
    return c


def test_the_test_crd_is_the_spark_operators() -> None:
    crd = yaml.safe_load(SPARK_CRD.read_text())
    assert crd["metadata"]["name"] == "sparkapplications.sparkoperator.k8s.io"
    assert crd["spec"]["scope"] == "Namespaced"
    assert crd["spec"]["names"]["kind"] == "SparkApplication"
    (served,) = crd["spec"]["versions"]
    assert (served["name"], served["subresources"]) == ("v1beta2", {"status": {}})
    spec = served["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["required"] == ["driver", "executor", "mainApplicationFile", "sparkVersion", "type"]
    assert "x-kubernetes-preserve-unknown-fields" not in spec


def test_the_emulator_stores_both_objects_as_built_and_collects_them_with_the_rebalance(
    cluster: Cluster,
) -> None:
    rebalances = cluster.info("kto.dev", "v1", "kafkarebalances")
    jobs = cluster.info("batch", "v1", "jobs")
    apps = cluster.info("sparkoperator.k8s.io", "v1beta2", "sparkapplications")
    owner = cluster.create(rebalances, "kafka", {**rebalance(), "metadata": {
        "name": "weekly", "namespace": "kafka"}}).obj  # fmt: skip
    kube = kubernetes_job(owner, spec_with(type="kubernetes", volume="kto-plans", **FULL_ENGINE),
                          PATHS, default_image=IMAGE, proposal=PROPOSAL)  # fmt: skip
    kubernetes_validate.validate(kube, KUBERNETES_VERSION, strict=True)
    spark_spec = spec_with(type="sparkApplication", volume="kto-plans", **FULL_ENGINE)
    app = spark_application(owner, spark_spec, PATHS, default_image=IMAGE, proposal=PROPOSAL)
    stored_job = cluster.create(jobs, "kafka", kube, field_validation="Strict").obj
    stored_app = cluster.create(apps, "kafka", app, field_validation="Strict").obj
    for built, stored in ((kube, stored_job), (app, stored_app)):
        assert stored["spec"] == built["spec"]  # nothing pruned, nothing defaulted
        assert stored["metadata"]["labels"] == LABELS
        assert stored["metadata"]["ownerReferences"] == [{**OWNER, "uid": owner["metadata"]["uid"]}]
    assert cluster.list_objects(jobs, "kafka", label_selector=f"kto.dev/proposal={PROPOSAL}").items
    # The Spark operator's status, as it writes it, read back.
    status = {"applicationState": {"state": "COMPLETED"}, "driverInfo": {"podName": "d"}}
    done = cluster.update(apps, "kafka", NAME, {**stored_app, "status": status},
                          subresource="status").obj  # fmt: skip
    assert spark_application_state(done) == "COMPLETED"
    cluster.delete(rebalances, "kafka", "weekly")
    for info in (jobs, apps):
        with pytest.raises(ApiError) as gone:
            cluster.get(info, "kafka", NAME)
        assert gone.value.code == 404


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pythonVersion": "4"}, 'spec.pythonVersion: Unsupported value: "4": supported '
         'values: "2", "3"'),
        ({"type": "python"}, 'spec.type: Unsupported value: "python": supported values: '
         '"Java", "Python", "Scala", "R"'),
        ({"restartPolicy": {"type": "never"}}, 'spec.restartPolicy.type: Unsupported value: '
         '"never": supported values: "Never", "Always", "OnFailure"'),
        ({"executor": {"instances": 0}}, "spec.executor.instances: Invalid value: 0: "
         "spec.executor.instances in body should be greater than or equal to 1"),
        ({"driver": {"memroy": "1g"}}, 'strict decoding error: unknown field '
         '"spec.driver.memroy"'),
        ({"sparkVersion": None}, "spec.sparkVersion: Required value"),
    ],
)  # fmt: skip
def test_the_test_crd_refuses_what_the_spark_operators_refuses(
    cluster: Cluster, change: dict[str, Any], message: str
) -> None:
    spec = spec_with(type="sparkApplication", workDir="/plans")
    app = spark_application(rebalance(), spec, PATHS, default_image=IMAGE, proposal=PROPOSAL)
    body = {key: value for key, value in {**app["spec"], **change}.items() if value is not None}
    app = {**app, "spec": body}
    del app["metadata"]["ownerReferences"]  # no such owner in this cluster
    apps = cluster.info("sparkoperator.k8s.io", "v1beta2", "sparkapplications")
    with pytest.raises(ApiError) as refused:
        cluster.create(apps, "kafka", app, field_validation="Strict")
    assert message in refused.value.message, refused.value.message


def test_kubernetes_schema_refuses_a_broken_job() -> None:
    """The schema check can fail: a misspelt field of the Job is refused."""
    built = kubernetes_job(rebalance(), spec_with(type="kubernetes", workDir="/plans"), PATHS,
                           default_image=IMAGE, proposal=PROPOSAL)  # fmt: skip
    built["spec"]["template"]["spec"]["containers"][0]["securityContxt"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(built, KUBERNETES_VERSION, strict=True)


def test_cpu_requests_below_the_cores_reach_the_pods_through_spark() -> None:
    requests = {"executorCpuRequest": "250m", "driverCpuRequest": "0.5"}
    spec = spec_with(type="kubernetes", volume="kto-plans", **FULL_ENGINE, **requests)
    built = kubernetes_job(rebalance(), spec, PATHS, default_image=IMAGE, proposal=PROPOSAL)
    conf = conf_of(built["spec"]["template"]["spec"]["containers"][0]["args"])
    assert conf["spark.kubernetes.executor.request.cores"] == "250m"
    assert conf["spark.kubernetes.driver.request.cores"] == "0.5"
    assert conf["spark.executor.cores"] == "2"  # tasks still run on the cores asked for
