"""What the controller's managers share: its configuration, context, ZooKeeper client and
writer, request batch, state machines, deletion and reassignment, and its event queue and
watches. KafkaController builds one and hands it to each manager (`ControllerManager`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kafka_topic_operator.controller import events as ev
from kafka_topic_operator.controller.config import ControllerConfig
from kafka_topic_operator.controller.context import ControllerContext
from kafka_topic_operator.controller.deletion_manager import DeletionManager
from kafka_topic_operator.controller.event_manager import ControllerEventManager
from kafka_topic_operator.controller.partition_state_machine import PartitionStateMachine
from kafka_topic_operator.controller.reassignments import Reassignments
from kafka_topic_operator.controller.replica_state_machine import ReplicaStateMachine
from kafka_topic_operator.controller.request_batch import RequestBatch
from kafka_topic_operator.controller.watches import ControllerWatches
from kafka_topic_operator.controller.zk_writer import ControllerZkWriter
from kafka_topic_operator.zk.client import ZkClient


@dataclass(frozen=True)
class ControllerParts:
    config: ControllerConfig
    ctx: ControllerContext
    zk: ZkClient
    writer: ControllerZkWriter
    batch: RequestBatch
    partition_sm: PartitionStateMachine
    replica_sm: ReplicaStateMachine
    deletion: DeletionManager
    reassignments: Reassignments
    events: ControllerEventManager
    watches: ControllerWatches
    is_active: Callable[[], bool]


class ControllerManager:
    """A manager's view of the parts, under the names the controller's own code uses."""

    def __init__(self, parts: ControllerParts) -> None:
        self.config = parts.config
        self.broker_id = parts.config.broker_id
        self.ctx = parts.ctx
        self.zk = parts.zk
        self.writer = parts.writer
        self.batch = parts.batch
        self.partition_sm = parts.partition_sm
        self.replica_sm = parts.replica_sm
        self.deletion = parts.deletion
        self.reassignments = parts.reassignments
        self.events = parts.events
        self.watches = parts.watches
        self.is_active = parts.is_active

    def put(self, event: ev.ControllerEvent) -> None:
        self.events.put(event)
