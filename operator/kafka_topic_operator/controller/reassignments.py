"""Partition reassignment with KIP-455 semantics, driven by `/admin/reassign_partitions`
(KafkaController.onPartitionReassignment and its helpers, ZooKeeper-triggered).

While a partition moves, its topic znode records the union of origin and target replicas with
the adding and removing ones; new replicas are started; once every target replica is in the
ISR, the leader moves if it must, removed replicas are stopped and deleted, the topic znode is
rewritten with the target alone and the partition leaves the reassignment znode.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kafka_topic_operator.broker_channel import Errors
from kafka_topic_operator.controller.context import ControllerContext
from kafka_topic_operator.controller.deletion_manager import DeletionManager
from kafka_topic_operator.controller.partition_state_machine import PartitionStateMachine
from kafka_topic_operator.controller.replica_state_machine import ReplicaStateMachine
from kafka_topic_operator.controller.request_batch import RequestBatch
from kafka_topic_operator.controller.zk_reads import read_partition_states
from kafka_topic_operator.controller.zk_writer import ControllerZkWriter
from kafka_topic_operator.kafka import election
from kafka_topic_operator.kafka.errors import ControllerMovedException, IllegalStateException
from kafka_topic_operator.kafka.leader_and_isr import LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment, invalid_target
from kafka_topic_operator.kafka.states import PartitionAndReplica, PartitionState, ReplicaState
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import Delete, SetData, ZkClient

log = logging.getLogger(__name__)

_R = ReplicaState


class Reassignments:
    def __init__(
        self,
        ctx: ControllerContext,
        zk: ZkClient,
        replicas: ReplicaStateMachine,
        partitions: PartitionStateMachine,
        batch: RequestBatch,
        deletion: DeletionManager,
        watch_state: Callable[[TopicPartition], None],
        detect_next: Callable[[], None],
        watch_request: Callable[[Any], None],
    ) -> None:
        self.ctx = ctx
        self.zk = zk
        self.writer = ControllerZkWriter(zk, ctx)
        self.replicas = replicas
        self.partitions = partitions
        self.batch = batch
        self.deletion = deletion
        self.watch_state = watch_state
        self.detect_next = detect_next
        self.watch_request = watch_request

    # ---- triggers --------------------------------------------------------------------------------

    def process_zk_reassignment(self) -> set[TopicPartition]:
        """processZkPartitionReassignment: every partition named in the znode is started (or
        resumed towards its new target); the ones that cannot be leave the znode."""
        node = self.zk.get(znodes.REASSIGN_PARTITIONS_PATH)
        if node is None:
            return set()
        try:
            wanted = znodes.decode_reassignment(node.path, node.data)
        except znodes.ZNodeDataError as e:
            log.error("Ignoring the partition reassignment request: %s", e)
            return set()
        results: dict[TopicPartition, str] = {}
        to_reassign: dict[TopicPartition, ReplicaAssignment] = {}
        for tp, target in wanted.items():
            problem = invalid_target(target)
            current = self.ctx.assignment(tp)
            if problem is not None:
                log.warning("Rejecting the reassignment of %s to %s: %s", tp, target, problem)
                results[tp] = Errors.INVALID_REPLICA_ASSIGNMENT
            elif current is None:
                results[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
            else:
                to_reassign[tp] = current.reassign_to(target)
        results.update(self.maybe_trigger(to_reassign))
        failed = {tp for tp, error in results.items() if error != Errors.NONE}
        if failed:
            log.warning(
                "Failed reassignment through zk with the following errors: %s",
                {str(tp): results[tp] for tp in sorted(failed)},
            )
            self._remove_from_zk(lambda tp, _replicas: tp in failed)
        return {tp for tp, error in results.items() if error == Errors.NONE}

    def maybe_trigger(
        self, reassignments: Mapping[TopicPartition, ReplicaAssignment]
    ) -> dict[TopicPartition, str]:
        results: dict[TopicPartition, str] = {}
        for tp, reassignment in sorted(reassignments.items()):
            if self.deletion.is_queued(tp.topic):
                log.info(
                    "Skipping reassignment of %s since the topic is currently being deleted", tp
                )
                results[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
            elif not self.ctx.replicas(tp):
                results[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
            else:
                try:
                    self.on_partition_reassignment(tp, reassignment)
                    results[tp] = Errors.NONE
                except ControllerMovedException:
                    log.info(
                        "Failed completing reassignment of partition %s because controller has "
                        "moved to another broker",
                        tp,
                    )
                    raise
                except Exception:
                    # One partition's failure neither stops the others nor the event: it leaves
                    # the znode (KafkaController.maybeTriggerPartitionReassignment).
                    log.exception("Error completing reassignment of partition %s", tp)
                    results[tp] = Errors.UNKNOWN_SERVER_ERROR
        return results

    def maybe_resume(
        self, should_resume: Callable[[TopicPartition, ReplicaAssignment], bool]
    ) -> None:
        for tp in sorted(self.ctx.partitions_being_reassigned):
            assignment = self.ctx.assignment(tp)
            if assignment is not None and should_resume(tp, assignment):
                self.on_partition_reassignment(tp, assignment)

    def maybe_complete(self, tp: TopicPartition) -> None:
        """PartitionReassignmentIsrChange: the partition's state znode changed."""
        if tp not in self.ctx.partitions_being_reassigned:
            return
        assignment = self.ctx.assignment(tp)
        if assignment is None:
            return
        self.watch_state(tp)  # re-armed before the read, so no change slips between them
        if self._is_complete(tp, assignment):
            log.info(
                "Target replicas %s have all caught up with the leader for reassigning "
                "partition %s",
                list(assignment.target_replicas),
                tp,
            )
            self.on_partition_reassignment(tp, assignment)

    def forget_topic(self, topic: str) -> None:
        # Not Kafka's (it leaves a deleted topic's entries for the next failover to drop), so
        # it neither sets the watch nor writes when nothing is to go.
        self._remove_from_zk(lambda tp, _replicas: tp.topic == topic, as_kafka=False)

    # ---- onPartitionReassignment -----------------------------------------------------------------

    def on_partition_reassignment(
        self, tp: TopicPartition, reassignment: ReplicaAssignment
    ) -> None:
        # While a reassignment is in progress, deletion is not allowed.
        self.deletion.mark_ineligible([tp.topic], "topic reassignment in progress")
        self._update_current_reassignment(tp, reassignment)
        adding = reassignment.adding_replicas
        removing = reassignment.removing_replicas
        if not self._is_complete(tp, reassignment):
            # A1: LeaderAndIsr to origin and target with the new assignment; A2: start new ones.
            self._update_leader_epoch_and_send(tp, reassignment)
            for replica in adding:
                self.replicas.handle_state_changes(
                    [PartitionAndReplica(tp, replica)], _R.NEW_REPLICA
                )
            return
        # B1..B8
        self.replicas.handle_state_changes(
            [PartitionAndReplica(tp, r) for r in adding], _R.ONLINE_REPLICA
        )
        completed = ReplicaAssignment(reassignment.target_replicas)
        self.ctx.set_assignment(tp, completed)
        self._move_leader_if_required(tp, completed)
        self._stop_removed_replicas(tp, removing)
        self._write_topic_assignment(tp, completed)
        self._remove_from_zk(lambda p, replicas: p == tp and tuple(replicas) == completed.replicas)
        self.batch.new_batch()
        self.batch.add_update_metadata(self.ctx.live_or_shutting_down_broker_ids, [tp])
        self.batch.send()
        log.info("Reassignment of %s to %s completed", tp, list(completed.replicas))
        self.deletion.resume_for_topics([tp.topic])

    def _update_current_reassignment(
        self, tp: TopicPartition, reassignment: ReplicaAssignment
    ) -> None:
        current = self.ctx.assignment(tp) or ReplicaAssignment(())
        if current != reassignment:
            log.debug(
                "Updating assignment of partition %s from %s to %s", tp, current, reassignment
            )
            self._write_topic_assignment(tp, reassignment)
            self.ctx.set_assignment(tp, reassignment)
            unneeded = [r for r in current.replicas if r not in reassignment.replicas]
            if unneeded:
                self._stop_removed_replicas(tp, unneeded)
        # As Kafka registers its PartitionReassignmentIsrChangeHandler: before any request goes
        # out, so the ISR change a request causes is never missed (re-arming is idempotent).
        self.watch_state(tp)
        self.ctx.partitions_being_reassigned.add(tp)

    def _is_complete(self, tp: TopicPartition, assignment: ReplicaAssignment) -> bool:
        if not assignment.is_being_reassigned:
            return True
        state = read_partition_states(self.zk, [tp]).states.get(tp)
        return state is not None and set(assignment.target_replicas) <= set(
            state.leader_and_isr.isr
        )

    def _update_leader_epoch_and_send(
        self, tp: TopicPartition, assignment: ReplicaAssignment
    ) -> None:
        leadership = self._update_leader_epoch(tp)
        if leadership is None:
            log.error(
                "Failed to send LeaderAndIsr request with new replica assignment %s to leader for "
                "partition being reassigned %s",
                assignment,
                tp,
            )
            return
        self.batch.new_batch()
        self.batch.add_leader_and_isr(
            assignment.origin_replicas, tp, leadership, assignment, is_new=False
        )
        self.batch.add_leader_and_isr(
            assignment.adding_replicas, tp, leadership, assignment, is_new=True
        )
        self.batch.send()
        log.info(
            "Sent LeaderAndIsr request %s with new replica assignment %s to leader %d for "
            "partition being reassigned %s",
            leadership,
            assignment,
            leadership.leader_and_isr.leader,
            tp,
        )

    def _update_leader_epoch(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        """updateLeaderEpoch: the same leader and ISR with the leader epoch bumped."""
        while True:
            state = read_partition_states(self.zk, [tp]).states.get(tp)
            if state is None:
                return None
            if state.controller_epoch > self.ctx.epoch:
                log.error(
                    "Aborted leader epoch update for partition %s since the LeaderAndIsr path was "
                    "already written by another controller (epoch %d).",
                    tp,
                    state.controller_epoch,
                )
                return None
            lai = state.leader_and_isr
            # newEpoch keeps the leader recovery state
            bumped = lai._replace(leader_epoch=lai.leader_epoch + 1)
            outcome = self.writer.update_leader_and_isr({tp: bumped}, self.ctx.epoch)
            if tp in outcome.updated:
                leadership = LeaderIsrAndControllerEpoch(outcome.updated[tp], self.ctx.epoch)
                self.ctx.leadership[tp] = leadership
                return leadership
            if tp in outcome.failed:
                return None

    def _move_leader_if_required(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        leadership = self.ctx.leadership.get(tp)
        leader = leadership.leader_and_isr.leader if leadership else -1
        if leader not in assignment.replicas or not self.ctx.is_replica_online(leader, tp):
            log.info(
                "Leader %d for partition %s being reassigned is not in the new list of replicas "
                "%s or is not alive. Re-electing leader",
                leader,
                tp,
                list(assignment.replicas),
            )
            self.partitions.handle_state_changes(
                [tp], PartitionState.ONLINE_PARTITION, election.ReassignElection()
            )
        else:
            log.info(
                "Leader %d for partition %s being reassigned is already in the new list of "
                "replicas %s and is alive",
                leader,
                tp,
                list(assignment.replicas),
            )
            self._update_leader_epoch_and_send(tp, assignment)

    def _stop_removed_replicas(self, tp: TopicPartition, removed: Sequence[int]) -> None:
        replicas = [PartitionAndReplica(tp, r) for r in removed]
        for target in (
            _R.OFFLINE_REPLICA,
            _R.REPLICA_DELETION_STARTED,
            _R.REPLICA_DELETION_SUCCESSFUL,
            _R.NON_EXISTENT_REPLICA,
        ):
            self.replicas.handle_state_changes(replicas, target)

    def _write_topic_assignment(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        """updateReplicaAssignmentForPartition: the topic znode rewritten from the context."""
        partitions = dict(self.ctx.assignments.get(tp.topic, {}))
        partitions[tp.partition] = assignment
        path = znodes.topic_path(tp.topic)
        if self.zk.get(path) is None:
            raise IllegalStateException(
                f"Failed to update assignment for {tp} since the topic has no current assignment"
            )
        data = znodes.encode_topic(partitions, self.ctx.topic_ids.get(tp.topic))
        self.writer.apply([SetData(path, data)])
        log.info("Updated assignment of %s in ZooKeeper to %s", tp, assignment)

    def _remove_from_zk(
        self, should_remove: Callable[[TopicPartition, Sequence[int]], bool], as_kafka: bool = True
    ) -> None:
        """maybeRemoveFromZkReassignment: rewrite the znode without those partitions (even when
        that leaves it as it was), or delete it when none are left. Its read sets the znode's
        watch, as Kafka's client does on every read of a path it has a handler for."""
        watch = self.watch_request if as_kafka else None
        if as_kafka and not self.zk.exists(znodes.REASSIGN_PARTITIONS_PATH, watch=watch):
            return  # (reassignPartitionsInProgress) the watch is set for its creation
        node = self.zk.get(znodes.REASSIGN_PARTITIONS_PATH, watch=watch)
        if node is None:
            return
        try:
            current = znodes.decode_reassignment(node.path, node.data)
        except znodes.ZNodeDataError as e:
            log.error("Deleting an unreadable reassignment znode: %s", e)
            current = {}
        left = {tp: r for tp, r in current.items() if not should_remove(tp, r)}
        if left == current and current and not as_kafka:
            return
        if not left:
            log.info("No more partitions need to be reassigned. Deleting zk path %s",
                     znodes.REASSIGN_PARTITIONS_PATH)  # fmt: skip
            self.writer.apply([Delete(node.path, node.version)])
            # As Kafka: "ensure we detect future reassignments". The watch may have been spent
            # on this controller's own last rewrite, and a new request may be there already.
            self.detect_next()
        else:
            self.writer.apply([SetData(node.path, znodes.encode_reassignment(left), node.version)])
