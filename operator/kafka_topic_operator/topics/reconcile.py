"""Reconcile steps for topics, apart from Kubernetes: parse the specs, read the cluster, plan,
write (through a `TopicBackend`: ZooKeeper or Kafka's Admin API). The Kubernetes handlers call
this (through `topics.batcher`) and turn the results into status.

Many resources are reconciled together with one read of the cluster and pipelined writes: a
thousand resources applied at once must not cost a thousand reads of the broker list. Each
topic's plan is the one it would get alone, in the order given: a topic created earlier in the
batch counts as existing for the collision check of a later one."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_topic_operator.kafka.assignment import RandomSource
from kafka_topic_operator.kafka.errors import ReassignmentInProgressException
from kafka_topic_operator.kafka.names import has_collision_chars
from kafka_topic_operator.kafka.new_topic import NewTopic
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot, Expected
from kafka_topic_operator.topics.apply import apply_actions
from kafka_topic_operator.topics.backend import TopicBackend
from kafka_topic_operator.topics.inputs import actual_topic, cluster_for_planning
from kafka_topic_operator.topics.plan import (
    CreateTopic,
    Moves,
    Plan,
    Reason,
    Reassign,
    plan,
    unreadable_message,
)
from kafka_topic_operator.topics.spec import DesiredTopic, ParsedSpec, RejectedSpec, parse_spec


@dataclass(frozen=True, slots=True)
class Request:
    resource_name: str
    desired: ParsedSpec  # parsed where the resource entered (`spec.parse_spec`)
    # The topic this resource already manages (from its status); any other existing topic is
    # adopted only if it matches the spec.
    managed_topic: str | None = None

    @property
    def topic(self) -> str:
        return self.desired.name


@dataclass(frozen=True, slots=True)
class Step:
    desired: DesiredTopic | None  # None when the spec is invalid
    plan: Plan
    snapshot: ClusterSnapshot | None = None  # what was read to plan; current if nothing written


def reconcile_topic(
    backend: TopicBackend,
    resource_name: str,
    spec: Mapping[str, Any],
    rng: RandomSource | None = None,
    managed_topic: str | None = None,
    brokers: Collection[int] = (),
) -> Step:
    """One resource's step. Raises what the backend raises when a write fails (the topic
    created by someone else meanwhile, a znode changed since it was read)."""
    request = Request(resource_name, parse_spec(resource_name, spec), managed_topic)
    outcome = reconcile_topics(backend, [request], rng, brokers)[0]
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def reconcile_topics(
    backend: TopicBackend,
    requests: Sequence[Request],
    rng: RandomSource | None = None,
    brokers: Collection[int] = (),
) -> list[Step | Exception]:
    """Each request's step, or the exception its writes raised (the reconciler then reads
    again and plans anew). The requests name distinct topics. `brokers`: the live brokers last
    seen, read with the rest in one round if they still are. The cluster out of reach raises
    ClusterUnavailableError."""
    outcomes: list[Step | Exception | None] = [None] * len(requests)
    valid: list[tuple[int, DesiredTopic]] = []
    for i, request in enumerate(requests):
        if isinstance(request.desired, RejectedSpec):
            blocked = (Reason.INVALID_SPEC, request.desired.message)
            outcomes[i] = Step(None, Plan(blocked=blocked))
        else:
            valid.append((i, request.desired))
    if len({d.name for _, d in valid}) != len(valid):
        raise ValueError("requests reconciled together must name distinct topics")
    if valid:
        snapshot = backend.read(
            [d.name for _, d in valid],
            list_topics=any(_needs_listing(requests[i], d) for i, d in valid),
            expected=Expected(brokers=brokers),
        )
        names = set(snapshot.topic_names)
        if any(
            requests[i].managed_topic == d.name
            and d.name not in snapshot.topics
            and has_collision_chars(d.name)
            for i, d in valid
        ):  # a managed topic is gone and may be created again: every name matters
            names.update(backend.topic_names())
        _plan_and_apply(backend, requests, valid, snapshot, names, rng, outcomes)
    return [o for o in outcomes if o is not None]


def _needs_listing(request: Request, desired: DesiredTopic) -> bool:
    """Every topic's name matters only to create a topic whose name could collide with another
    (AdminZkClient lists them only then): a topic this resource has not created yet, named
    with `.` or `_`. Whether the topic itself exists is read anyway."""
    return request.managed_topic != desired.name and has_collision_chars(desired.name)


def _plan_and_apply(
    backend: TopicBackend,
    requests: Sequence[Request],
    valid: Sequence[tuple[int, DesiredTopic]],
    snapshot: ClusterSnapshot,
    names: set[str],
    rng: RandomSource | None,
    outcomes: list[Step | Exception | None],
) -> None:
    cluster = cluster_for_planning(snapshot, ())
    creations: list[NewTopic] = []
    steps: list[tuple[int, str, Step]] = []
    for i, desired in valid:
        if problems := snapshot.unreadable.get(desired.name):
            blocked = Plan(
                blocked=(Reason.UNREADABLE_ZNODE, unreadable_message(desired.name, problems))
            )
            steps.append((i, desired.name, Step(desired, blocked, snapshot)))
            continue
        planned = plan(
            desired,
            actual_topic(snapshot, desired.name),
            dataclasses.replace(cluster, topics=names),
            rng,
            adopting=requests[i].managed_topic != desired.name,
        )
        steps.append((i, desired.name, Step(desired, planned, snapshot)))
        first = planned.actions[0] if planned.blocked is None and planned.actions else None
        if isinstance(first, CreateTopic):
            names.add(desired.name)
            creations.append(NewTopic(desired.name, first.assignment, first.config))
    # Creations go together (on ZooKeeper pipelined transactions, each topic's config and topic
    # znodes in one; on Kafka one CreateTopics request); every other change topic by topic, as
    # AdminZkClient makes it, except reassignments.
    created = backend.create_topics(creations)
    reassigning: dict[int, tuple[str, Moves, Moves]] = {}
    for i, name, step in steps:
        outcomes[i] = step
        if step.plan.blocked is not None or not step.plan.actions:
            continue
        error = created.get(name)
        rest = step.plan.actions[1:] if name in created else step.plan.actions
        try:
            if error is not None:
                raise error
            apply_actions(backend, name, [a for a in rest if not isinstance(a, Reassign)])
        except Exception as e:  # this topic's write failed: the others stand
            outcomes[i] = e
            continue
        for action in rest:
            if isinstance(action, Reassign):
                reassigning[i] = (name, *action.of_topic(name))
    if reassigning:
        _reassign_together(backend, reassigning, outcomes)


def _reassign_together(
    backend: TopicBackend,
    reassigning: Mapping[int, tuple[str, Moves, Moves]],
    outcomes: list[Step | Exception | None],
) -> None:
    """Every topic's reassignment in one /admin/reassign_partitions, as one run of
    kafka-reassign-partitions writes many: the znode holds one reassignment at a time, so topic
    by topic, all but the first would wait for it to finish."""
    try:
        backend.reassign(
            {tp: r for _, targets, _ in reassigning.values() for tp, r in targets.items()},
            expected={tp: r for _, _, before in reassigning.values() for tp, r in before.items()},
        )
    except ReassignmentInProgressException:
        for i, (name, _, _) in reassigning.items():
            outcomes[i] = ReassignmentInProgressException(
                f"A partition reassignment is in progress for the topic '{name}'."
            )
    except Exception as e:
        for i in reassigning:
            outcomes[i] = e
