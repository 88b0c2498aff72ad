"""The controller (KafkaController.scala): election, resignation and failover, and the dispatch
of each event to the manager that handles it.

Kafka's own controller grew from one class into per-concern managers; here they are:
`event_manager` (the event queue and thread) and `watches` (what kazoo reports, as events);
`topic_changes`, `broker_lifecycle`, `broker_notifications`, `preferred_election` and
`config_changes`, each handling its events; the state machines, `deletion_manager` and
`reassignments`; `zk_reads` and `zk_writer` for ZooKeeper, every write under the epoch fence.
A ControllerMovedException from a fenced write makes the controller resign and compete again.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Mapping, Sequence

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.controller import events as ev
from kafka_topic_operator.controller.broker_lifecycle import BrokerLifecycle
from kafka_topic_operator.controller.broker_notifications import BrokerNotifications
from kafka_topic_operator.controller.channel_sender import ChannelSender
from kafka_topic_operator.controller.config import ControllerConfig
from kafka_topic_operator.controller.config_changes import ConfigChanges
from kafka_topic_operator.controller.context import ControllerContext
from kafka_topic_operator.controller.deletion_manager import DeletionManager
from kafka_topic_operator.controller.event_manager import ControllerEventManager
from kafka_topic_operator.controller.leadership import (
    ControllerEpoch,
    read_controller_id,
    resign,
    try_become_controller,
)
from kafka_topic_operator.controller.partition_state_machine import PartitionStateMachine
from kafka_topic_operator.controller.parts import ControllerParts
from kafka_topic_operator.controller.preferred_election import PreferredElection
from kafka_topic_operator.controller.reassignments import Reassignments
from kafka_topic_operator.controller.replica_state_machine import ReplicaStateMachine
from kafka_topic_operator.controller.request_batch import RequestBatch
from kafka_topic_operator.controller.topic_changes import TopicChanges
from kafka_topic_operator.controller.watches import ControllerWatches
from kafka_topic_operator.controller.zk_reads import read_partition_states, read_topic_configs
from kafka_topic_operator.controller.zk_writer import ControllerZkWriter
from kafka_topic_operator.kafka.errors import ControllerMovedException
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.process.gc_tuning import freeze_long_lived
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import ZkClient
from kafka_topic_operator.zk.znodes import ZNodeDataError

__all__ = ["ControllerConfig", "KafkaController"]

log = logging.getLogger(__name__)


class KafkaController:
    def __init__(self, config: ControllerConfig, zk: ZkClient | None = None) -> None:
        self.config = config
        self.broker_id = config.broker_id
        self.zk = zk or ZkClient(
            config.zookeeper,
            session_timeout=config.session_timeout,
            credentials=config.credentials,
            secure_acls=config.secure_acls,
            tls=config.tls,
        )
        self.ctx = ControllerContext()
        self.writer = ControllerZkWriter(self.zk, self.ctx)
        self.sender = ChannelSender(
            self.zk,
            lambda lost: self.put(ev.RequestUndelivered(lost)),
            lambda: self.put(ev.ControllerChange()),
        )
        self.events = ControllerEventManager(self._process, self.sender.flush)
        self.watches = ControllerWatches(self.events, lambda: self.zk.session_id)
        self.batch = RequestBatch(self.ctx, self.zk, self.broker_id, self.sender)
        self.partition_sm = PartitionStateMachine(
            self.ctx,
            self.zk,
            self.batch,
            self.broker_id,
            lambda topics: read_topic_configs(self.zk, topics),
            config.unclean_leader_election_enable,
        )
        self.replica_sm = ReplicaStateMachine(self.ctx, self.zk, self.batch, self.broker_id)
        self.deletion = DeletionManager(
            self.ctx,
            self.zk,
            self.replica_sm,
            self.partition_sm,
            self.batch,
            config.delete_topic_enable,
            lambda topic: self.topics.muted.add(topic),
            self._topic_deleted,
        )
        self.reassignments = Reassignments(
            self.ctx,
            self.zk,
            self.replica_sm,
            self.partition_sm,
            self.batch,
            self.deletion,
            self._watch_reassigning_state,
            lambda: self.put(ev.ZkPartitionReassignment()),
            self.watches.on_reassign_znode,
        )
        parts = ControllerParts(
            config, self.ctx, self.zk, self.writer, self.batch, self.partition_sm,
            self.replica_sm, self.deletion, self.reassignments, self.events, self.watches,
            lambda: self.is_active,
        )  # fmt: skip
        self.topics = TopicChanges(parts)
        self.brokers = BrokerLifecycle(parts)
        self.notifications = BrokerNotifications(parts, self.brokers)
        self.preferred = PreferredElection(parts)
        self.configs = ConfigChanges(parts)
        self.active_controller_id = -1
        self.epoch: ControllerEpoch | None = None
        self._epoch_session = 0  # the session the epoch was won in

    @property
    def idle(self) -> threading.Event:
        """Set while no event waits and the requests made are written."""
        return self.events.idle

    @property
    def events_processed(self) -> int:
        return self.events.events_processed

    def put(self, event: ev.ControllerEvent) -> None:
        self.events.put(event)

    @property
    def is_active(self) -> bool:
        return self.active_controller_id == self.broker_id and self.epoch is not None

    def start(self) -> None:
        self.zk.start(timeout=self.config.session_timeout)
        self.zk.add_state_listener(self.watches.on_session_state)
        self.sender.start()
        self.events.start()
        self.put(ev.Startup())

    def stop(self) -> None:
        """Resigns (deleting `/controller` if ours) and closes the session."""
        self.events.stop()
        self.sender.stop()
        with contextlib.suppress(Exception):
            if self.is_active:
                resign(self.zk)
        self.zk.stop()

    def _process(self, event: ev.ControllerEvent, coalesced: Sequence[str] = ()) -> None:
        self.ctx.written_this_event.clear()
        with self.sender.holding():  # the event's ZooKeeper writes first (ChannelSender)
            try:
                self._dispatch(event, coalesced)
            except ControllerMovedException:
                log.info("Controller moved to another broker when processing %s.", event)
                self._maybe_resign()
            except Exception:
                # Kafka logs and goes on with the next event: one bad event must not stop the
                # rest.
                log.exception("Error processing event %s", event)

    def _dispatch(self, event: ev.ControllerEvent, coalesced: Sequence[str] = ()) -> None:
        match event:
            case ev.Startup() | ev.Reelect():
                self._reelect()
            case ev.Expire(session=session):
                self._on_expire(session)
            case ev.RequestUndelivered(lost=lost):
                self.batch.undelivered(lost)
            case ev.ControllerChange():
                self._maybe_resign()
                if not self.is_active and self.zk.get(znodes.CONTROLLER_PATH) is None:
                    self._elect()
            case ev.Rewatch() if not self.is_active:
                self.watches.rewatch_pending = False  # a standby watches no single znodes
            case ev.ConfigChanges():
                self.configs.process_config_changes()  # every broker does, the controller or not
            case _ if not self.is_active:
                return
            case ev.BrokerChange():
                self.brokers.process_broker_change()
            case ev.BrokerModifications(broker_id=broker_id):
                self.brokers.process_broker_modification(broker_id)
            case ev.TopicChange():
                self.topics.process_topic_change()
            case ev.PartitionModifications(topic=topic):
                self.topics.process_partition_modifications([topic, *coalesced])
            case ev.TopicDeletion():
                self.topics.process_topic_deletion()
            case ev.ZkPartitionReassignment(created=created):
                exists = self.zk.exists(
                    znodes.REASSIGN_PARTITIONS_PATH, watch=self.watches.on_reassign_znode
                )
                if exists and created:
                    self.reassignments.process_zk_reassignment()
            case ev.PartitionReassignmentIsrChange(partition=tp):
                self.reassignments.maybe_complete(tp)
            case ev.IsrChangeNotification():
                self.notifications.process_isr_change_notification()
            case ev.LogDirEventNotification():
                self.notifications.process_log_dir_event_notification()
            case ev.ReplicaLeaderElection():
                self.preferred.process_zk_preferred_election()
            case ev.AutoPreferredReplicaLeaderElection():
                self.preferred.process_auto_preferred_election()
            case ev.ControlledShutdown():
                self.brokers.process_controlled_shutdowns()
            case ev.BrokerResponses(broker_id=broker_id):
                self.notifications.process_responses(broker_id)
            case ev.Rewatch():
                self._rewatch()

    def _rewatch(self) -> None:
        """Sets the watches on single znodes again, reading each (a change made while they
        were gone is handled as its watch would have had it handled)."""
        self.watches.rewatch_pending = False
        self.topics.process_partition_modifications(sorted(self.ctx.assignments))
        for tp in sorted(self.ctx.partitions_being_reassigned):
            self._watch_reassigning_state(tp)
            self.reassignments.maybe_complete(tp)
        for broker in sorted(self.ctx.live_brokers):
            self.notifications.process_responses(broker)
            self.brokers.process_broker_modification(broker)

    def _watch_reassigning_state(self, tp: TopicPartition) -> None:
        self.zk.exists(
            znodes.topic_partition_state_path(tp), watch=self.watches.on_reassigning_state
        )

    def _topic_deleted(self, topic: str) -> None:
        # Kafka leaves a deleted topic's entries in /admin/reassign_partitions until the next
        # failover drops them as unknown; drop them now so nothing is left behind.
        self.reassignments.forget_topic(topic)

    def _reelect(self) -> None:
        self._maybe_resign()
        self._elect()
        # The broker's config manager reads the notifications at start and on each new session
        # (ZkNodeChangeNotificationListener.init and afterInitializingSession).
        self.put(ev.ConfigChanges())

    def _elect(self) -> None:
        """KafkaController.elect: watch `/controller`, and try to become it if it is free."""
        for path in znodes.PERSISTENT_ZK_PATHS:
            self.writer.ensure_path(path)
        self.zk.exists(znodes.CONTROLLER_PATH, watch=self.watches.on_controller_znode)
        current = read_controller_id(self.zk)
        if current is not None:
            # Whoever it is, this one included: a second election request in the same session
            # (a new session's re-election and the old /controller's deletion, both queued)
            # must not elect again, nor bump the epoch twice.
            self.active_controller_id = current
            log.debug("Broker %d has been elected as the controller, so stopping election", current)
            return
        epoch = try_become_controller(self.zk, self.broker_id)
        if epoch is None:
            self.active_controller_id = read_controller_id(self.zk) or -1
            log.info("Controller %d is active; standing by", self.active_controller_id)
            return
        self.epoch = epoch
        self._epoch_session = self.zk.session_id
        self.active_controller_id = self.broker_id
        log.info(
            "%d successfully elected as the controller. Epoch incremented to %d and epoch zk "
            "version is now %d",
            self.broker_id,
            epoch.epoch,
            epoch.zk_version,
        )
        self._on_controller_failover()

    def _maybe_resign(self) -> None:
        was_active = self.is_active
        self.zk.exists(znodes.CONTROLLER_PATH, watch=self.watches.on_controller_znode)
        node = self.zk.get(znodes.CONTROLLER_PATH)
        owner = read_controller_id(self.zk)
        ours = node is not None and node.ephemeral_owner == self.zk.session_id
        self.active_controller_id = owner if owner is not None else -1
        if was_active and not ours:
            self._on_resignation()

    def _on_expire(self, session: int) -> None:
        if self.epoch is not None and self._epoch_session not in (session, 0):
            return  # elected again in the new session already: its epoch stands
        if self.is_active or self.epoch is not None:
            self._on_resignation()
        self.active_controller_id = -1

    def _on_resignation(self) -> None:
        log.info("Resigning")
        self.epoch = None
        self.events.next_auto_rebalance = None
        self.topics.forget()
        fresh = ControllerContext()
        for name in vars(fresh):
            setattr(self.ctx, name, getattr(fresh, name))
        self.batch.clear()
        self.batch.pending_stop_replica.clear()
        if self.active_controller_id == self.broker_id:
            self.active_controller_id = -1

    def _enable_feature_versioning(self) -> None:
        """KafkaController.enableFeatureVersioning (IBP 3.9: versioning supported, no default
        finalized features in ZooKeeper mode): `/feature` created or re-enabled, written as
        Kafka writes it, without the epoch fence. An unreadable one is left as it is."""
        path = znodes.FEATURE_PATH
        node = self.zk.get(path)
        features: Mapping[str, int] = {}
        if node is not None:
            try:
                existing = znodes.decode_feature(path, node.data)
            except ZNodeDataError as e:
                log.error("Cannot set up feature versioning: %s", e)
                return
            if existing.status is znodes.FeatureZNodeStatus.ENABLED:
                features = existing.features
            elif existing.features:
                log.warning(
                    "FeatureZNode at path: %s with disabled status contains non-empty features: %s",
                    path,
                    dict(existing.features),
                )
        wanted = znodes.FeatureZNodeData(
            znodes.FEATURE_ZNODE_VERSION, znodes.FeatureZNodeStatus.ENABLED, dict(features)
        )
        if node is None:
            log.info("Creating FeatureZNode at path: %s with contents: %s", path, wanted)
            self.writer.write_feature(znodes.encode_feature(wanted), create=True)
        elif wanted != existing:
            log.info("Updating FeatureZNode at path: %s with contents: %s", path, wanted)
            self.writer.write_feature(znodes.encode_feature(wanted), create=False)

    def _on_controller_failover(self) -> None:
        assert self.epoch is not None
        ctx = self.ctx
        ctx.epoch = self.epoch.epoch
        ctx.epoch_zk_version = self.epoch.zk_version
        ctx.epoch_session = self._epoch_session
        self.batch.reset_correlation_ids()
        started = time.monotonic()
        self._enable_feature_versioning()
        self.partition_sm.unclean_default = self.configs.dynamic_unclean_default()
        for path in (bc.BROKER_CHANNELS_PATH, bc.CONTROLLED_SHUTDOWN_PATH):
            self.writer.ensure_path(path)
        self.zk.children(znodes.DELETE_TOPICS_PATH, watch=self.watches.on_delete_topics)
        log_dir_events = self.notifications.children(
            znodes.LOG_DIR_EVENT_NOTIFICATION_PATH, self.watches.on_log_dir_events
        )
        isr_changes = self.notifications.children(
            znodes.ISR_CHANGE_NOTIFICATION_PATH, self.watches.on_isr_changes
        )
        self.zk.children(bc.CONTROLLED_SHUTDOWN_PATH, watch=self.watches.on_controlled_shutdown)
        self.zk.exists(znodes.REASSIGN_PARTITIONS_PATH, watch=self.watches.on_reassign_znode)
        # What was notified before this failover is read afresh with the context (Kafka's
        # deleteLogDirEventNotifications and deleteIsrChangeNotifications).
        log.info("Deleting log dir event notifications")
        self.notifications.delete_notifications(log_dir_events)
        log.info("Deleting isr change notifications")
        self.notifications.delete_notifications(isr_changes)
        self._initialize_context()
        rebuilt = time.monotonic() - started
        deletions = (
            self.zk.children(znodes.DELETE_TOPICS_PATH, watch=self.watches.on_delete_topics) or []
        )
        offline_topics = {
            tp.topic
            for tp in ctx.all_partitions()
            if any(not ctx.is_replica_online(r, tp) for r in ctx.replicas(tp))
        }
        reassigning_topics = {tp.topic for tp in ctx.partitions_being_reassigned}
        queued = [t for t in deletions]
        self.deletion.init(queued, [t for t in queued if t in offline_topics | reassigning_topics])
        # The live brokers only, before the state machines' LeaderAndIsr (each with the
        # UpdateMetadata of its partitions): KafkaController.onControllerFailover.
        self.batch.new_batch()
        self.batch.add_update_metadata(ctx.live_or_shutting_down_broker_ids, [])
        self.batch.send()
        self.replica_sm.startup()
        self.partition_sm.startup()
        resumed = self.reassignments.process_zk_reassignment()
        self.reassignments.maybe_resume(lambda tp, _a: tp not in resumed)
        self.deletion.try_topic_deletion()
        self.preferred.process_zk_preferred_election()
        if self.config.auto_leader_rebalance_enable:
            self.events.next_auto_rebalance = (
                time.monotonic() + self.config.first_auto_rebalance_delay
            )
        self.brokers.process_controlled_shutdowns()
        for broker in sorted(ctx.live_brokers):
            self.notifications.process_responses(broker)
        log.info(
            "Controller %d failover done in %.2f s (context rebuilt in %.2f s): %d brokers, "
            "%d topics, %d partitions",
            self.broker_id,
            time.monotonic() - started,
            rebuilt,
            len(ctx.live_brokers),
            len(ctx.assignments),
            len(ctx.leadership),
        )
        # The context just built lives as long as this epoch: no collection scans it again.
        freeze_long_lived()

    def _initialize_context(self) -> None:
        ctx = self.ctx
        brokers = self.brokers.read_brokers()
        ctx.add_live_brokers(brokers)
        for broker in brokers:
            self.brokers.add_broker_channel(broker)
            self.brokers.watch_broker(broker)
        topics = self.zk.children(znodes.TOPICS_PATH, watch=self.watches.on_topics) or []
        self.topics.load_topics(topics)
        reads = read_partition_states(self.zk, ctx.all_partitions())
        for error in reads.malformed.values():
            log.error("Skipping an unreadable partition state: %s", error)
        ctx.leadership.update(reads.states)
