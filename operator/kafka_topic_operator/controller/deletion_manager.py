"""TopicDeletionManager wired to the controller: the rules are `kafka.deletion`'s pure functions;
this module hands them the slice of the context they read and carries out the actions they
return, in order, through the real state machines and fenced ZooKeeper deletes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from kafka_topic_operator.controller.context import ControllerContext
from kafka_topic_operator.controller.partition_state_machine import PartitionStateMachine
from kafka_topic_operator.controller.replica_state_machine import ReplicaStateMachine
from kafka_topic_operator.controller.request_batch import RequestBatch
from kafka_topic_operator.controller.zk_writer import ControllerZkWriter
from kafka_topic_operator.kafka import deletion
from kafka_topic_operator.kafka.states import PartitionAndReplica
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import ZkClient

log = logging.getLogger(__name__)


class DeletionManager:
    def __init__(
        self,
        ctx: ControllerContext,
        zk: ZkClient,
        replicas: ReplicaStateMachine,
        partitions: PartitionStateMachine,
        batch: RequestBatch,
        delete_topic_enable: bool,
        mute: Callable[[str], None],
        deleted: Callable[[str], None] = lambda _topic: None,
    ) -> None:
        self.ctx = ctx
        self.zk = zk
        self.writer = ControllerZkWriter(zk, ctx)
        self.replicas = replicas
        self.partitions = partitions
        self.batch = batch
        self.enabled = delete_topic_enable
        self.mute = mute
        self.deleted = deleted

    # ---- queries ---------------------------------------------------------------------------------

    def is_queued(self, topic: str) -> bool:
        return self.enabled and topic in self.ctx.topics_to_be_deleted

    def is_ineligible(self, topic: str) -> bool:
        return not self.enabled or topic in self.ctx.topics_ineligible_for_deletion

    # ---- the manager's methods -------------------------------------------------------------------

    def init(self, to_be_deleted: Iterable[str], ineligible: Iterable[str]) -> None:
        self._run(lambda c: deletion.init(c, to_be_deleted, ineligible), to_be_deleted)

    def try_topic_deletion(self) -> None:
        self._run(lambda c: deletion.enqueue_topics_for_deletion(c, ()), ())

    def enqueue(self, topics: Iterable[str]) -> None:
        topics = list(topics)
        self._run(lambda c: deletion.enqueue_topics_for_deletion(c, topics), topics)

    def resume_for_topics(self, topics: Iterable[str]) -> None:
        topics = list(topics)
        self._run(lambda c: deletion.resume_deletion_for_topics(c, topics), topics)

    def fail_replica_deletion(self, replicas: Iterable[PartitionAndReplica]) -> None:
        replicas = list(replicas)
        self._run(
            lambda c: deletion.fail_replica_deletion(c, replicas),
            {r.topic_partition.topic for r in replicas},
        )

    def complete_replica_deletion(self, replicas: Iterable[PartitionAndReplica]) -> None:
        replicas = list(replicas)
        self._run(
            lambda c: deletion.complete_replica_deletion(c, replicas),
            {r.topic_partition.topic for r in replicas},
        )

    def mark_ineligible(self, topics: Iterable[str], reason: str) -> None:
        topics = list(topics)
        self._run(lambda c: deletion.mark_topic_ineligible_for_deletion(c, topics, reason), topics)

    def process_topic_deletion(self, marked: Iterable[str]) -> None:
        marked = list(marked)
        reassigning = {tp.topic for tp in self.ctx.partitions_being_reassigned}
        self._run(
            lambda c: deletion.process_topic_deletion(c, marked, self.ctx.all_topics, reassigning),
            [t for t in marked if t in self.ctx.assignments],
        )

    # ---- plumbing --------------------------------------------------------------------------------

    def _slice(self, topics: Iterable[str]) -> deletion.DeletionContext:
        """Only the queued topics and those named are ever looked at: copy just those."""
        ctx = self.ctx
        wanted = set(ctx.topics_to_be_deleted) | set(topics)
        assignments = {tp: ctx.replicas(tp) for t in wanted for tp in ctx.partitions_for_topic(t)}
        return deletion.DeletionContext(
            assignments=assignments,
            replica_states={
                PartitionAndReplica(tp, r): s
                for tp, replicas in assignments.items()
                for r in replicas
                if (s := ctx.replica_states.get(PartitionAndReplica(tp, r))) is not None
            },
            partition_states={
                tp: ps for tp in assignments if (ps := ctx.partition_states.get(tp)) is not None
            },
            live_brokers=frozenset(ctx.live_broker_ids),
            offline_replicas=frozenset(
                PartitionAndReplica(tp, broker)
                for broker, partitions in ctx.replicas_on_offline_dirs.items()
                for tp in partitions
                if tp in assignments
            ),
            queued=frozenset(ctx.topics_to_be_deleted),
            started=frozenset(ctx.topics_with_deletion_started),
            ineligible=frozenset(ctx.topics_ineligible_for_deletion),
            delete_topic_enable=self.enabled,
        )

    def _run(
        self,
        rule: Callable[[deletion.DeletionContext], deletion.Result],
        topics: Iterable[str],
    ) -> None:
        after, actions = rule(self._slice(topics))
        ctx = self.ctx
        # The sets first: UpdateMetadata and StopReplica read them while the actions run.
        completed = {a.topic for a in actions if isinstance(a, deletion.DeleteTopicZNodes)}
        ctx.topics_to_be_deleted = set(after.queued) | completed
        ctx.topics_with_deletion_started = set(after.started) | (
            completed & ctx.topics_with_deletion_started
        )
        ctx.topics_ineligible_for_deletion = set(after.ineligible)
        for action in actions:
            self._apply(action)

    def _apply(self, action: deletion.Action) -> None:
        match action:
            case deletion.ReplicaTransition(replicas=replicas, target=target):
                self.replicas.handle_state_changes(replicas, target)
            case deletion.PartitionTransition(partitions=partitions, target=target):
                self.partitions.handle_state_changes(partitions, target)
            case deletion.SendMetadataUpdate(partitions=partitions):
                self.batch.new_batch()
                self.batch.add_update_metadata(
                    self.ctx.live_or_shutting_down_broker_ids, partitions
                )
                self.batch.send()
            case deletion.MutePartitionModifications(topic=topic):
                self.mute(topic)
            case deletion.DeleteTopicZNodes(topic=topic):
                self._delete_topic_znodes(topic)
                log.info("Deletion of topic %s successfully completed", topic)
                self.ctx.remove_topic(topic)
                self.deleted(topic)
            case deletion.DeleteDeletionMarkers(topics=topics, reason=reason):
                log.info("Removing %s since %s", ",".join(topics), reason)
                self._delete(znodes.delete_topic_path(t) for t in topics)
            case deletion.LogHalted():
                log.info("%s", action.message)

    def _delete_topic_znodes(self, topic: str) -> None:
        """deleteTopic: the topic znode and everything under it (KafkaZkClient.deleteRecursive:
        whatever the tree holds), then its config, then its marker."""
        self._delete(self._tree(znodes.topic_path(topic)))
        self._delete([znodes.topic_config_path(topic), znodes.delete_topic_path(topic)])

    def _tree(self, root: str) -> list[str]:
        """`root` and every znode under it, each after its children (a level's children read
        in one pipeline)."""
        levels: list[list[str]] = []
        level = [root]
        while level:
            levels.append(level)
            level = [
                f"{parent}/{child}"
                for parent, children in zip(level, self.zk.children_many(level), strict=True)
                for child in children or []
            ]
        return [path for level in reversed(levels) for path in level]

    def _delete(self, paths: Iterable[str]) -> None:
        """Fenced deletes in pipelined batches; a znode already gone is fine."""
        self.writer.delete_tolerating_missing(list(paths))
