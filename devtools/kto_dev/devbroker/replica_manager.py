"""What a broker does with controller requests, as kafka.server.ReplicaManager and KafkaApis do.

Epoch fencing (broker epoch, controller epoch, leader epoch), becoming leader or follower with a
log on disk, StopReplica with and without deletion, the metadata cache, and which ISR expansions
a leader owes. No ZooKeeper here: the broker applies what this decides.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from kafka_topic_operator.broker_channel import (
    UNKNOWN_BROKER_EPOCH,
    Errors,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    LiveBroker,
    PartitionError,
    Request,
    Response,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
)
from kafka_topic_operator.kafka.ids import ZERO_UUID
from kafka_topic_operator.kafka.leader_and_isr import (
    EPOCH_DURING_DELETE,
    LEADER_DURING_DELETE,
    NO_EPOCH,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    LeaderRecoveryState,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kto_dev.devbroker.log_dirs import LogDir

log = logging.getLogger(__name__)

INITIAL_CONTROLLER_EPOCH = 0
"""KafkaController.InitialControllerEpoch; a broker starts at one below it."""


class Role(StrEnum):
    LEADER = "leader"
    FOLLOWER = "follower"
    STOPPED = "stopped"
    """Hosted, but told to stop replicating (StopReplica without deletion)."""


@dataclass
class HostedPartition:
    """A partition this broker hosts (Kafka's Partition), as the last accepted LeaderAndIsr set it
    and this broker's own ISR writes moved it."""

    topic_partition: TopicPartition
    role: Role
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    controller_epoch: int
    leader_recovery_state: LeaderRecoveryState
    topic_id: str | None

    def to_json(self) -> dict[str, object]:
        return {
            "topic": self.topic_partition.topic,
            "partition": self.topic_partition.partition,
            "role": self.role.value,
            "leader": self.leader,
            "leader_epoch": self.leader_epoch,
            "isr": list(self.isr),
            "partition_epoch": self.partition_epoch,
            "replicas": list(self.replicas),
            "adding_replicas": list(self.adding_replicas),
            "removing_replicas": list(self.removing_replicas),
            "controller_epoch": self.controller_epoch,
            "topic_id": self.topic_id,
        }


@dataclass
class MetadataCache:
    """ZkMetadataCache: what the last UpdateMetadata said about brokers and partitions."""

    controller_id: int | None = None
    live_brokers: dict[int, LiveBroker] = field(default_factory=dict)
    partitions: dict[TopicPartition, UpdateMetadataPartitionState] = field(default_factory=dict)
    topic_ids: dict[str, str] = field(default_factory=dict)
    # How many partitions each topic has here: an update looks only at the topics it names
    # (looking at every partition made each request cost the whole cluster, and a burst of new
    # topics quadratic: a third of a dev broker's CPU while 2,000 topics were created).
    _partition_counts: Counter[str] = field(default_factory=Counter, init=False, repr=False)

    def update(self, request: UpdateMetadataRequest) -> list[TopicPartition]:
        """Applies the request; returns the partitions it deleted (leader -2). A topic's id goes
        with its last partition (removePartitionInfo)."""
        self.controller_id = request.controller_id if request.controller_id >= 0 else None
        self.live_brokers = {b.id: b for b in request.live_brokers}
        counts = self._partition_counts
        deleted = []
        for state in request.partition_states:
            tp = state.topic_partition
            if state.leader == LEADER_DURING_DELETE:
                if self.partitions.pop(tp, None) is not None:
                    deleted.append(tp)
                    counts[tp.topic] -= 1
            else:
                if tp not in self.partitions:
                    counts[tp.topic] += 1
                self.partitions[tp] = state
        self.topic_ids.update(request.topic_ids)
        named = {s.topic for s in request.partition_states}.union(request.topic_ids)
        for topic in named:
            if counts[topic] <= 0:
                del counts[topic]
                self.topic_ids.pop(topic, None)
        return deleted

    def leaders(self) -> dict[str, dict[int, int]]:
        """Each topic's partitions with their leaders, as a client asking this broker is told."""
        found: dict[str, dict[int, int]] = {}
        for tp, state in self.partitions.items():
            found.setdefault(tp.topic, {})[tp.partition] = state.leader
        return found

    def to_json(self) -> dict[str, object]:
        # Counts, not the partitions: the cache holds every partition of the cluster.
        return {
            "controller_id": self.controller_id,
            "live_brokers": sorted(self.live_brokers),
            "partitions": len(self.partitions),
            "topics": len(self._partition_counts),
        }


@dataclass(frozen=True, slots=True)
class IsrExpansion:
    """A conditional write the leader owes: `state` to the partition's state znode, expecting
    the znode version `state.leader_and_isr.partition_epoch`."""

    topic_partition: TopicPartition
    state: LeaderIsrAndControllerEpoch
    added: tuple[int, ...]


def _topic_id(raw: str | None) -> str | None:
    # topicIdFromRequest: a missing or zero id is no id.
    return None if raw is None or raw == str(ZERO_UUID) else raw


def _consistent(request_id: str | None, log_id: str | None) -> bool:
    return request_id is None or log_id is None or request_id == log_id


class ReplicaManager:
    """The broker's request handling state; one thread drives it."""

    def __init__(self, broker_id: int, log_dir: LogDir) -> None:
        self.broker_id = broker_id
        self.log_dir = log_dir
        self.broker_epoch = UNKNOWN_BROKER_EPOCH
        self.controller_epoch = INITIAL_CONTROLLER_EPOCH - 1
        self.partitions: dict[TopicPartition, HostedPartition] = {}
        # Partitions a LeaderAndIsr changed since the leader last looked for ISR expansions.
        self.changed: set[TopicPartition] = set()
        self.metadata = MetadataCache()
        self._prefix = f"[Broker id={broker_id}] "

    def handle(self, request: Request) -> Response:
        match request:
            case LeaderAndIsrRequest():
                return self.become_leader_or_follower(request)
            case UpdateMetadataRequest():
                return self.update_metadata(request)
            case StopReplicaRequest():
                return self.stop_replicas(request)

    def _broker_epoch_stale(self, request_epoch: int) -> bool:
        # KafkaApis.isBrokerEpochStale: a larger epoch is possible when the controller learns of
        # a re-registration before the broker does, so only a smaller one is stale.
        return request_epoch != UNKNOWN_BROKER_EPOCH and request_epoch < self.broker_epoch

    # ---- LeaderAndIsr -----------------------------------------------------------------------

    def become_leader_or_follower(self, request: LeaderAndIsrRequest) -> LeaderAndIsrResponse:
        cid, controller = request.correlation_id, request.controller_id
        if self._broker_epoch_stale(request.broker_epoch):
            log.info(
                "%sReceived LeaderAndIsr request with broker epoch %d smaller than the current "
                "broker epoch %d",
                self._prefix,
                request.broker_epoch,
                self.broker_epoch,
            )
            return request.error_response(Errors.STALE_BROKER_EPOCH)
        if request.controller_epoch < self.controller_epoch:
            log.warning(
                "%sIgnoring LeaderAndIsr request from controller %d with correlation id %d since "
                "its controller epoch %d is old. Latest known controller epoch is %d",
                self._prefix,
                controller,
                cid,
                request.controller_epoch,
                self.controller_epoch,
            )
            return request.error_response(Errors.STALE_CONTROLLER_EPOCH)
        self.controller_epoch = request.controller_epoch
        epoch = self.controller_epoch

        errors: dict[TopicPartition, str] = {}
        for state in request.partition_states:
            tp = state.topic_partition
            hosted = self.partitions.get(tp)
            request_topic_id = _topic_id(request.topic_ids.get(tp.topic))
            try:
                log_topic_id = hosted.topic_id if hosted else self.log_dir.topic_id(tp)
            except OSError:
                log_topic_id = None
            current_epoch = hosted.leader_epoch if hosted else NO_EPOCH
            if not _consistent(request_topic_id, log_topic_id):
                log.error(
                    "%sTopic ID in memory: %s does not match the topic ID for partition %s "
                    "received: %s.",
                    self._prefix,
                    log_topic_id,
                    tp,
                    request_topic_id,
                )
                errors[tp] = Errors.INCONSISTENT_TOPIC_ID
            elif state.leader_epoch > current_epoch:
                if self.broker_id in state.replicas:
                    errors[tp] = self._become(state, request_topic_id or log_topic_id, cid, epoch)
                else:
                    log.warning(
                        "%sIgnoring LeaderAndIsr request from controller %d with correlation id "
                        "%d epoch %d for partition %s as itself is not in assigned replica list "
                        "%s",
                        self._prefix,
                        controller,
                        cid,
                        epoch,
                        tp,
                        ",".join(map(str, state.replicas)),
                    )
                    errors[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
            elif state.leader_epoch < current_epoch:
                log.warning(
                    "%sIgnoring LeaderAndIsr request from controller %d with correlation id %d "
                    "epoch %d for partition %s since its associated leader epoch %d is smaller "
                    "than the current leader epoch %d",
                    self._prefix,
                    controller,
                    cid,
                    epoch,
                    tp,
                    state.leader_epoch,
                    current_epoch,
                )
                errors[tp] = Errors.STALE_CONTROLLER_EPOCH
            elif hosted is not None and request_topic_id is not None and hosted.topic_id is None:
                # The controller may hand out topic ids without bumping the leader epoch.
                errors[tp] = self._assign_topic_id(hosted, request_topic_id)
            else:
                log.info(
                    "%sIgnoring LeaderAndIsr request from controller %d with correlation id %d "
                    "epoch %d for partition %s since its associated leader epoch %d matches the "
                    "current leader epoch",
                    self._prefix,
                    controller,
                    cid,
                    epoch,
                    tp,
                    state.leader_epoch,
                )
                errors[tp] = Errors.STALE_CONTROLLER_EPOCH
        try:
            self.log_dir.flush()
        except OSError as e:
            log.error("%sError while flushing log dir %s: %s", self._prefix, self.log_dir.path, e)
            errors = {
                tp: Errors.KAFKA_STORAGE_ERROR if error == Errors.NONE else error
                for tp, error in errors.items()
            }
        return LeaderAndIsrResponse(
            Errors.NONE,
            tuple(PartitionError(tp.topic, tp.partition, e) for tp, e in errors.items()),
            correlation_id=cid,
        )

    def _become(
        self,
        state: LeaderAndIsrPartitionState,
        topic_id: str | None,
        correlation_id: int,
        controller_epoch: int,
    ) -> str:
        tp = state.topic_partition
        try:
            self.log_dir.create_log(tp, topic_id)
        except OSError as e:
            log.error(
                "%sError while making broker the %s for partition %s in dir %s: %s",
                self._prefix,
                "leader" if state.leader == self.broker_id else "follower",
                tp,
                self.log_dir.path,
                e,
            )
            return Errors.KAFKA_STORAGE_ERROR
        role = Role.LEADER if state.leader == self.broker_id else Role.FOLLOWER
        self.changed.add(tp)
        self.partitions[tp] = HostedPartition(
            topic_partition=tp,
            role=role,
            leader=state.leader,
            leader_epoch=state.leader_epoch,
            isr=state.isr,
            partition_epoch=state.partition_epoch,
            replicas=state.replicas,
            adding_replicas=state.adding_replicas,
            removing_replicas=state.removing_replicas,
            controller_epoch=state.controller_epoch,
            leader_recovery_state=state.leader_recovery_state,
            topic_id=topic_id,
        )
        if role is Role.LEADER:
            log.info(
                "%sLeader %s starts at leader epoch %d from offset 0 with partition epoch %d, "
                "ISR [%s] (correlation id %d, controller epoch %d)",
                self._prefix,
                tp,
                state.leader_epoch,
                state.partition_epoch,
                ",".join(map(str, state.isr)),
                correlation_id,
                controller_epoch,
            )
        else:
            log.info(
                "%sFollower %s starts at leader epoch %d from offset 0 with partition epoch %d "
                "and leader %d (correlation id %d, controller epoch %d)",
                self._prefix,
                tp,
                state.leader_epoch,
                state.partition_epoch,
                state.leader,
                correlation_id,
                controller_epoch,
            )
        return Errors.NONE

    def _assign_topic_id(self, hosted: HostedPartition, topic_id: str) -> str:
        try:
            self.log_dir.create_log(hosted.topic_partition, topic_id)
        except OSError:
            return Errors.KAFKA_STORAGE_ERROR
        hosted.topic_id = topic_id
        log.info(
            "%sUpdating log for %s to assign topic ID %s",
            self._prefix,
            hosted.topic_partition,
            topic_id,
        )
        return Errors.NONE

    # ---- UpdateMetadata ---------------------------------------------------------------------

    def update_metadata(self, request: UpdateMetadataRequest) -> UpdateMetadataResponse:
        if self._broker_epoch_stale(request.broker_epoch):
            log.info(
                "%sReceived update metadata request with broker epoch %d smaller than the current "
                "broker epoch %d",
                self._prefix,
                request.broker_epoch,
                self.broker_epoch,
            )
            return request.error_response(Errors.STALE_BROKER_EPOCH)
        if request.controller_epoch < self.controller_epoch:
            log.warning(
                "%sReceived update metadata request with correlation id %d from an old "
                "controller %d with epoch %d. Latest known controller epoch is %d",
                self._prefix,
                request.correlation_id,
                request.controller_id,
                request.controller_epoch,
                self.controller_epoch,
            )
            return request.error_response(Errors.STALE_CONTROLLER_EPOCH)
        self.metadata.update(request)
        self.controller_epoch = request.controller_epoch
        return UpdateMetadataResponse(Errors.NONE, correlation_id=request.correlation_id)

    # ---- StopReplica ------------------------------------------------------------------------

    def stop_replicas(self, request: StopReplicaRequest) -> StopReplicaResponse:
        cid, controller = request.correlation_id, request.controller_id
        if self._broker_epoch_stale(request.broker_epoch):
            log.info(
                "%sReceived stop replica request with broker epoch %d smaller than the current "
                "broker epoch %d",
                self._prefix,
                request.broker_epoch,
                self.broker_epoch,
            )
            return request.error_response(Errors.STALE_BROKER_EPOCH)
        if request.controller_epoch < self.controller_epoch:
            log.warning(
                "%sIgnoring StopReplica request from controller %d with correlation id %d since "
                "its controller epoch %d is old. Latest known controller epoch is %d",
                self._prefix,
                controller,
                cid,
                request.controller_epoch,
                self.controller_epoch,
            )
            # ReplicaManager.stopReplicas answers a stale controller with no partition errors.
            return StopReplicaResponse(Errors.STALE_CONTROLLER_EPOCH, correlation_id=cid)
        self.controller_epoch = request.controller_epoch
        epoch = self.controller_epoch

        errors: dict[TopicPartition, str] = {}
        for state in request.partition_states:
            tp = state.topic_partition
            delete = state.delete_partition
            hosted = self.partitions.get(tp)
            # ReplicaManager.stopReplicas: a request epoch at least the current one stops the
            # replica; the delete sentinel (-2) and NoEpoch (-1) skip the check.
            if (
                hosted is not None
                and state.leader_epoch not in (EPOCH_DURING_DELETE, NO_EPOCH)
                and state.leader_epoch < hosted.leader_epoch
            ):
                log.warning(
                    "%sIgnoring StopReplica request (delete=%s) from controller %d with "
                    "correlation id %d epoch %d for partition %s since its associated leader "
                    "epoch %d is smaller than the current leader epoch %d",
                    self._prefix,
                    str(delete).lower(),
                    controller,
                    cid,
                    epoch,
                    tp,
                    state.leader_epoch,
                    hosted.leader_epoch,
                )
                errors[tp] = Errors.FENCED_LEADER_EPOCH
                continue
            errors[tp] = self._stop(tp, delete, cid, controller, epoch)
        return StopReplicaResponse(
            Errors.NONE,
            tuple(PartitionError(tp.topic, tp.partition, e) for tp, e in errors.items()),
            correlation_id=cid,
        )

    def _stop(
        self, tp: TopicPartition, delete: bool, correlation_id: int, controller: int, epoch: int
    ) -> str:
        if not delete:
            hosted = self.partitions.get(tp)
            if hosted is not None:
                hosted.role = Role.STOPPED
            return Errors.NONE
        self.partitions.pop(tp, None)
        try:
            self.log_dir.delete_log(tp)
        except OSError as e:
            log.error(
                "%sIgnoring StopReplica request (delete=true) from controller %d with correlation "
                "id %d epoch %d for partition %s as the local replica for the partition is in an "
                "offline log directory (%s)",
                self._prefix,
                controller,
                correlation_id,
                epoch,
                tp,
                e,
            )
            return Errors.KAFKA_STORAGE_ERROR
        return Errors.NONE

    # ---- ISR expansion (the leader's side of Partition.maybeExpandIsr) ----------------------

    def following(self) -> dict[int, dict[str, dict[int, int]]]:
        """What this broker follows, by leader: each topic's partitions with the leader epoch
        followed (what its fetches would carry)."""
        out: dict[int, dict[str, dict[int, int]]] = {}
        for tp, p in self.partitions.items():
            if p.role is Role.FOLLOWER and p.leader >= 0 and p.leader != self.broker_id:
                out.setdefault(p.leader, {}).setdefault(tp.topic, {})[tp.partition] = p.leader_epoch
        return out

    def isr_expansions(
        self,
        live_brokers: Iterable[int],
        fetchers: Mapping[int, Mapping[TopicPartition, int]],
        among: Iterable[TopicPartition] | None = None,
    ) -> list[IsrExpansion]:
        """For each partition this broker leads (of `among`, or all): the assigned replicas that
        are alive, not in the ISR, and follow it at its leader epoch (`fetchers`: each broker's
        partitions followed from this one, with their epochs) join it. A dev broker holds no
        data, so a follower is always caught up."""
        live = set(live_brokers)
        out = []
        candidates = self.partitions if among is None else among
        for tp in candidates:
            p = self.partitions.get(tp)
            if p is None or p.role is not Role.LEADER or p.leader != self.broker_id:
                continue
            added = tuple(
                r
                for r in dict.fromkeys(p.replicas)
                if r not in p.isr
                and r in live
                and (r == self.broker_id or fetchers.get(r, {}).get(tp) == p.leader_epoch)
            )
            if not added:
                continue
            # Partition.prepareIsrExpand: same leader and leader epoch, RECOVERED, the partition
            # epoch it knows as the expected znode version. The controller epoch is the current
            # controller's, as its AlterPartition write carries (processAlterPartition), not the
            # one of the LeaderAndIsr that made this broker leader.
            state = LeaderIsrAndControllerEpoch(
                LeaderAndIsr(
                    leader=self.broker_id,
                    isr=p.isr + added,
                    leader_epoch=p.leader_epoch,
                    leader_recovery_state=LeaderRecoveryState.RECOVERED,
                    partition_epoch=p.partition_epoch,
                ),
                self.controller_epoch,
            )
            out.append(IsrExpansion(tp, state, added))
        return sorted(out, key=lambda e: e.topic_partition)

    def leads(self, tp: TopicPartition, leader_epoch: int) -> bool:
        p = self.partitions.get(tp)
        return (
            p is not None
            and p.role is Role.LEADER
            and p.leader == self.broker_id
            and p.leader_epoch == leader_epoch
        )

    def isr_updated(self, tp: TopicPartition, isr: tuple[int, ...], partition_epoch: int) -> None:
        p = self.partitions.get(tp)
        if p is not None:
            p.isr = isr
            p.partition_epoch = partition_epoch
            p.leader_recovery_state = LeaderRecoveryState.RECOVERED

    # ---- status -----------------------------------------------------------------------------

    def to_json(self) -> dict[str, object]:
        return {
            "broker_id": self.broker_id,
            "broker_epoch": self.broker_epoch,
            "controller_epoch": self.controller_epoch,
            "partitions": [p.to_json() for _, p in sorted(self.partitions.items())],
            "metadata": self.metadata.to_json(),
        }
