"""PartitionStateMachine (PartitionStateMachine.scala) wired to ZooKeeper and the request batch.

Transitions are planned by `kafka.states`; invalid ones are logged with Kafka's message and leave
the state alone. New → Online creates the state znodes; Online/Offline → Online runs an election
and writes the result conditionally, re-reading and retrying partitions whose znode moved.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from kafka_topic_operator.controller.context import ControllerContext
from kafka_topic_operator.controller.request_batch import RequestBatch
from kafka_topic_operator.controller.zk_reads import known_or_read
from kafka_topic_operator.controller.zk_writer import ControllerZkWriter, Update
from kafka_topic_operator.kafka import election
from kafka_topic_operator.kafka.errors import (
    ControllerMovedException,
    IllegalArgumentException,
    StateChangeFailedException,
)
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.states import PartitionState, plan_partition_transitions
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk.client import ZkClient

log = logging.getLogger("kafka_topic_operator.state.change")

ElectionOutcome = dict[TopicPartition, LeaderAndIsr | Exception]
TopicConfigReader = Callable[[Iterable[str]], Mapping[str, Mapping[str, str]]]

_P = PartitionState


class PartitionStateMachine:
    def __init__(
        self,
        ctx: ControllerContext,
        zk: ZkClient,
        batch: RequestBatch,
        controller_id: int,
        topic_configs: TopicConfigReader,
        unclean_default: bool = False,
    ) -> None:
        self.ctx = ctx
        self.zk = zk
        self.writer = ControllerZkWriter(zk, ctx)
        self.batch = batch
        self.controller_id = controller_id
        self.topic_configs = topic_configs
        self.unclean_default = unclean_default

    @property
    def _prefix(self) -> str:
        return f"[Controller id={self.controller_id} epoch={self.ctx.epoch}] "

    # ---- lifecycle -------------------------------------------------------------------------------

    def startup(self) -> None:
        """initializePartitionState, then triggerOnlinePartitionStateChange."""
        for tp in self.ctx.all_partitions():
            leadership = self.ctx.leadership.get(tp)
            if leadership is None:
                self.ctx.partition_states[tp] = _P.NEW_PARTITION
            elif self.ctx.is_replica_online(leadership.leader_and_isr.leader, tp):
                self.ctx.partition_states[tp] = _P.ONLINE_PARTITION
            else:
                self.ctx.partition_states[tp] = _P.OFFLINE_PARTITION
        self.trigger_online_partition_state_change()

    def trigger_online_partition_state_change(
        self, partitions: Iterable[TopicPartition] | None = None
    ) -> ElectionOutcome:
        """New and Offline partitions, of topics not queued for deletion, → Online (offline
        election, no unclean unless the topic's config allows it)."""
        candidates = (
            self.ctx.partitions_in_states(_P.NEW_PARTITION, _P.OFFLINE_PARTITION)
            if partitions is None
            else [
                tp
                for tp in partitions
                if self.ctx.partition_states.get(tp) in (_P.NEW_PARTITION, _P.OFFLINE_PARTITION)
            ]
        )
        todo = [tp for tp in candidates if tp.topic not in self.ctx.topics_to_be_deleted]
        return self.handle_state_changes(todo, _P.ONLINE_PARTITION, election.OfflineElection())

    # ---- transitions -----------------------------------------------------------------------------

    def handle_state_changes(
        self,
        partitions: Sequence[TopicPartition],
        target: PartitionState,
        strategy: election.ElectionStrategy | None = None,
    ) -> ElectionOutcome:
        if not partitions:
            return {}
        self.batch.new_batch()
        try:
            result = self._do(partitions, target, strategy)
        except ControllerMovedException:
            self.batch.clear()
            raise
        except Exception as e:
            log.exception("%sError while moving some partitions to %s state", self._prefix, target)
            self.batch.clear()
            return dict.fromkeys(partitions, e)
        self.batch.send()
        return result

    def _do(
        self,
        partitions: Sequence[TopicPartition],
        target: PartitionState,
        strategy: election.ElectionStrategy | None,
    ) -> ElectionOutcome:
        states = self.ctx.partition_states
        for tp in partitions:
            states.setdefault(tp, _P.NON_EXISTENT_PARTITION)
        plan = plan_partition_transitions(states, partitions, target)
        for invalid in plan.invalid:
            log.error("%s%s", self._prefix, invalid.message)
        valid = list(plan.valid)
        if target is _P.ONLINE_PARTITION:
            new = [tp for tp in valid if states[tp] is _P.NEW_PARTITION]
            existing = [tp for tp in valid if states[tp] is not _P.NEW_PARTITION]
            results: ElectionOutcome = {}
            if new:
                results.update(self._initialize_leader_and_isr(new))
            if existing:
                if strategy is None:
                    raise IllegalArgumentException(
                        "Election strategy is a required field when the target state is "
                        "OnlinePartition"
                    )
                results.update(self._elect_leaders(existing, strategy))
            for tp, outcome in results.items():
                if isinstance(outcome, LeaderAndIsr):
                    self._changed(tp, states[tp], target)
                    states[tp] = target
                else:
                    self._failed(tp, states[tp], target, outcome)
            return results
        for tp in valid:
            self._changed(tp, states[tp], target)
            states[tp] = target
        return {}

    def _changed(self, tp: TopicPartition, current: PartitionState, target: PartitionState) -> None:
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "%sChanged partition %s state from %s to %s", self._prefix, tp, current, target
            )

    def _failed(
        self, tp: TopicPartition, current: PartitionState, target: PartitionState, error: Exception
    ) -> None:
        log.error(
            "%sController %d epoch %d failed to change state for partition %s from %s to %s: %s",
            self._prefix,
            self.controller_id,
            self.ctx.epoch,
            tp,
            current,
            target,
            error,
        )

    # ---- New → Online ----------------------------------------------------------------------------

    def _initialize_leader_and_isr(self, partitions: Sequence[TopicPartition]) -> ElectionOutcome:
        results: ElectionOutcome = {}
        to_create: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        for tp in partitions:
            replicas = self.ctx.replicas(tp)
            live = [r for r in replicas if self.ctx.is_replica_online(r, tp)]
            if not live:
                results[tp] = StateChangeFailedException(
                    f"Controller {self.controller_id} epoch {self.ctx.epoch} encountered error "
                    f"during state change of partition {tp} from New to Online, assigned "
                    f"replicas are [{','.join(map(str, replicas))}], live brokers are "
                    f"[{','.join(map(str, sorted(self.ctx.live_broker_ids)))}]. No assigned "
                    "replica is alive."
                )
                continue
            to_create[tp] = LeaderIsrAndControllerEpoch(
                LeaderAndIsr.initial(live[0], live), self.ctx.epoch
            )
        if not to_create:
            return results
        created = self.writer.create_partition_states(to_create)
        for tp, error in created.items():
            if error is not None:
                results[tp] = error
                continue
            leadership = to_create[tp]
            self.ctx.leadership[tp] = leadership
            assignment = self.ctx.assignment(tp)
            if assignment is not None:
                self.batch.add_leader_and_isr(
                    leadership.leader_and_isr.isr, tp, leadership, assignment, is_new=True
                )
            results[tp] = leadership.leader_and_isr
        return results

    # ---- elections -------------------------------------------------------------------------------

    def _elect_leaders(
        self, partitions: Sequence[TopicPartition], strategy: election.ElectionStrategy
    ) -> ElectionOutcome:
        results: ElectionOutcome = {}
        remaining = list(partitions)
        # The first round starts from the states the context knows (of this controller's epoch
        # or older); a round after a conflict reads them all, as Kafka's does.
        known_states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch] = self.ctx.leadership
        while remaining:
            remaining = self._elect_round(remaining, strategy, results, known_states)
            known_states = {}
        return results

    def _elect_round(
        self,
        partitions: Sequence[TopicPartition],
        strategy: election.ElectionStrategy,
        results: ElectionOutcome,
        known_states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
    ) -> list[TopicPartition]:
        # What the known states cannot elect a leader from is read too: the ISR may have grown
        # since.
        reads, known = known_or_read(
            self.zk,
            known_states,
            partitions,
            lambda s: s.controller_epoch <= self.ctx.epoch,
        )
        for tp in [*reads.missing, *reads.malformed]:
            results[tp] = StateChangeFailedException(
                f"LeaderAndIsr information doesn't exist for partition {tp} in "
                f"{self.ctx.partition_states.get(tp, _P.NON_EXISTENT_PARTITION)} state"
            )
        current: dict[TopicPartition, LeaderAndIsr] = {}
        for tp, state in reads.states.items():
            if state.controller_epoch > self.ctx.epoch:
                results[tp] = StateChangeFailedException(
                    f"Aborted leader election for partition {tp} since the LeaderAndIsr path was "
                    "already written by another controller. This probably means that the "
                    f"current controller {self.controller_id} went through a soft failure and "
                    f"another controller was elected with epoch {state.controller_epoch}."
                )
            else:
                current[tp] = state.leader_and_isr
        recipients: dict[TopicPartition, tuple[int, ...]] = {}
        unelected: list[TopicPartition] = []

        def updates() -> Iterator[Update]:
            """The new leaders as elected: the writer sends each multi-op as soon as its
            partitions are, so ZooKeeper writes while the next are elected."""
            for result in self._run_strategy(current, strategy):
                tp = result.topic_partition
                if result.leader_and_isr is None and tp in known:
                    unelected.append(tp)
                elif result.leader_and_isr is None:
                    results[tp] = StateChangeFailedException(
                        f"Failed to elect leader for partition {tp} under strategy "
                        f"{election.strategy_name(strategy)}"
                    )
                else:
                    recipients[tp] = result.live_replicas
                    yield tp, result.leader_and_isr

        outcome = self.writer.update_leader_and_isr(updates(), self.ctx.epoch)
        self.ctx.written_this_event.update(outcome.updated)
        for tp, lai in outcome.updated.items():
            leadership = LeaderIsrAndControllerEpoch(lai, self.ctx.epoch)
            self.ctx.leadership[tp] = leadership
            assignment = self.ctx.assignment(tp)
            if assignment is not None:
                self.batch.add_leader_and_isr(
                    recipients[tp], tp, leadership, assignment, is_new=False
                )
            results[tp] = lai
        again = outcome.to_read_again(known)
        results.update(outcome.failed)
        return [*unelected, *again]

    def _run_strategy(
        self, current: Mapping[TopicPartition, LeaderAndIsr], strategy: election.ElectionStrategy
    ) -> Iterator[election.ElectionResult]:
        ctx = self.ctx
        # isReplicaOnline(replica, partition): live, and not in a failed log dir
        live = ctx.online_brokers()
        match strategy:
            case election.OfflineElection(allow_unclean=allow):
                unclean = self._unclean_states(current, allow)
                return (
                    election.leader_for_offline(
                        tp, ctx.replicas(tp), lai, live(tp), unclean.get(tp, False)
                    )
                    for tp, lai in current.items()
                )
            case election.ReassignElection():
                return (
                    election.leader_for_reassign(tp, assignment, lai, live(tp))
                    for tp, lai in current.items()
                    if (assignment := ctx.assignment(tp)) is not None
                )
            case election.PreferredReplicaElection():
                return (
                    election.leader_for_preferred_replica(tp, ctx.replicas(tp), lai, live(tp))
                    for tp, lai in current.items()
                )
            case election.ControlledShutdownElection():
                live_or_shutting_down = ctx.online_brokers(include_shutting_down=True)
                return (
                    election.leader_for_controlled_shutdown(
                        tp,
                        ctx.replicas(tp),
                        lai,
                        live_or_shutting_down(tp),
                        ctx.shutting_down,
                    )
                    for tp, lai in current.items()
                )

    def _unclean_states(
        self, current: Mapping[TopicPartition, LeaderAndIsr], allow_unclean: bool
    ) -> dict[TopicPartition, bool]:
        """collectUncleanLeaderElectionState: topic configs are read only for partitions with
        no live ISR member, and only when the strategy does not already allow unclean."""
        live = self.ctx.online_brokers()
        without_live_isr = [
            tp for tp, lai in current.items() if not any(r in live(tp) for r in lai.isr)
        ]
        if not without_live_isr:
            return {}
        configs: Mapping[str, Mapping[str, str]] = (
            {} if allow_unclean else self.topic_configs({tp.topic for tp in without_live_isr})
        )
        return {
            tp: election.unclean_election_allowed(
                False,
                allow_unclean,
                configs.get(tp.topic, {}).get("unclean.leader.election.enable"),
                self.unclean_default,
            )
            for tp in without_live_isr
        }
