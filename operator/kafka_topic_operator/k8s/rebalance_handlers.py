"""KafkaRebalance: one daemon per resource walks it through `rebalance.workflow`'s states.

It plans with the planning job (the local engine: a subprocess of the operator; the kubernetes
and sparkApplication engines: a Job or a SparkApplication it creates and follows, exchanging
files through spec.engine.workDir), shows the proposal in status and in a ConfigMap (Kafka's
reassignment JSON), waits for approval, then has `rebalance.executor` carry out exactly that
proposal, with progress in status. What it knows lives in the resource and the cluster, so a
restarted operator picks each resource up where it was: a Rebalancing one resumes from what
ZooKeeper shows, a planning one follows the planner it had created.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kopf

from kafka_topic_operator.k8s import planners
from kafka_topic_operator.k8s.kubeclient import api_client
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance import job, planning_io
from kafka_topic_operator.rebalance.engines import manifests as engines
from kafka_topic_operator.rebalance.engines import remote
from kafka_topic_operator.rebalance.engines.remote import Planner
from kafka_topic_operator.rebalance.execution import steps as ex
from kafka_topic_operator.rebalance.execution.executor import Executor, Report
from kafka_topic_operator.rebalance.execution.workflow import (
    ANNOTATION,
    State,
    auto_approved,
    condition,
    current_state,
    decide,
)
from kafka_topic_operator.rebalance.results import plan_parts
from kafka_topic_operator.rebalance.sizes import (
    SizesError,
    config_map_documents,
    read_partition_sizes,
    sizes_from_documents,
)
from kafka_topic_operator.rebalance.spec import (
    EngineType,
    InvalidRebalanceSpec,
    PartitionSizesSpec,
    RebalanceSpec,
    rebalance_spec,
)

log = logging.getLogger(__name__)

GROUP, VERSION, PLURAL = "kto.dev", "v1", "kafkarebalances"
POLL = 1.0  # seconds between looks at the live resource while waiting on a person
WORKDIR = Path(os.environ.get("KTO_REBALANCE_WORKDIR") or tempfile.gettempdir()) / "kto-rebalance"


@dataclass(frozen=True)
class Settings:
    """What `kto run` configures for KafkaRebalances."""

    engines: frozenset[EngineType] = field(default_factory=lambda: frozenset(EngineType))
    # For the remote engines' pods when spec.engine sets no image or service account.
    planner_image: str | None = None
    planner_service_account: str | None = None
    # Brokers' log directories this process can read (the dev cluster's): partition sizes for
    # resources that name no ConfigMap of them.
    log_dirs: tuple[Path, ...] = ()


SETTINGS = Settings()


def merge_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) that turns `old` into `new`: what `new` drops is null."""
    patch: dict[str, Any] = {k: None for k in old if k not in new}
    for key, value in new.items():
        before = old.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            patch[key] = merge_patch(before, value)
        elif before != value:
            patch[key] = value
    return patch


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Resource:
    """One KafkaRebalance as its daemon sees it: the live body, and the writes it makes."""

    def __init__(self, body: Any, namespace: str, name: str) -> None:
        self.body, self.namespace, self.name = body, namespace, name
        # What this daemon wrote, until the live body (read-only, updated by kopf's watch)
        # moves past the version it had when the write was made.
        self._status: tuple[str, Mapping[str, Any]] | None = None
        self._cleared: str | None = None

    @property
    def _version(self) -> str:
        return str(self.body.get("metadata", {}).get("resourceVersion"))

    @property
    def status(self) -> Mapping[str, Any]:
        if self._status is not None and self._status[0] == self._version:
            return self._status[1]
        self._status = None
        return self.body.get("status") or {}

    @property
    def annotations(self) -> Mapping[str, str]:
        live = self.body.get("metadata", {}).get("annotations") or {}
        if self._cleared == self._version:
            return {k: v for k, v in live.items() if k != ANNOTATION}
        return live

    @property
    def generation(self) -> int:
        return int(self.body.get("metadata", {}).get("generation") or 0)

    def write_status(self, state: State, reason: str, message: str, **fields: Any) -> None:
        import kubernetes

        old = dict(self.status)
        status = {**{k: v for k, v in old.items() if k not in ("conditions", "progress")},
                  **fields, "conditions": [condition(state, reason, message, _now())]}  # fmt: skip
        with api_client() as client:
            kubernetes.client.CustomObjectsApi(client).patch_namespaced_custom_object_status(
                GROUP, VERSION, self.namespace, PLURAL, self.name,
                {"status": merge_patch(old, status)},
            )  # fmt: skip
        self._status = (self._version, status)

    def clear_annotation(self) -> None:
        import kubernetes

        with api_client() as client:
            kubernetes.client.CustomObjectsApi(client).patch_namespaced_custom_object(
                GROUP, VERSION, self.namespace, PLURAL, self.name,
                {"metadata": {"annotations": {ANNOTATION: None}}},
            )  # fmt: skip
        self._cleared = self._version

    def save_plan(self, proposal: str, directory: Path) -> list[str]:
        """The proposal's ConfigMaps, owned by the resource: `<name>-plan`, and `-plan-1`,
        `-plan-2`... when the plan exceeds one ConfigMap, each with its part of Kafka's
        reassignment JSON and of the partitions' replicas before and after. The first is
        written last: a reader that finds it with this proposal finds every part."""
        import kubernetes

        parts = plan_parts.split_plan(job.read_changes(directory))
        names = [self._plan_name(i) for i in range(len(parts))]
        with api_client() as client:
            core = kubernetes.client.CoreV1Api(client)
            for index in [*range(1, len(parts)), 0]:
                body = self._plan_config_map(names[index], proposal, index, parts)
                try:
                    core.replace_namespaced_config_map(names[index], self.namespace, body)
                except kubernetes.client.ApiException as e:
                    if e.status != 404:
                        raise
                    core.create_namespaced_config_map(self.namespace, body)
            # Parts of an earlier, larger proposal.
            found = core.list_namespaced_config_map(
                self.namespace, label_selector=f"kto.dev/rebalance={self.name}"
            )
            uid = self.body["metadata"]["uid"]
            item: Any
            for item in found.items:
                owned = any(r.uid == uid for r in item.metadata.owner_references or [])
                if owned and item.metadata.name not in names:
                    with contextlib.suppress(kubernetes.client.ApiException):
                        core.delete_namespaced_config_map(item.metadata.name, self.namespace)
        return names

    def _plan_name(self, index: int) -> str:
        return f"{self.name}-plan" if index == 0 else f"{self.name}-plan-{index}"

    def _plan_config_map(
        self, name: str, proposal: str, index: int, parts: list[plan_parts.PlanPart]
    ) -> Any:  # the kubernetes client takes a dict where its types say V1ConfigMap
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": name,
                "namespace": self.namespace,
                "labels": {
                    "app.kubernetes.io/name": "kafka-topic-operator",
                    "kto.dev/rebalance": self.name,
                },
                "annotations": {
                    "kto.dev/proposal": proposal,
                    "kto.dev/plan-part": str(index),
                    "kto.dev/plan-parts": str(len(parts)),
                },
                "ownerReferences": [
                    {
                        "apiVersion": f"{GROUP}/{VERSION}",
                        "kind": "KafkaRebalance",
                        "name": self.name,
                        "uid": self.body["metadata"]["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "data": {
                "plan.json": parts[index].plan_json,
                "changes.json": parts[index].changes_json,
            },
        }

    def load_plan(self) -> tuple[str, list[Any]] | None:
        """(proposal, changes) from the ConfigMaps, when every part holds the proposal status
        shows; None if one is missing or holds another."""
        import kubernetes

        if not self.status.get("planConfigMap"):
            return None
        proposal = self.status.get("proposalId")
        changes: list[Any] = []
        with api_client() as client:
            core = kubernetes.client.CoreV1Api(client)
            count = 1
            index = 0
            while index < count:
                found: Any
                try:
                    found = core.read_namespaced_config_map(self._plan_name(index), self.namespace)
                except kubernetes.client.ApiException as e:
                    if e.status == 404:
                        return None
                    raise
                annotations = found.metadata.annotations or {}
                if annotations.get("kto.dev/proposal") != proposal or (
                    annotations.get("kto.dev/plan-part", "0") != str(index)
                ):
                    return None
                if index == 0:
                    count = int(annotations.get("kto.dev/plan-parts", "1"))
                changes += job.parse_changes((found.data or {}).get("changes.json") or "[]")
                index += 1
        return str(proposal), changes


@kopf.daemon(GROUP, VERSION, PLURAL, cancellation_timeout=10.0, backoff=5.0)
def rebalance(stopped: Any, body: Any, name: str, namespace: str | None, **_: Any) -> None:
    from kafka_topic_operator.k8s.handlers import runtime

    resource = Resource(body, namespace or "", name)
    first = True
    while not stopped:
        state = current_state(resource.status)
        changed = resource.status.get("observedGeneration") != resource.generation
        decision = decide(state, resource.annotations, spec_changed=changed and state is not None)
        if decision.warning:
            kopf.warn(body, reason="RebalanceAnnotation", message=decision.warning)
        if decision.clear_annotation:
            resource.clear_annotation()
        target = decision.state
        # A planner left by this daemon's predecessor (the operator restarted mid-planning):
        # followed again, or deleted if the resource was stopped or refreshed meanwhile (an
        # annotation refused with a warning changes nothing).
        inherited = _inherited_planner(resource) if first else None
        first = False
        asked = decision.clear_annotation and decision.warning is None
        if inherited is not None and (target is not State.PENDING_PROPOSAL or asked):
            planners.delete(inherited)
            inherited = None
        if target is State.PENDING_PROPOSAL:
            _propose(resource, runtime().zk, stopped, inherited)
        elif target is State.REBALANCING:
            _rebalance(resource, runtime().zk, stopped)
        elif target is State.STOPPED and state is not State.STOPPED:
            resource.write_status(State.STOPPED, "Stopped", "stopped on request")
        else:
            stopped.wait(POLL)


def _inherited_planner(resource: Resource) -> Planner | None:
    """The remote planner of the proposal status says is being planned, if any."""
    status = resource.status
    conditions = status.get("conditions") or [{}]
    proposal = status.get("proposalId")
    planning = current_state(status) is State.PENDING_PROPOSAL
    if not (planning and conditions[0].get("reason") == "Planning" and proposal):
        return None
    try:
        engine = rebalance_spec(resource.body.get("spec") or {}).engine.type
    except InvalidRebalanceSpec:
        return None
    if engine is EngineType.LOCAL:
        return None  # the local job died with its operator
    return remote.planner_for(engine, resource.namespace, resource.name, str(proposal))


def _spec(resource: Resource) -> RebalanceSpec | None:
    try:
        return rebalance_spec(resource.body.get("spec") or {})
    except InvalidRebalanceSpec as e:
        resource.write_status(State.NOT_READY, "InvalidSpec", str(e),
                              observedGeneration=resource.generation)  # fmt: skip
        return None


def _propose(resource: Resource, zk: Any, stopped: Any, inherited: Planner | None) -> None:
    spec = _spec(resource)
    if spec is None:
        return
    refused = _refusal(spec)
    if refused is not None:
        resource.write_status(State.NOT_READY, *refused, observedGeneration=resource.generation)
    elif spec.engine.type is EngineType.LOCAL:
        _propose_locally(resource, spec, zk, stopped)
    else:
        _propose_remotely(resource, spec, zk, stopped, inherited)


def _refusal(spec: RebalanceSpec) -> tuple[str, str] | None:
    """(reason, message) when this operator cannot plan with the spec's engine."""
    engine = spec.engine
    if engine.type not in SETTINGS.engines:
        allowed = ", ".join(sorted(SETTINGS.engines)) or "none"
        message = (f"engine {engine.type} is not enabled in this operator (kto run "
                   f"--rebalance-engines: {allowed})")  # fmt: skip
        if engine.type is EngineType.LOCAL:
            message += ": the local engine runs Spark in the operator's pod, whose image has none"
        return "EngineNotEnabled", message
    if engine.type is EngineType.LOCAL:
        missing = _local_spark_missing()
        return None if missing is None else ("EngineNotEnabled", missing)
    problem = remote.work_dir_problem(engine, os.path.isdir)
    if problem is not None:
        return "WorkDirUnreachable", problem
    if (engine.image or SETTINGS.planner_image) is None:
        return "NoPlannerImage", (
            "spec.engine.image is not set and the operator has no default planner image (kto "
            "run --planner-image; the Helm chart's rebalance.plannerImage)"
        )
    return None


def _local_spark_missing() -> str | None:
    """Why the local engine cannot run Spark in this operator's pod, if it cannot."""
    if importlib.util.find_spec("pyspark") is None:
        what = "pyspark"
    elif not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        what = "Java"
    else:
        return None
    return (f"the local engine runs Spark in the operator's pod, which has no {what}: use the "
            "kubernetes or sparkApplication engine")  # fmt: skip


def _start_planning(resource: Resource, proposal: str, message: str) -> None:
    """A new proposal: status says so, and the planners of the one before (kept after a
    failure for their logs, or left by an operator stopped before it deleted them) go."""
    earlier = resource.status.get("proposalId")
    if earlier and earlier != proposal:
        for engine in sorted(SETTINGS.engines - {EngineType.LOCAL}):
            with contextlib.suppress(ValueError):  # not a proposal id this operator wrote
                planners.delete(remote.planner_for(engine, resource.namespace, resource.name,
                                                   str(earlier)))  # fmt: skip
    resource.write_status(State.PENDING_PROPOSAL, "Planning", message,
                          observedGeneration=resource.generation, proposalId=proposal)  # fmt: skip


def _planning_input(resource: Resource, spec: RebalanceSpec, zk: Any) -> Any:
    """The planning input from the cluster as it is (and the sizes spec.partitionSizes names),
    or None (NotReady says why)."""
    from kafka_topic_operator.rebalance.inputs import leaders, planning_input
    from kafka_topic_operator.zk.snapshot_reader import read_cluster

    snapshot = read_cluster(zk)
    sizes = None
    try:
        if spec.partition_sizes is not None:
            documents = _size_documents(resource.namespace, spec.partition_sizes)
            sizes = sizes_from_documents(documents, leaders(snapshot))
        elif SETTINGS.log_dirs:
            sizes = _log_dir_sizes(resource, spec, leaders(snapshot))
    except SizesError as e:
        resource.write_status(State.NOT_READY, "PartitionSizesUnavailable", str(e))
        return None
    try:
        return planning_input(snapshot, spec, sizes)
    except planning_io.PlanningError as e:  # ProposalFailed when no plan can keep the hard goals
        resource.write_status(State.NOT_READY, e.reason, str(e))
        return None


def _log_dir_sizes(
    resource: Resource, spec: RebalanceSpec, partitions: Mapping[TopicPartition, int]
) -> dict[TopicPartition, int] | None:
    """Sizes from the log directories `kto run --log-dirs` names. When they cannot be read or
    miss a partition (a broker's directory not listed, a replica not yet created) a plan that
    needs no sizes is made without them; one that does is refused with the reason."""
    try:
        sizes = read_partition_sizes(SETTINGS.log_dirs, partitions)
    except SizesError as e:
        if spec.needs_sizes:
            raise
        problem = str(e)
    else:
        missing = sum(1 for tp in partitions if tp not in sizes)
        if not missing or spec.needs_sizes:
            return sizes
        problem = f"the log directories miss {missing} partitions"
    log.warning("planning %s/%s without partition sizes: %s", resource.namespace, resource.name,
                problem)  # fmt: skip
    return None


def _size_documents(namespace: str, source: PartitionSizesSpec) -> dict[str, str]:
    """The documents of the sizes ConfigMap (`sizes.config_map_documents`); SizesError when it
    is missing."""
    import kubernetes

    name = source.config_map
    with api_client() as client:
        try:
            found: Any = kubernetes.client.CoreV1Api(client).read_namespaced_config_map(
                name, namespace
            )
        except kubernetes.client.ApiException as e:
            if e.status != 404:
                raise
            raise SizesError(
                f"ConfigMap {namespace}/{name} (spec.partitionSizes) not found: create it, then "
                f"annotate {ANNOTATION}=refresh"
            ) from None
    return config_map_documents(f"{namespace}/{name}", found.data, found.binary_data, source.key)


def _propose_locally(resource: Resource, spec: RebalanceSpec, zk: Any, stopped: Any) -> None:
    proposal = uuid.uuid4().hex[:12]
    _start_planning(resource, proposal, f"planning proposal {proposal}")
    request = _planning_input(resource, spec, zk)
    if request is None:
        return
    paths = engines.planning_paths(str(WORKDIR), resource.namespace, resource.name, proposal)
    directory = Path(paths.output)
    directory.mkdir(parents=True, exist_ok=True)
    Path(paths.input).write_text(json.dumps(request.to_json()))
    command = engines.local_command(sys.executable, paths, master=spec.engine.master,
                                    driver_memory=spec.engine.driver_memory)  # fmt: skip
    outcome = _run_local_job(command, directory, resource, stopped)
    if outcome is not None:
        if outcome != "":
            # The job's own error.json says why best (CannotPlan for a spec the cluster cannot
            # meet, ProposalFailed for hard goals no plan can keep), as it does for the remote
            # engines.
            failure = _failure(directory) or {}
            resource.write_status(State.NOT_READY, str(failure.get("reason") or "PlanningFailed"),
                                  str(failure.get("message") or outcome))  # fmt: skip
        return  # stopped, refreshed or failed: the loop decides what next
    _show_proposal(resource, proposal, directory)


def _propose_remotely(
    resource: Resource, spec: RebalanceSpec, zk: Any, stopped: Any, inherited: Planner | None
) -> None:
    """Plans with a Job or a SparkApplication: the input written to the proposal's directory
    under workDir, the planner created and followed, the plan read back from there."""
    engine = spec.engine
    work_dir = str(engine.work_dir)  # present: _refusal checked it
    uid = str(resource.body["metadata"]["uid"])
    found = planners.read(inherited) if inherited is not None else None
    if inherited is not None and found is not None and remote.owned_by(found, uid):
        planner = inherited  # the operator restarted: the same proposal, the same planner
        generation = int(resource.status.get("observedGeneration") or 0)
        log.info("following %s of %s/%s again", planner, resource.namespace, resource.name)
    else:
        proposal = uuid.uuid4().hex[:12]
        planner = remote.planner_for(engine.type, resource.namespace, resource.name, proposal)
        generation = resource.generation
        _start_planning(resource, proposal, f"planning proposal {proposal} with {planner}")
        if not _submit(resource, spec, zk, planner, work_dir, uid):
            return
    paths = engines.planning_paths(work_dir, resource.namespace, resource.name, planner.proposal)
    ended = _follow(resource, planner, generation, stopped)
    if ended is None:
        return  # stopped, refreshed, changed, or the operator is going: the loop decides
    directory = Path(paths.output)
    if isinstance(ended, str):
        # A driver that refused the input exits non-zero: its error.json says why best.
        refused = remote.planning_refusal(_failure(directory))
        resource.write_status(State.NOT_READY, *(refused or ("PlanningFailed", ended)))
        return
    problem = remote.output_problem(planner, ended, paths.output, _files(directory),
                                    _failure(directory))  # fmt: skip
    if problem is not None:
        resource.write_status(State.NOT_READY, *problem)
        return  # the planner stays for its logs, until the next proposal
    _show_proposal(resource, planner.proposal, directory)
    planners.delete(planner)  # the plan is in the ConfigMap: its driver pod is of no more use


def _submit(resource: Resource, spec: RebalanceSpec, zk: Any, planner: Planner, work_dir: str,
            uid: str) -> bool:  # fmt: skip
    """Writes the proposal's input and creates its planner; False when that failed (NotReady
    says why)."""
    request = _planning_input(resource, spec, zk)
    if request is None:
        return False
    paths = engines.planning_paths(work_dir, resource.namespace, resource.name, planner.proposal)
    try:
        Path(paths.output).mkdir(parents=True, exist_ok=True)
        Path(paths.input).write_text(json.dumps(request.to_json()))
    except OSError as e:
        message = f"cannot write the planning input {paths.input}: {e.strerror or e}"
        resource.write_status(State.NOT_READY, "WorkDirUnreachable", message)
        return False
    build = engines.kubernetes_job if planner.kind == remote.JOB else engines.spark_application
    image = spec.engine.image or SETTINGS.planner_image or ""
    if spec.engine.service_account_name is None and SETTINGS.planner_service_account:
        account = {"service_account_name": SETTINGS.planner_service_account}
        spec = spec.model_copy(update={"engine": spec.engine.model_copy(update=account)})
    body = build(resource.body, spec, paths, default_image=image, proposal=planner.proposal)
    try:
        planners.create(planner, body, uid)
    except planners.PlannerRefused as e:
        resource.write_status(State.NOT_READY, "PlannerRefused", str(e))
        return False
    return True


def _follow(
    resource: Resource, planner: Planner, generation: int, stopped: Any
) -> Mapping[str, Any] | str | None:
    """Polls the planner until it ends: its object when it succeeded, a message when it failed
    or vanished; None when it was stopped, refreshed or its spec changed (the planner deleted),
    or when the daemon stops (the planner left running, for the next operator to follow)."""
    while True:
        obj = planners.read(planner)
        if obj is None:
            return remote.vanished_message(planner)
        end = remote.ended(planner.kind, obj)
        if end is not None:
            return obj if end.succeeded else remote.failed_message(planner, end, obj)
        if stopped:
            return None
        if _asked_to_stop(resource) or resource.generation != generation:
            planners.delete(planner)
            return None
        stopped.wait(POLL)


def _asked_to_stop(resource: Resource) -> bool:
    return resource.annotations.get(ANNOTATION) in ("stop", "refresh")


def _files(directory: Path) -> set[str]:
    try:
        return {p.name for p in directory.iterdir() if p.is_file()}
    except OSError:
        return set()


def _failure(directory: Path) -> Mapping[str, Any] | None:
    """The planning job's error.json, if it wrote one."""
    try:
        failure = json.loads((directory / remote.FAILURE_FILE).read_text())
    except (OSError, ValueError):
        return None
    return failure if isinstance(failure, Mapping) else {"message": str(failure)}


def _show_proposal(resource: Resource, proposal: str, directory: Path) -> None:
    """The planned proposal in status and its ConfigMap; the resource's older proposals'
    directories removed (a snapshot can be large)."""
    summary = json.loads((directory / "result.json").read_text())["optimizationResult"]
    config_maps = resource.save_plan(proposal, directory)
    drain = summary.get("drainReplicaMoves")
    split = (
        f" ({drain} off the brokers being removed, {summary['replicaMoves'] - drain} to balance)"
        if drain
        else ""
    )
    message = (
        f"{summary['replicaMoves']} replica moves{split} (lower bound "
        f"{summary['replicaMovesLowerBound']}), {summary['leaderMoves']} leader moves"
    )
    resource.write_status(State.PROPOSAL_READY, "ProposalReady", message,
                          optimizationResult=summary, planConfigMap=config_maps[0],
                          planConfigMaps=config_maps)  # fmt: skip
    for older in directory.parent.iterdir():
        if older.name != proposal and older.is_dir():
            shutil.rmtree(older, ignore_errors=True)
    if not auto_approved(resource.annotations):
        kopf.event(resource.body, type="Normal", reason="ProposalReady", message=message)


def _run_local_job(
    command: list[str], directory: Path, resource: Resource, stopped: Any
) -> str | None:
    """None when planned; "" when stopped or refreshed meanwhile; else what failed."""
    with (directory / "job.log").open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        try:
            while True:
                try:
                    code = process.wait(timeout=POLL)
                    break
                except subprocess.TimeoutExpired:
                    if stopped or _asked_to_stop(resource):
                        return ""
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    if code != 0:
        lines = (directory / "job.log").read_text().strip().splitlines()
        return lines[-1] if lines else f"the planning job exited with {code}"
    return None


def _rebalance(resource: Resource, zk: Any, stopped: Any) -> None:
    spec = _spec(resource)
    if spec is None:
        return
    loaded = resource.load_plan()
    if loaded is None:
        resource.write_status(State.PENDING_PROPOSAL, "ProposalMissing",
                              "the approved proposal is gone: planning again")  # fmt: skip
        return
    proposal, changes = loaded
    if current_state(resource.status) is not State.REBALANCING:
        message = f"carrying out proposal {proposal}"
        resource.write_status(State.REBALANCING, "Rebalancing", message)
    limits = ex.Limits(spec.concurrent_partition_movements_per_broker,
                       spec.max_partition_movements, spec.concurrent_leader_movements)  # fmt: skip
    executor = Executor(zk, changes, limits, throttle=spec.replication_throttle)
    began = time.monotonic()
    written: dict[str, Any] = {}

    def report(r: Report) -> None:
        # Written when it changes: a wait that follows may be long.
        progress: dict[str, Any] = {**r.progress.to_status(), "batch": r.batch}
        if progress == written:
            return
        written.clear()
        written.update(progress)
        done = r.progress.partitions_done
        if done:
            left = (time.monotonic() - began) / done * (len(changes) - done)
            progress = {**progress, "estimatedSecondsLeft": round(left, 1)}
        message = f"{r.step.phase}: proposal {proposal}"
        resource.write_status(State.REBALANCING, "Rebalancing", message, progress=progress)

    def stop() -> bool:
        return bool(stopped) or _asked_to_stop(resource)

    try:
        finished = executor.run(stop=stop, report=report, abandon=lambda: bool(stopped))
    except ex.PlanOutdated as e:
        message = f"{e}: planning again"
        resource.write_status(State.PENDING_PROPOSAL, "ClusterChanged", message)
        return
    if finished:
        message = f"proposal {proposal} carried out: {len(changes)} partitions"
        resource.write_status(State.READY, "RebalanceComplete", message)
