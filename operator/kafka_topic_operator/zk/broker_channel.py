"""The controller-to-broker channel over ZooKeeper: paths and JSON codecs for Kafka's LeaderAndIsr,
UpdateMetadata and StopReplica requests, their responses, and the ControlledShutdown exchange.

Pure (bytes in, bytes out, no kazoo), in the style of `znodes`: decoders raise ZNodeDataError
naming the path. Field names follow Kafka's request schemas (`LeaderAndIsrRequest.json` and
friends); the wire format is described in `docs/broker-channel.md`.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import ClassVar, Final, NamedTuple, TypeVar

from kafka_topic_operator.kafka.brokers import EndPoint, SecurityProtocol
from kafka_topic_operator.kafka.errors import IllegalArgumentException
from kafka_topic_operator.kafka.ids import Uuid
from kafka_topic_operator.kafka.java import INT_MAX, INT_MIN, LONG_MAX, LONG_MIN
from kafka_topic_operator.kafka.leader_and_isr import LeaderRecoveryState
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk.json_codec import (
    JsonReader,
    ZNodeDataError,
    describe_json,
    encode_json,
    is_int32_array,
    json_root,
)

# ---- compression -------------------------------------------------------------------------------

# A request for thousands of partitions is megabytes of JSON (each partition state goes to each
# replica's broker, and UpdateMetadata to every broker) and compresses about 40 times: written
# as is, ZooKeeper's log and the next requests of the controller's session wait for it. So data
# larger than this is a zlib stream of the JSON; a reader tells them apart by the first byte
# (JSON starts with `{`, a zlib stream with 0x78, `x`).
COMPRESS_ABOVE: Final = 4096
_ZLIB_FIRST_BYTE: Final = b"x"
# What one znode may inflate to: a request's JSON is cut well below this, and more is a bomb.
MAX_INFLATED_BYTES: Final = 64 << 20


def pack(data: bytes) -> bytes:
    """A request or response as its znode holds it: the JSON, zlib-compressed when large."""
    return zlib.compress(data, 1) if len(data) > COMPRESS_ABOVE else data


def unpack(path: str, data: bytes | None) -> bytes | None:
    """The JSON of a znode written by `pack` (or JSON as is)."""
    if not data or data[:1] != _ZLIB_FIRST_BYTE:
        return data
    inflater = zlib.decompressobj()
    try:
        text = inflater.decompress(data, MAX_INFLATED_BYTES)
    except zlib.error as e:
        raise ZNodeDataError(path, f"not JSON and not a zlib stream ({e})") from None
    if inflater.unconsumed_tail:
        raise ZNodeDataError(path, f"inflates to more than {MAX_INFLATED_BYTES} bytes")
    if not inflater.eof:
        raise ZNodeDataError(path, "a zlib stream cut short")
    return text


def _root(path: str, data: bytes | None) -> JsonReader:
    return json_root(path, unpack(path, data))


# ---- paths ------------------------------------------------------------------------------------

KTO_PATH: Final = "/kto"
BROKER_CHANNELS_PATH: Final = "/kto/brokers"
CONTROLLED_SHUTDOWN_PATH: Final = "/kto/controlled_shutdown"
SHUTTING_DOWN_PATH: Final = "/kto/shutting_down"
"""A broker's ephemeral mark from its first controlled shutdown request until it leaves. Kafka's
controller refuses to add such a broker to an ISR (KIP-841); dev brokers write ISR expansions
themselves, so the leader reads the marks instead."""
REQUEST_PREFIX: Final = "request_"
RESPONSE_PREFIX: Final = "response_"

CHANNEL_VERSION: Final = 1
"""The only version of the request, response and controlled shutdown JSON written and read."""

ZNODE_MAX_BYTES: Final = 0xFFFFF
"""ZooKeeper's default `jute.maxbuffer`: the largest znode, and the largest multi-op, it accepts.
A LeaderAndIsr partition state takes about 200 bytes, so split batches of thousands."""

UNKNOWN_BROKER_EPOCH: Final = -1
"""AbstractControlRequest.UNKNOWN_BROKER_EPOCH: a request that names no broker epoch."""


def broker_channel_path(broker_id: int) -> str:
    return f"{BROKER_CHANNELS_PATH}/{broker_id}"


def requests_path(broker_id: int) -> str:
    """The broker's request queue; the broker creates it before it registers."""
    return f"{broker_channel_path(broker_id)}/requests"


def request_prefix(broker_id: int) -> str:
    """What the controller creates a persistent sequential request znode with."""
    return f"{requests_path(broker_id)}/{REQUEST_PREFIX}"


def responses_path(broker_id: int) -> str:
    return f"{broker_channel_path(broker_id)}/responses"


def response_prefix(broker_id: int) -> str:
    """What the broker creates a persistent sequential response znode with."""
    return f"{responses_path(broker_id)}/{RESPONSE_PREFIX}"


def shutting_down_path(broker_id: int) -> str:
    return f"{SHUTTING_DOWN_PATH}/{broker_id}"


def controlled_shutdown_path(broker_id: int) -> str:
    return f"{CONTROLLED_SHUTDOWN_PATH}/{broker_id}"


def channel_sequence(name_or_path: str) -> int | None:
    """The sequence number of a `request_<seq>` or `response_<seq>` znode, None for other names."""
    name = name_or_path.rsplit("/", 1)[-1]
    for prefix in (REQUEST_PREFIX, RESPONSE_PREFIX):
        digits = name.removeprefix(prefix)
        if digits != name and re.fullmatch(r"-?[0-9]{1,10}", digits):
            return int(digits)
    return None


# ---- error names ------------------------------------------------------------------------------


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


_ERROR_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


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


# ---- reading helpers --------------------------------------------------------------------------


def _int64(reader: JsonReader) -> int:
    value = reader.value
    if type(value) is not int or not LONG_MIN <= value <= LONG_MAX:
        raise reader.fail(f"expected a 64-bit integer, got {describe_json(value)}")
    return value


def _boolean(reader: JsonReader) -> bool:
    if not isinstance(reader.value, bool):
        raise reader.fail(f"expected a boolean, got {describe_json(reader.value)}")
    return reader.value


def _partition(reader: JsonReader) -> int:
    value = reader.int32()
    if value < 0:
        raise reader.fail(f"partition {value} is negative")
    return value


def _array(reader: JsonReader | None) -> list[JsonReader]:
    """An optional array: missing or null reads as empty."""
    return reader.array() if reader is not None else []


def _ints(reader: JsonReader | None) -> tuple[int, ...]:
    return tuple(reader.int32_list()) if reader is not None else ()


def _error_name(reader: JsonReader) -> str:
    name = reader.string()
    if not _ERROR_NAME.fullmatch(name):
        raise reader.fail(f"{name!r} is not a Kafka error name")
    return name


def _nullable_string(reader: JsonReader | None) -> str | None:
    return None if reader is None or reader.value is None else reader.string()


def _topic_ids(reader: JsonReader | None) -> dict[str, str]:
    if reader is None or reader.value is None:
        return {}
    out: dict[str, str] = {}
    for topic, value in reader.items():
        try:
            out[topic] = str(Uuid.from_string(value.string()))
        except IllegalArgumentException as e:
            raise value.fail(str(e)) from e
    return out


def _header(root: JsonReader) -> RequestHeader:
    version = root["version"].int32()
    if version != CHANNEL_VERSION:
        raise root["version"].fail(
            f"unsupported version {version} (this side reads version {CHANNEL_VERSION})"
        )
    raw_type = root["type"]
    type_name = raw_type.string()
    try:
        request_type = RequestType(type_name)
    except ValueError:
        known = ", ".join(t.value for t in RequestType)
        raise raw_type.fail(f"unknown type {type_name!r} (known: {known})") from None
    return RequestHeader(request_type, root["correlation_id"].int32())


# ---- request codecs ---------------------------------------------------------------------------


def _common(request: Request) -> dict[str, object]:
    return {
        "version": CHANNEL_VERSION,
        "type": request.TYPE.value,
        "correlation_id": request.correlation_id,
        "controller_id": request.controller_id,
        "controller_epoch": request.controller_epoch,
        "broker_epoch": request.broker_epoch,
    }


def _endpoint_json(endpoint: EndPoint) -> dict[str, object]:
    return {
        "listener": endpoint.listener_name,
        "host": endpoint.host,
        "port": endpoint.port,
        "security_protocol": endpoint.security_protocol.value,
    }


def encode_request(request: Request) -> bytes:
    return _splice(_common(request), encode_json(_body(request)))


def encode_requests(requests: Sequence[Request]) -> list[bytes]:
    """Each request encoded as `encode_request` does; UpdateMetadata requests that carry the
    very same partition states, brokers and topic ids (one controller batch sends the same
    metadata to every broker) share one encoding of that body, and a LeaderAndIsr partition
    state sent to each of its replicas' brokers is encoded once."""
    shared: dict[tuple[int, int, int], bytes] = {}
    states: dict[int, bytes] = {}
    out = []
    for request in requests:
        if isinstance(request, UpdateMetadataRequest):
            key = (id(request.partition_states), id(request.live_brokers), id(request.topic_ids))
            body = shared.get(key)
            if body is None:
                body = shared[key] = encode_json(_body(request))
            out.append(_splice(_common(request), body))
        elif isinstance(request, LeaderAndIsrRequest) and request.partition_states:
            parts = []
            for state in request.partition_states:
                part = states.get(id(state))
                if part is None:
                    part = states[id(state)] = encode_json(_leader_and_isr_state_json(state))
                parts.append(part)
            rest = encode_json(_body(replace(request, partition_states=())))
            # {"partition_states":[...], then the rest in _body's order.
            body = b'{"partition_states":[' + b",".join(parts) + b"]," + rest.split(b",", 1)[1]
            out.append(_splice(_common(request), body))
        else:
            out.append(encode_request(request))
    return out


def _splice(common: dict[str, object], body: bytes) -> bytes:
    head = encode_json(common)
    return head if body == b"{}" else head[:-1] + b"," + body[1:]


def _leader_and_isr_state_json(s: LeaderAndIsrPartitionState) -> dict[str, object]:
    return {
        "topic": s.topic,
        "partition": s.partition,
        "controller_epoch": s.controller_epoch,
        "leader": s.leader,
        "leader_epoch": s.leader_epoch,
        "isr": list(s.isr),
        "partition_epoch": s.partition_epoch,
        "replicas": list(s.replicas),
        "adding_replicas": list(s.adding_replicas),
        "removing_replicas": list(s.removing_replicas),
        "is_new": s.is_new,
        "leader_recovery_state": int(s.leader_recovery_state),
    }


def _body(request: Request) -> dict[str, object]:
    content: dict[str, object] = {}
    match request:
        case LeaderAndIsrRequest():
            content["partition_states"] = [
                _leader_and_isr_state_json(s) for s in request.partition_states
            ]
            content["topic_ids"] = dict(request.topic_ids)
            content["live_leaders"] = [
                {"broker_id": b.broker_id, "host_name": b.host_name, "port": b.port}
                for b in request.live_leaders
            ]
        case UpdateMetadataRequest():
            content["partition_states"] = [
                {
                    "topic": s.topic,
                    "partition": s.partition,
                    "controller_epoch": s.controller_epoch,
                    "leader": s.leader,
                    "leader_epoch": s.leader_epoch,
                    "isr": list(s.isr),
                    "zk_version": s.zk_version,
                    "replicas": list(s.replicas),
                    "offline_replicas": list(s.offline_replicas),
                }
                for s in request.partition_states
            ]
            content["live_brokers"] = [
                {
                    "id": b.id,
                    "endpoints": [_endpoint_json(e) for e in b.endpoints],
                    "rack": b.rack,
                }
                for b in request.live_brokers
            ]
            content["topic_ids"] = dict(request.topic_ids)
        case StopReplicaRequest():
            content["partition_states"] = [
                {
                    "topic": s.topic,
                    "partition": s.partition,
                    "leader_epoch": s.leader_epoch,
                    "delete_partition": s.delete_partition,
                }
                for s in request.partition_states
            ]
    return content


def _leader_and_isr_state(item: JsonReader) -> LeaderAndIsrPartitionState:
    recovery = LeaderRecoveryState.RECOVERED
    raw_recovery = item.optional("leader_recovery_state")
    if raw_recovery is not None:
        value = raw_recovery.int32()
        if value not in (s.value for s in LeaderRecoveryState):
            raise raw_recovery.fail(f"Value {value} is not a valid leader recovery state")
        recovery = LeaderRecoveryState(value)
    is_new = item.optional("is_new")
    return LeaderAndIsrPartitionState(
        topic=item["topic"].string(),
        partition=_partition(item["partition"]),
        controller_epoch=item["controller_epoch"].int32(),
        leader=item["leader"].int32(),
        leader_epoch=item["leader_epoch"].int32(),
        isr=_ints(item["isr"]),
        partition_epoch=item["partition_epoch"].int32(),
        replicas=_ints(item["replicas"]),
        adding_replicas=_ints(item.optional("adding_replicas")),
        removing_replicas=_ints(item.optional("removing_replicas")),
        is_new=_boolean(is_new) if is_new is not None else False,
        leader_recovery_state=recovery,
    )


# Plain partition states (every field of its type, as the controller writes them) are built
# straight from the parsed JSON: a broker reads thousands per request, and the readers of the
# general path matter only for an error message. Anything else takes the general path.


def _plain_ints(value: object) -> tuple[int, ...] | None:
    return tuple(value) if is_int32_array(value) else None


def _plain_int32(value: object) -> bool:
    return type(value) is int and INT_MIN <= value <= INT_MAX


def _plain_optional_ints(fields: dict[str, object], key: str) -> tuple[int, ...] | None:
    value = fields.get(key)
    return () if value is None else _plain_ints(value)


class _PlainCore(NamedTuple):
    """What both kinds of partition state share: topic, partition, four 32-bit numbers (in
    the order `number_keys` names them), ISR and replicas."""

    fields: dict[str, object]
    topic: str
    partition: int
    numbers: tuple[int, int, int, int]
    isr: tuple[int, ...]
    replicas: tuple[int, ...]


def _plain_core(fields: object, number_keys: tuple[str, str, str, str]) -> _PlainCore | None:
    if type(fields) is not dict:
        return None
    try:
        topic, partition = fields["topic"], fields["partition"]
        numbers = tuple(fields[key] for key in number_keys)
        isr, replicas = _plain_ints(fields["isr"]), _plain_ints(fields["replicas"])
    except KeyError:
        return None
    if (
        type(topic) is not str
        or not (_plain_int32(partition) and partition >= 0)
        or not all(_plain_int32(n) for n in numbers)
        or isr is None
        or replicas is None
    ):
        return None
    return _PlainCore(fields, topic, partition, numbers, isr, replicas)


_LEADER_AND_ISR_NUMBERS: Final = ("controller_epoch", "leader", "leader_epoch", "partition_epoch")
_UPDATE_METADATA_NUMBERS: Final = ("controller_epoch", "leader", "leader_epoch", "zk_version")


def _plain_leader_and_isr_state(fields: object) -> LeaderAndIsrPartitionState | None:
    core = _plain_core(fields, _LEADER_AND_ISR_NUMBERS)
    if core is None:
        return None
    adding = _plain_optional_ints(core.fields, "adding_replicas")
    removing = _plain_optional_ints(core.fields, "removing_replicas")
    is_new = core.fields.get("is_new", False)
    recovery = core.fields.get("leader_recovery_state", 0)
    if (
        adding is None
        or removing is None
        or not (is_new is None or type(is_new) is bool)
        or not (recovery is None or (type(recovery) is int and recovery in (0, 1)))
    ):
        return None
    controller_epoch, leader, leader_epoch, partition_epoch = core.numbers
    return LeaderAndIsrPartitionState(
        core.topic, core.partition, controller_epoch, leader, leader_epoch, core.isr,
        partition_epoch, core.replicas, adding, removing, bool(is_new),
        LeaderRecoveryState(recovery or 0),
    )  # fmt: skip


def _plain_update_metadata_state(fields: object) -> UpdateMetadataPartitionState | None:
    core = _plain_core(fields, _UPDATE_METADATA_NUMBERS)
    if core is None:
        return None
    offline = _plain_optional_ints(core.fields, "offline_replicas")
    if offline is None:
        return None
    controller_epoch, leader, leader_epoch, zk_version = core.numbers
    return UpdateMetadataPartitionState(
        core.topic, core.partition, controller_epoch, leader, leader_epoch, core.isr,
        zk_version, core.replicas, offline,
    )  # fmt: skip


PartitionStateT = TypeVar("PartitionStateT")


def _states(
    reader: JsonReader,
    plain: Callable[[object], PartitionStateT | None],
    general: Callable[[JsonReader], PartitionStateT],
) -> tuple[PartitionStateT, ...]:
    items = reader.value
    if type(items) is not list:
        return tuple(general(item) for item in reader.array())  # names what is wrong
    out = []
    for index, item in enumerate(items):
        state = plain(item)
        out.append(
            state if state is not None else general(JsonReader(reader.path, item, reader, index))
        )
    return tuple(out)


def _update_metadata_state(item: JsonReader) -> UpdateMetadataPartitionState:
    return UpdateMetadataPartitionState(
        topic=item["topic"].string(),
        partition=_partition(item["partition"]),
        controller_epoch=item["controller_epoch"].int32(),
        leader=item["leader"].int32(),
        leader_epoch=item["leader_epoch"].int32(),
        isr=_ints(item["isr"]),
        zk_version=item["zk_version"].int32(),
        replicas=_ints(item["replicas"]),
        offline_replicas=_ints(item.optional("offline_replicas")),
    )


def _endpoint(item: JsonReader) -> EndPoint:
    raw_protocol = item["security_protocol"]
    try:
        protocol = SecurityProtocol.for_name(raw_protocol.string())
    except IllegalArgumentException as e:
        raise raw_protocol.fail(str(e)) from e
    port = item["port"].int32()
    return EndPoint(item["listener"].string(), _nullable_string(item.get("host")), port, protocol)


def _live_broker(item: JsonReader) -> LiveBroker:
    return LiveBroker(
        id=item["id"].int32(),
        endpoints=tuple(_endpoint(e) for e in item["endpoints"].array()),
        rack=_nullable_string(item.get("rack")),
    )


def _stop_replica_state(item: JsonReader) -> StopReplicaPartitionState:
    return StopReplicaPartitionState(
        topic=item["topic"].string(),
        partition=_partition(item["partition"]),
        leader_epoch=item["leader_epoch"].int32(),
        delete_partition=_boolean(item["delete_partition"]),
    )


def decode_request_header(path: str, data: bytes | None) -> RequestHeader:
    """The version, type and correlation id alone, so a request with a bad body can be answered."""
    return _header(_root(path, data))


def decode_request(path: str, data: bytes | None) -> Request:
    root = _root(path, data)
    header = _header(root)
    controller_id = root["controller_id"].int32()
    controller_epoch = root["controller_epoch"].int32()
    broker_epoch = _int64(root["broker_epoch"])
    states = root["partition_states"]
    cid = header.correlation_id
    match header.type:
        case RequestType.LEADER_AND_ISR:
            return LeaderAndIsrRequest(
                controller_id,
                controller_epoch,
                broker_epoch,
                _states(states, _plain_leader_and_isr_state, _leader_and_isr_state),
                _topic_ids(root.get("topic_ids")),
                tuple(
                    BrokerEndpointRef(
                        item["broker_id"].int32(), item["host_name"].string(), item["port"].int32()
                    )
                    for item in _array(root.optional("live_leaders"))
                ),
                correlation_id=cid,
            )
        case RequestType.UPDATE_METADATA:
            return UpdateMetadataRequest(
                controller_id,
                controller_epoch,
                broker_epoch,
                _states(states, _plain_update_metadata_state, _update_metadata_state),
                tuple(_live_broker(b) for b in _array(root.optional("live_brokers"))),
                _topic_ids(root.get("topic_ids")),
                correlation_id=cid,
            )
        case RequestType.STOP_REPLICA:
            return StopReplicaRequest(
                controller_id,
                controller_epoch,
                broker_epoch,
                tuple(_stop_replica_state(s) for s in states.array()),
                correlation_id=cid,
            )


# ---- response codecs --------------------------------------------------------------------------


def encode_response(response: Response) -> bytes:
    content: dict[str, object] = {
        "version": CHANNEL_VERSION,
        "type": response.TYPE.value,
        "correlation_id": response.correlation_id,
        "error": str(response.error),
    }
    if not isinstance(response, UpdateMetadataResponse):
        content["partition_errors"] = [
            {"topic": pe.topic, "partition": pe.partition, "error": str(pe.error)}
            for pe in response.partition_errors
        ]
    return encode_json(content)


def _partition_errors(reader: JsonReader | None) -> tuple[PartitionError, ...]:
    if reader is None:
        return ()
    return tuple(
        PartitionError(
            item["topic"].string(), _partition(item["partition"]), _error_name(item["error"])
        )
        for item in reader.array()
    )


def decode_response(path: str, data: bytes | None) -> Response:
    root = _root(path, data)
    header = _header(root)
    error = _error_name(root["error"])
    cid = header.correlation_id
    match header.type:
        case RequestType.LEADER_AND_ISR:
            return LeaderAndIsrResponse(
                error, _partition_errors(root.optional("partition_errors")), correlation_id=cid
            )
        case RequestType.UPDATE_METADATA:
            return UpdateMetadataResponse(error, correlation_id=cid)
        case RequestType.STOP_REPLICA:
            return StopReplicaResponse(
                error, _partition_errors(root.optional("partition_errors")), correlation_id=cid
            )


# ---- /kto/controlled_shutdown/<id> ------------------------------------------------------------


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


def encode_controlled_shutdown(
    request: ControlledShutdownRequest, result: ControlledShutdownResult | None = None
) -> bytes:
    """Without a result: what the broker writes. With one: what the controller writes back."""
    content: dict[str, object] = {
        "version": CHANNEL_VERSION,
        "broker_id": request.broker_id,
        "broker_epoch": request.broker_epoch,
    }
    if result is not None:
        content["error"] = str(result.error)
        content["remaining_partitions"] = [
            {"topic": tp.topic, "partition": tp.partition}
            for tp in dict.fromkeys(result.remaining_partitions)
        ]
    return encode_json(content)


def decode_controlled_shutdown(path: str, data: bytes | None) -> ControlledShutdownZNode:
    root = _root(path, data)
    version = root["version"].int32()
    if version != CHANNEL_VERSION:
        raise root["version"].fail(
            f"unsupported version {version} (this side reads version {CHANNEL_VERSION})"
        )
    request = ControlledShutdownRequest(root["broker_id"].int32(), _int64(root["broker_epoch"]))
    raw_error = root.optional("error")
    raw_remaining = root.optional("remaining_partitions")
    if raw_error is None and raw_remaining is None:
        return ControlledShutdownZNode(request)
    remaining = tuple(
        TopicPartition(item["topic"].string(), _partition(item["partition"]))
        for item in _array(raw_remaining)
    )
    error = _error_name(raw_error) if raw_error is not None else Errors.NONE.value
    return ControlledShutdownZNode(request, ControlledShutdownResult(error, remaining))
