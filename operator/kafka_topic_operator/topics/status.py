"""A KafkaTopic's status, built from a reconcile step and a snapshot of the cluster (pure).

The Ready condition says whether the topic is as declared and, if not, why; partition counts
and a bounded per-partition table show what Kafka's state machines did. Replica states are read
from the znodes (live broker: OnlineReplica; dead: OfflineReplica; while the topic is deleted:
ReplicaDeletionStarted, or ReplicaDeletionIneligible on a dead broker), since the controller's
own are in its memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from kafka_topic_operator.kafka.snapshot import ClusterSnapshot, PartitionStatus, TopicSnapshot
from kafka_topic_operator.topics.plan import Plan, Reason, unreadable_message
from kafka_topic_operator.topics.spec import (
    DesiredTopic,
    InvalidSpec,
    config_to_keep,
    desired_topic,
)
from kafka_topic_operator.zk.stuck_requests import StuckRequest, stuck_for, stuck_requests

PARTITION_TABLE_LIMIT = 50  # larger topics get counts only: status must stay small
# The reasons that only Kafka's controller changes (a leader lost or regained): status moves
# between them as the controller acts, without a reconcile. Any other reason is the
# reconcile's or the finalizer's to set.
FOLLOWED_REASONS = frozenset({"Created", "PartitionsOffline"})
# Beside Ready, the abnormal-true conditions kstatus (and so Flux, kpt, cli-utils) reads:
# Reconciling while the operator or Kafka's controller is still acting on the spec, Stalled
# while nothing will change until someone fixes the spec, the cluster or another writer's data.
RECONCILING_REASONS = frozenset(
    {"Reconciling", "ReassignmentInProgress", "BrokersUnavailable", "DeletionInProgress"}
)
STALLED_REASONS = frozenset(
    {
        "InvalidSpec",
        "Conflict",
        "NotSupported",
        "UnreadableZNode",
        "PartitionsOffline",
        "DeletionIneligible",
        "DeletionDisabled",
    }
)


@dataclass(frozen=True, slots=True)
class Condition:
    status: str  # "True", "False", "Unknown"
    reason: str
    message: str


def managed_topic(status: Mapping[str, Any]) -> str | None:
    """The topic a resource has created or taken over, if any. status.topicName names the topic
    from the first reconcile on; statuses written before topicManaged existed only named a
    topic once it was managed."""
    name = status.get("topicName")
    return name if isinstance(name, str) and status.get("topicManaged", True) is True else None


def topic_status(
    topic_name: str | None,
    generation: int,
    condition: Condition,
    snapshot: ClusterSnapshot | None,
    managed: bool = True,
) -> dict[str, Any]:
    """The status without timestamps; `with_transition_times` adds them. `managed`: whether
    the resource has created or taken over the topic it names."""
    status: dict[str, Any] = {
        "observedGeneration": generation,
        "conditions": conditions(condition, generation),
    }
    if topic_name is not None:
        status["topicName"] = topic_name
        status["topicManaged"] = managed
    topic = snapshot.topics.get(topic_name) if snapshot and topic_name else None
    if snapshot is not None and topic is not None:
        status.update(_topic_fields(snapshot, topic))
    return status


def stuck_status(
    topic: str, generation: int, message: str, snapshot: ClusterSnapshot
) -> dict[str, Any] | None:
    """The status of a topic whose reconcile cannot write its reassignment (`message` says
    why) because the request in ZooKeeper names it and Kafka's controller will never finish
    it; None when no such request names it (the wait ends by itself)."""
    stuck = stuck_for(topic, stuck_requests(snapshot))
    if not stuck:
        return None
    reason = Reason.REASSIGNMENT_IN_PROGRESS.value
    waiting = Condition("False", reason, message + _stuck_text(stuck))
    return topic_status(topic, generation, waiting, snapshot)


def _stuck_text(stuck: list[StuckRequest]) -> str:
    return "".join(
        f" {s.path} will not be processed: {s.why}; to clear it: {s.clears}." for s in stuck
    )


def conditions(ready: Condition, generation: int) -> list[dict[str, Any]]:
    """Ready first (metrics and printer columns read it there), then Reconciling or Stalled
    when the reason calls for one."""
    found = [("Ready", ready.status)]
    if ready.reason in RECONCILING_REASONS:
        found.append(("Reconciling", "True"))
    elif ready.reason in STALLED_REASONS:
        found.append(("Stalled", "True"))
    return [
        {
            "type": kind,
            "status": status,
            "reason": ready.reason,
            "message": ready.message,
            "observedGeneration": generation,
        }
        for kind, status in found
    ]


def ready_condition(
    plan: Plan,
    snapshot: ClusterSnapshot | None,
    topic: str | None,
    desired: DesiredTopic | None = None,
) -> Condition:
    """Ready=True only when the topic is as `desired` says and every partition is online."""
    if plan.blocked is not None:
        reason, message = plan.blocked
        if snapshot is not None and topic:
            message += _stuck_text(stuck_for(topic, stuck_requests(snapshot)))
        return Condition("False", reason.value, message)
    if snapshot is not None and topic and (problems := snapshot.unreadable.get(topic)):
        return Condition("False", Reason.UNREADABLE_ZNODE.value,
                         unreadable_message(topic, problems))  # fmt: skip
    applied = ", ".join(type(a).__name__ for a in plan.actions)
    waiting = f"Applied {applied}; waiting for Kafka" if applied else "Waiting for Kafka"
    found = snapshot.topics.get(topic) if snapshot is not None and topic else None
    if found is None:
        return Condition("False", "Reconciling", waiting if applied else
                         "Waiting for the topic to appear")  # fmt: skip
    live = snapshot.live_brokers if snapshot is not None else frozenset()
    states = [p.status(live) for p in found.partitions.values()]
    if found.being_reassigned:
        return Condition(
            "False",
            "Reconciling",
            f"Reassigning partitions {', '.join(map(str, found.being_reassigned))}",
        )
    if desired is not None and (
        len(found.partitions) != desired.partitions
        or found.replication_factor != desired.replication_factor
        or dict(found.config) != config_to_keep(desired.config, found.config)
    ):
        return Condition("False", "Reconciling", waiting)
    if any(s is PartitionStatus.NEW for s in states):
        return Condition("False", "Reconciling", "Waiting for the controller to bring "
                         f"{states.count(PartitionStatus.NEW)} partitions online")  # fmt: skip
    offline = states.count(PartitionStatus.OFFLINE)
    if offline:
        return Condition("False", "PartitionsOffline", f"{offline} partitions have no live leader")
    return Condition("True", "Created", "The topic is as declared")


@dataclass(frozen=True, slots=True)
class Shown:
    """What the brokers' metadata shows of a topic: `waiting` names what is not yet led there
    (None: every partition is, on every live broker), `unchecked` why some could not be asked."""

    waiting: str | None = None
    unchecked: str | None = None


def as_brokers_show(condition: Condition, shown: Shown) -> Condition:
    """A Ready condition read from a ZooKeeper-mode cluster's state, as the brokers' metadata
    shows the topic: Reconciling while a broker does not have every partition led, and saying
    what could not be checked rather than claiming it."""
    if shown.waiting is not None:
        return Condition("False", "Reconciling", f"Waiting for the brokers' metadata: "
                         f"{shown.waiting}")  # fmt: skip
    if shown.unchecked is not None:
        return replace(condition, message=f"{condition.message} (the brokers' metadata not "
                       f"checked: {shown.unchecked})")  # fmt: skip
    return condition


def settled_reason(resource: Mapping[str, Any], topic: str) -> str | None:
    """The Ready reason of a resource (as read from the API) that manages `topic`, is not being
    deleted and was last reconciled at its current spec; None for any other."""
    status = resource.get("status") or {}
    meta = resource.get("metadata") or {}
    if (
        meta.get("deletionTimestamp")
        or managed_topic(status) != topic
        or status.get("observedGeneration") != meta.get("generation")
    ):
        return None
    reasons = [c.get("reason") for c in status.get("conditions") or [] if c.get("type") == "Ready"]
    return str(reasons[0]) if reasons and reasons[0] is not None else None


def followed_status(
    name: str, resource: Mapping[str, Any], topic: str, snapshot: ClusterSnapshot
) -> dict[str, Any] | None:
    """The status of KafkaTopic `name` (the resource as read from the API) once `topic`'s znodes
    changed, as its last reconcile would show it now; None when the reconcile must decide: the
    spec changed since, the resource is being deleted, it does not manage `topic`, or its
    condition is one Kafka's controller does not change."""
    if settled_reason(resource, topic) not in FOLLOWED_REASONS:
        return None
    status = resource.get("status") or {}
    try:
        desired = desired_topic(name, resource.get("spec") or {})
    except InvalidSpec:
        return None
    condition = ready_condition(Plan(), snapshot, topic, desired)
    if condition.reason not in FOLLOWED_REASONS:
        return None  # the topic differs from the spec: the reconcile (drift timer) sees to it
    return topic_status(topic, int(status["observedGeneration"]), condition, snapshot)


def with_transition_times(
    new: Mapping[str, Any], old: Mapping[str, Any] | None, now: str
) -> dict[str, Any]:
    """Each condition keeps its lastTransitionTime unless its status changed."""
    before = {c.get("type"): c for c in (old or {}).get("conditions") or []}
    conditions = []
    for condition in new.get("conditions") or []:
        previous = before.get(condition["type"])
        unchanged = previous is not None and previous.get("status") == condition["status"]
        time = previous.get("lastTransitionTime") if unchanged and previous else None
        conditions.append({**condition, "lastTransitionTime": time or now})
    return {**new, "conditions": conditions}


def status_patch(old: Mapping[str, Any], new: Mapping[str, Any], now: str) -> dict[str, Any] | None:
    """The JSON merge patch (RFC 7386) that turns status `old` into `new` stamped with transition
    times as of `now`; None when nothing but those times would change, so an unchanged status
    is never written. kopf's own bookkeeping (status.kopf) is left alone."""
    stamped = with_transition_times(new, old, now)
    current = {k: v for k, v in old.items() if k != "kopf"}
    return _merge_patch(current, stamped) if current != stamped else None


def _merge_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    patch: dict[str, Any] = {key: None for key in old if key not in new}
    for key, value in new.items():
        before = old.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            if value != before:
                patch[key] = _merge_patch(before, value)
        elif key not in old or value != before:
            patch[key] = value
    return patch


def _topic_fields(snapshot: ClusterSnapshot, topic: TopicSnapshot) -> dict[str, Any]:
    live = snapshot.live_brokers
    parts = [topic.partitions[p] for p in sorted(topic.partitions)]
    fields: dict[str, Any] = {
        "partitionCounts": {
            "total": len(parts),
            "online": sum(1 for p in parts if p.status(live) is PartitionStatus.ONLINE),
            "offline": sum(1 for p in parts if p.status(live) is PartitionStatus.OFFLINE),
            "underReplicated": sum(1 for p in parts if p.under_replicated()),
        },
        # As kafka-topics --describe counts it: partition 0's replicas.
        "replicationFactor": len(parts[0].replicas) if parts else 0,
    }
    if topic.topic_id is not None:
        fields["topicId"] = topic.topic_id
    if len(parts) <= PARTITION_TABLE_LIMIT:
        fields["partitions"] = [
            {
                "partition": p.partition,
                "state": p.status(live).value + "Partition",
                "leader": p.leader,
                "isr": list(p.isr),
                "replicas": [
                    {"broker": r, "state": _replica_state(r in live, topic.marked_for_deletion)}
                    for r in p.replicas
                ],
            }
            for p in parts
        ]
    if topic.being_reassigned:
        fields["replicasChange"] = {
            "partitionsMoving": list(topic.being_reassigned),
            "targets": {
                str(p): list(topic.partitions[p].assignment.target_replicas)
                for p in topic.being_reassigned
            },
        }
    if topic.marked_for_deletion:
        fields["deletion"] = {"waitingOn": snapshot.deletion_blockers(topic.name)}
    if stuck := stuck_for(topic.name, stuck_requests(snapshot)):
        fields["stuckAdminRequests"] = [s.to_json() for s in stuck]
    return fields


def _replica_state(alive: bool, deleting: bool) -> str:
    if deleting:
        return "ReplicaDeletionStarted" if alive else "ReplicaDeletionIneligible"
    return "OnlineReplica" if alive else "OfflineReplica"
