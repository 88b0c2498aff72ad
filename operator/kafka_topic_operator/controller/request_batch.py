"""ControllerBrokerRequestBatch: LeaderAndIsr, UpdateMetadata and StopReplica requests gathered
per broker during one state change, then written to the brokers' queues in ZooKeeper
(`docs/broker-channel.md`), each create fenced by the controller epoch.

Requests to brokers that are not live are dropped, as Kafka's channel manager drops them. A
request with more partitions than fit a znode is split into several of the same kind.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.controller.channel_sender import (
    ChannelSender,
    Undelivered,
    write_requests,
)
from kafka_topic_operator.controller.context import ControllerContext
from kafka_topic_operator.controller.zk_reads import chunks
from kafka_topic_operator.controller.zk_writer import ControllerZkWriter
from kafka_topic_operator.kafka.errors import IllegalStateException
from kafka_topic_operator.kafka.leader_and_isr import (
    EPOCH_DURING_DELETE,
    NO_EPOCH,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
)
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk.client import ZkClient

log = logging.getLogger(__name__)

PARTITIONS_PER_REQUEST: Final = 2000
"""About 200 bytes a partition state: 2,000 keep a request znode near 400 KB, under 1 MiB."""


@dataclass
class PendingStopReplica:
    """A sent StopReplica: the partitions it asked the broker to delete."""

    broker_id: int
    deletes: frozenset[TopicPartition]


@dataclass
class SentRequests:
    """What one `send` wrote, for tests and logs: (broker id, request) in queue order."""

    requests: list[tuple[int, bc.Request]] = field(default_factory=list)


class RequestBatch:
    def __init__(
        self,
        ctx: ControllerContext,
        zk: ZkClient,
        controller_id: int,
        sender: ChannelSender | None = None,
    ) -> None:
        """With a sender, `send` hands the requests over and returns at once; without, it
        writes them before returning."""
        self.ctx = ctx
        self.zk = zk
        self.writer = ControllerZkWriter(zk, ctx)
        self.sender = sender
        self.controller_id = controller_id
        self._leader_and_isr: dict[int, dict[TopicPartition, bc.LeaderAndIsrPartitionState]] = {}
        self._stop_replica: dict[int, dict[TopicPartition, bc.StopReplicaPartitionState]] = {}
        self._update_metadata_brokers: set[int] = set()
        self._update_metadata: dict[TopicPartition, bc.UpdateMetadataPartitionState] = {}
        self._next_correlation_id = 0
        self.pending_stop_replica: dict[int, PendingStopReplica] = {}
        self.last_sent = SentRequests()

    def reset_correlation_ids(self) -> None:
        # Each controller epoch numbers its requests from its own range, so a late response to
        # an earlier controller's request is never mistaken for an answer to ours.
        self._next_correlation_id = (self.ctx.epoch % 2048) << 20
        self.pending_stop_replica.clear()

    @property
    def is_empty(self) -> bool:
        return not (self._leader_and_isr or self._stop_replica or self._update_metadata_brokers)

    def new_batch(self) -> None:
        if not self.is_empty:
            raise IllegalStateException(
                "Controller to broker state change requests batch is not empty while creating "
                f"a new one. Some LeaderAndIsr state changes {self._leader_and_isr} might be "
                "lost "
            )

    def clear(self) -> None:
        self._leader_and_isr.clear()
        self._stop_replica.clear()
        self._update_metadata_brokers.clear()
        self._update_metadata.clear()

    # ---- adding ----------------------------------------------------------------------------------

    def add_leader_and_isr(
        self,
        brokers: Iterable[int],
        tp: TopicPartition,
        leadership: LeaderIsrAndControllerEpoch,
        assignment: ReplicaAssignment,
        is_new: bool,
    ) -> None:
        lai = leadership.leader_and_isr
        state = bc.LeaderAndIsrPartitionState(
            topic=tp.topic,
            partition=tp.partition,
            controller_epoch=leadership.controller_epoch,
            leader=lai.leader,
            leader_epoch=lai.leader_epoch,
            isr=lai.isr,
            partition_epoch=lai.partition_epoch,
            replicas=assignment.replicas,
            adding_replicas=assignment.adding_replicas,
            removing_replicas=assignment.removing_replicas,
            is_new=is_new,
            leader_recovery_state=lai.leader_recovery_state,
        )
        for broker in brokers:
            if broker < 0:
                continue
            per_broker = self._leader_and_isr.setdefault(broker, {})
            already_new = (old := per_broker.get(tp)) is not None and old.is_new
            per_broker[tp] = state._replace(is_new=True) if already_new and not is_new else state
        self._update_metadata_brokers.update(self.ctx.live_brokers)
        self._add_update_metadata(tp, self.ctx.online_brokers()(tp))

    def add_stop_replica(self, brokers: Iterable[int], tp: TopicPartition, delete: bool) -> None:
        self.add_stop_replicas(brokers, (tp,), delete)

    def add_stop_replicas(
        self, brokers: Iterable[int], partitions: Iterable[TopicPartition], delete: bool
    ) -> None:
        """addStopReplicaRequestForBrokers for each partition in turn."""
        brokers = [b for b in brokers if b >= 0]
        live = [b for b in brokers if b in self.ctx.live_brokers]
        for broker in brokers:
            # An offline broker is named at `send` (not sent to, and said so) with no states: a
            # dead broker's tens of thousands of replicas would be made only to be dropped.
            self._stop_replica.setdefault(broker, {})
        if not live:
            return
        for tp in partitions:
            if tp.topic in self.ctx.topics_to_be_deleted:
                leader_epoch = EPOCH_DURING_DELETE
            elif (leadership := self.ctx.leadership.get(tp)) is not None:
                leader_epoch = leadership.leader_and_isr.leader_epoch
            else:
                leader_epoch = NO_EPOCH
            for broker in live:
                per_broker = self._stop_replica[broker]
                already_delete = (old := per_broker.get(tp)) is not None and old.delete_partition
                per_broker[tp] = bc.StopReplicaPartitionState(
                    tp.topic, tp.partition, leader_epoch, already_delete or delete
                )

    def add_update_metadata(
        self, brokers: Iterable[int], partitions: Iterable[TopicPartition]
    ) -> None:
        self._update_metadata_brokers.update(b for b in brokers if b >= 0)
        online = self.ctx.online_brokers()
        for tp in partitions:
            self._add_update_metadata(tp, online(tp))

    def _add_update_metadata(self, tp: TopicPartition, online: set[int]) -> None:
        # Replicas on brokers that are not live or are shutting down are offline.
        leadership = self.ctx.leadership.get(tp)
        if leadership is None:
            log.debug("Leader not yet assigned for partition %s. Skip sending UpdateMetadata", tp)
            return
        replicas = self.ctx.replicas(tp)
        lai = leadership.leader_and_isr
        if tp.topic in self.ctx.topics_to_be_deleted:
            lai = LeaderAndIsr.during_delete(lai.isr)
        self._update_metadata[tp] = bc.UpdateMetadataPartitionState(
            topic=tp.topic,
            partition=tp.partition,
            controller_epoch=leadership.controller_epoch,
            leader=lai.leader,
            leader_epoch=lai.leader_epoch,
            isr=lai.isr,
            zk_version=lai.partition_epoch,
            replicas=replicas,
            offline_replicas=()
            if online.issuperset(replicas)
            else tuple(r for r in replicas if r not in online),
        )

    # ---- sending ---------------------------------------------------------------------------------

    def send(self) -> SentRequests:
        """sendRequestsToBrokers: LeaderAndIsr, then UpdateMetadata, then StopReplica."""
        sent = SentRequests()
        try:
            for broker, states in sorted(self._leader_and_isr.items()):
                if self._reachable(broker, "LeaderAndIsr"):
                    for part in chunks(list(states.values()), PARTITIONS_PER_REQUEST):
                        sent.requests.append((broker, self._leader_and_isr_request(broker, part)))
            if self._update_metadata_brokers:
                states_um = list(self._update_metadata.values())
                live = self._live_brokers()
                # The same objects for every broker, so their JSON is encoded once.
                parts_um = [
                    (tuple(part), self._topic_ids(s.topic for s in part))
                    for part in (chunks(states_um, PARTITIONS_PER_REQUEST) if states_um else [[]])
                ]
                for broker in sorted(self._update_metadata_brokers):
                    if not self._reachable(broker, "UpdateMetadata"):
                        continue
                    for part_um, topic_ids in parts_um:
                        sent.requests.append(
                            (
                                broker,
                                bc.UpdateMetadataRequest(
                                    self.controller_id,
                                    self.ctx.epoch,
                                    self._broker_epoch(broker),
                                    part_um,
                                    live,
                                    topic_ids,
                                    correlation_id=self._correlation_id(),
                                ),
                            )
                        )
            for broker, stops in sorted(self._stop_replica.items()):
                if not self._reachable(broker, "StopReplica"):
                    continue
                for part_sr in chunks(list(stops.values()), PARTITIONS_PER_REQUEST):
                    request = bc.StopReplicaRequest(
                        self.controller_id,
                        self.ctx.epoch,
                        self._broker_epoch(broker),
                        tuple(part_sr),
                        correlation_id=self._correlation_id(),
                    )
                    deletes = frozenset(s.topic_partition for s in part_sr if s.delete_partition)
                    if deletes:
                        self.pending_stop_replica[request.correlation_id] = PendingStopReplica(
                            broker, deletes
                        )
                    sent.requests.append((broker, request))
        finally:
            self.clear()
        self._write(sent.requests)
        self.last_sent = sent
        return sent

    def _write(self, requests: Sequence[tuple[int, bc.Request]]) -> None:
        fence = self.writer.fence()
        if self.sender is not None:
            self.sender.submit(requests, fence)
            return
        for lost in write_requests(self.zk, requests, fence):
            self.undelivered(lost)

    def undelivered(self, lost: Undelivered) -> None:
        """The request is dropped, as a request to an unreachable broker is in Kafka."""
        log.warning(
            "Not sending %s request %d to broker %d: %s",
            lost.request.TYPE,
            lost.request.correlation_id,
            lost.broker,
            lost.reason,
        )
        self.pending_stop_replica.pop(lost.request.correlation_id, None)

    def _reachable(self, broker: int, what: str) -> bool:
        if broker in self.ctx.live_brokers:
            return True
        log.info("Not sending %s request to broker %d, since it is offline.", what, broker)
        return False

    def _correlation_id(self) -> int:
        self._next_correlation_id = (self._next_correlation_id + 1) & 0x7FFFFFFF
        return self._next_correlation_id

    def _broker_epoch(self, broker: int) -> int:
        return self.ctx.broker_epochs.get(broker, bc.UNKNOWN_BROKER_EPOCH)

    def _topic_ids(self, topics: Iterable[str]) -> dict[str, str]:
        return {t: self.ctx.topic_ids[t] for t in set(topics) if t in self.ctx.topic_ids}

    def _live_brokers(self) -> tuple[bc.LiveBroker, ...]:
        return tuple(
            bc.LiveBroker(info.id, info.endpoints, info.rack)
            for _, info in sorted(self.ctx.live_brokers.items())
        )

    def _leader_and_isr_request(
        self, broker: int, states: Sequence[bc.LeaderAndIsrPartitionState]
    ) -> bc.LeaderAndIsrRequest:
        leaders = []
        for leader in sorted({s.leader for s in states}):
            info = self.ctx.live_brokers.get(leader)
            if info is not None and info.endpoints:
                endpoint = info.endpoints[0]
                leaders.append(bc.BrokerEndpointRef(leader, endpoint.host or "", endpoint.port))
        return bc.LeaderAndIsrRequest(
            self.controller_id,
            self.ctx.epoch,
            self._broker_epoch(broker),
            tuple(states),
            self._topic_ids(s.topic for s in states),
            tuple(leaders),
            correlation_id=self._correlation_id(),
        )
