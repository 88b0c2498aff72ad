"""ReplicaStateMachine (ReplicaStateMachine.scala) wired to ZooKeeper and the request batch.

Replicas are handled broker by broker, as Kafka groups them; all requests of one call go out in
one batch. → OfflineReplica shrinks ISRs with conditional writes, retried on version conflicts.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence

from kafka_topic_operator.controller.context import ControllerContext
from kafka_topic_operator.controller.request_batch import RequestBatch
from kafka_topic_operator.controller.zk_reads import known_or_read
from kafka_topic_operator.controller.zk_writer import ControllerZkWriter, Update
from kafka_topic_operator.kafka.errors import ControllerMovedException, StateChangeFailedException
from kafka_topic_operator.kafka.leader_and_isr import LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.states import (
    PartitionAndReplica,
    ReplicaState,
    plan_replica_transitions,
    remove_replica_from_isr,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk.client import ZkClient

log = logging.getLogger("kafka_topic_operator.state.change")

_R = ReplicaState


class ReplicaStateMachine:
    def __init__(
        self, ctx: ControllerContext, zk: ZkClient, batch: RequestBatch, controller_id: int
    ) -> None:
        self.ctx = ctx
        self.zk = zk
        self.writer = ControllerZkWriter(zk, ctx)
        self.batch = batch
        self.controller_id = controller_id

    @property
    def _prefix(self) -> str:
        return f"[Controller id={self.controller_id} epoch={self.ctx.epoch}] "

    def startup(self) -> None:
        """Every replica: Online if its broker is, else ReplicaDeletionIneligible; then both
        groups are driven to Online and Offline (so offline ones end OfflineReplica)."""
        online: list[PartitionAndReplica] = []
        offline: list[PartitionAndReplica] = []
        for tp in self.ctx.all_partitions():
            for replica in self.ctx.replicas(tp):
                par = PartitionAndReplica(tp, replica)
                if self.ctx.is_replica_online(replica, tp, include_shutting_down=True):
                    self.ctx.replica_states[par] = _R.ONLINE_REPLICA
                    online.append(par)
                else:
                    self.ctx.replica_states[par] = _R.REPLICA_DELETION_INELIGIBLE
                    offline.append(par)
        self.handle_state_changes(online, _R.ONLINE_REPLICA)
        self.handle_state_changes(offline, _R.OFFLINE_REPLICA)

    def handle_state_changes(
        self, replicas: Sequence[PartitionAndReplica], target: ReplicaState
    ) -> None:
        if not replicas:
            return
        self.batch.new_batch()
        by_broker: defaultdict[int, list[PartitionAndReplica]] = defaultdict(list)
        for replica in replicas:
            by_broker[replica.replica].append(replica)
        try:
            for broker, group in by_broker.items():
                self._do(broker, group, target)
        except ControllerMovedException:
            self.batch.clear()
            raise
        except Exception:
            log.exception("%sError while moving some replicas to %s state", self._prefix, target)
            self.batch.clear()
            return
        self.batch.send()

    def _do(
        self, broker: int, replicas: Sequence[PartitionAndReplica], target: ReplicaState
    ) -> None:
        ctx = self.ctx
        states = ctx.replica_states
        for replica in replicas:
            states.setdefault(replica, _R.NON_EXISTENT_REPLICA)
        plan = plan_replica_transitions(states, replicas, target)
        for invalid in plan.invalid:
            log.error("%s%s", self._prefix, invalid.message)
        valid = plan.valid
        match target:
            case _R.NEW_REPLICA:
                for replica in valid:
                    tp = replica.topic_partition
                    leadership = ctx.leadership.get(tp)
                    if leadership is not None:
                        if leadership.leader_and_isr.leader == broker:
                            self._failed(
                                replica,
                                target,
                                StateChangeFailedException(
                                    f"Replica {broker} for partition {tp} cannot be moved to "
                                    "NewReplica state as it is being requested to become leader"
                                ),
                            )
                            continue
                        self.batch.add_leader_and_isr(
                            [broker], tp, leadership, self._assignment(tp), is_new=True
                        )
                    states[replica] = target
            case _R.ONLINE_REPLICA:
                for replica in valid:
                    tp = replica.topic_partition
                    if states[replica] is _R.NEW_REPLICA:
                        assignment = self._assignment(tp)
                        if broker not in assignment.replicas:
                            log.error(
                                "%sAdding replica (%d) that is not part of the assignment %s",
                                self._prefix,
                                broker,
                                assignment,
                            )
                            ctx.set_assignment(
                                tp,
                                ReplicaAssignment(
                                    (*assignment.replicas, broker),
                                    assignment.adding_replicas,
                                    assignment.removing_replicas,
                                ),
                            )
                    elif (leadership := ctx.leadership.get(tp)) is not None:
                        self.batch.add_leader_and_isr(
                            [broker], tp, leadership, self._assignment(tp), is_new=False
                        )
                    states[replica] = target
            case _R.OFFLINE_REPLICA:
                self.batch.add_stop_replicas(
                    [broker], (r.topic_partition for r in valid), delete=False
                )
                with_leader = [
                    r.topic_partition for r in valid if r.topic_partition in ctx.leadership
                ]
                without_leader = [r for r in valid if r.topic_partition not in ctx.leadership]
                for tp, leadership in self._remove_replicas_from_isr(broker, with_leader).items():
                    if tp.topic not in ctx.topics_to_be_deleted:
                        recipients = [r for r in ctx.replicas(tp) if r != broker]
                        self.batch.add_leader_and_isr(
                            recipients, tp, leadership, self._assignment(tp), is_new=False
                        )
                    states[PartitionAndReplica(tp, broker)] = target
                for replica in without_leader:
                    self.batch.add_update_metadata(
                        ctx.live_or_shutting_down_broker_ids, [replica.topic_partition]
                    )
                    states[replica] = target
            case _R.REPLICA_DELETION_STARTED:
                for replica in valid:
                    states[replica] = target
                    self.batch.add_stop_replica([broker], replica.topic_partition, delete=True)
            case _R.REPLICA_DELETION_INELIGIBLE | _R.REPLICA_DELETION_SUCCESSFUL:
                for replica in valid:
                    states[replica] = target
            case _R.NON_EXISTENT_REPLICA:
                for replica in valid:
                    ctx.remove_replica(replica.topic_partition, broker)
                    states.pop(replica, None)

    def _assignment(self, tp: TopicPartition) -> ReplicaAssignment:
        return self.ctx.assignment(tp) or ReplicaAssignment(())

    def _failed(self, replica: PartitionAndReplica, target: ReplicaState, error: Exception) -> None:
        log.error(
            "%sController %d epoch %d initiated state change of replica %d for partition %s "
            "from %s to %s failed: %s",
            self._prefix,
            self.controller_id,
            self.ctx.epoch,
            replica.replica,
            replica.topic_partition,
            self.ctx.replica_states.get(replica),
            target,
            error,
        )

    def _remove_replicas_from_isr(
        self, broker: int, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        """removeReplicasFromIsr: the new leadership of every partition that succeeded (those
        whose ISR did not hold the replica succeed unchanged)."""
        done: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        # A leader just elected by this event has an ISR without the dead broker: Kafka reads
        # it again and finds nothing to do; what it would read is what was written.
        remaining = []
        for tp in partitions:
            written = self.ctx.leadership.get(tp) if tp in self.ctx.written_this_event else None
            if written is not None and broker not in written.leader_and_isr.isr:
                done[tp] = written
            else:
                remaining.append(tp)
        shrunk = 0
        # The first round writes from the states the context knows to hold the replica in
        # their ISR (the others are read: one Kafka would find holding it must not be skipped);
        # a round after a conflict reads them all, as Kafka's does.
        known_states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch] = self.ctx.leadership
        while remaining:
            reads, known = known_or_read(
                self.zk,
                known_states,
                remaining,
                lambda s: broker in s.leader_and_isr.isr and s.controller_epoch <= self.ctx.epoch,
            )
            known_states = {}
            for tp in [*reads.missing, *reads.malformed]:
                if tp.topic not in self.ctx.topics_to_be_deleted:
                    self._failed(
                        PartitionAndReplica(tp, broker),
                        _R.OFFLINE_REPLICA,
                        StateChangeFailedException(
                            f"Failed to change state of replica {broker} for partition {tp} "
                            "since the leader and isr path in zookeeper is empty"
                        ),
                    )
            outcome = self.writer.update_leader_and_isr(
                self._isr_removals(broker, reads.states, done), self.ctx.epoch
            )
            again = outcome.to_read_again(known)
            debug = log.isEnabledFor(logging.DEBUG)  # per partition: a failure touches 100,000
            for tp, lai in outcome.updated.items():
                leadership = LeaderIsrAndControllerEpoch(lai, self.ctx.epoch)
                self.ctx.leadership[tp] = leadership
                done[tp] = leadership
                if debug:
                    log.debug(
                        "%sPartition %s state changed to %s after removing replica %d from the "
                        "ISR as part of transition to OfflineReplica",
                        self._prefix,
                        tp,
                        leadership,
                        broker,
                    )
            shrunk += len(outcome.updated)
            for tp, error in outcome.failed.items():
                self._failed(PartitionAndReplica(tp, broker), _R.OFFLINE_REPLICA, error)
            remaining = again
        if shrunk:
            log.info(
                "%sRemoved replica %d from the ISR of %d partitions", self._prefix, broker, shrunk
            )
        return done

    def _isr_removals(
        self,
        broker: int,
        states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
        done: dict[TopicPartition, LeaderIsrAndControllerEpoch],
    ) -> Iterator[Update]:
        """The new states of the partitions whose ISR holds `broker`, as they are computed (the
        writer sends each multi-op of them while the next is computed); the others are `done`
        unchanged."""
        for tp, state in states.items():
            if state.controller_epoch > self.ctx.epoch:
                self._failed(
                    PartitionAndReplica(tp, broker),
                    _R.OFFLINE_REPLICA,
                    StateChangeFailedException(
                        "Leader and isr path written by another controller. This probably "
                        f"means the current controller with epoch {self.ctx.epoch} went "
                        "through a soft failure and another controller was elected with "
                        f"epoch {state.controller_epoch}. Aborting state change by this "
                        "controller"
                    ),
                )
                continue
            new = remove_replica_from_isr(state.leader_and_isr, broker)
            if new is None:
                done[tp] = state
                self.ctx.leadership[tp] = state
            else:
                yield tp, new
