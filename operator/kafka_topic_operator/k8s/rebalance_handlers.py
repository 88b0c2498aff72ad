"""KafkaRebalance: one daemon per resource walks it through `rebalance.workflow`'s states.

It plans with the planning job (the local engine: a subprocess of the operator; the kubernetes
and sparkApplication engines: a Job or a SparkApplication it creates and follows, exchanging
files through spec.engine.workDir), shows the proposal in status and in a ConfigMap (Kafka's
reassignment JSON), waits for approval, then has `rebalance.executor` carry out exactly that
proposal, with progress in status. What it knows lives in the resource and the cluster, so a
restarted operator picks each resource up where it was: a Rebalancing one resumes from what
the cluster shows, a planning one follows the planner it had created.

The cluster is reached as the operator reaches it (`rebalance.execution.cluster`): through
ZooKeeper on a ZooKeeper-mode cluster, through Kafka's Admin API on a KRaft cluster.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import kopf

from kafka_topic_operator.k8s import metrics, planners
from kafka_topic_operator.k8s.handlers import Runtime, runtime
from kafka_topic_operator.k8s.rebalance_planning import (
    Proposals,
    Settings,
    asked_to_stop,
    inherited_planner,
    spec_of,
)
from kafka_topic_operator.k8s.rebalance_resource import GROUP, PLURAL, POLL, VERSION, Resource
from kafka_topic_operator.rebalance.execution import steps as ex
from kafka_topic_operator.rebalance.execution.cluster import RebalanceCluster
from kafka_topic_operator.rebalance.execution.executor import Executor, Report
from kafka_topic_operator.rebalance.execution.workflow import (
    State,
    current_state,
    decide,
)

log = logging.getLogger(__name__)


@kopf.daemon(GROUP, VERSION, PLURAL, cancellation_timeout=10.0, backoff=5.0)
def rebalance(
    stopped: kopf.DaemonStopped,
    body: kopf.Body,
    name: str,
    namespace: str | None,
    memo: kopf.Memo,
    **_: Any,
) -> None:
    cluster = rebalance_cluster(runtime(memo), stopped)
    resource = Resource(body, namespace or "", name)
    try:
        _follow(resource, cluster, Proposals(memo.get("rebalance") or Settings(), cluster), stopped)
    finally:
        metrics.REBALANCE_STATES.forget(namespace or "", name)


def _follow(
    resource: Resource,
    cluster: RebalanceCluster,
    proposals: Proposals,
    stopped: kopf.DaemonStopped,
) -> None:
    body = resource.body
    if (known := current_state(resource.status)) is not None:
        metrics.REBALANCE_STATES.record(resource.namespace, resource.name, known, resource.status)
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
        inherited = inherited_planner(resource) if first else None
        first = False
        asked = decision.clear_annotation and decision.warning is None
        if inherited is not None and (target is not State.PENDING_PROPOSAL or asked):
            planners.delete(inherited)
            inherited = None
        if target is State.PENDING_PROPOSAL:
            proposals.propose(resource, stopped, inherited)
        elif target is State.REBALANCING:
            _rebalance(resource, cluster, stopped)
        elif target is State.STOPPED and state is not State.STOPPED:
            resource.write_status(State.STOPPED, "Stopped", "stopped on request")
        else:
            stopped.wait(POLL)


def rebalance_cluster(rt: Runtime, stopped: kopf.DaemonStopped) -> RebalanceCluster:
    """The cluster as the operator reaches it (its waits end when the daemon stops)."""
    return rt.cluster.rebalance_cluster(stopped)


def _rebalance(resource: Resource, cluster: RebalanceCluster, stopped: kopf.DaemonStopped) -> None:
    spec = spec_of(resource)
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
    executor = Executor(cluster, changes, limits, throttle=spec.replication_throttle)
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
        return bool(stopped) or asked_to_stop(resource)

    try:
        finished = executor.run(stop=stop, report=report, abandon=lambda: bool(stopped))
    except ex.PlanOutdated as e:
        message = f"{e}: planning again"
        resource.write_status(State.PENDING_PROPOSAL, "ClusterChanged", message)
        # The next proposal's Planning replaces this condition at once: the event keeps it.
        kopf.event(resource.body, type="Warning", reason="ClusterChanged", message=message)
        return
    if finished:
        message = f"proposal {proposal} carried out: {len(changes)} partitions"
        resource.write_status(State.READY, "RebalanceComplete", message)
