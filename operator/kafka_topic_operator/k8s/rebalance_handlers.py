"""KafkaRebalance: one daemon per resource walks it through `rebalance.workflow`'s states.

It plans with the planning job (the local engine: a subprocess of the operator), shows the
proposal in status and in a ConfigMap (Kafka's reassignment JSON), waits for approval, then has
`rebalance.executor` carry out exactly that proposal, with progress in status. What it knows
lives in the resource and the cluster, so a restarted operator picks each resource up where it
was: a Rebalancing one resumes from what ZooKeeper shows.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import kopf

from kafka_topic_operator.k8s.kubeclient import api_client
from kafka_topic_operator.rebalance import engines, job
from kafka_topic_operator.rebalance import execution as ex
from kafka_topic_operator.rebalance.executor import Executor, Report
from kafka_topic_operator.rebalance.spec import InvalidRebalanceSpec, RebalanceSpec, rebalance_spec
from kafka_topic_operator.rebalance.workflow import (
    ANNOTATION,
    State,
    auto_approved,
    condition,
    current_state,
    decide,
)

log = logging.getLogger(__name__)

GROUP, VERSION, PLURAL = "kto.dev", "v1", "kafkarebalances"
POLL = 1.0  # seconds between looks at the live resource while waiting on a person
WORKDIR = Path(os.environ.get("KTO_REBALANCE_WORKDIR") or tempfile.gettempdir()) / "kto-rebalance"


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

    def save_plan(self, proposal: str, directory: Path) -> str:
        """The proposal's ConfigMap, owned by the resource: Kafka's reassignment JSON and the
        partitions' replicas before and after."""
        import kubernetes

        name = f"{self.name}-plan"
        meta = self.body["metadata"]
        config_map: Any = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": name,
                "namespace": self.namespace,
                "labels": {
                    "app.kubernetes.io/name": "kafka-topic-operator",
                    "kto.dev/rebalance": self.name,
                },
                "annotations": {"kto.dev/proposal": proposal},
                "ownerReferences": [
                    {
                        "apiVersion": f"{GROUP}/{VERSION}",
                        "kind": "KafkaRebalance",
                        "name": self.name,
                        "uid": meta["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "data": {
                "plan.json": (directory / "plan.json").read_text(),
                "changes.json": (directory / "changes.json").read_text(),
            },
        }
        with api_client() as client:
            core = kubernetes.client.CoreV1Api(client)
            try:
                core.replace_namespaced_config_map(name, self.namespace, config_map)
            except kubernetes.client.ApiException as e:
                if e.status != 404:
                    raise
                core.create_namespaced_config_map(self.namespace, config_map)
        return name

    def load_plan(self) -> tuple[str, list[Any]] | None:
        """(proposal, changes) from the ConfigMap, when it holds the proposal status shows."""
        import kubernetes

        name = self.status.get("planConfigMap")
        if not name:
            return None
        with api_client() as client:
            try:
                found = kubernetes.client.CoreV1Api(client).read_namespaced_config_map(
                    name, self.namespace
                )
            except kubernetes.client.ApiException as e:
                if e.status == 404:
                    return None
                raise
        meta: Any = found.metadata
        data: Any = found.data or {}
        proposal = str((meta.annotations or {}).get("kto.dev/proposal"))
        if proposal != self.status.get("proposalId"):
            return None
        return proposal, job.parse_changes(data.get("changes.json") or "[]")


@kopf.daemon(GROUP, VERSION, PLURAL, cancellation_timeout=10.0, backoff=5.0)
def rebalance(stopped: Any, body: Any, name: str, namespace: str | None, **_: Any) -> None:
    from kafka_topic_operator.k8s.handlers import runtime

    resource = Resource(body, namespace or "", name)
    while not stopped:
        state = current_state(resource.status)
        changed = resource.status.get("observedGeneration") != resource.generation
        decision = decide(state, resource.annotations, spec_changed=changed and state is not None)
        if decision.warning:
            kopf.warn(body, reason="RebalanceAnnotation", message=decision.warning)
        if decision.clear_annotation:
            resource.clear_annotation()
        target = decision.state
        if target is State.PENDING_PROPOSAL:
            _propose(resource, runtime().zk, stopped)
        elif target is State.REBALANCING:
            _rebalance(resource, runtime().zk, stopped)
        elif target is State.STOPPED and state is not State.STOPPED:
            resource.write_status(State.STOPPED, "Stopped", "stopped on request")
        else:
            stopped.wait(POLL)


def _spec(resource: Resource) -> RebalanceSpec | None:
    try:
        return rebalance_spec(resource.body.get("spec") or {})
    except InvalidRebalanceSpec as e:
        resource.write_status(State.NOT_READY, "InvalidSpec", str(e),
                              observedGeneration=resource.generation)  # fmt: skip
        return None


def _propose(resource: Resource, zk: Any, stopped: Any) -> None:
    from kafka_topic_operator.rebalance.inputs import planning_input
    from kafka_topic_operator.zk.snapshot_reader import read_cluster

    generation = resource.generation
    spec = _spec(resource)
    if spec is None:
        return
    proposal = uuid.uuid4().hex[:12]
    resource.write_status(State.PENDING_PROPOSAL, "Planning", f"planning proposal {proposal}",
                          observedGeneration=generation, proposalId=proposal)  # fmt: skip
    try:
        request = planning_input(read_cluster(zk), spec)
    except job.PlanningError as e:
        resource.write_status(State.NOT_READY, "CannotPlan", str(e))
        return
    paths = engines.planning_paths(str(WORKDIR), resource.namespace, resource.name, proposal)
    directory = Path(paths.output)
    directory.mkdir(parents=True, exist_ok=True)
    Path(paths.input).write_text(json.dumps(request.to_json()))
    command = engines.local_command(sys.executable, paths, driver_memory=spec.engine.driver_memory)
    outcome = _run_local_job(command, directory, resource, stopped)
    if outcome is not None:
        if outcome != "":
            resource.write_status(State.NOT_READY, "PlanningFailed", outcome)
        return  # stopped, refreshed or failed: the loop decides what next
    summary = json.loads((directory / "result.json").read_text())["optimizationResult"]
    config_map = resource.save_plan(proposal, directory)
    message = (
        f"{summary['replicaMoves']} replica moves (lower bound "
        f"{summary['replicaMovesLowerBound']}), {summary['leaderMoves']} leader moves"
    )
    resource.write_status(State.PROPOSAL_READY, "ProposalReady", message,
                          optimizationResult=summary, planConfigMap=config_map)  # fmt: skip
    if not auto_approved(resource.annotations):
        kopf.info(resource.body, reason="ProposalReady", message=message)


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
                    if stopped or resource.annotations.get(ANNOTATION) in ("stop", "refresh"):
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
        return bool(stopped) or resource.annotations.get(ANNOTATION) in ("stop", "refresh")

    try:
        finished = executor.run(stop=stop, report=report, abandon=lambda: bool(stopped))
    except ex.PlanOutdated as e:
        message = f"{e}: planning again"
        resource.write_status(State.PENDING_PROPOSAL, "ClusterChanged", message)
        return
    if finished:
        message = f"proposal {proposal} carried out: {len(changes)} partitions"
        resource.write_status(State.READY, "RebalanceComplete", message)
