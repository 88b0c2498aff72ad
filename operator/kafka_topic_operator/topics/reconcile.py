"""One reconcile step for one topic, apart from Kubernetes: parse the spec, read ZooKeeper, plan,
write. The Kubernetes handlers call this and turn its result into status."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from kafka_topic_operator.kafka.assignment import RandomSource
from kafka_topic_operator.snapshot import ClusterSnapshot
from kafka_topic_operator.topics.apply import apply_actions
from kafka_topic_operator.topics.inputs import actual_topic, cluster_for_planning
from kafka_topic_operator.topics.plan import Plan, Reason, plan
from kafka_topic_operator.topics.spec import DesiredTopic, InvalidSpec, desired_topic
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import ZkClient
from kafka_topic_operator.zk.snapshot_reader import Expected, read_cluster


@dataclass(frozen=True, slots=True)
class Step:
    desired: DesiredTopic | None  # None when the spec is invalid
    plan: Plan
    snapshot: ClusterSnapshot | None = None  # what was read to plan; current if nothing written


def reconcile_topic(
    zk: ZkClient,
    resource_name: str,
    spec: Mapping[str, Any],
    rng: RandomSource | None = None,
    managed_topic: str | None = None,
    brokers: Collection[int] = (),
) -> Step:
    """`managed_topic`: the topic this resource already manages (from its status); any other
    existing topic is adopted only if it matches the spec. `brokers`: the live brokers last
    seen, read with the rest in one round if they still are."""
    try:
        desired = desired_topic(resource_name, spec)
    except InvalidSpec as e:
        return Step(None, Plan(blocked=(Reason.INVALID_SPEC, str(e))))
    # Every topic's name matters only to create one (collisions): list them with the first
    # read when this resource has no topic yet, and otherwise only if its topic is gone.
    listing = managed_topic != desired.name
    snapshot = read_cluster(
        zk, [desired.name], list_topics=listing, expected=Expected(brokers=brokers)
    )
    names = (
        snapshot.topic_names
        if listing or desired.name in snapshot.topics
        else frozenset(zk.children_many([znodes.TOPICS_PATH])[0] or [])
    )
    step = plan(
        desired,
        actual_topic(snapshot, desired.name),
        cluster_for_planning(snapshot, names),
        rng,
        adopting=managed_topic != desired.name,
    )
    if step.blocked is None:
        apply_actions(zk, desired.name, step.actions)
    return Step(desired, step, snapshot)
