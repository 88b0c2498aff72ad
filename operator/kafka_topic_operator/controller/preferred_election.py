"""Preferred replica leader election (KafkaController.onReplicaElection with PREFERRED): asked for
in `/admin/preferred_replica_election` (kafka-preferred-replica-election, kafka-leader-election),
and automatic, when a broker leads too few of the partitions it is the preferred leader of
(checkAndTriggerAutoLeaderRebalance, every `leader.imbalance.check.interval.seconds`).
"""

from __future__ import annotations

import contextlib
import logging
import time

from kafka_topic_operator.controller import events as ev
from kafka_topic_operator.controller.parts import ControllerManager
from kafka_topic_operator.kafka import election
from kafka_topic_operator.kafka.states import PartitionState
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import Delete, TransactionFailed

log = logging.getLogger(__name__)

_P = PartitionState


class PreferredElection(ControllerManager):
    def process_zk_preferred_election(self) -> None:
        path = znodes.PREFERRED_REPLICA_ELECTION_PATH
        if not self.zk.exists(path, watch=self.watches.on_preferred_election):
            return
        node = self.zk.get(path)
        if node is None:
            return
        try:
            partitions = znodes.decode_preferred_replica_election(node.path, node.data)
        except znodes.ZNodeDataError as e:
            log.error("Ignoring an unreadable preferred replica election request: %s", e)
            partitions = frozenset()
        known = [tp for tp in sorted(partitions) if self.ctx.assignment(tp) is not None]
        for tp in sorted(set(partitions) - set(known)):
            log.info(
                "Skipping replica leader election (PREFERRED) for partition %s by ZkTriggered "
                "since it doesn't exist.",
                tp,
            )
        deleting = [tp for tp in known if self.deletion.is_queued(tp.topic)]
        if deleting:
            log.warning(
                "Skipping replica leader election (PREFERRED) for partitions %s by ZkTriggered "
                "since the respective topics are being deleted",
                ",".join(map(str, deleting)),
            )
        electable = [
            tp
            for tp in known
            if tp not in deleting
            and (leadership := self.ctx.leadership.get(tp)) is not None
            and leadership.leader_and_isr.leader != self.ctx.replicas(tp)[0]
        ]
        try:
            self.on_replica_election(electable, "ZkTriggered")
        finally:
            # removePartitionsFromPreferredReplicaElection: the delete's outcome is not looked
            # at (a znode someone else removed is fine), and an event looks again, so a request
            # written right after the delete is not missed.
            with contextlib.suppress(TransactionFailed):
                self.writer.apply([Delete(path)])
            self.put(ev.ReplicaLeaderElection())

    def on_replica_election(self, partitions: list[TopicPartition], trigger: str) -> None:
        if not partitions:
            return
        log.info(
            "Starting replica leader election (PREFERRED) for partitions %s triggered by %s",
            ",".join(map(str, partitions)),
            trigger,
        )
        results = self.partition_sm.handle_state_changes(
            partitions, _P.ONLINE_PARTITION, election.PreferredReplicaElection()
        )
        for tp, outcome in sorted(results.items()):
            if isinstance(outcome, Exception):
                log.error(
                    "Error completing replica leader election (PREFERRED) for partition %s: %s",
                    tp,
                    outcome,
                )

    def process_auto_preferred_election(self) -> None:
        try:
            self._check_and_trigger_auto_leader_rebalance()
        finally:
            if self.is_active() and self.config.auto_leader_rebalance_enable:
                self.events.next_auto_rebalance = (
                    time.monotonic() + self.config.leader_imbalance_check_interval
                )

    def _check_and_trigger_auto_leader_rebalance(self) -> None:
        ctx = self.ctx
        by_preferred: dict[int, list[TopicPartition]] = {}
        for tp in ctx.all_partitions():
            replicas = ctx.replicas(tp)
            if replicas and not self.deletion.is_queued(tp.topic):
                by_preferred.setdefault(replicas[0], []).append(tp)
        threshold = self.config.leader_imbalance_per_broker_percentage / 100
        for broker, partitions in sorted(by_preferred.items()):
            not_preferred = [
                tp
                for tp in partitions
                if (lead := ctx.leadership.get(tp)) is not None
                and lead.leader_and_isr.leader != broker
            ]
            ratio = len(not_preferred) / len(partitions)
            if ratio <= threshold:
                continue
            candidates = [
                tp
                for tp in not_preferred
                # Partitions being reassigned are candidates too (KAFKA-10149, Kafka 3.4).
                if not self.deletion.is_queued(tp.topic)
                and self._can_preferred_replica_be_leader(tp)
            ]
            self.on_replica_election(candidates, "AutoTriggered")

    def _can_preferred_replica_be_leader(self, tp: TopicPartition) -> bool:
        replicas = self.ctx.replicas(tp)
        leadership = self.ctx.leadership.get(tp)
        if leadership is None:
            return False
        live = [r for r in replicas if self.ctx.is_replica_online(r, tp)]
        return (
            election.preferred_replica_partition_leader_election(
                replicas, leadership.leader_and_isr.isr, live
            )
            is not None
        )
