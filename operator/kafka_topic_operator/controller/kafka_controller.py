"""The controller (KafkaController.scala): election, failover, and the event thread that reacts
to the znodes Kafka's controller watches.

Watch callbacks and the session listener only enqueue events; one thread processes them in
order, re-reading ZooKeeper each time. Every write is fenced by `/controller_epoch`'s version;
a ControllerMovedException makes the controller resign and compete again.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import re
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.controller import events as ev
from kafka_topic_operator.controller.channel_sender import ChannelSender
from kafka_topic_operator.controller.context import ControllerContext
from kafka_topic_operator.controller.deletion_manager import DeletionManager
from kafka_topic_operator.controller.leadership import (
    ControllerEpoch,
    read_controller_id,
    resign,
    try_become_controller,
)
from kafka_topic_operator.controller.partition_state_machine import PartitionStateMachine
from kafka_topic_operator.controller.reassignments import Reassignments
from kafka_topic_operator.controller.replica_state_machine import ReplicaStateMachine
from kafka_topic_operator.controller.request_batch import RequestBatch
from kafka_topic_operator.controller.zk_reads import read_partition_states
from kafka_topic_operator.controller.zk_writer import ControllerZkWriter
from kafka_topic_operator.kafka import election
from kafka_topic_operator.kafka.brokers import BrokerInfo
from kafka_topic_operator.kafka.errors import ControllerMovedException
from kafka_topic_operator.kafka.ids import new_topic_id
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.states import PartitionAndReplica, PartitionState, ReplicaState
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import (
    Delete,
    Node,
    SetData,
    TransactionFailed,
    ZkClient,
    ZkCredentials,
)
from kafka_topic_operator.zk.znodes import ZNodeDataError

log = logging.getLogger(__name__)

_R = ReplicaState
_P = PartitionState

UNCLEAN_KEY = "unclean.leader.election.enable"
BROKER_DEFAULT_ENTITY = "<default>"
"""The entity name of cluster-wide dynamic broker configs (ZooKeeperInternals.DEFAULT_STRING)."""

FAILOVER_AUTO_REBALANCE_DELAY = 5.0
"""Kafka schedules the first automatic preferred leader election 5 s after failover."""

CONFIG_CHANGE_EXPIRATION_MS = 15 * 60 * 1000
"""ZkNodeChangeNotificationListener's changeExpirationMs: older config change notifications are
purged."""

_CHANGE_NUMBER = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class ControllerConfig:
    zookeeper: str
    broker_id: int = 0
    delete_topic_enable: bool = True
    unclean_leader_election_enable: bool = False
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_check_interval: float = 300.0
    leader_imbalance_per_broker_percentage: int = 10
    first_auto_rebalance_delay: float = FAILOVER_AUTO_REBALANCE_DELAY
    session_timeout: float = 10.0
    credentials: ZkCredentials | None = None
    secure_acls: bool = False


class KafkaController:
    def __init__(self, config: ControllerConfig, zk: ZkClient | None = None) -> None:
        self.config = config
        self.broker_id = config.broker_id
        self.zk = zk or ZkClient(
            config.zookeeper,
            session_timeout=config.session_timeout,
            credentials=config.credentials,
            secure_acls=config.secure_acls,
        )
        self.ctx = ControllerContext()
        self.writer = ControllerZkWriter(self.zk, self.ctx)
        self.sender = ChannelSender(
            self.zk,
            lambda lost: self.put(ev.RequestUndelivered(lost)),
            lambda: self.put(ev.ControllerChange()),
        )
        self.batch = RequestBatch(self.ctx, self.zk, self.broker_id, self.sender)
        self.partition_sm = PartitionStateMachine(
            self.ctx,
            self.zk,
            self.batch,
            self.broker_id,
            self._topic_configs,
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
            self._mute,
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
        )
        self.active_controller_id = -1
        self.epoch: ControllerEpoch | None = None
        self._epoch_session = 0  # the session the epoch was won in
        # Topics whose znode could not be read: not new again at every topic change (Kafka
        # counts them among all topics before reading them), loaded once their znode is fixed.
        self._unreadable: set[str] = set()
        self._queue: queue.Queue[ev.ControllerEvent] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._muted: set[str] = set()
        self._coalesced: list[str] = []  # topics of PartitionModifications events merged
        self._rewatch_pending = False
        self._session_lost = False
        self._next_auto_rebalance: float | None = None
        # ZkNodeChangeNotificationListener.lastExecutedChange: kept for the process's life, so
        # a new session or a failover reprocesses nothing.
        self._last_config_change = -1
        self.idle = threading.Event()
        self.events_processed = 0

    # ---- lifecycle -------------------------------------------------------------------------------

    @property
    def is_active(self) -> bool:
        return self.active_controller_id == self.broker_id and self.epoch is not None

    def start(self) -> None:
        self.zk.start(timeout=self.config.session_timeout)
        self.zk.add_state_listener(self._on_session_state)
        self.sender.start()
        self._thread = threading.Thread(target=self._run, name="controller-event-thread")
        self._thread.start()
        self.put(ev.Startup())

    def stop(self) -> None:
        """Resigns (deleting `/controller` if ours) and closes the session."""
        self.put(ev.ShutdownEventThread())
        if self._thread is not None:
            self._thread.join()
        self.sender.stop()
        with contextlib.suppress(Exception):
            if self.is_active:
                resign(self.zk)
        self.zk.stop()

    def put(self, event: ev.ControllerEvent) -> None:
        self.idle.clear()
        self._queue.put(event)

    def _clear_and_put(self, event: ev.ControllerEvent) -> None:
        with self._queue.mutex:
            kept = [e for e in self._queue.queue if isinstance(e, ev.ShutdownEventThread)]
            self._queue.queue.clear()
            self._queue.queue.extend(kept)
        self.put(event)

    # ---- the event thread ------------------------------------------------------------------------

    def _run(self) -> None:
        held: ev.ControllerEvent | None = None  # taken from the queue while coalescing
        while True:
            if held is not None:
                event, held = held, None
            else:
                timeout = None
                if self._next_auto_rebalance is not None:
                    timeout = max(0.0, self._next_auto_rebalance - time.monotonic())
                try:
                    event = self._queue.get(timeout=timeout)
                except queue.Empty:
                    self._next_auto_rebalance = None
                    event = ev.AutoPreferredReplicaLeaderElection()
            if isinstance(event, ev.ShutdownEventThread):
                return
            if isinstance(event, ev.PartitionModifications):
                self._coalesced, held = self._following_partition_modifications()
            self._process(event)
            self.events_processed += 1 + len(self._coalesced)
            self._coalesced = []
            if held is None and self._queue.empty():
                # Idle means the requests made are written too (nothing else to do meanwhile).
                self.sender.flush()
                if self._queue.empty():
                    self.idle.set()

    def _following_partition_modifications(self) -> tuple[list[str], ev.ControllerEvent | None]:
        """The topics of the PartitionModifications events queued right behind one, and the
        first other event (to be processed next, so the order of events is kept)."""
        topics: list[str] = []
        while True:
            try:
                event = self._queue.get_nowait()
            except queue.Empty:
                return topics, None
            if not isinstance(event, ev.PartitionModifications):
                return topics, event
            topics.append(event.topic)

    def _process(self, event: ev.ControllerEvent) -> None:
        self.ctx.written_this_event.clear()
        try:
            self._dispatch(event)
        except ControllerMovedException:
            log.info("Controller moved to another broker when processing %s.", event)
            self._maybe_resign()
        except Exception:
            # Kafka logs and goes on with the next event: one bad event must not stop the rest.
            log.exception("Error processing event %s", event)

    def _dispatch(self, event: ev.ControllerEvent) -> None:
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
                self._rewatch_pending = False  # a standby watches no single znodes
            case ev.ConfigChanges():
                self._process_config_changes()  # every broker does, the controller or not
            case _ if not self.is_active:
                return
            case ev.BrokerChange():
                self._process_broker_change()
            case ev.BrokerModifications(broker_id=broker_id):
                self._process_broker_modification(broker_id)
            case ev.TopicChange():
                self._process_topic_change()
            case ev.PartitionModifications(topic=topic):
                self._process_partition_modifications([topic, *self._coalesced])
            case ev.TopicDeletion():
                self._process_topic_deletion()
            case ev.ZkPartitionReassignment(created=created):
                exists = self.zk.exists(
                    znodes.REASSIGN_PARTITIONS_PATH, watch=self._on_reassign_znode
                )
                if exists and created:
                    self.reassignments.process_zk_reassignment()
            case ev.PartitionReassignmentIsrChange(partition=tp):
                self.reassignments.maybe_complete(tp)
            case ev.IsrChangeNotification():
                self._process_isr_change_notification()
            case ev.LogDirEventNotification():
                self._process_log_dir_event_notification()
            case ev.ReplicaLeaderElection():
                self._process_zk_preferred_election()
            case ev.AutoPreferredReplicaLeaderElection():
                self._process_auto_preferred_election()
            case ev.ControlledShutdown():
                self._process_controlled_shutdowns()
            case ev.BrokerResponses(broker_id=broker_id):
                self._process_responses(broker_id)
            case ev.Rewatch():
                self._rewatch()

    # ---- watches: only enqueue -------------------------------------------------------------------

    def _on_session_state(self, state: str) -> None:
        if state == "LOST":
            self._session_lost = True
            # Kafka's clearAndPut(Expire): what was queued in the old session is not handled.
            self._clear_and_put(ev.Expire(self.zk.session_id))  # kazoo still holds the old id
        elif state == "CONNECTED" and self._session_lost:
            self._session_lost = False
            self.put(ev.Reelect())

    def _on_controller_znode(self, _event: Any) -> None:
        self.put(ev.ControllerChange())

    def _on_brokers(self, _event: Any) -> None:
        self.put(ev.BrokerChange())

    def _on_broker_data(self, event: Any) -> None:
        if event.path is None:
            self._on_pathless()
            return
        # BrokerModificationsHandler reacts to data changes only.
        if str(event.type) == "CHANGED":
            with contextlib.suppress(IndexError, ValueError):
                self.put(ev.BrokerModifications(int(str(event.path).rsplit("/", 1)[-1])))

    def _on_topics(self, _event: Any) -> None:
        self.put(ev.TopicChange())

    def _on_pathless(self) -> None:
        # kazoo, on a dropped connection, calls each watch once with no path and forgets it
        # (it never sets watches again as ZooKeeper's Java client does): one Rewatch for all.
        if not self._rewatch_pending:
            self._rewatch_pending = True
            self.put(ev.Rewatch())

    def _on_topic_data(self, event: Any) -> None:
        if event.path is None:
            self._on_pathless()
            return
        topic = str(event.path).rsplit("/", 1)[-1]
        self.put(ev.PartitionModifications(topic))

    def _on_delete_topics(self, _event: Any) -> None:
        self.put(ev.TopicDeletion())

    def _on_reassign_znode(self, event: Any) -> None:
        # Kafka acts on the znode's creation only; changes and deletions just re-arm the watch.
        self.put(ev.ZkPartitionReassignment(created=str(event.type) == "CREATED"))

    def _on_reassigning_state(self, event: Any) -> None:
        if event.path is None:
            self._on_pathless()
            return
        parts = str(event.path).split("/")  # /brokers/topics/<t>/partitions/<p>/state
        with contextlib.suppress(IndexError, ValueError):
            self.put(ev.PartitionReassignmentIsrChange(TopicPartition(parts[3], int(parts[5]))))

    def _on_isr_changes(self, _event: Any) -> None:
        self.put(ev.IsrChangeNotification())

    def _on_log_dir_events(self, _event: Any) -> None:
        self.put(ev.LogDirEventNotification())

    def _on_config_changes(self, _event: Any) -> None:
        self.put(ev.ConfigChanges())

    def _on_preferred_election(self, _event: Any) -> None:
        self.put(ev.ReplicaLeaderElection())

    def _on_controlled_shutdown(self, _event: Any) -> None:
        self.put(ev.ControlledShutdown())

    def _on_responses(self, event: Any) -> None:
        if event.path is None:
            self._on_pathless()
            return
        with contextlib.suppress(IndexError, ValueError):
            self.put(ev.BrokerResponses(int(str(event.path).split("/")[3])))

    def _rewatch(self) -> None:
        """Sets the watches on single znodes again, reading each (a change made while they
        were gone is handled as its watch would have had it handled)."""
        self._rewatch_pending = False
        self._process_partition_modifications(sorted(self.ctx.assignments))
        for tp in sorted(self.ctx.partitions_being_reassigned):
            self._watch_reassigning_state(tp)
            self.reassignments.maybe_complete(tp)
        for broker in sorted(self.ctx.live_brokers):
            self._process_responses(broker)
            self._process_broker_modification(broker)

    def _watch_reassigning_state(self, tp: TopicPartition) -> None:
        self.zk.exists(znodes.topic_partition_state_path(tp), watch=self._on_reassigning_state)

    def _mute(self, topic: str) -> None:
        self._muted.add(topic)

    def _topic_deleted(self, topic: str) -> None:
        # Kafka leaves a deleted topic's entries in /admin/reassign_partitions until the next
        # failover drops them as unknown; drop them now so nothing is left behind.
        self.reassignments.forget_topic(topic)

    # ---- election and resignation ----------------------------------------------------------------

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
        self.zk.exists(znodes.CONTROLLER_PATH, watch=self._on_controller_znode)
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
        self.zk.exists(znodes.CONTROLLER_PATH, watch=self._on_controller_znode)
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
        self._next_auto_rebalance = None
        self._muted.clear()
        self._unreadable.clear()
        fresh = ControllerContext()
        for name in vars(fresh):
            setattr(self.ctx, name, getattr(fresh, name))
        self.batch.clear()
        self.batch.pending_stop_replica.clear()
        if self.active_controller_id == self.broker_id:
            self.active_controller_id = -1

    # ---- failover --------------------------------------------------------------------------------

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
        self.partition_sm.unclean_default = self._dynamic_unclean_default()
        for path in (bc.BROKER_CHANNELS_PATH, bc.CONTROLLED_SHUTDOWN_PATH):
            self.writer.ensure_path(path)
        self.zk.children(znodes.DELETE_TOPICS_PATH, watch=self._on_delete_topics)
        log_dir_events = self._children(
            znodes.LOG_DIR_EVENT_NOTIFICATION_PATH, self._on_log_dir_events
        )
        isr_changes = self._children(znodes.ISR_CHANGE_NOTIFICATION_PATH, self._on_isr_changes)
        self.zk.children(bc.CONTROLLED_SHUTDOWN_PATH, watch=self._on_controlled_shutdown)
        self.zk.exists(znodes.REASSIGN_PARTITIONS_PATH, watch=self._on_reassign_znode)
        # What was notified before this failover is read afresh with the context (Kafka's
        # deleteLogDirEventNotifications and deleteIsrChangeNotifications).
        log.info("Deleting log dir event notifications")
        self._delete_notifications(log_dir_events)
        log.info("Deleting isr change notifications")
        self._delete_notifications(isr_changes)
        self._initialize_context()
        rebuilt = time.monotonic() - started
        deletions = self.zk.children(znodes.DELETE_TOPICS_PATH, watch=self._on_delete_topics) or []
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
        self._process_zk_preferred_election()
        if self.config.auto_leader_rebalance_enable:
            self._next_auto_rebalance = time.monotonic() + self.config.first_auto_rebalance_delay
        self._process_controlled_shutdowns()
        for broker in sorted(ctx.live_brokers):
            self._process_responses(broker)
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

    def _initialize_context(self) -> None:
        ctx = self.ctx
        brokers = self._read_brokers()
        ctx.add_live_brokers(brokers)
        for broker in brokers:
            self._add_broker_channel(broker)
            self._watch_broker(broker)
        topics = self.zk.children(znodes.TOPICS_PATH, watch=self._on_topics) or []
        self._load_topics(topics)
        reads = read_partition_states(self.zk, ctx.all_partitions())
        for error in reads.malformed.values():
            log.error("Skipping an unreadable partition state: %s", error)
        ctx.leadership.update(reads.states)

    def _read_brokers(self) -> dict[int, tuple[BrokerInfo, int]]:
        names = self.zk.children(znodes.BROKER_IDS_PATH, watch=self._on_brokers) or []
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

    def _load_topics(self, topics: Iterable[str]) -> list[TopicPartition]:
        """Reads topic znodes (watching each), gives topics without an id one, and adds their
        partitions to the context. Returns the partitions added."""
        added: list[TopicPartition] = []
        id_writes: list[SetData] = []
        for topic, node, data in self._read_topics(topics, "Skipping a topic"):
            self._muted.discard(topic)
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
        nodes = self.zk.get_many((znodes.topic_path(t) for t in topics), watch=self._on_topic_data)
        found = []
        for topic, node in zip(topics, nodes, strict=True):
            if node is None:
                continue
            try:
                found.append((topic, node, znodes.decode_topic(node.path, node.data)))
            except znodes.ZNodeDataError as e:
                if topic not in self._unreadable:  # a new topic's: said once, until it changes
                    log.error("%s whose znode cannot be read: %s", skipping, e)
                if topic not in self.ctx.all_topics:
                    self._unreadable.add(topic)
        return found

    def _write_topic_ids(self, writes: list[SetData]) -> None:
        """setTopicIds, but conditional on the version read: a topic znode changed meanwhile
        keeps its new content and is handled by its own modification event."""
        for write, failure in self.writer.apply_each(writes):
            log.warning("Topic id not written to %s: %s", write.path, failure)
            self.put(ev.PartitionModifications(write.path.rsplit("/", 1)[-1]))

    def _add_broker_channel(self, broker: int) -> None:
        self.writer.ensure_path(bc.requests_path(broker))
        self.writer.ensure_path(bc.responses_path(broker))
        self.zk.children(bc.responses_path(broker), watch=self._on_responses)

    def _topic_configs(self, topics: Iterable[str]) -> Mapping[str, Mapping[str, str]]:
        topics = sorted(set(topics))
        configs: dict[str, Mapping[str, str]] = {}
        for topic, node in zip(
            topics, self.zk.get_many(znodes.topic_config_path(t) for t in topics), strict=True
        ):
            if node is None:
                continue
            try:
                configs[topic] = znodes.decode_config(node.path, node.data)
            except znodes.ZNodeDataError as e:
                log.error("Using defaults for a topic whose config cannot be read: %s", e)
        return configs

    # ---- brokers ---------------------------------------------------------------------------------

    def _process_broker_change(self) -> None:
        ctx = self.ctx
        current = self._read_brokers()
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
            self._add_broker_channel(broker)
        if new:
            ctx.add_live_brokers({b: current[b] for b in new})
            self._on_broker_startup(new)
        if bounced:
            ctx.remove_live_brokers(bounced)
            self._on_broker_failure(bounced)
            ctx.add_live_brokers({b: current[b] for b in bounced})
            self._on_broker_startup(bounced)
        if dead:
            ctx.remove_live_brokers(dead)
            self._on_broker_failure(dead)

    def _on_broker_startup(self, new: list[int]) -> None:
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
            self._watch_broker(broker)

    def _on_broker_failure(self, dead: list[int]) -> None:
        log.info("Broker failure callback for %s", ",".join(map(str, dead)))
        for broker in dead:
            self.ctx.replicas_on_offline_dirs.pop(broker, None)
            self.ctx.shutting_down.discard(broker)
            for cid in [
                c for c, p in self.batch.pending_stop_replica.items() if p.broker_id == broker
            ]:
                del self.batch.pending_stop_replica[cid]
        self._on_replicas_become_offline(self.ctx.replicas_on_brokers(dead))

    def _on_replicas_become_offline(self, offline: list[PartitionAndReplica]) -> None:
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

    def _watch_broker(self, broker: int) -> None:
        """registerBrokerModificationsHandler: a data watch on the broker's registration."""
        self.zk.exists(znodes.broker_path(broker), watch=self._on_broker_data)

    def _process_broker_modification(self, broker: int) -> None:
        """processBrokerModification: new endpoints or features of a live broker replace the
        cached registration and every live broker is told (onBrokerUpdate)."""
        node = self.zk.get(znodes.broker_path(broker), watch=self._on_broker_data)
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

    # ---- topics ----------------------------------------------------------------------------------

    def _process_topic_change(self) -> None:
        ctx = self.ctx
        topics = set(self.zk.children(znodes.TOPICS_PATH, watch=self._on_topics) or [])
        self._unreadable &= topics
        new = sorted(topics - ctx.all_topics - self._unreadable)
        deleted = sorted(ctx.all_topics - topics)
        for topic in deleted:
            ctx.remove_topic(topic)
        added = self._load_topics(new)
        log.info(
            "New topics: [%s], deleted topics: [%s], %d new partitions",
            ",".join(new),
            ",".join(deleted),
            len(added),
        )
        if added:
            self._on_new_partition_creation(added)

    def _on_new_partition_creation(self, partitions: list[TopicPartition]) -> None:
        log.info("New partition creation callback for %d partitions", len(partitions))
        replicas = [PartitionAndReplica(tp, r) for tp in partitions for r in self.ctx.replicas(tp)]
        self.partition_sm.handle_state_changes(partitions, _P.NEW_PARTITION)
        self.replica_sm.handle_state_changes(replicas, _R.NEW_REPLICA)
        self.partition_sm.handle_state_changes(
            partitions, _P.ONLINE_PARTITION, election.OfflineElection()
        )
        self.replica_sm.handle_state_changes(replicas, _R.ONLINE_REPLICA)

    def _process_partition_modifications(self, topics: Sequence[str]) -> None:
        """PartitionModifications for each of `topics` (consecutive events coalesced, so a burst
        of topic znode changes costs one pipelined read)."""
        fixed = [t for t in dict.fromkeys(topics) if t in self._unreadable]
        if fixed:
            self._unreadable.difference_update(fixed)
            if added := self._load_topics(fixed):
                log.info("Topics readable again: [%s]", ",".join(fixed))
                self._on_new_partition_creation(added)
        topics = [
            t for t in dict.fromkeys(topics) if t not in self._muted and t in self.ctx.assignments
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
            self._on_new_partition_creation(created)

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

    def _process_topic_deletion(self) -> None:
        marked = self.zk.children(znodes.DELETE_TOPICS_PATH, watch=self._on_delete_topics) or []
        if marked:
            self.deletion.process_topic_deletion(marked)

    # ---- ISR changes -----------------------------------------------------------------------------

    def _process_isr_change_notification(self) -> None:
        names = (
            self.zk.children(znodes.ISR_CHANGE_NOTIFICATION_PATH, watch=self._on_isr_changes) or []
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
            self._delete_notifications(paths)

    def _children(self, path: str, watch: Any) -> list[str]:
        """The paths of `path`'s children, its child watch set."""
        return [f"{path}/{n}" for n in self.zk.children(path, watch=watch) or []]

    # ---- log dir failures ------------------------------------------------------------------------

    def _process_log_dir_event_notification(self) -> None:
        """processLogDirEventNotification: the brokers named are sent LeaderAndIsr for every
        replica they host (onBrokerLogDirFailure); their answers say which replicas are in a
        failed dir. The notifications read are deleted."""
        paths = self._children(znodes.LOG_DIR_EVENT_NOTIFICATION_PATH, self._on_log_dir_events)
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
            self._delete_notifications(paths)

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
            self._on_replicas_become_offline([PartitionAndReplica(tp, broker) for tp in new])

    def _delete_notifications(self, paths: list[str]) -> None:
        """Notifications read are deleted; one that cannot be (already gone) is left."""
        self.writer.apply_each([Delete(p) for p in paths])

    # ---- config changes --------------------------------------------------------------------------

    def _process_config_changes(self) -> None:
        """ZkNodeChangeNotificationListener.processNotifications with ZkConfigManager's handler,
        as the controller's own broker runs them: each notification newer than the last one
        processed names an entity whose config is read; a topic config that enables unclean
        leader election has the controller elect leaders for the topic's offline partitions
        (TopicConfigHandler.processConfigChanges, processTopicUncleanLeaderElectionEnable).
        Then notifications older than 15 minutes are purged."""
        path = znodes.CONFIG_CHANGES_PATH
        names = sorted(self.zk.children(path, watch=self._on_config_changes) or [])
        if not names:
            return
        now = time.time() * 1000
        prefix = znodes.CONFIG_CHANGE_PREFIX
        for name in names:
            number = name[len(prefix) :] if name.startswith(prefix) else name
            if _CHANGE_NUMBER.fullmatch(number) is None:
                # Kafka's toLong throws and the whole pass ends there, purge included.
                log.error(
                    "Error while processing notification change for path = %s: bad name %s",
                    path,
                    name,
                )
                return
            change = int(number)
            if change > self._last_config_change:
                self._process_config_change(f"{path}/{name}")
                self._last_config_change = change
        self._purge_config_changes(now, [f"{path}/{n}" for n in names])

    def _process_config_change(self, path: str) -> None:
        node = self.zk.get(path)
        if node is None:
            log.warning("read null data from %s", path)
            return
        try:
            change = znodes.decode_config_change(path, node.data)
        except znodes.ZNodeDataError as e:
            log.error("error processing change notification from %s: %s", path, e)
            return
        if change.entity_type == znodes.ConfigType.BROKER and change.entity_name in (
            str(self.broker_id),
            BROKER_DEFAULT_ENTITY,
        ):
            self._reconfigure_unclean_default()
            return
        topic = change.entity_name
        if change.entity_type != znodes.ConfigType.TOPIC or topic is None:
            return  # no other entity's config matters to the controller
        config = self._topic_configs([topic]).get(topic, {})
        log.info("Processing override for entityPath: %s with config: %s", change.entity_path,
                 config)  # fmt: skip
        # Scala's toBoolean: "true" in any case; anything else (or nothing) is false.
        if config.get("unclean.leader.election.enable", "").lower() == "true" and self.is_active:
            log.info("Unclean leader election has been enabled for topic %s", topic)
            self.partition_sm.trigger_online_partition_state_change(
                self.ctx.partitions_for_topic(topic)
            )

    def _dynamic_unclean_default(self) -> bool:
        """`unclean.leader.election.enable` as DynamicBrokerConfig resolves it for this broker:
        its own dynamic override, else the cluster-wide `<default>`, else the static setting.
        A value that is not a boolean is refused, as Kafka refuses the update: the current
        default stays."""
        for entity in (str(self.broker_id), BROKER_DEFAULT_ENTITY):
            node = self.zk.get(znodes.config_entity_path(znodes.ConfigType.BROKER, entity))
            if node is None:
                continue
            try:
                value = znodes.decode_config(node.path, node.data).get(UNCLEAN_KEY)
            except ZNodeDataError as e:
                log.error("Cannot read dynamic broker config: %s", e)
                continue
            if value is None:
                continue
            if value.lower() not in ("true", "false"):
                log.error("Invalid value %s for configuration %s in %s", value, UNCLEAN_KEY,
                          node.path)  # fmt: skip
                return self.partition_sm.unclean_default
            return value.lower() == "true"
        return self.config.unclean_leader_election_enable

    def _reconfigure_unclean_default(self) -> None:
        """DynamicLogConfig.reconfigure: turned on, the controller elects leaders for every
        offline partition (processUncleanLeaderElectionEnable)."""
        before = self.partition_sm.unclean_default
        after = self.partition_sm.unclean_default = self._dynamic_unclean_default()
        if after and not before and self.is_active:
            log.info("Unclean leader election has been enabled by default")
            self.partition_sm.trigger_online_partition_state_change()

    def _purge_config_changes(self, now: float, paths: list[str]) -> None:
        """purgeObsoleteNotifications. A notification is never changed, so its mtime is its
        creation time. Only the active controller purges here, its deletes fenced."""
        if not self.is_active:
            return
        expired = [
            node.path
            for node in self.zk.get_many(paths)
            if node is not None and now - node.mtime > CONFIG_CHANGE_EXPIRATION_MS
        ]
        for path in expired:
            log.debug("Purging change notification %s", path)
        self.writer.apply_each([Delete(p) for p in expired])  # one already gone is fine

    # ---- preferred replica elections -------------------------------------------------------------

    def _process_zk_preferred_election(self) -> None:
        path = znodes.PREFERRED_REPLICA_ELECTION_PATH
        if not self.zk.exists(path, watch=self._on_preferred_election):
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
            self._on_replica_election(electable, "ZkTriggered")
        finally:
            # removePartitionsFromPreferredReplicaElection: the delete's outcome is not looked
            # at (a znode someone else removed is fine), and an event looks again, so a request
            # written right after the delete is not missed.
            with contextlib.suppress(TransactionFailed):
                self.writer.apply([Delete(path)])
            self.put(ev.ReplicaLeaderElection())

    def _on_replica_election(self, partitions: list[TopicPartition], trigger: str) -> None:
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

    def _process_auto_preferred_election(self) -> None:
        try:
            self._check_and_trigger_auto_leader_rebalance()
        finally:
            if self.is_active and self.config.auto_leader_rebalance_enable:
                self._next_auto_rebalance = (
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
            self._on_replica_election(candidates, "AutoTriggered")

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

    # ---- controlled shutdown ---------------------------------------------------------------------

    def _process_controlled_shutdowns(self) -> None:
        names = (
            self.zk.children(bc.CONTROLLED_SHUTDOWN_PATH, watch=self._on_controlled_shutdown) or []
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

    # ---- broker responses ------------------------------------------------------------------------

    def _process_responses(self, broker: int) -> None:
        path = bc.responses_path(broker)
        names = self.zk.children(path, watch=self._on_responses) or []
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
        self._delete_notifications(paths)

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


def _with_topic_id(node: Node, data: znodes.TopicZNodeData, topic_id: str | None) -> SetData:
    """The topic znode rewritten with its id, conditional on the version read."""
    return SetData(node.path, znodes.encode_topic(data.partitions, topic_id), node.version)
