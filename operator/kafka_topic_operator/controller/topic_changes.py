"""Topics and partitions as the controller follows them (KafkaController's processTopicChange,
processPartitionModifications, onNewPartitionCreation and processTopicDeletion): topic znodes
read and watched, ids given to topics without one, new partitions brought online, deletions
handed to the DeletionManager.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

from kafka_topic_operator.controller import events as ev
from kafka_topic_operator.controller.parts import ControllerManager, ControllerParts
from kafka_topic_operator.kafka import election
from kafka_topic_operator.kafka.ids import new_topic_id
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.states import PartitionAndReplica, PartitionState, ReplicaState
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import Node, SetData

log = logging.getLogger(__name__)

_R = ReplicaState
_P = PartitionState


class TopicChanges(ControllerManager):
    def __init__(self, parts: ControllerParts) -> None:
        super().__init__(parts)
        # Topics whose znode could not be read: not new again at every topic change (Kafka
        # counts them among all topics before reading them), loaded once their znode is fixed.
        self.unreadable: set[str] = set()
        # Topics whose deletion began: their znode changes are not followed.
        self.muted: set[str] = set()

    def forget(self) -> None:
        """On resignation: what a later failover reads afresh."""
        self.unreadable.clear()
        self.muted.clear()

    def load_topics(self, topics: Iterable[str]) -> list[TopicPartition]:
        """Reads topic znodes (watching each), gives topics without an id one, and adds their
        partitions to the context. Returns the partitions added."""
        added: list[TopicPartition] = []
        id_writes: list[SetData] = []
        for topic, node, data in self._read_topics(topics, "Skipping a topic"):
            self.muted.discard(topic)
            self.ctx.add_topic(topic)
            topic_id = data.topic_id
            if topic_id is None:
                topic_id = new_topic_id()
                id_writes.append(_with_topic_id(node, data, topic_id))
            self.ctx.topic_ids[topic] = topic_id
            for partition, assignment in sorted(data.partitions.items()):
                tp = TopicPartition(topic, partition)
                self.ctx.set_assignment(tp, assignment)
                added.append(tp)
        self._write_topic_ids(id_writes)
        return added

    def _read_topics(
        self, topics: Iterable[str], skipping: str
    ) -> list[tuple[str, Node, znodes.TopicZNodeData]]:
        """Topic znodes read with their data watch set; gone ones left out, unreadable ones
        logged (`skipping` starts the message) and left out."""
        topics = list(topics)
        nodes = self.zk.get_many(
            (znodes.topic_path(t) for t in topics), watch=self.watches.on_topic_data
        )
        found = []
        for topic, node in zip(topics, nodes, strict=True):
            if node is None:
                continue
            try:
                found.append((topic, node, znodes.decode_topic(node.path, node.data)))
            except znodes.ZNodeDataError as e:
                if topic not in self.unreadable:  # a new topic's: said once, until it changes
                    log.error("%s whose znode cannot be read: %s", skipping, e)
                if topic not in self.ctx.all_topics:
                    self.unreadable.add(topic)
        return found

    def _write_topic_ids(self, writes: list[SetData]) -> None:
        """setTopicIds, but conditional on the version read: a topic znode changed meanwhile
        keeps its new content and is handled by its own modification event."""
        for write, failure in self.writer.apply_each(writes):
            log.warning("Topic id not written to %s: %s", write.path, failure)
            self.put(ev.PartitionModifications(write.path.rsplit("/", 1)[-1]))

    def process_topic_change(self) -> None:
        ctx = self.ctx
        topics = set(self.zk.children(znodes.TOPICS_PATH, watch=self.watches.on_topics) or [])
        self.unreadable &= topics
        new = sorted(topics - ctx.all_topics - self.unreadable)
        deleted = sorted(ctx.all_topics - topics)
        for topic in deleted:
            ctx.remove_topic(topic)
        added = self.load_topics(new)
        log.info(
            "New topics: [%s], deleted topics: [%s], %d new partitions",
            ",".join(new),
            ",".join(deleted),
            len(added),
        )
        if added:
            self.on_new_partition_creation(added)

    def on_new_partition_creation(self, partitions: list[TopicPartition]) -> None:
        log.info("New partition creation callback for %d partitions", len(partitions))
        replicas = [PartitionAndReplica(tp, r) for tp in partitions for r in self.ctx.replicas(tp)]
        self.partition_sm.handle_state_changes(partitions, _P.NEW_PARTITION)
        self.replica_sm.handle_state_changes(replicas, _R.NEW_REPLICA)
        self.partition_sm.handle_state_changes(
            partitions, _P.ONLINE_PARTITION, election.OfflineElection()
        )
        self.replica_sm.handle_state_changes(replicas, _R.ONLINE_REPLICA)

    def process_partition_modifications(self, topics: Sequence[str]) -> None:
        """PartitionModifications for each of `topics` (consecutive events coalesced, so a burst
        of topic znode changes costs one pipelined read)."""
        fixed = [t for t in dict.fromkeys(topics) if t in self.unreadable]
        if fixed:
            self.unreadable.difference_update(fixed)
            if added := self.load_topics(fixed):
                log.info("Topics readable again: [%s]", ",".join(fixed))
                self.on_new_partition_creation(added)
        topics = [
            t for t in dict.fromkeys(topics) if t not in self.muted and t in self.ctx.assignments
        ]
        created: list[TopicPartition] = []
        id_writes: list[SetData] = []
        for topic, node, data in self._read_topics(topics, "Ignoring a change of a topic"):
            if data.topic_id is None:
                id_writes.append(_with_topic_id(node, data, self.ctx.topic_ids.get(topic)))
            to_add = {
                TopicPartition(topic, p): a
                for p, a in data.partitions.items()
                if self.ctx.assignment(TopicPartition(topic, p)) is None
            }
            if self.deletion.is_queued(topic):
                if to_add:
                    log.warning(
                        "Skipping adding partitions %s for topic %s since it is currently being "
                        "deleted",
                        ",".join(str(tp.partition) for tp in sorted(to_add)),
                        topic,
                    )
                    self._restore_partition_assignment(topic, data.partitions)
                else:
                    log.info(
                        "Ignoring partition change during topic deletion as no new partitions "
                        "are added"
                    )
                continue
            if to_add:
                log.info(
                    "New partitions to be added %s",
                    {str(tp): list(a.replicas) for tp, a in sorted(to_add.items())},
                )
                for tp, assignment in to_add.items():
                    self.ctx.set_assignment(tp, assignment)
                created.extend(sorted(to_add))
        self._write_topic_ids(id_writes)
        if created:
            self.on_new_partition_creation(created)

    def _restore_partition_assignment(
        self, topic: str, assignment: Mapping[int, ReplicaAssignment]
    ) -> None:
        """restorePartitionReplicaAssignment: the partitions of the znode that have a
        partition znode, each with the assignment the controller knows, written whatever the
        znode's version."""
        log.info("Restoring the partition replica assignment for topic %s", topic)
        existing = set(self.zk.children(znodes.topic_partitions_path(topic)) or [])
        kept = {
            p: known
            for p in assignment
            if str(p) in existing
            and (known := self.ctx.assignment(TopicPartition(topic, p))) is not None
        }
        data = znodes.encode_topic(kept, self.ctx.topic_ids.get(topic))
        self.writer.apply([SetData(znodes.topic_path(topic), data)])

    def process_topic_deletion(self) -> None:
        marked = (
            self.zk.children(znodes.DELETE_TOPICS_PATH, watch=self.watches.on_delete_topics) or []
        )
        if marked:
            self.deletion.process_topic_deletion(marked)

    def mute(self, topic: str) -> None:
        self.muted.add(topic)


def _with_topic_id(node: Node, data: znodes.TopicZNodeData, topic_id: str | None) -> SetData:
    """The topic znode rewritten with its id, conditional on the version read."""
    return SetData(node.path, znodes.encode_topic(data.partitions, topic_id), node.version)
