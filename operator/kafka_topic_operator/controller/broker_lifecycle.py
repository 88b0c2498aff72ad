"""Brokers as the controller follows them (KafkaController's processBrokerChange,
onBrokerStartup, onBrokerFailure, onReplicasBecomeOffline, processBrokerModification and
doControlledShutdown): registrations read and watched, replicas brought online or offline, and
controlled shutdown requests answered.
"""

from __future__ import annotations

import contextlib
import logging

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.controller.parts import ControllerManager
from kafka_topic_operator.kafka import election
from kafka_topic_operator.kafka.brokers import BrokerInfo
from kafka_topic_operator.kafka.states import PartitionAndReplica, PartitionState, ReplicaState
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import SetData, TransactionFailed

log = logging.getLogger(__name__)

_R = ReplicaState
_P = PartitionState


class BrokerLifecycle(ControllerManager):
    def read_brokers(self) -> dict[int, tuple[BrokerInfo, int]]:
        names = self.zk.children(znodes.BROKER_IDS_PATH, watch=self.watches.on_brokers) or []
        ids = [int(n) for n in names if n.isascii() and n.isdigit()]
        brokers: dict[int, tuple[BrokerInfo, int]] = {}
        for node in self.zk.get_many(znodes.broker_path(i) for i in ids):
            if node is None:
                continue
            try:
                info = znodes.decode_broker(node.path, node.data)
            except znodes.ZNodeDataError as e:
                log.error("Skipping an unreadable broker registration: %s", e)
                continue
            brokers[info.id] = (info, node.czxid)
        return brokers

    def add_broker_channel(self, broker: int) -> None:
        self.writer.ensure_path(bc.requests_path(broker))
        self.writer.ensure_path(bc.responses_path(broker))
        self.zk.children(bc.responses_path(broker), watch=self.watches.on_responses)

    def watch_broker(self, broker: int) -> None:
        """registerBrokerModificationsHandler: a data watch on the broker's registration."""
        self.zk.exists(znodes.broker_path(broker), watch=self.watches.on_broker_data)

    def process_broker_change(self) -> None:
        ctx = self.ctx
        current = self.read_brokers()
        known = ctx.live_or_shutting_down_broker_ids
        new = sorted(set(current) - known)
        dead = sorted(known - set(current))
        bounced = sorted(
            b for b in set(current) & known if current[b][1] > ctx.broker_epochs.get(b, -1)
        )
        log.info(
            "Newly added brokers: %s, deleted brokers: %s, bounced brokers: %s, "
            "all live brokers: %s",
            ",".join(map(str, new)),
            ",".join(map(str, dead)),
            ",".join(map(str, bounced)),
            ",".join(map(str, sorted(current))),
        )
        for broker in [*new, *bounced]:
            self.add_broker_channel(broker)
        if new:
            ctx.add_live_brokers({b: current[b] for b in new})
            self.on_broker_startup(new)
        if bounced:
            ctx.remove_live_brokers(bounced)
            self.on_broker_failure(bounced)
            ctx.add_live_brokers({b: current[b] for b in bounced})
            self.on_broker_startup(bounced)
        if dead:
            ctx.remove_live_brokers(dead)
            self.on_broker_failure(dead)

    def on_broker_startup(self, new: list[int]) -> None:
        ctx = self.ctx
        log.info("New broker startup callback for %s", ",".join(map(str, new)))
        for broker in new:
            ctx.replicas_on_offline_dirs.pop(broker, None)
        existing = ctx.live_or_shutting_down_broker_ids - set(new)
        self.batch.new_batch()
        self.batch.add_update_metadata(existing, [])
        self.batch.send()
        self.batch.new_batch()
        self.batch.add_update_metadata(new, ctx.partitions_with_leaders())
        self.batch.send()
        replicas = ctx.replicas_on_brokers(new)
        self.replica_sm.handle_state_changes(replicas, _R.ONLINE_REPLICA)
        self.partition_sm.trigger_online_partition_state_change()
        new_set = set(new)
        self.reassignments.maybe_resume(lambda _tp, a: any(r in new_set for r in a.target_replicas))
        deleting = {
            r.topic_partition.topic
            for r in replicas
            if self.deletion.is_queued(r.topic_partition.topic)
        }
        if deleting:
            self.deletion.resume_for_topics(deleting)
        for broker in new:
            self.watch_broker(broker)

    def on_broker_failure(self, dead: list[int]) -> None:
        log.info("Broker failure callback for %s", ",".join(map(str, dead)))
        for broker in dead:
            self.ctx.replicas_on_offline_dirs.pop(broker, None)
            self.ctx.shutting_down.discard(broker)
            for cid in [
                c for c, p in self.batch.pending_stop_replica.items() if p.broker_id == broker
            ]:
                del self.batch.pending_stop_replica[cid]
        self.on_replicas_become_offline(self.ctx.replicas_on_brokers(dead))

    def on_replicas_become_offline(self, offline: list[PartitionAndReplica]) -> None:
        ctx = self.ctx
        for_deletion = [r for r in offline if self.deletion.is_queued(r.topic_partition.topic)]
        not_for_deletion = [
            r for r in offline if not self.deletion.is_queued(r.topic_partition.topic)
        ]
        with_offline_leader = ctx.partitions_with_offline_leader()
        self.partition_sm.handle_state_changes(with_offline_leader, _P.OFFLINE_PARTITION)
        elected = self.partition_sm.trigger_online_partition_state_change()
        self.replica_sm.handle_state_changes(not_for_deletion, _R.OFFLINE_REPLICA)
        if for_deletion:
            self.deletion.fail_replica_deletion(for_deletion)
        # No leader or ISR changed, so no state machine sent UpdateMetadata: send one to
        # propagate the offline brokers (KafkaController.onReplicasBecomeOffline).
        if not not_for_deletion and all(isinstance(o, Exception) for o in elected.values()):
            self.batch.new_batch()
            self.batch.add_update_metadata(ctx.live_or_shutting_down_broker_ids, [])
            self.batch.send()

    def process_broker_modification(self, broker: int) -> None:
        """processBrokerModification: new endpoints or features of a live broker replace the
        cached registration and every live broker is told (onBrokerUpdate)."""
        node = self.zk.get(znodes.broker_path(broker), watch=self.watches.on_broker_data)
        old = self.ctx.live_brokers.get(broker)
        if node is None or old is None:
            return
        try:
            new = znodes.decode_broker(node.path, node.data)
        except znodes.ZNodeDataError as e:
            log.error("Skipping an unreadable broker registration: %s", e)
            return
        if new.endpoints == old.endpoints and new.features == old.features:
            return
        log.info("Updated broker metadata: %s -> %s", old, new)
        self.ctx.live_brokers[broker] = new
        log.info("Broker info update callback for %d", broker)
        self.batch.new_batch()
        self.batch.add_update_metadata(self.ctx.live_or_shutting_down_broker_ids, [])
        self.batch.send()

    def process_controlled_shutdowns(self) -> None:
        names = (
            self.zk.children(bc.CONTROLLED_SHUTDOWN_PATH, watch=self.watches.on_controlled_shutdown)
            or []
        )
        for name in names:
            path = f"{bc.CONTROLLED_SHUTDOWN_PATH}/{name}"
            node = self.zk.get(path)
            if node is None:
                continue
            try:
                request = bc.decode_controlled_shutdown(path, node.data)
            except znodes.ZNodeDataError as e:
                log.error("Ignoring an unreadable controlled shutdown request: %s", e)
                continue
            if request.result is not None:
                continue
            result = self._do_controlled_shutdown(request.request)
            data = bc.encode_controlled_shutdown(request.request, result)
            with contextlib.suppress(TransactionFailed):  # the broker gave up and left
                self.writer.apply([SetData(path, data, node.version)])

    def _do_controlled_shutdown(
        self, request: bc.ControlledShutdownRequest
    ) -> bc.ControlledShutdownResult:
        ctx = self.ctx
        broker = request.broker_id
        # KafkaController.doControlledShutdown's order: the broker epoch first (the cached one
        # of a broker that is not live is missing: NoSuchElementException, answered as an
        # unknown server error), then whether the broker is live.
        if request.broker_epoch != bc.UNKNOWN_BROKER_EPOCH:
            cached = ctx.broker_epochs.get(broker)
            if cached is None:
                log.error("Error processing controlled shutdown: key not found: %d", broker)
                return bc.ControlledShutdownResult(bc.Errors.UNKNOWN_SERVER_ERROR)
            if request.broker_epoch < cached:
                log.info(
                    "Received controlled shutdown request from an old broker epoch %d for "
                    "broker %d. Current broker epoch is %d.",
                    request.broker_epoch,
                    broker,
                    cached,
                )
                return bc.ControlledShutdownResult(bc.Errors.STALE_BROKER_EPOCH)
        log.info("Shutting down broker %d", broker)
        if broker not in ctx.live_or_shutting_down_broker_ids:
            return bc.ControlledShutdownResult(bc.Errors.BROKER_NOT_AVAILABLE)
        ctx.shutting_down.add(broker)
        to_act_on = [
            tp
            for tp in sorted(ctx.partitions_on_broker(broker))
            if len(ctx.replicas(tp)) > 1
            and tp in ctx.leadership
            and not self.deletion.is_queued(tp.topic)
        ]
        led = [tp for tp in to_act_on if ctx.leadership[tp].leader_and_isr.leader == broker]
        leading = set(led)
        followed = [tp for tp in to_act_on if tp not in leading]
        self.partition_sm.handle_state_changes(
            led, _P.ONLINE_PARTITION, election.ControlledShutdownElection()
        )
        self.batch.new_batch()
        for tp in followed:
            self.batch.add_stop_replica([broker], tp, delete=False)
        self.batch.send()
        self.replica_sm.handle_state_changes(
            [PartitionAndReplica(tp, broker) for tp in followed], _R.OFFLINE_REPLICA
        )
        remaining = tuple(
            tp
            for tp in ctx.partition_leaders_on_broker(broker)
            if len(ctx.replicas(tp)) > 1 and not self.deletion.is_queued(tp.topic)
        )
        log.info("Broker %d has %d partitions left to move", broker, len(remaining))
        return bc.ControlledShutdownResult(bc.Errors.NONE, remaining)
