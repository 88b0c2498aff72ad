"""TopicDeletionManager's rules as pure functions over a small immutable state.

Each public function mirrors one of the manager's methods and returns the new state plus the
actions the controller must carry out, in order. Kafka's manager drives the replica and partition
state machines synchronously and then reads their states back, so the valid part of every
transition it requests is applied to the returned state here too (invalid parts are reported by
`states.plan_*` and left unchanged, as the real state machines do).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from kafka_topic_operator.kafka.states import (
    PartitionAndReplica,
    PartitionState,
    ReplicaState,
    plan_partition_transitions,
    plan_replica_transitions,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition

# ---- actions --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplicaTransition:
    """Drive these replicas to `target` (Kafka makes this call even with an empty list)."""

    replicas: tuple[PartitionAndReplica, ...]
    target: ReplicaState


@dataclass(frozen=True, slots=True)
class PartitionTransition:
    partitions: tuple[TopicPartition, ...]
    target: PartitionState


@dataclass(frozen=True, slots=True)
class SendMetadataUpdate:
    """UpdateMetadata to all live brokers; queued topics carry leader -2 (LeaderDuringDelete)."""

    partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True, slots=True)
class MutePartitionModifications:
    topic: str


@dataclass(frozen=True, slots=True)
class DeleteTopicZNodes:
    """`/brokers/topics/<t>` (recursive), `/config/topics/<t>`, `/admin/delete_topics/<t>`."""

    topic: str


@dataclass(frozen=True, slots=True)
class DeleteDeletionMarkers:
    topics: tuple[str, ...]
    reason: str


@dataclass(frozen=True, slots=True)
class LogHalted:
    topics: tuple[str, ...]
    reason: str

    @property
    def message(self) -> str:
        return f"Halted deletion of topics {','.join(self.topics)} due to {self.reason}"


Action = (
    ReplicaTransition
    | PartitionTransition
    | SendMetadataUpdate
    | MutePartitionModifications
    | DeleteTopicZNodes
    | DeleteDeletionMarkers
    | LogHalted
)


# ---- state ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeletionContext:
    """The slice of ControllerContext the deletion manager reads and writes."""

    assignments: Mapping[TopicPartition, tuple[int, ...]]
    replica_states: Mapping[PartitionAndReplica, ReplicaState] = field(default_factory=dict)
    partition_states: Mapping[TopicPartition, PartitionState] = field(default_factory=dict)
    live_brokers: frozenset[int] = frozenset()
    # Replicas in a failed log directory of a live broker: offline too (isReplicaOnline).
    offline_replicas: frozenset[PartitionAndReplica] = frozenset()
    queued: frozenset[str] = frozenset()
    started: frozenset[str] = frozenset()
    ineligible: frozenset[str] = frozenset()
    delete_topic_enable: bool = True

    def partitions_for_topic(self, topic: str) -> tuple[TopicPartition, ...]:
        return tuple(sorted(tp for tp in self.assignments if tp.topic == topic))

    def replicas_for_topic(self, topic: str) -> tuple[PartitionAndReplica, ...]:
        return tuple(
            PartitionAndReplica(tp, r)
            for tp in self.partitions_for_topic(topic)
            for r in self.assignments[tp]
        )

    def replicas_in_state(self, topic: str, state: ReplicaState) -> tuple[PartitionAndReplica, ...]:
        return tuple(
            r
            for r in self.replicas_for_topic(topic)
            if self.replica_states.get(r, ReplicaState.NON_EXISTENT_REPLICA) is state
        )


def is_topic_queued_up_for_deletion(ctx: DeletionContext, topic: str) -> bool:
    return ctx.delete_topic_enable and topic in ctx.queued


def is_topic_ineligible_for_deletion(ctx: DeletionContext, topic: str) -> bool:
    return not ctx.delete_topic_enable or topic in ctx.ineligible


def is_topic_eligible_for_deletion(ctx: DeletionContext, topic: str) -> bool:
    return (
        topic in ctx.queued
        and not ctx.replicas_in_state(topic, ReplicaState.REPLICA_DELETION_STARTED)
        and topic not in ctx.ineligible
    )


def is_topic_deletion_in_progress(ctx: DeletionContext, topic: str) -> bool:
    return bool(ctx.replicas_in_state(topic, ReplicaState.REPLICA_DELETION_STARTED))


Result = tuple[DeletionContext, tuple[Action, ...]]


class _Run:
    """One call's working copy: Kafka's imperative logic, run against private copies."""

    def __init__(self, ctx: DeletionContext) -> None:
        self.ctx = ctx
        self.actions: list[Action] = []

    def result(self) -> Result:
        return self.ctx, tuple(self.actions)

    # -- the state machines, as far as deletion observes them ----------------------------------

    def replicas(self, replicas: Iterable[PartitionAndReplica], target: ReplicaState) -> None:
        replicas = tuple(replicas)
        self.actions.append(ReplicaTransition(replicas, target))
        plan = plan_replica_transitions(self.ctx.replica_states, replicas, target)
        states = dict(self.ctx.replica_states)
        assignments = dict(self.ctx.assignments)
        for replica in plan.valid:
            if target is ReplicaState.NON_EXISTENT_REPLICA:
                # The state entry goes and the replica leaves the cached assignment.
                states.pop(replica, None)
                tp = replica.topic_partition
                assignments[tp] = tuple(r for r in assignments[tp] if r != replica.replica)
            else:
                states[replica] = target
        self.ctx = replace(self.ctx, replica_states=states, assignments=assignments)

    def partitions(self, partitions: Iterable[TopicPartition], target: PartitionState) -> None:
        partitions = tuple(partitions)
        self.actions.append(PartitionTransition(partitions, target))
        plan = plan_partition_transitions(self.ctx.partition_states, partitions, target)
        states = dict(self.ctx.partition_states)
        states.update(dict.fromkeys(plan.valid, target))
        self.ctx = replace(self.ctx, partition_states=states)

    # -- TopicDeletionManager ------------------------------------------------------------------

    def mark_ineligible(self, topics: Iterable[str], reason: str) -> None:
        if not self.ctx.delete_topic_enable:
            return
        halted = self.ctx.queued & frozenset(topics)
        self.ctx = replace(self.ctx, ineligible=self.ctx.ineligible | halted)
        if halted:
            self.actions.append(LogHalted(tuple(sorted(halted)), reason))

    def resume_deletions(self) -> None:
        retry: list[str] = []
        eligible: list[str] = []
        for topic in sorted(self.ctx.queued):
            replicas = self.ctx.replicas_for_topic(topic)
            states = [self.ctx.replica_states.get(r) for r in replicas]
            if all(s is ReplicaState.REPLICA_DELETION_SUCCESSFUL for s in states):
                self.complete_delete_topic(topic)
            elif (
                ReplicaState.REPLICA_DELETION_STARTED not in states
                and ReplicaState.REPLICA_DELETION_INELIGIBLE in states
            ):
                # Nothing in flight and something failed: retry the failed replicas.
                retry.append(topic)
            if is_topic_eligible_for_deletion(self.ctx, topic):
                eligible.append(topic)
        if retry:
            self.replicas(
                (
                    r
                    for t in retry
                    for r in self.ctx.replicas_in_state(t, ReplicaState.REPLICA_DELETION_INELIGIBLE)
                ),
                ReplicaState.OFFLINE_REPLICA,
            )
        if eligible:
            self.on_topic_deletion(eligible)

    def complete_delete_topic(self, topic: str) -> None:
        self.actions.append(MutePartitionModifications(topic))
        self.replicas(
            self.ctx.replicas_in_state(topic, ReplicaState.REPLICA_DELETION_SUCCESSFUL),
            ReplicaState.NON_EXISTENT_REPLICA,
        )
        self.actions.append(DeleteTopicZNodes(topic))
        # controllerContext.removeTopic: every trace of the topic leaves the context.
        partitions = set(self.ctx.partitions_for_topic(topic))
        self.ctx = replace(
            self.ctx,
            queued=self.ctx.queued - {topic},
            started=self.ctx.started - {topic},
            ineligible=self.ctx.ineligible - {topic},
            assignments={tp: r for tp, r in self.ctx.assignments.items() if tp not in partitions},
            partition_states={
                tp: s for tp, s in self.ctx.partition_states.items() if tp not in partitions
            },
            replica_states={
                r: s
                for r, s in self.ctx.replica_states.items()
                if r.topic_partition not in partitions
            },
        )

    def on_topic_deletion(self, topics: list[str]) -> None:
        unseen = [t for t in topics if t not in self.ctx.started]
        if unseen:
            partitions = [tp for t in unseen for tp in self.ctx.partitions_for_topic(t)]
            self.partitions(partitions, PartitionState.OFFLINE_PARTITION)
            self.partitions(partitions, PartitionState.NON_EXISTENT_PARTITION)
            # Only now, so the offline-partition metric counted them on the way out.
            self.ctx = replace(self.ctx, started=self.ctx.started | frozenset(unseen))
        self.actions.append(
            SendMetadataUpdate(tuple(tp for t in topics for tp in self.ctx.partitions_for_topic(t)))
        )
        self.on_partition_deletion(topics)

    def _online(self, replica: PartitionAndReplica) -> bool:
        return replica.replica in self.ctx.live_brokers and replica not in self.ctx.offline_replicas

    def on_partition_deletion(self, topics: list[str]) -> None:
        dead: list[PartitionAndReplica] = []
        retry: list[PartitionAndReplica] = []
        halted: list[str] = []
        for topic in topics:
            replicas = self.ctx.replicas_for_topic(topic)
            # TopicDeletionManager.onPartitionDeletion splits by controllerContext.isReplicaOnline.
            alive = [r for r in replicas if self._online(r)]
            topic_dead = [r for r in replicas if not self._online(r)]
            done = set(self.ctx.replicas_in_state(topic, ReplicaState.REPLICA_DELETION_SUCCESSFUL))
            dead += topic_dead
            retry += [r for r in alive if r not in done]
            if topic_dead:
                halted.append(topic)
        self.replicas(dead, ReplicaState.REPLICA_DELETION_INELIGIBLE)
        self.replicas(retry, ReplicaState.OFFLINE_REPLICA)
        self.replicas(retry, ReplicaState.REPLICA_DELETION_STARTED)
        if halted:
            self.mark_ineligible(halted, "offline replicas")


# ---- the public methods ---------------------------------------------------------------------


def init(ctx: DeletionContext, to_be_deleted: Iterable[str], ineligible: Iterable[str]) -> Result:
    run = _Run(ctx)
    topics = frozenset(to_be_deleted)
    if ctx.delete_topic_enable:
        queued = ctx.queued | topics
        run.ctx = replace(
            ctx, queued=queued, ineligible=ctx.ineligible | (frozenset(ineligible) & queued)
        )
    elif topics:
        run.actions.append(DeleteDeletionMarkers(tuple(sorted(topics)), "delete topic is disabled"))
    return run.result()


def enqueue_topics_for_deletion(ctx: DeletionContext, topics: Iterable[str]) -> Result:
    run = _Run(ctx)
    if ctx.delete_topic_enable:
        run.ctx = replace(ctx, queued=ctx.queued | frozenset(topics))
        run.resume_deletions()
    return run.result()


def resume_deletion_for_topics(ctx: DeletionContext, topics: Iterable[str]) -> Result:
    run = _Run(ctx)
    if ctx.delete_topic_enable:
        resumed = frozenset(topics) & ctx.queued
        if resumed:
            run.ctx = replace(ctx, ineligible=ctx.ineligible - resumed)
            run.resume_deletions()
    return run.result()


def fail_replica_deletion(ctx: DeletionContext, replicas: Iterable[PartitionAndReplica]) -> Result:
    run = _Run(ctx)
    if ctx.delete_topic_enable:
        failed = [r for r in replicas if r.topic_partition.topic in ctx.queued]
        if failed:
            run.replicas(failed, ReplicaState.REPLICA_DELETION_INELIGIBLE)
            run.mark_ineligible(
                {r.topic_partition.topic for r in failed}, "replica deletion failure"
            )
            run.resume_deletions()
    return run.result()


def complete_replica_deletion(
    ctx: DeletionContext, replicas: Iterable[PartitionAndReplica]
) -> Result:
    run = _Run(ctx)
    if ctx.delete_topic_enable:
        done = [r for r in replicas if r.topic_partition.topic in ctx.queued]
        run.replicas(done, ReplicaState.REPLICA_DELETION_SUCCESSFUL)
        run.resume_deletions()
    return run.result()


def mark_topic_ineligible_for_deletion(
    ctx: DeletionContext, topics: Iterable[str], reason: str
) -> Result:
    run = _Run(ctx)
    run.mark_ineligible(topics, reason)
    return run.result()


def with_live_brokers(ctx: DeletionContext, live_brokers: Iterable[int]) -> DeletionContext:
    return replace(ctx, live_brokers=frozenset(live_brokers))


def process_topic_deletion(
    ctx: DeletionContext,
    marked: Iterable[str],
    all_topics: Iterable[str],
    topics_being_reassigned: Iterable[str],
) -> Result:
    """KafkaController.processTopicDeletion, run when `/admin/delete_topics` changes.

    As in Kafka, the reassignment check runs before the topics are queued, so it only halts
    topics that were already queued; a reassignment that starts later marks them itself."""
    run = _Run(ctx)
    requested = frozenset(marked)
    missing = requested - frozenset(all_topics)
    if missing:
        run.actions.append(
            DeleteDeletionMarkers(
                tuple(sorted(missing)), "Ignoring request to delete non-existing topics"
            )
        )
    requested -= missing
    if not ctx.delete_topic_enable:
        if requested:
            run.actions.append(
                DeleteDeletionMarkers(tuple(sorted(requested)), "delete topic is disabled")
            )
        return run.result()
    if requested:
        reassigning = frozenset(topics_being_reassigned)
        for topic in sorted(requested & reassigning):
            run.mark_ineligible({topic}, "topic reassignment in progress")
        run.ctx = replace(run.ctx, queued=run.ctx.queued | requested)
        run.resume_deletions()
    return run.result()
