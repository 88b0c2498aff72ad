"""JSON codecs of the channel's requests and responses; decoders raise ZNodeDataError naming the
path. The wire format is described in `docs/broker-channel.md`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from kafka_topic_operator.broker_channel.field_readers import (
    read_array,
    read_boolean,
    read_error_name,
    read_int64,
    read_ints,
    read_nullable_string,
    read_partition,
    read_topic_ids,
)
from kafka_topic_operator.broker_channel.framing import CHANNEL_VERSION, read_root, read_version
from kafka_topic_operator.broker_channel.messages import (
    BrokerEndpointRef,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    LiveBroker,
    PartitionError,
    Request,
    RequestHeader,
    RequestType,
    Response,
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
)
from kafka_topic_operator.broker_channel.plain_states import (
    plain_leader_and_isr_state,
    plain_update_metadata_state,
)
from kafka_topic_operator.kafka.brokers import EndPoint, SecurityProtocol
from kafka_topic_operator.kafka.errors import IllegalArgumentException
from kafka_topic_operator.kafka.leader_and_isr import LeaderRecoveryState
from kafka_topic_operator.zk.json_codec import JsonReader, encode_plain_json

# ---- requests ---------------------------------------------------------------------------------


def _header(root: JsonReader) -> RequestHeader:
    read_version(root)
    raw_type = root["type"]
    type_name = raw_type.string()
    try:
        request_type = RequestType(type_name)
    except ValueError:
        known = ", ".join(t.value for t in RequestType)
        raise raw_type.fail(f"unknown type {type_name!r} (known: {known})") from None
    return RequestHeader(request_type, root["correlation_id"].int32())


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
    return _splice(_common(request), encode_plain_json(_body(request)))


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
                body = shared[key] = encode_plain_json(_body(request))
            out.append(_splice(_common(request), body))
        elif isinstance(request, LeaderAndIsrRequest) and request.partition_states:
            parts = []
            for state in request.partition_states:
                part = states.get(id(state))
                if part is None:
                    part = states[id(state)] = encode_plain_json(leader_and_isr_state_json(state))
                parts.append(part)
            rest = encode_plain_json(_body(replace(request, partition_states=())))
            # {"partition_states":[...], then the rest in _body's order.
            body = b'{"partition_states":[' + b",".join(parts) + b"]," + rest.split(b",", 1)[1]
            out.append(_splice(_common(request), body))
        else:
            out.append(encode_request(request))
    return out


def _splice(common: dict[str, object], body: bytes) -> bytes:
    head = encode_plain_json(common)
    return head if body == b"{}" else head[:-1] + b"," + body[1:]


def leader_and_isr_state_json(s: LeaderAndIsrPartitionState) -> dict[str, object]:
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
                leader_and_isr_state_json(s) for s in request.partition_states
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


def read_leader_and_isr_state(item: JsonReader) -> LeaderAndIsrPartitionState:
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
        partition=read_partition(item["partition"]),
        controller_epoch=item["controller_epoch"].int32(),
        leader=item["leader"].int32(),
        leader_epoch=item["leader_epoch"].int32(),
        isr=read_ints(item["isr"]),
        partition_epoch=item["partition_epoch"].int32(),
        replicas=read_ints(item["replicas"]),
        adding_replicas=read_ints(item.optional("adding_replicas")),
        removing_replicas=read_ints(item.optional("removing_replicas")),
        is_new=read_boolean(is_new) if is_new is not None else False,
        leader_recovery_state=recovery,
    )


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


def read_update_metadata_state(item: JsonReader) -> UpdateMetadataPartitionState:
    return UpdateMetadataPartitionState(
        topic=item["topic"].string(),
        partition=read_partition(item["partition"]),
        controller_epoch=item["controller_epoch"].int32(),
        leader=item["leader"].int32(),
        leader_epoch=item["leader_epoch"].int32(),
        isr=read_ints(item["isr"]),
        zk_version=item["zk_version"].int32(),
        replicas=read_ints(item["replicas"]),
        offline_replicas=read_ints(item.optional("offline_replicas")),
    )


def _endpoint(item: JsonReader) -> EndPoint:
    raw_protocol = item["security_protocol"]
    try:
        protocol = SecurityProtocol.for_name(raw_protocol.string())
    except IllegalArgumentException as e:
        raise raw_protocol.fail(str(e)) from e
    port = item["port"].int32()
    return EndPoint(
        item["listener"].string(), read_nullable_string(item.get("host")), port, protocol
    )


def _live_broker(item: JsonReader) -> LiveBroker:
    return LiveBroker(
        id=item["id"].int32(),
        endpoints=tuple(_endpoint(e) for e in item["endpoints"].array()),
        rack=read_nullable_string(item.get("rack")),
    )


def _stop_replica_state(item: JsonReader) -> StopReplicaPartitionState:
    return StopReplicaPartitionState(
        topic=item["topic"].string(),
        partition=read_partition(item["partition"]),
        leader_epoch=item["leader_epoch"].int32(),
        delete_partition=read_boolean(item["delete_partition"]),
    )


def decode_request_header(path: str, data: bytes | None) -> RequestHeader:
    """The version, type and correlation id alone, so a request with a bad body can be answered."""
    return _header(read_root(path, data))


def decode_request(path: str, data: bytes | None) -> Request:
    root = read_root(path, data)
    header = _header(root)
    controller_id = root["controller_id"].int32()
    controller_epoch = root["controller_epoch"].int32()
    broker_epoch = read_int64(root["broker_epoch"])
    states = root["partition_states"]
    cid = header.correlation_id
    match header.type:
        case RequestType.LEADER_AND_ISR:
            return LeaderAndIsrRequest(
                controller_id,
                controller_epoch,
                broker_epoch,
                _states(states, plain_leader_and_isr_state, read_leader_and_isr_state),
                read_topic_ids(root.get("topic_ids")),
                tuple(
                    BrokerEndpointRef(
                        item["broker_id"].int32(), item["host_name"].string(), item["port"].int32()
                    )
                    for item in read_array(root.optional("live_leaders"))
                ),
                correlation_id=cid,
            )
        case RequestType.UPDATE_METADATA:
            return UpdateMetadataRequest(
                controller_id,
                controller_epoch,
                broker_epoch,
                _states(states, plain_update_metadata_state, read_update_metadata_state),
                tuple(_live_broker(b) for b in read_array(root.optional("live_brokers"))),
                read_topic_ids(root.get("topic_ids")),
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


# ---- responses --------------------------------------------------------------------------------


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
    return encode_plain_json(content)


def _partition_errors(reader: JsonReader | None) -> tuple[PartitionError, ...]:
    if reader is None:
        return ()
    return tuple(
        PartitionError(
            item["topic"].string(),
            read_partition(item["partition"]),
            read_error_name(item["error"]),
        )
        for item in reader.array()
    )


def decode_response(path: str, data: bytes | None) -> Response:
    root = read_root(path, data)
    header = _header(root)
    error = read_error_name(root["error"])
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
