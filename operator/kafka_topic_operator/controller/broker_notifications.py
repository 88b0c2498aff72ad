"""What brokers tell the controller: ISR changes (`/isr_change_notification`), log directory
failures (`/log_dir_event_notification`) and the responses to its requests (KafkaController's
processIsrChangeNotification, processLogDirEventNotification and the response callbacks).
Each notification read is deleted.
"""

from __future__ import annotations

import logging
from typing import Any

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.controller.broker_lifecycle import BrokerLifecycle
from kafka_topic_operator.controller.parts import ControllerManager, ControllerParts
from kafka_topic_operator.controller.zk_reads import read_partition_states
from kafka_topic_operator.kafka.states import PartitionAndReplica, ReplicaState
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import Delete

log = logging.getLogger(__name__)

_R = ReplicaState


class BrokerNotifications(ControllerManager):
    def __init__(self, parts: ControllerParts, brokers: BrokerLifecycle) -> None:
        super().__init__(parts)
        self.brokers = brokers

    def process_isr_change_notification(self) -> None:
        names = (
            self.zk.children(znodes.ISR_CHANGE_NOTIFICATION_PATH, watch=self.watches.on_isr_changes)
            or []
        )
        if not names:
            return
        paths = [f"{znodes.ISR_CHANGE_NOTIFICATION_PATH}/{n}" for n in names]
        partitions: set[TopicPartition] = set()
        try:
            for node in self.zk.get_many(paths):
                if node is None:
                    continue
                try:
                    partitions |= znodes.decode_isr_change(node.path, node.data)
                except znodes.ZNodeDataError as e:
                    log.error("Skipping an unreadable ISR change notification: %s", e)
            known = [tp for tp in partitions if self.ctx.assignment(tp) is not None]
            if known:
                reads = read_partition_states(self.zk, known)
                self.ctx.leadership.update(reads.states)
                self.batch.new_batch()
                self.batch.add_update_metadata(self.ctx.live_or_shutting_down_broker_ids, known)
                self.batch.send()
        finally:
            self.delete_notifications(paths)

    def children(self, path: str, watch: Any) -> list[str]:
        """The paths of `path`'s children, its child watch set."""
        return [f"{path}/{n}" for n in self.zk.children(path, watch=watch) or []]

    def process_log_dir_event_notification(self) -> None:
        """processLogDirEventNotification: the brokers named are sent LeaderAndIsr for every
        replica they host (onBrokerLogDirFailure); their answers say which replicas are in a
        failed dir. The notifications read are deleted."""
        paths = self.children(
            znodes.LOG_DIR_EVENT_NOTIFICATION_PATH, self.watches.on_log_dir_events
        )
        if not paths:
            return
        try:
            brokers: list[int] = []
            for node in self.zk.get_many(paths):
                if node is None:
                    continue
                try:
                    brokers.append(znodes.decode_log_dir_event(node.path, node.data))
                except znodes.ZNodeDataError as e:
                    log.error("Skipping an unreadable log dir event notification: %s", e)
            log.info("Handling log directory failure for brokers %s", ",".join(map(str, brokers)))
            self.replica_sm.handle_state_changes(
                self.ctx.replicas_on_brokers(sorted(set(brokers))), _R.ONLINE_REPLICA
            )
        finally:
            self.delete_notifications(paths)

    def _on_leader_and_isr_response(self, broker: int, response: bc.LeaderAndIsrResponse) -> None:
        """processLeaderAndIsrResponseReceived: KAFKA_STORAGE_ERROR marks a replica as in a
        failed log dir, no error as not; replicas newly marked go offline."""
        if response.error != bc.Errors.NONE:
            log.error(
                "Received error %s in LeaderAndIsr response %d from broker %d",
                response.error,
                response.correlation_id,
                broker,
            )
            return
        errors = response.errors_by_partition()
        known = {tp: e for tp, e in errors.items() if tp.topic in self.ctx.assignments}
        failed = {tp for tp, e in known.items() if e == bc.Errors.KAFKA_STORAGE_ERROR}
        fine = {tp for tp, e in known.items() if e == bc.Errors.NONE}
        previous = self.ctx.replicas_on_offline_dirs.get(broker, set())
        current = (previous - fine) | failed
        self.ctx.replicas_on_offline_dirs[broker] = current
        new = sorted(current - previous)
        if new:
            log.info("Mark replicas %s on broker %d as offline", ",".join(map(str, new)), broker)
            self.brokers.on_replicas_become_offline([PartitionAndReplica(tp, broker) for tp in new])

    def delete_notifications(self, paths: list[str]) -> None:
        """Notifications read are deleted; one that cannot be (already gone) is left."""
        self.writer.apply_each([Delete(p) for p in paths])

    def process_responses(self, broker: int) -> None:
        path = bc.responses_path(broker)
        names = self.zk.children(path, watch=self.watches.on_responses) or []
        if not names:
            return
        paths = [f"{path}/{n}" for n in names]
        nodes = self.zk.get_many(paths)
        for node in nodes:
            if node is None:
                continue
            try:
                response = bc.decode_response(node.path, node.data)
            except znodes.ZNodeDataError as e:
                log.error("Skipping an unreadable broker response: %s", e)
                continue
            if isinstance(response, bc.StopReplicaResponse):
                self._on_stop_replica_response(broker, response)
            elif isinstance(response, bc.LeaderAndIsrResponse):
                self._on_leader_and_isr_response(broker, response)
        self.delete_notifications(paths)

    def _on_stop_replica_response(self, broker: int, response: bc.StopReplicaResponse) -> None:
        pending = self.batch.pending_stop_replica.pop(response.correlation_id, None)
        if pending is None or pending.broker_id != broker:
            return
        errors = response.errors_by_partition()
        deleting = [
            tp
            for tp in sorted(pending.deletes)
            if self.ctx.replica_states.get(PartitionAndReplica(tp, broker))
            is _R.REPLICA_DELETION_STARTED
        ]
        if not deleting:
            return
        if response.error != bc.Errors.NONE:
            failed = set(deleting)
        else:
            failed = {tp for tp in deleting if errors.get(tp, bc.Errors.NONE) != bc.Errors.NONE}
        if failed:
            log.warning(
                "Broker %d failed to delete %s: %s",
                broker,
                ",".join(map(str, sorted(failed))),
                response.error
                if response.error != bc.Errors.NONE
                else {str(tp): errors[tp] for tp in sorted(failed)},
            )
            self.deletion.fail_replica_deletion(
                PartitionAndReplica(tp, broker) for tp in sorted(failed)
            )
        done = [tp for tp in deleting if tp not in failed]
        if done:
            self.deletion.complete_replica_deletion(PartitionAndReplica(tp, broker) for tp in done)
