"""Planning a KafkaRebalance's proposal (next to `planners`, which creates and reads the remote
planners): the spec checked against what this operator allows, the planning input read from the
cluster (with partition sizes), the planning job run locally or a Job or SparkApplication
created and followed, and the proposal shown in status and its ConfigMap."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kopf

from kafka_topic_operator.k8s import planners
from kafka_topic_operator.k8s.kubeclient import api_client
from kafka_topic_operator.k8s.rebalance_resource import POLL, Resource
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance import planning_io
from kafka_topic_operator.rebalance.engines import manifests as engines
from kafka_topic_operator.rebalance.engines import remote
from kafka_topic_operator.rebalance.engines.defaults import PlannerDefaults, with_defaults
from kafka_topic_operator.rebalance.engines.remote import Planner
from kafka_topic_operator.rebalance.execution.cluster import RebalanceCluster
from kafka_topic_operator.rebalance.execution.workflow import (
    ANNOTATION,
    State,
    auto_approved,
    current_state,
)
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

WORKDIR = Path(os.environ.get("KTO_REBALANCE_WORKDIR") or tempfile.gettempdir()) / "kto-rebalance"


@dataclass(frozen=True)
class Settings:
    """What `kto run` configures for KafkaRebalances."""

    engines: frozenset[EngineType] = field(default_factory=lambda: frozenset(EngineType))
    # What the remote engines' planners take when spec.engine leaves it out.
    planner: PlannerDefaults = field(default_factory=PlannerDefaults)
    # Brokers' log directories this process can read (the dev cluster's): partition sizes for
    # resources that name no ConfigMap of them.
    log_dirs: tuple[Path, ...] = ()


class Proposals:
    """Proposals for the KafkaRebalances of one operator: its settings, its cluster."""

    def __init__(self, settings: Settings, cluster: RebalanceCluster) -> None:
        self.settings = settings
        self.cluster = cluster

    def propose(
        self, resource: Resource, stopped: kopf.DaemonStopped, inherited: Planner | None
    ) -> None:
        spec = spec_of(resource)
        if spec is None:
            return
        engine = with_defaults(spec.engine, self.settings.planner, resource.namespace)
        spec = spec.model_copy(update={"engine": engine})
        refused = self._refusal(spec)
        if refused is not None:
            resource.write_status(State.NOT_READY, *refused, observedGeneration=resource.generation)
        elif spec.engine.type is EngineType.LOCAL:
            self._propose_locally(resource, spec, stopped)
        else:
            self._propose_remotely(resource, spec, stopped, inherited)

    def _refusal(self, spec: RebalanceSpec) -> tuple[str, str] | None:
        """(reason, message) when this operator cannot plan with the spec's engine."""
        engine = spec.engine
        if engine.type not in self.settings.engines:
            allowed = ", ".join(sorted(self.settings.engines)) or "none"
            message = (f"engine {engine.type} is not enabled in this operator (kto run "
                       f"--rebalance-engines: {allowed})")  # fmt: skip
            if engine.type is EngineType.LOCAL:
                message += (
                    ": the local engine runs Spark in the operator's pod, whose image has none"
                )
            return "EngineNotEnabled", message
        if engine.type is EngineType.LOCAL:
            missing = _local_spark_missing()
            return None if missing is None else ("EngineNotEnabled", missing)
        problem = remote.work_dir_problem(engine, os.path.isdir)
        if problem is not None:
            return "WorkDirUnreachable", problem
        if engine.image is None:
            return "NoPlannerImage", (
                "spec.engine.image is not set and the operator has no default planner image (kto "
                "run --planner-image; the Helm chart's rebalance.plannerImage)"
            )
        return None

    def _start_planning(self, resource: Resource, proposal: str, message: str) -> None:
        """A new proposal: status says so, and the planners of the one before (kept after a
        failure for their logs, or left by an operator stopped before it deleted them) go."""
        earlier = resource.status.get("proposalId")
        if earlier and earlier != proposal:
            for engine in sorted(self.settings.engines - {EngineType.LOCAL}):
                with contextlib.suppress(ValueError):  # not a proposal id this operator wrote
                    planners.delete(remote.planner_for(engine, resource.namespace, resource.name,
                                                       str(earlier)))  # fmt: skip
        resource.write_status(
            State.PENDING_PROPOSAL, "Planning", message,
            observedGeneration=resource.generation, proposalId=proposal,
        )  # fmt: skip

    def _planning_input(self, resource: Resource, spec: RebalanceSpec) -> Any:
        """The planning input from the cluster as it is (and the sizes spec.partitionSizes names),
        or None (NotReady says why)."""
        from kafka_topic_operator.rebalance.inputs import leaders, planning_input

        snapshot = self.cluster.snapshot()
        sizes = None
        try:
            if spec.partition_sizes is not None:
                documents = _size_documents(resource.namespace, spec.partition_sizes)
                sizes = sizes_from_documents(documents, leaders(snapshot))
            elif self.settings.log_dirs:
                sizes = self._log_dir_sizes(resource, spec, leaders(snapshot))
        except SizesError as e:
            resource.write_status(State.NOT_READY, "PartitionSizesUnavailable", str(e))
            return None
        try:
            return planning_input(snapshot, spec, sizes)
        except (
            planning_io.PlanningError
        ) as e:  # ProposalFailed when no plan can keep the hard goals
            resource.write_status(State.NOT_READY, e.reason, str(e))
            return None

    def _log_dir_sizes(
        self, resource: Resource, spec: RebalanceSpec, partitions: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, int] | None:
        """Sizes from the log directories `kto run --log-dirs` names. When they cannot be read or
        miss a partition (a broker's directory not listed, a replica not yet created) a plan that
        needs no sizes is made without them; one that does is refused with the reason."""
        try:
            sizes = read_partition_sizes(self.settings.log_dirs, partitions)
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

    def _propose_locally(
        self, resource: Resource, spec: RebalanceSpec, stopped: kopf.DaemonStopped
    ) -> None:
        proposal = uuid.uuid4().hex[:12]
        self._start_planning(resource, proposal, f"planning proposal {proposal}")
        request = self._planning_input(resource, spec)
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
                reason = str(failure.get("reason") or "PlanningFailed")
                resource.write_status(State.NOT_READY, reason,
                                      str(failure.get("message") or outcome))  # fmt: skip
            return  # stopped, refreshed or failed: the loop decides what next
        _show_proposal(resource, proposal, directory)

    def _propose_remotely(
        self,
        resource: Resource,
        spec: RebalanceSpec,
        stopped: kopf.DaemonStopped,
        inherited: Planner | None,
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
            self._start_planning(resource, proposal, f"planning proposal {proposal} with {planner}")
            if not self._submit(resource, spec, planner, work_dir, uid):
                return
        paths = engines.planning_paths(
            work_dir, resource.namespace, resource.name, planner.proposal
        )
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

    def _submit(self, resource: Resource, spec: RebalanceSpec, planner: Planner, work_dir: str,
                uid: str) -> bool:  # fmt: skip
        """Writes the proposal's input and creates its planner; False when that failed (NotReady
        says why)."""
        request = self._planning_input(resource, spec)
        if request is None:
            return False
        paths = engines.planning_paths(
            work_dir, resource.namespace, resource.name, planner.proposal
        )
        try:
            Path(paths.output).mkdir(parents=True, exist_ok=True)
            Path(paths.input).write_text(json.dumps(request.to_json()))
        except OSError as e:
            message = f"cannot write the planning input {paths.input}: {e.strerror or e}"
            resource.write_status(State.NOT_READY, "WorkDirUnreachable", message)
            return False
        build = engines.kubernetes_job if planner.kind == remote.JOB else engines.spark_application
        image = spec.engine.image or ""  # present: _refusal checked it
        body = build(resource.body, spec, paths, default_image=image, proposal=planner.proposal)
        try:
            planners.create(planner, body, uid)
        except planners.PlannerRefused as e:
            resource.write_status(State.NOT_READY, "PlannerRefused", str(e))
            return False
        return True


def inherited_planner(resource: Resource) -> Planner | None:
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


def spec_of(resource: Resource) -> RebalanceSpec | None:
    try:
        return rebalance_spec(resource.body.get("spec") or {})
    except InvalidRebalanceSpec as e:
        resource.write_status(State.NOT_READY, "InvalidSpec", str(e),
                              observedGeneration=resource.generation)  # fmt: skip
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


def _follow(
    resource: Resource, planner: Planner, generation: int, stopped: kopf.DaemonStopped
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
        if asked_to_stop(resource) or resource.generation != generation:
            planners.delete(planner)
            return None
        stopped.wait(POLL)


def asked_to_stop(resource: Resource) -> bool:
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
    directories removed first (a snapshot can be large)."""
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
    # Before the status: whoever sees the proposal ready finds the older ones gone.
    for older in directory.parent.iterdir():
        if older.name != proposal and older.is_dir():
            shutil.rmtree(older, ignore_errors=True)
    resource.write_status(State.PROPOSAL_READY, "ProposalReady", message,
                          optimizationResult=summary, planConfigMap=config_maps[0],
                          planConfigMaps=config_maps)  # fmt: skip
    if not auto_approved(resource.annotations):
        kopf.event(resource.body, type="Normal", reason="ProposalReady", message=message)


def _run_local_job(
    command: list[str], directory: Path, resource: Resource, stopped: kopf.DaemonStopped
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
                    if stopped or asked_to_stop(resource):
                        return ""
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    if code != 0:
        lines = (directory / "job.log").read_text().strip().splitlines()
        return lines[-1] if lines else f"the planning job exited with {code}"
    return None
