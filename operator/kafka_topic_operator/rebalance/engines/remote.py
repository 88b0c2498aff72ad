"""The kubernetes and sparkApplication engines as the operator follows them (pure): the object
each creates for a proposal, whether the operator can reach the work directory, what the
object's status says, and what to tell the user when planning ends badly.

The planner (a batch/v1 Job running spark-submit, or a SparkApplication) reads input.json from
the proposal's directory under spec.engine.workDir and writes the plan there; the operator writes
the input and reads the plan, so that directory must be mounted in the operator's pod too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Set
from dataclasses import dataclass
from typing import Any

from kafka_topic_operator.rebalance.engines import manifests as engines
from kafka_topic_operator.rebalance.spec import EngineSpec, EngineType

# What the planning job writes (rebalance.job): the plan, or why there is none.
OUTPUT_FILES = ("plan.json", "changes.json", "result.json")
FAILURE_FILE = "error.json"
# error.json's reasons for an input no plan can serve (job.PlanningError's): said as they are,
# without the planner's logs, which add nothing.
PLANNING_REFUSALS = frozenset({"CannotPlan", "ProposalFailed"})
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True)
class Kind:
    """A planner's API resource."""

    group: str
    version: str
    plural: str
    kind: str


JOB = Kind("batch", "v1", "jobs", "Job")
SPARK_APPLICATION = Kind("sparkoperator.k8s.io", "v1beta2", "sparkapplications", "SparkApplication")


def kind_of(engine: EngineType) -> Kind:
    if engine is EngineType.KUBERNETES:
        return JOB
    if engine is EngineType.SPARK_APPLICATION:
        return SPARK_APPLICATION
    raise ValueError(f"the {engine} engine creates no Kubernetes object")


@dataclass(frozen=True)
class Planner:
    """One proposal's planner object."""

    kind: Kind
    namespace: str
    name: str
    proposal: str

    def __str__(self) -> str:
        return f"{self.kind.kind} {self.namespace}/{self.name}"

    @property
    def driver_selector(self) -> str:
        """The label selector of the proposal's Spark driver pod: Spark labels it spark-role,
        the engines add the proposal's labels to the driver (engines.planner_labels)."""
        return f"spark-role=driver,kto.dev/proposal={self.proposal}"


def planner_for(engine: EngineType, namespace: str, name: str, proposal: str) -> Planner:
    return Planner(kind_of(engine), namespace, engines.planner_name(name, proposal), proposal)


def work_dir_problem(engine: EngineSpec, is_dir: Callable[[str], bool]) -> str | None:
    """Why the operator cannot exchange files with the planner through spec.engine.workDir, or
    None. The operator reads and writes only a directory mounted in its own pod."""
    work_dir = engine.work_dir
    if work_dir is None:
        return (
            "spec.engine.workDir is not set and this operator has no default work directory "
            "(kto run --planner-work-dir; the Helm chart's rebalance.workDir, with "
            "rebalance.enabled)"
        )
    if _URI.match(work_dir):
        return (
            f"spec.engine.workDir {work_dir} is a URI: this operator exchanges the planning "
            "files only through a directory mounted in its pod, and does not support object "
            "stores (s3a://, gs://, hdfs://) or other URIs; set workDir to the path where the "
            "operator and the planner's pods mount the same volume (spec.engine.volume)"
        )
    if not work_dir.startswith("/"):
        return f"spec.engine.workDir {work_dir} must be an absolute path"
    if engine.volume is None:
        return (
            f"spec.engine.volume is required: the planner's pods mount that "
            f"PersistentVolumeClaim at {work_dir}, where this operator, which mounts the same "
            "volume, writes the cluster snapshot and reads the plan (the operator's default "
            "volume, kto run --planner-volume, serves only its own namespace and default workDir)"
        )
    if not is_dir(work_dir):
        return (
            f"spec.engine.workDir {work_dir} is not a directory in the operator's pod: mount "
            "the volume of spec.engine.volume there too (the Helm chart mounts "
            "rebalance.workVolume at rebalance.workDir)"
        )
    return None


@dataclass(frozen=True)
class Ended:
    """A planner that has ended: whether it says it succeeded, and if not, why."""

    succeeded: bool
    detail: str = ""


def ended(kind: Kind, obj: Mapping[str, Any]) -> Ended | None:
    """The planner's end from its status, None while it runs."""
    if kind == JOB:
        state = engines.job_state(obj)
        if state == "Complete":
            return Ended(True)
        if state == "Failed":
            failed = _condition(obj, "Failed")
            reason, message = failed.get("reason"), failed.get("message")
            return Ended(False, ": ".join(str(p) for p in (reason, message) if p) or "Failed")
        return None
    state = engines.spark_application_state(obj)
    if state == engines.SPARK_APPLICATION_SUCCEEDED:
        return Ended(True)
    if state in engines.SPARK_APPLICATION_FAILED:
        error = _status(obj).get("applicationState", {}).get("errorMessage")
        return Ended(False, f"{state}: {error}" if error else str(state))
    return None


def _status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    status = obj.get("status")
    return status if isinstance(status, Mapping) else {}


def _condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    for condition in _status(obj).get("conditions") or ():
        if isinstance(condition, Mapping) and condition.get("type") == kind:
            return condition
    return {}


def logs_hint(planner: Planner, obj: Mapping[str, Any] | None) -> str:
    """Where the driver's log is (and, for the Job, spark-submit's)."""
    ns = planner.namespace
    driver = f"kubectl -n {ns} logs -l {planner.driver_selector}"
    if planner.kind == JOB:
        submitter = f"kubectl -n {ns} logs job/{planner.name}"
        return f"spark-submit's log: {submitter}; the driver's: {driver}"
    pod = _status(obj or {}).get("driverInfo", {}).get("podName")
    if pod:
        driver = f"kubectl -n {ns} logs {pod}"
    return f"the driver's log: {driver}; kubectl -n {ns} describe sparkapplication {planner.name}"


def failed_message(planner: Planner, end: Ended, obj: Mapping[str, Any]) -> str:
    return f"{planner} failed ({end.detail}); {logs_hint(planner, obj)}"


def vanished_message(planner: Planner) -> str:
    return f"{planner} was deleted before it ended: planning again needs kto.dev/rebalance=refresh"


def planning_refusal(failure: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """(reason, message) of an error.json saying the input cannot be planned, else None: what
    to say even when the planner failed (a driver that refuses exits non-zero)."""
    if failure is None or failure.get("reason") not in PLANNING_REFUSALS:
        return None
    return str(failure["reason"]), str(failure.get("message") or "no reason given")


def output_problem(
    planner: Planner,
    obj: Mapping[str, Any],
    directory: str,
    present: Set[str],
    failure: Mapping[str, Any] | None,
) -> tuple[str, str] | None:
    """(reason, message) when a planner that reports success left no plan in `directory`
    (whose files are `present`; `failure` is the job's error.json), else None."""
    if failure is not None:
        message = str(failure.get("message") or "no reason given")
        return planning_refusal(failure) or (
            "PlanningFailed", f"{message} ({planner}; {logs_hint(planner, obj)})"
        )  # fmt: skip
    missing = [f for f in OUTPUT_FILES if f not in present]
    if not missing:
        return None
    return "PlanningFailed", (
        f"{planner} succeeded but the planning job wrote no {', '.join(missing)} to "
        f"{directory}: its driver failed, or did not mount the work volume (spark-submit in "
        f"cluster mode exits 0 whatever the driver does); {logs_hint(planner, obj)}"
    )


def owned_by(obj: Mapping[str, Any], uid: str) -> bool:
    """Whether the object is the KafkaRebalance's (its controller owner reference)."""
    refs = obj.get("metadata", {}).get("ownerReferences") or ()
    return any(isinstance(r, Mapping) and r.get("uid") == uid for r in refs)


def refusal_message(planner: Planner, status: int, message: str) -> str:
    """What to say when the API server refuses to create the planner."""
    where = f"{planner.kind.plural}.{planner.kind.group}"
    if status == 404 and planner.kind == SPARK_APPLICATION:
        return (
            f"the API server does not serve {where}/{planner.kind.version}: install the Spark "
            "operator (its SparkApplication CRD) or use the kubernetes engine"
        )
    if status == 403:
        return (
            f"the operator may not create {where} in namespace {planner.namespace} ({message}): "
            "grant it (the Helm chart does with rebalance.enabled)"
        )
    return f"creating {planner} was refused ({status}): {message}"
