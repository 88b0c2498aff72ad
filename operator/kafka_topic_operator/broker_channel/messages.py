"""The broker channel's messages as typed records: Kafka's LeaderAndIsr, UpdateMetadata and
StopReplica requests and responses, and the ControlledShutdown exchange, with field names from
Kafka's request schemas (`LeaderAndIsrRequest.json` and friends)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, Final, NamedTuple

from kafka_topic_operator.kafka.brokers import EndPoint
from kafka_topic_operator.kafka.leader_and_isr import LeaderRecoveryState
from kafka_topic_operator.kafka.topic_partition import TopicPartition

# ---- names ------------------------------------------------------------------------------------

UNKNOWN_BROKER_EPOCH: Final = -1
"""AbstractControlRequest.UNKNOWN_BROKER_EPOCH: a request that names no broker epoch."""


class Errors(StrEnum):
    """The Kafka error names (org.apache.kafka.common.protocol.Errors) this channel uses.

    Decoders accept any upper-case name, so a newer peer's error still reads.
    """

    NONE = "NONE"
    UNKNOWN_SERVER_ERROR = "UNKNOWN_SERVER_ERROR"
    UNKNOWN_TOPIC_OR_PARTITION = "UNKNOWN_TOPIC_OR_PARTITION"
    NOT_CONTROLLER = "NOT_CONTROLLER"
    STALE_CONTROLLER_EPOCH = "STALE_CONTROLLER_EPOCH"
    STALE_BROKER_EPOCH = "STALE_BROKER_EPOCH"
    KAFKA_STORAGE_ERROR = "KAFKA_STORAGE_ERROR"
    FENCED_LEADER_EPOCH = "FENCED_LEADER_EPOCH"
    INCONSISTENT_TOPIC_ID = "INCONSISTENT_TOPIC_ID"
    INVALID_REQUEST = "INVALID_REQUEST"
    BROKER_NOT_AVAILABLE = "BROKER_NOT_AVAILABLE"
    INVALID_REPLICA_ASSIGNMENT = "INVALID_REPLICA_ASSIGNMENT"


class RequestType(StrEnum):
    """The `"type"` tag of a request and of its response."""

    LEADER_AND_ISR = "LeaderAndIsr"
    UPDATE_METADATA = "UpdateMetadata"
    STOP_REPLICA = "StopReplica"


# ---- requests ---------------------------------------------------------------------------------


# Partition states are NamedTuples: the controller builds one per partition and request kind
# (24,000 of each for 2,000 new topics), and a frozen dataclass costs three times as much to make.
class LeaderAndIsrPartitionState(NamedTuple):
    """LeaderAndIsrPartitionState; `partition_epoch` is the state znode's zkVersion."""

    topic: str
    partition: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    is_new: bool = False
    leader_recovery_state: LeaderRecoveryState = LeaderRecoveryState.RECOVERED

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class BrokerEndpointRef:
    """LeaderAndIsrLiveLeader: a live leader's id and its inter-broker endpoint."""

    broker_id: int
    host_name: str
    port: int


@dataclass(frozen=True, slots=True)
class LeaderAndIsrRequest:
    """LeaderAndIsr; `topic_ids` maps a topic to its base64 id (absent or zero: no id)."""

    TYPE: ClassVar[RequestType] = RequestType.LEADER_AND_ISR

    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partition_states: tuple[LeaderAndIsrPartitionState, ...]
    topic_ids: Mapping[str, str] = field(default_factory=dict)
    live_leaders: tuple[BrokerEndpointRef, ...] = ()
    correlation_id: int = field(kw_only=True)

    def error_response(self, error: str) -> LeaderAndIsrResponse:
        """LeaderAndIsrRequest.getErrorResponse: the error, for the request and every partition."""
        return LeaderAndIsrResponse(
            error,
            _every_partition(self.partition_states, error),
            correlation_id=self.correlation_id,
        )


class UpdateMetadataPartitionState(NamedTuple):
    topic: str
    partition: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class LiveBroker:
    """UpdateMetadataBroker: a live broker's id, listeners and rack."""

    id: int
    endpoints: tuple[EndPoint, ...]
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class UpdateMetadataRequest:
    TYPE: ClassVar[RequestType] = RequestType.UPDATE_METADATA

    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partition_states: tuple[UpdateMetadataPartitionState, ...]
    live_brokers: tuple[LiveBroker, ...] = ()
    topic_ids: Mapping[str, str] = field(default_factory=dict)
    correlation_id: int = field(kw_only=True)

    def error_response(self, error: str) -> UpdateMetadataResponse:
        return UpdateMetadataResponse(error, correlation_id=self.correlation_id)


class StopReplicaPartitionState(NamedTuple):
    """StopReplicaPartitionState; leader epoch -2 (EpochDuringDelete) or -1 (NoEpoch) skips
    the broker's leader epoch check."""

    topic: str
    partition: int
    leader_epoch: int
    delete_partition: bool

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class StopReplicaRequest:
    TYPE: ClassVar[RequestType] = RequestType.STOP_REPLICA

    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partition_states: tuple[StopReplicaPartitionState, ...]
    correlation_id: int = field(kw_only=True)

    def error_response(self, error: str) -> StopReplicaResponse:
        """StopReplicaRequest.getErrorResponse: the error, for the request and every partition."""
        return StopReplicaResponse(
            error,
            _every_partition(self.partition_states, error),
            correlation_id=self.correlation_id,
        )


Request = LeaderAndIsrRequest | UpdateMetadataRequest | StopReplicaRequest


# ---- responses --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PartitionError:
    topic: str
    partition: int
    error: str

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


def _every_partition(
    states: Iterable[LeaderAndIsrPartitionState | StopReplicaPartitionState], error: str
) -> tuple[PartitionError, ...]:
    """getErrorResponse's shape: one entry per distinct partition, in request order."""
    return tuple(
        PartitionError(tp.topic, tp.partition, error)
        for tp in dict.fromkeys(s.topic_partition for s in states)
    )


def _error_map(partition_errors: Iterable[PartitionError]) -> dict[TopicPartition, str]:
    return {pe.topic_partition: pe.error for pe in partition_errors}


@dataclass(frozen=True, slots=True)
class LeaderAndIsrResponse:
    TYPE: ClassVar[RequestType] = RequestType.LEADER_AND_ISR

    error: str
    partition_errors: tuple[PartitionError, ...] = ()
    correlation_id: int = field(kw_only=True)

    def errors_by_partition(self) -> dict[TopicPartition, str]:
        return _error_map(self.partition_errors)


@dataclass(frozen=True, slots=True)
class UpdateMetadataResponse:
    TYPE: ClassVar[RequestType] = RequestType.UPDATE_METADATA

    error: str
    correlation_id: int = field(kw_only=True)


@dataclass(frozen=True, slots=True)
class StopReplicaResponse:
    """A request-level error means every partition failed, whatever `partition_errors` holds
    (the controller's StopReplica callback reads it that way)."""

    TYPE: ClassVar[RequestType] = RequestType.STOP_REPLICA

    error: str
    partition_errors: tuple[PartitionError, ...] = ()
    correlation_id: int = field(kw_only=True)

    def errors_by_partition(self) -> dict[TopicPartition, str]:
        return _error_map(self.partition_errors)


Response = LeaderAndIsrResponse | UpdateMetadataResponse | StopReplicaResponse


@dataclass(frozen=True, slots=True)
class RequestHeader:
    """What a request names before its body is read: enough to answer a malformed one."""

    type: RequestType
    correlation_id: int


def error_response(header: RequestHeader, error: str) -> Response:
    """A response to a request whose body could not be read: the error, no partitions."""
    match header.type:
        case RequestType.LEADER_AND_ISR:
            return LeaderAndIsrResponse(error, correlation_id=header.correlation_id)
        case RequestType.UPDATE_METADATA:
            return UpdateMetadataResponse(error, correlation_id=header.correlation_id)
        case RequestType.STOP_REPLICA:
            return StopReplicaResponse(error, correlation_id=header.correlation_id)


# ---- controlled shutdown ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ControlledShutdownRequest:
    """ControlledShutdownRequest: the broker asking to move its leaderships away."""

    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class ControlledShutdownResult:
    """ControlledShutdownResponse: success is NONE with no remaining partitions."""

    error: str
    remaining_partitions: tuple[TopicPartition, ...] = ()

    @property
    def succeeded(self) -> bool:
        return self.error == Errors.NONE and not self.remaining_partitions


@dataclass(frozen=True, slots=True)
class ControlledShutdownZNode:
    """The znode's content: the broker's request, and the controller's result once answered."""

    request: ControlledShutdownRequest
    result: ControlledShutdownResult | None = None
