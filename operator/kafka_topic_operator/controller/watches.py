"""The controller's ZooKeeper watches and session listener (KafkaController's ZNodeChangeHandlers
and StateChangeHandler): each turns what kazoo reports into a controller event, and only puts it
on the queue; the event thread does the rest.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from kafka_topic_operator.controller import events as ev
from kafka_topic_operator.controller.event_manager import ControllerEventManager
from kafka_topic_operator.kafka.topic_partition import TopicPartition


class ControllerWatches:
    def __init__(self, events: ControllerEventManager, session_id: Callable[[], int]) -> None:
        self.events = events
        self.session_id = session_id
        # A Rewatch is queued and not yet handled: kazoo's pathless calls add no other.
        self.rewatch_pending = False
        self._session_lost = False

    def on_session_state(self, state: str) -> None:
        if state == "LOST":
            self._session_lost = True
            # Kafka's clearAndPut(Expire): what was queued in the old session is not handled.
            # kazoo still holds the old session's id.
            self.events.clear_and_put(ev.Expire(self.session_id()))
        elif state == "CONNECTED" and self._session_lost:
            self._session_lost = False
            self.events.put(ev.Reelect())

    def on_controller_znode(self, _event: Any) -> None:
        self.events.put(ev.ControllerChange())

    def on_brokers(self, _event: Any) -> None:
        self.events.put(ev.BrokerChange())

    def on_broker_data(self, event: Any) -> None:
        if event.path is None:
            self._on_pathless()
            return
        # BrokerModificationsHandler reacts to data changes only.
        if str(event.type) == "CHANGED":
            with contextlib.suppress(IndexError, ValueError):
                self.events.put(ev.BrokerModifications(int(str(event.path).rsplit("/", 1)[-1])))

    def on_topics(self, _event: Any) -> None:
        self.events.put(ev.TopicChange())

    def _on_pathless(self) -> None:
        # kazoo, on a dropped connection, calls each watch once with no path and forgets it
        # (it never sets watches again as ZooKeeper's Java client does): one Rewatch for all.
        if not self.rewatch_pending:
            self.rewatch_pending = True
            self.events.put(ev.Rewatch())

    def on_topic_data(self, event: Any) -> None:
        if event.path is None:
            self._on_pathless()
            return
        topic = str(event.path).rsplit("/", 1)[-1]
        self.events.put(ev.PartitionModifications(topic))

    def on_delete_topics(self, _event: Any) -> None:
        self.events.put(ev.TopicDeletion())

    def on_reassign_znode(self, event: Any) -> None:
        # PartitionReassignmentHandler acts on the znode's creation only. A change or a deletion
        # by someone else spends the watch: Kafka's client sets it again only when the
        # controller next reads the znode (a reassignment finishing, a failover).
        if event.path is None:  # kazoo forgot it with the connection; Kafka's client keeps it
            self.events.put(ev.ZkPartitionReassignment(created=False))
        elif str(event.type) == "CREATED":
            self.events.put(ev.ZkPartitionReassignment())

    def on_reassigning_state(self, event: Any) -> None:
        if event.path is None:
            self._on_pathless()
            return
        parts = str(event.path).split("/")  # /brokers/topics/<t>/partitions/<p>/state
        with contextlib.suppress(IndexError, ValueError):
            self.events.put(
                ev.PartitionReassignmentIsrChange(TopicPartition(parts[3], int(parts[5])))
            )

    def on_isr_changes(self, _event: Any) -> None:
        self.events.put(ev.IsrChangeNotification())

    def on_log_dir_events(self, _event: Any) -> None:
        self.events.put(ev.LogDirEventNotification())

    def on_config_changes(self, _event: Any) -> None:
        self.events.put(ev.ConfigChanges())

    def on_preferred_election(self, _event: Any) -> None:
        self.events.put(ev.ReplicaLeaderElection())

    def on_controlled_shutdown(self, _event: Any) -> None:
        self.events.put(ev.ControlledShutdown())

    def on_responses(self, event: Any) -> None:
        if event.path is None:
            self._on_pathless()
            return
        with contextlib.suppress(IndexError, ValueError):
            self.events.put(ev.BrokerResponses(int(str(event.path).split("/")[3])))
