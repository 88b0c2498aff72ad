"""What each planning engine runs, as plain data: the local engine's command line, the
kubernetes engine's batch/v1 Job (spark-submit in cluster mode) and the sparkApplication
engine's SparkApplication (the Spark operator's sparkoperator.k8s.io/v1beta2).

Pure functions: no I/O, no Kubernetes client. The planning job (`rebalance.job`) reads
`<workDir>/<namespace>/<name>/<proposal>/input.json` and writes plan.json, changes.json and
result.json into that directory, wherever it runs.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafka_topic_operator.rebalance.spec import RebalanceSpec

Obj = dict[str, Any]

JOB_MODULE = "kafka_topic_operator.rebalance.job"
# The job module's file in the image built by the Dockerfile's `spark` target: that target
# extends `operator`, which pip-installs the project's wheel as root into the base image's
# interpreter, python:3.11-slim-bookworm's /usr/local (site-packages under
# /usr/local/lib/python3.11/). Spark runs a Python application from a file, so the driver
# runs this file; change it with the Dockerfile's PYTHON_IMAGE.
JOB_FILE = "/usr/local/lib/python3.11/site-packages/kafka_topic_operator/rebalance/job.py"
JOB_APPLICATION = f"local://{JOB_FILE}"  # local://: a file already in the image
# The pyspark the `spark` target installs (its PYSPARK_VERSION), for SparkApplication.sparkVersion.
SPARK_VERSION = "3.5.9"
KUBERNETES_MASTER = "k8s://https://kubernetes.default.svc"
SPARK_API_VERSION = "sparkoperator.k8s.io/v1beta2"

# The Dockerfile's unprivileged user and group; fsGroup makes the work volume writable by them.
RUN_AS = 10001
JOB_DEADLINE_SECONDS = 6 * 3600  # a planning Job still running after this is failed
JOB_TTL_SECONDS = 24 * 3600  # a finished Job (and its pod's logs) stays this long
WORK_VOLUME = "workdir"  # the pod volume of spec.engine.volume (a claim name may be longer)
SUBMITTER_RESOURCES = {
    "requests": {"cpu": "100m", "memory": "512Mi"},
    "limits": {"memory": "512Mi"},
}

# The Spark operator's .status.applicationState.state values that end an application run
# with restartPolicy Never.
SPARK_APPLICATION_SUCCEEDED = "COMPLETED"
SPARK_APPLICATION_FAILED = frozenset({"FAILED", "SUBMISSION_FAILED"})

_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_MAX_LABEL = 63
_HASH_LENGTH = 8
# Kubernetes' binary suffixes (2Gi) to Spark's (2g): Spark reads k, m, g, t, p as powers of 1024.
_SPARK_MEMORY_RE = re.compile(r"^([1-9][0-9]*)(?:([kmgtp])|([KMGTP])i)$")


@dataclass(frozen=True)
class Paths:
    """Where the planning job reads its input and writes its output (the proposal's directory:
    plan.json, changes.json, result.json). Strings, not Paths: workDir may be a URI."""

    input: str
    output: str


def planning_paths(work_dir: str, namespace: str, name: str, proposal: str) -> Paths:
    """`<work_dir>/<namespace>/<name>/<proposal>/input.json`, and that directory for the output."""
    directory = posixpath.join(work_dir, namespace, name, proposal)
    return Paths(input=posixpath.join(directory, "input.json"), output=directory)


def spark_memory(size: str) -> str:
    """A memory size in Spark's syntax: `2Gi` becomes `2g`, `512Mi` `512m`; `2g` stays."""
    match = _SPARK_MEMORY_RE.match(size)
    if match is None:
        raise ValueError(f"not a memory size Spark and Kubernetes both read: {size!r}")
    number, spark_unit, binary_unit = match.groups()
    return number + (spark_unit or binary_unit.lower())


def local_command(
    python: str, paths: Paths, *, master: str | None = None, driver_memory: str | None = None
) -> list[str]:
    """The local engine's subprocess: the planning job under `python`, with Spark at `master`
    (by default none when the exact plan covers the request, else a local Spark)."""
    command = [python, "-m", JOB_MODULE, "--input", paths.input, "--output", paths.output]
    if master is not None:
        command += ["--master", master]
    if driver_memory is not None:
        command += ["--driver-memory", spark_memory(driver_memory)]
    return command


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:_HASH_LENGTH]


def _fit(text: str, limit: int = _MAX_LABEL) -> str:
    """`text` cut to `limit` characters with a hash of the whole appended, so that two long
    texts still differ; unchanged when it fits."""
    if len(text) <= limit:
        return text
    head = text[: limit - _HASH_LENGTH - 1].rstrip("-.")
    return f"{head}-{_short_hash(text)}"


def planner_name(name: str, proposal: str) -> str:
    """The Job's or SparkApplication's name: `kr-<name>-<proposal>`, a DNS-1123 label of at most
    63 characters. When that does not fit, or `name` has dots (not allowed in a label), or the
    proposal has dashes (so that `kr-a-b-c` could be two pairs), it is cut and a hash of the
    pair appended: deterministic, and distinct for distinct pairs."""
    _check_proposal(proposal)
    plain = f"kr-{name}-{proposal}"
    if len(plain) <= _MAX_LABEL and "." not in name and "-" not in proposal:
        return plain
    head = plain.replace(".", "-")[: _MAX_LABEL - _HASH_LENGTH - 1].rstrip("-")
    return f"{head}-{_short_hash(f'{name}/{proposal}')}"


def _check_proposal(proposal: str) -> None:
    if len(proposal) > _MAX_LABEL or not _LABEL_RE.match(proposal):
        raise ValueError(f"a proposal id must be a DNS-1123 label: {proposal!r}")


def planner_labels(name: str, proposal: str) -> dict[str, str]:
    """The labels of the planner's objects and pods (`kto.dev/rebalance` is the resource's name,
    cut with a hash when longer than a label value may be)."""
    _check_proposal(proposal)
    return {
        "app.kubernetes.io/name": "kafka-topic-operator",
        "app.kubernetes.io/component": "rebalance-planner",
        "kto.dev/rebalance": _fit(name),
        "kto.dev/proposal": proposal,
    }


def _metadata(rebalance: Mapping[str, Any], proposal: str) -> Obj:
    meta = rebalance["metadata"]
    name = str(meta["name"])
    return {
        "name": planner_name(name, proposal),
        "namespace": str(meta["namespace"]),
        "labels": planner_labels(name, proposal),
        "ownerReferences": [
            {
                "apiVersion": str(rebalance.get("apiVersion") or "kto.dev/v1"),
                "kind": str(rebalance.get("kind") or "KafkaRebalance"),
                "name": name,
                "uid": str(meta["uid"]),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }


def _image(spec: RebalanceSpec, default_image: str) -> str:
    return spec.engine.image or default_image


def _work_dir(spec: RebalanceSpec) -> str:
    if spec.engine.work_dir is None:
        raise ValueError("spec.engine.workDir is required for the remote engines")
    return spec.engine.work_dir


def _arguments(paths: Paths) -> list[str]:
    return ["--input", paths.input, "--output", paths.output]


def spark_submit_args(
    spec: RebalanceSpec, paths: Paths, *, namespace: str, name: str, image: str,
    labels: Mapping[str, str],
) -> list[str]:  # fmt: skip
    """spark-submit's arguments (after the command) for the planning job in cluster mode."""
    engine = spec.engine
    conf: list[tuple[str, str]] = [
        ("spark.kubernetes.namespace", namespace),
        ("spark.kubernetes.container.image", image),
    ]
    if engine.service_account_name is not None:
        conf.append(
            ("spark.kubernetes.authenticate.driver.serviceAccountName", engine.service_account_name)
        )
    if engine.executors is not None:
        conf.append(("spark.executor.instances", str(engine.executors)))
    if engine.executor_cores is not None:
        conf.append(("spark.executor.cores", str(engine.executor_cores)))
    if engine.executor_memory is not None:
        conf.append(("spark.executor.memory", spark_memory(engine.executor_memory)))
    if engine.driver_memory is not None:
        conf.append(("spark.driver.memory", spark_memory(engine.driver_memory)))
    if engine.executor_cpu_request is not None:
        conf.append(("spark.kubernetes.executor.request.cores", engine.executor_cpu_request))
    if engine.driver_cpu_request is not None:
        conf.append(("spark.kubernetes.driver.request.cores", engine.driver_cpu_request))
    for role in ("driver", "executor"):
        # Spark's pods carry the same labels: the operator finds (and cleans up) them by label,
        # since the driver pod is not owned by the Job.
        conf += [(f"spark.kubernetes.{role}.label.{k}", v) for k, v in labels.items()]
    if engine.volume is not None:
        for role in ("driver", "executor"):  # executors write the snapshot's Parquet files too
            prefix = f"spark.kubernetes.{role}.volumes.persistentVolumeClaim.{WORK_VOLUME}"
            conf += [(f"{prefix}.options.claimName", engine.volume),
                     (f"{prefix}.mount.path", _work_dir(spec))]  # fmt: skip
    args = ["--master", KUBERNETES_MASTER, "--deploy-mode", "cluster", "--name", name]
    for key, value in conf:
        args += ["--conf", f"{key}={value}"]
    return [*args, JOB_APPLICATION, *_arguments(paths)]


def _container_security() -> Obj:
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _pod_security() -> Obj:
    return {
        "runAsNonRoot": True,
        "runAsUser": RUN_AS,
        "runAsGroup": RUN_AS,
        "fsGroup": RUN_AS,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def kubernetes_job(
    rebalance: Mapping[str, Any],
    spec: RebalanceSpec,
    paths: Paths,
    *,
    default_image: str,
    proposal: str,
    deadline_seconds: int = JOB_DEADLINE_SECONDS,
    ttl_seconds: int = JOB_TTL_SECONDS,
) -> Obj:
    """The kubernetes engine's batch/v1 Job: one pod running spark-submit in cluster mode, which
    starts the driver and executors and waits for the application to end. Owned by the
    KafkaRebalance, so deleting it deletes the Job (and its pod)."""
    metadata = _metadata(rebalance, proposal)
    labels = metadata["labels"]
    image = _image(spec, default_image)
    engine = spec.engine
    args = spark_submit_args(spec, paths, namespace=metadata["namespace"],
                             name=metadata["name"], image=image, labels=labels)  # fmt: skip
    mounts: list[Obj] = [{"name": "tmp", "mountPath": "/tmp"}]
    volumes: list[Obj] = [{"name": "tmp", "emptyDir": {"sizeLimit": "256Mi"}}]
    if engine.volume is not None:
        mounts.append({"name": WORK_VOLUME, "mountPath": _work_dir(spec)})
        volumes.append({"name": WORK_VOLUME, "persistentVolumeClaim": {"claimName": engine.volume}})
    container: Obj = {
        "name": "spark-submit",
        "image": image,
        "command": ["spark-submit"],  # the submitter, in place of the image's entrypoint
        "args": args,
        "resources": SUBMITTER_RESOURCES,
        "securityContext": {**_container_security(), "readOnlyRootFilesystem": True},
        "volumeMounts": mounts,
    }
    pod: Obj = {
        "restartPolicy": "Never",
        "securityContext": _pod_security(),
        "containers": [container],
        "volumes": volumes,
    }
    if engine.service_account_name is not None:
        pod["serviceAccountName"] = engine.service_account_name  # creates the driver pod
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {
            "backoffLimit": 0,  # a failed plan is reported, not retried
            "activeDeadlineSeconds": deadline_seconds,
            "ttlSecondsAfterFinished": ttl_seconds,
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod},
        },
    }


def spark_application(
    rebalance: Mapping[str, Any],
    spec: RebalanceSpec,
    paths: Paths,
    *,
    default_image: str,
    proposal: str,
    ttl_seconds: int = JOB_TTL_SECONDS,
) -> Obj:
    """The sparkApplication engine's SparkApplication (the Spark operator submits it). Owned by
    the KafkaRebalance; the Spark operator's driver pod is owned by the SparkApplication, which
    the Spark operator deletes `ttl_seconds` after it ends, as the Job's TTL does."""
    metadata = _metadata(rebalance, proposal)
    labels = metadata["labels"]
    engine = spec.engine
    driver: Obj = {"cores": 1, "labels": dict(labels)}
    executor: Obj = {"labels": dict(labels)}
    if engine.driver_memory is not None:
        driver["memory"] = spark_memory(engine.driver_memory)
    if engine.service_account_name is not None:
        driver["serviceAccount"] = engine.service_account_name  # creates the executor pods
    if engine.executors is not None:
        executor["instances"] = engine.executors
    if engine.executor_cores is not None:
        executor["cores"] = engine.executor_cores
    if engine.executor_memory is not None:
        executor["memory"] = spark_memory(engine.executor_memory)
    if engine.executor_cpu_request is not None:
        executor["coreRequest"] = engine.executor_cpu_request
    if engine.driver_cpu_request is not None:
        driver["coreRequest"] = engine.driver_cpu_request
    for pod in (driver, executor):
        pod["podSecurityContext"] = _pod_security()
        pod["securityContext"] = _container_security()
    body: Obj = {
        "type": "Python",
        "pythonVersion": "3",
        "mode": "cluster",
        "image": _image(spec, default_image),
        "mainApplicationFile": JOB_APPLICATION,
        "arguments": _arguments(paths),
        "sparkVersion": SPARK_VERSION,
        "restartPolicy": {"type": "Never"},
        "timeToLiveSeconds": ttl_seconds,
        "sparkConf": {"spark.ui.enabled": "false"},
        "driver": driver,
        "executor": executor,
    }
    if engine.volume is not None:
        # The Spark operator's webhook puts these (and the security contexts) on the pods: its
        # controller's spark-submit passes neither.
        mount = {"name": WORK_VOLUME, "mountPath": _work_dir(spec)}
        body["volumes"] = [
            {"name": WORK_VOLUME, "persistentVolumeClaim": {"claimName": engine.volume}}
        ]
        driver["volumeMounts"] = [dict(mount)]
        executor["volumeMounts"] = [dict(mount)]
    return {
        "apiVersion": SPARK_API_VERSION,
        "kind": "SparkApplication",
        "metadata": metadata,
        "spec": body,
    }


def spark_application_state(obj: Mapping[str, Any]) -> str | None:
    """`.status.applicationState.state` as the Spark operator writes it (SUBMITTED, RUNNING,
    COMPLETED, FAILED, SUBMISSION_FAILED, ...); None before it has written one."""
    status = obj.get("status")
    state = status.get("applicationState") if isinstance(status, Mapping) else None
    value = state.get("state") if isinstance(state, Mapping) else None
    return value if isinstance(value, str) and value else None


def job_state(obj: Mapping[str, Any]) -> str | None:
    """A batch/v1 Job's end: "Complete" or "Failed" once its condition of that type is True,
    else None (SuccessCriteriaMet and FailureTarget come before the final condition)."""
    status = obj.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    for condition in conditions if isinstance(conditions, list) else ():
        if (
            isinstance(condition, Mapping)
            and condition.get("type") in ("Complete", "Failed")
            and condition.get("status") == "True"
        ):
            return str(condition["type"])
    return None
