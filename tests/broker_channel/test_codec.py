"""The controller-broker channel codec: paths, exact JSON, round trips and malformed input.

Kafka's request schemas are the reference for field names; this format is the project's own, so
the exact-JSON tests pin it for the controller that codes against it (docs/broker-channel.md).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.broker_channel import (
    BrokerEndpointRef,
    ControlledShutdownRequest,
    ControlledShutdownResult,
    ControlledShutdownZNode,
    Errors,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    LiveBroker,
    PartitionError,
    RequestHeader,
    RequestType,
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
    ZNodeDataError,
    framing,
)
from kafka_topic_operator.broker_channel.codec import (
    leader_and_isr_state_json,
    read_leader_and_isr_state,
    read_update_metadata_state,
)
from kafka_topic_operator.broker_channel.plain_states import (
    plain_leader_and_isr_state,
    plain_update_metadata_state,
)
from kafka_topic_operator.kafka.brokers import EndPoint, SecurityProtocol
from kafka_topic_operator.kafka.ids import Uuid
from kafka_topic_operator.kafka.leader_and_isr import LeaderRecoveryState
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk.json_codec import JsonReader, encode_json

REQ = "/kto/brokers/1/requests/request_0000000007"
RESP = "/kto/brokers/1/responses/response_0000000003"
CS = "/kto/controlled_shutdown/1"
TOPIC_ID = "q1s3mTg9RqSd3Y1y6G3l1w"


def parsed(data: bytes) -> object:
    return json.loads(data)


def assert_fails(path: str, call: Callable[[], object], *fragments: str) -> None:
    with pytest.raises(ZNodeDataError) as failure:
        call()
    assert failure.value.path == path
    for fragment in (path, *fragments):
        assert fragment in str(failure.value), str(failure.value)


# ---- paths ------------------------------------------------------------------------------------


def test_paths() -> None:
    assert bc.requests_path(3) == "/kto/brokers/3/requests"
    assert bc.request_prefix(3) == "/kto/brokers/3/requests/request_"
    assert bc.responses_path(3) == "/kto/brokers/3/responses"
    assert bc.response_prefix(3) == "/kto/brokers/3/responses/response_"
    assert bc.controlled_shutdown_path(3) == "/kto/controlled_shutdown/3"


def test_channel_sequence() -> None:
    assert bc.channel_sequence("request_0000000042") == 42
    assert bc.channel_sequence(RESP) == 3
    assert bc.channel_sequence("/x/request_-2147483648") == -(2**31)  # ZooKeeper's int overflow
    assert bc.channel_sequence("request_") is None
    assert bc.channel_sequence("request_12a") is None
    assert bc.channel_sequence("isr_change_0000000001") is None


# ---- exact JSON -------------------------------------------------------------------------------

LEADER_AND_ISR = LeaderAndIsrRequest(
    1,
    5,
    4294967397,
    (LeaderAndIsrPartitionState("t", 0, 5, 1, 2, (1, 2), 7, (1, 2, 3), (3,), (), is_new=True),),
    {"t": TOPIC_ID},
    (BrokerEndpointRef(1, "kafka-1", 9092),),
    correlation_id=11,
)

LEADER_AND_ISR_JSON = {
    "version": 1,
    "type": "LeaderAndIsr",
    "correlation_id": 11,
    "controller_id": 1,
    "controller_epoch": 5,
    "broker_epoch": 4294967397,
    "partition_states": [
        {
            "topic": "t",
            "partition": 0,
            "controller_epoch": 5,
            "leader": 1,
            "leader_epoch": 2,
            "isr": [1, 2],
            "partition_epoch": 7,
            "replicas": [1, 2, 3],
            "adding_replicas": [3],
            "removing_replicas": [],
            "is_new": True,
            "leader_recovery_state": 0,
        }
    ],
    "topic_ids": {"t": TOPIC_ID},
    "live_leaders": [{"broker_id": 1, "host_name": "kafka-1", "port": 9092}],
}


def test_leader_and_isr_json() -> None:
    assert parsed(bc.encode_request(LEADER_AND_ISR)) == LEADER_AND_ISR_JSON
    assert bc.decode_request(REQ, json.dumps(LEADER_AND_ISR_JSON).encode()) == LEADER_AND_ISR


def test_leader_and_isr_optional_keys_default_like_kafkas_ignorable_fields() -> None:
    minimal = dict(LEADER_AND_ISR_JSON)
    del minimal["topic_ids"], minimal["live_leaders"]
    state = dict(LEADER_AND_ISR_JSON["partition_states"][0])  # type: ignore[index]
    for key in ("adding_replicas", "removing_replicas", "is_new", "leader_recovery_state"):
        del state[key]
    minimal["partition_states"] = [state]
    decoded = bc.decode_request(REQ, json.dumps(minimal).encode())
    assert isinstance(decoded, LeaderAndIsrRequest)
    assert decoded.topic_ids == {} and decoded.live_leaders == ()
    (s,) = decoded.partition_states
    assert (s.adding_replicas, s.removing_replicas, s.is_new) == ((), (), False)
    assert s.leader_recovery_state is LeaderRecoveryState.RECOVERED


def test_update_metadata_json() -> None:
    request = UpdateMetadataRequest(
        2,
        6,
        -1,
        (UpdateMetadataPartitionState("t", 1, 6, -2, 0, (2,), 4, (1, 2), (1,)),),
        (
            LiveBroker(
                2,
                (
                    EndPoint("PLAINTEXT", "kafka-2", 9092, SecurityProtocol.PLAINTEXT),
                    EndPoint("CLIENT", "kafka-2", 9093, SecurityProtocol.SSL),
                ),
                "zone-a",
            ),
            LiveBroker(3, (), None),
        ),
        {},
        correlation_id=12,
    )
    assert parsed(bc.encode_request(request)) == {
        "version": 1,
        "type": "UpdateMetadata",
        "correlation_id": 12,
        "controller_id": 2,
        "controller_epoch": 6,
        "broker_epoch": -1,
        "partition_states": [
            {
                "topic": "t",
                "partition": 1,
                "controller_epoch": 6,
                "leader": -2,
                "leader_epoch": 0,
                "isr": [2],
                "zk_version": 4,
                "replicas": [1, 2],
                "offline_replicas": [1],
            }
        ],
        "live_brokers": [
            {
                "id": 2,
                "endpoints": [
                    {
                        "listener": "PLAINTEXT",
                        "host": "kafka-2",
                        "port": 9092,
                        "security_protocol": "PLAINTEXT",
                    },
                    {
                        "listener": "CLIENT",
                        "host": "kafka-2",
                        "port": 9093,
                        "security_protocol": "SSL",
                    },
                ],
                "rack": "zone-a",
            },
            {"id": 3, "endpoints": [], "rack": None},
        ],
        "topic_ids": {},
    }
    assert bc.decode_request(REQ, bc.encode_request(request)) == request
    # One batch to many brokers: the shared body is encoded once and spliced per broker.
    to_others = [dataclasses.replace(request, broker_epoch=e, correlation_id=e) for e in (7, 8)]
    batch = [request, *to_others, LEADER_AND_ISR]
    encoded = bc.encode_requests(batch)
    assert [parsed(e) for e in encoded] == [parsed(bc.encode_request(r)) for r in batch]
    assert parsed(encoded[2])["broker_epoch"] == 8


def test_leader_and_isr_states_shared_by_brokers_encode_as_each_alone() -> None:
    # One partition state goes to every broker holding a replica: encoded once, spliced into
    # each request, the bytes are those of encoding each request alone.
    shared = LEADER_AND_ISR.partition_states[0]
    other = shared._replace(partition=1, is_new=False)
    batch = [
        dataclasses.replace(LEADER_AND_ISR, broker_epoch=1, partition_states=(shared, other)),
        dataclasses.replace(LEADER_AND_ISR, broker_epoch=2, partition_states=(other,)),
        dataclasses.replace(LEADER_AND_ISR, topic_ids={}, live_leaders=(), correlation_id=3),
        dataclasses.replace(LEADER_AND_ISR, partition_states=()),
    ]
    assert bc.encode_requests(batch) == [bc.encode_request(r) for r in batch]


def test_stop_replica_json() -> None:
    request = StopReplicaRequest(
        1,
        5,
        77,
        (StopReplicaPartitionState("t", 0, -2, True), StopReplicaPartitionState("u", 3, 4, False)),
        correlation_id=13,
    )
    assert parsed(bc.encode_request(request)) == {
        "version": 1,
        "type": "StopReplica",
        "correlation_id": 13,
        "controller_id": 1,
        "controller_epoch": 5,
        "broker_epoch": 77,
        "partition_states": [
            {"topic": "t", "partition": 0, "leader_epoch": -2, "delete_partition": True},
            {"topic": "u", "partition": 3, "leader_epoch": 4, "delete_partition": False},
        ],
    }
    assert bc.decode_request(REQ, bc.encode_request(request)) == request


def test_response_json() -> None:
    response = StopReplicaResponse(
        "NONE", (PartitionError("t", 0, "KAFKA_STORAGE_ERROR"),), correlation_id=13
    )
    assert parsed(bc.encode_response(response)) == {
        "version": 1,
        "type": "StopReplica",
        "correlation_id": 13,
        "error": "NONE",
        "partition_errors": [{"topic": "t", "partition": 0, "error": "KAFKA_STORAGE_ERROR"}],
    }
    assert parsed(bc.encode_response(UpdateMetadataResponse("NONE", correlation_id=1))) == {
        "version": 1,
        "type": "UpdateMetadata",
        "correlation_id": 1,
        "error": "NONE",
    }
    assert bc.decode_response(RESP, bc.encode_response(response)) == response
    assert response.errors_by_partition() == {TopicPartition("t", 0): "KAFKA_STORAGE_ERROR"}


def test_error_responses_name_every_partition_like_get_error_response() -> None:
    response = LEADER_AND_ISR.error_response(Errors.STALE_BROKER_EPOCH)
    assert response == LeaderAndIsrResponse(
        "STALE_BROKER_EPOCH",
        (PartitionError("t", 0, "STALE_BROKER_EPOCH"),),
        correlation_id=11,
    )
    stop = StopReplicaRequest(
        1,
        5,
        -1,
        (StopReplicaPartitionState("t", 0, 1, True), StopReplicaPartitionState("t", 0, 1, True)),
        correlation_id=3,
    )
    assert stop.error_response("STALE_BROKER_EPOCH").partition_errors == (
        PartitionError("t", 0, "STALE_BROKER_EPOCH"),
    )
    header = RequestHeader(RequestType.UPDATE_METADATA, 9)
    assert bc.error_response(header, Errors.INVALID_REQUEST) == UpdateMetadataResponse(
        "INVALID_REQUEST", correlation_id=9
    )


def test_unknown_error_names_still_read() -> None:
    data = b'{"version":1,"type":"UpdateMetadata","correlation_id":1,"error":"SOME_NEW_ERROR_2"}'
    assert bc.decode_response(RESP, data) == UpdateMetadataResponse(
        "SOME_NEW_ERROR_2", correlation_id=1
    )


def test_controlled_shutdown_json() -> None:
    request = ControlledShutdownRequest(1, 4294967397)
    assert parsed(bc.encode_controlled_shutdown(request)) == {
        "version": 1,
        "broker_id": 1,
        "broker_epoch": 4294967397,
    }
    assert bc.decode_controlled_shutdown(CS, bc.encode_controlled_shutdown(request)) == (
        ControlledShutdownZNode(request, None)
    )
    result = ControlledShutdownResult("NONE", (TopicPartition("t", 0), TopicPartition("t", 0)))
    answered = bc.encode_controlled_shutdown(request, result)
    assert parsed(answered) == {
        "version": 1,
        "broker_id": 1,
        "broker_epoch": 4294967397,
        "error": "NONE",
        "remaining_partitions": [{"topic": "t", "partition": 0}],
    }
    decoded = bc.decode_controlled_shutdown(CS, answered)
    assert decoded.result == ControlledShutdownResult("NONE", (TopicPartition("t", 0),))
    assert decoded.result is not None and not decoded.result.succeeded
    assert ControlledShutdownResult("NONE").succeeded
    assert not ControlledShutdownResult("STALE_BROKER_EPOCH").succeeded


def test_controlled_shutdown_result_keys_are_each_optional() -> None:
    just_remaining = b'{"version":1,"broker_id":1,"broker_epoch":5,"remaining_partitions":[]}'
    assert bc.decode_controlled_shutdown(CS, just_remaining).result == ControlledShutdownResult(
        "NONE"
    )
    just_error = b'{"version":1,"broker_id":1,"broker_epoch":5,"error":"STALE_BROKER_EPOCH"}'
    assert bc.decode_controlled_shutdown(CS, just_error).result == ControlledShutdownResult(
        "STALE_BROKER_EPOCH"
    )


# ---- malformed input --------------------------------------------------------------------------


def with_(base: dict[str, object], **changes: object) -> bytes:
    return json.dumps({**base, **changes}).encode()


def without(base: dict[str, object], key: str) -> bytes:
    return json.dumps({k: v for k, v in base.items() if k != key}).encode()


def state_with(**changes: object) -> bytes:
    state = {**LEADER_AND_ISR_JSON["partition_states"][0], **changes}  # type: ignore[index]
    return with_(LEADER_AND_ISR_JSON, partition_states=[state])


@pytest.mark.parametrize(
    ("data", "fragments"),
    [
        (b"", ["no data"]),
        (b"\xff", ["not UTF-8"]),
        (b"{", ["not valid JSON"]),
        (b"[]", ["expected a JSON object"]),
        (b'{"version":NaN}', ["not valid JSON"]),
        (without(LEADER_AND_ISR_JSON, "version"), ["missing required key 'version'"]),
        (with_(LEADER_AND_ISR_JSON, version=2), ["unsupported version 2"]),
        (with_(LEADER_AND_ISR_JSON, type="Fetch"), ["unknown type 'Fetch'"]),
        (with_(LEADER_AND_ISR_JSON, type=4), ["'type': expected a string, got number 4"]),
        (with_(LEADER_AND_ISR_JSON, correlation_id=True), ["expected a 32-bit integer"]),
        (with_(LEADER_AND_ISR_JSON, correlation_id=2**31), ["expected a 32-bit integer"]),
        (with_(LEADER_AND_ISR_JSON, broker_epoch=2**63), ["expected a 64-bit integer"]),
        (with_(LEADER_AND_ISR_JSON, broker_epoch="1"), ["expected a 64-bit integer"]),
        (without(LEADER_AND_ISR_JSON, "partition_states"), ["'partition_states'"]),
        (with_(LEADER_AND_ISR_JSON, partition_states={}), ["expected a JSON array"]),
        (with_(LEADER_AND_ISR_JSON, topic_ids={"t": "nope"}), ["'topic_ids'.'t'"]),
        (with_(LEADER_AND_ISR_JSON, topic_ids=[]), ["expected a JSON object"]),
        (with_(LEADER_AND_ISR_JSON, live_leaders=[{"broker_id": 1}]), ["'host_name'"]),
        (state_with(partition=-1), ["partition -1 is negative"]),
        (state_with(isr=[1, "2"]), ["'isr'[1]: expected a 32-bit integer"]),
        (state_with(is_new=1), ["'is_new': expected a boolean"]),
        (state_with(leader_recovery_state=2), ["not a valid leader recovery state"]),
        (state_with(topic=None), ["'topic': expected a string, got null"]),
    ],
)
def test_malformed_requests(data: bytes, fragments: list[str]) -> None:
    assert_fails(REQ, lambda: bc.decode_request(REQ, data), *fragments)


def test_malformed_request_body_still_has_a_readable_header() -> None:
    data = state_with(partition="zero")
    assert_fails(REQ, lambda: bc.decode_request(REQ, data), "'partition'")
    assert bc.decode_request_header(REQ, data) == RequestHeader(RequestType.LEADER_AND_ISR, 11)


@pytest.mark.parametrize(
    ("data", "fragments"),
    [
        (b'{"version":1,"type":"StopReplica","correlation_id":1}', ["'error'"]),
        (b'{"version":1,"type":"StopReplica","correlation_id":1,"error":"none"}', ["error name"]),
        (
            b'{"version":1,"type":"StopReplica","correlation_id":1,"error":"NONE",'
            b'"partition_errors":[{"topic":"t","partition":0}]}',
            ["'partition_errors'[0]: missing required key 'error'"],
        ),
        (b'{"version":3,"type":"StopReplica","correlation_id":1,"error":"NONE"}', ["version 3"]),
    ],
)
def test_malformed_responses(data: bytes, fragments: list[str]) -> None:
    assert_fails(RESP, lambda: bc.decode_response(RESP, data), *fragments)


@pytest.mark.parametrize(
    ("data", "fragments"),
    [
        (b'{"version":1,"broker_id":1}', ["'broker_epoch'"]),
        (b'{"version":2,"broker_id":1,"broker_epoch":1}', ["version 2"]),
        (b'{"version":1,"broker_id":1,"broker_epoch":1,"error":7}', ["'error'"]),
        (
            b'{"version":1,"broker_id":1,"broker_epoch":1,"remaining_partitions":[{"topic":"t"}]}',
            ["'partition'"],
        ),
    ],
)
def test_malformed_controlled_shutdown(data: bytes, fragments: list[str]) -> None:
    assert_fails(CS, lambda: bc.decode_controlled_shutdown(CS, data), *fragments)


# ---- round trips ------------------------------------------------------------------------------

int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
broker = st.integers(-1, 2**31 - 1)
partition = st.integers(0, 2**31 - 1)
topic = st.text(st.sampled_from("abcXYZ019._-"), min_size=1, max_size=20)
ids = st.lists(broker, max_size=4).map(tuple)
error_names = st.from_regex(r"[A-Z][A-Z0-9_]{0,20}", fullmatch=True)
errors = st.sampled_from(list(Errors)).map(str) | error_names
topic_id = st.builds(Uuid, int64, int64).map(str)

leader_and_isr_states = st.builds(
    LeaderAndIsrPartitionState,
    topic,
    partition,
    int32,
    broker,
    int32,
    ids,
    int32,
    ids,
    ids,
    ids,
    st.booleans(),
    st.sampled_from(LeaderRecoveryState),
)
endpoints = st.builds(
    EndPoint,
    st.sampled_from(["PLAINTEXT", "SSL", "CLIENT"]),
    st.none() | st.text(max_size=10),
    int32,
    st.sampled_from(SecurityProtocol),
)
requests = st.one_of(
    st.builds(
        LeaderAndIsrRequest,
        broker,
        int32,
        int64,
        st.lists(leader_and_isr_states, max_size=3).map(tuple),
        st.dictionaries(topic, topic_id, max_size=3),
        st.lists(st.builds(BrokerEndpointRef, broker, st.text(max_size=8), int32), max_size=2).map(
            tuple
        ),
        correlation_id=int32,
    ),
    st.builds(
        UpdateMetadataRequest,
        broker,
        int32,
        int64,
        st.lists(
            st.builds(
                UpdateMetadataPartitionState,
                topic,
                partition,
                int32,
                broker,
                int32,
                ids,
                int32,
                ids,
                ids,
            ),
            max_size=3,
        ).map(tuple),
        st.lists(
            st.builds(
                LiveBroker,
                broker,
                st.lists(endpoints, max_size=2).map(tuple),
                st.none() | st.text(max_size=6),
            ),
            max_size=3,
        ).map(tuple),
        st.dictionaries(topic, topic_id, max_size=3),
        correlation_id=int32,
    ),
    st.builds(
        StopReplicaRequest,
        broker,
        int32,
        int64,
        st.lists(
            st.builds(StopReplicaPartitionState, topic, partition, int32, st.booleans()),
            max_size=3,
        ).map(tuple),
        correlation_id=int32,
    ),
)
partition_errors = st.lists(st.builds(PartitionError, topic, partition, errors), max_size=3).map(
    tuple
)
responses = st.one_of(
    st.builds(LeaderAndIsrResponse, errors, partition_errors, correlation_id=int32),
    st.builds(UpdateMetadataResponse, errors, correlation_id=int32),
    st.builds(StopReplicaResponse, errors, partition_errors, correlation_id=int32),
)


@given(requests)
def test_requests_round_trip(request: bc.Request) -> None:
    data = bc.encode_request(request)
    assert bc.decode_request(REQ, data) == request
    assert bc.decode_request_header(REQ, data) == RequestHeader(
        request.TYPE, request.correlation_id
    )


@given(responses)
def test_responses_round_trip(response: bc.Response) -> None:
    assert bc.decode_response(RESP, bc.encode_response(response)) == response


@given(st.lists(requests, min_size=1, max_size=4))
def test_requests_are_written_as_the_znode_encoder_writes_their_json(
    batch: list[bc.Request],
) -> None:
    # Compact, keys in order, non-ASCII as UTF-8: the bytes a reader of any znode expects, from
    # the faster encoder the channel uses.
    for data in [*bc.encode_requests(batch), *map(bc.encode_request, batch)]:
        assert data == encode_json(json.loads(data))


@given(
    st.builds(ControlledShutdownRequest, broker, int64),
    st.none()
    | st.builds(
        ControlledShutdownResult,
        errors,
        st.lists(st.builds(TopicPartition, topic, partition), unique=True, max_size=3).map(tuple),
    ),
)
def test_controlled_shutdown_round_trip(
    request: ControlledShutdownRequest, result: ControlledShutdownResult | None
) -> None:
    data = bc.encode_controlled_shutdown(request, result)
    assert bc.decode_controlled_shutdown(CS, data) == ControlledShutdownZNode(request, result)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=10,
)


@given(
    st.sampled_from([bc.decode_request, bc.decode_response, bc.decode_request_header]),
    st.fixed_dictionaries(
        {
            "version": st.just(1) | json_values,
            "type": st.sampled_from([t.value for t in RequestType]) | json_values,
            "correlation_id": st.just(1) | json_values,
        },
        optional={
            "controller_id": json_values,
            "controller_epoch": json_values,
            "broker_epoch": json_values,
            "partition_states": json_values,
            "error": json_values,
            "partition_errors": json_values,
            "topic_ids": json_values,
            "live_brokers": json_values,
            "live_leaders": json_values,
        },
    ),
)
def test_any_json_decodes_or_raises_znode_data_error(
    decode: Callable[[str, bytes], object], content: dict[str, object]
) -> None:
    try:
        decode(REQ, json.dumps(content).encode())
    except ZNodeDataError as e:
        assert e.path == REQ


# ---- compression -------------------------------------------------------------------------------


def _large_leader_and_isr(partitions: int) -> LeaderAndIsrRequest:
    state = LEADER_AND_ISR.partition_states[0]
    return dataclasses.replace(
        LEADER_AND_ISR,
        partition_states=tuple(state._replace(partition=p) for p in range(partitions)),
    )


def test_large_requests_travel_compressed_and_read_back_the_same() -> None:
    request = _large_leader_and_isr(2_000)
    data = bc.encode_request(request)
    packed = bc.pack(data)
    assert len(data) > 100_000 and len(packed) < len(data) / 10  # the point of packing
    assert packed[:1] == b"x"
    assert bc.decode_request(REQ, packed) == bc.decode_request(REQ, data) == request
    assert bc.decode_request_header(REQ, packed).correlation_id == request.correlation_id
    small = bc.encode_request(_large_leader_and_isr(1))
    assert bc.pack(small) == small  # small ones stay readable JSON


@given(st.binary(max_size=5_000))
def test_packing_is_lossless(data: bytes) -> None:
    packed = bc.pack(b"{" + data)
    assert bc.unpack(REQ, packed) == b"{" + data


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"x not zlib", "not JSON and not a zlib stream"),
        (bc.pack(b"{" + b" " * 10_000 + b"}")[:-8], "cut short"),
    ],
)
def test_broken_compressed_requests_are_named(data: bytes, fragment: str) -> None:
    with pytest.raises(bc.ZNodeDataError, match=fragment):
        bc.decode_request(REQ, data)


def test_a_compressed_bomb_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(framing, "MAX_INFLATED_BYTES", 1_000)
    with pytest.raises(bc.ZNodeDataError, match="inflates to more than 1000 bytes"):
        bc.decode_request(REQ, bc.pack(b"{" + b" " * 5_000 + b"}"))


# ---- plain partition states --------------------------------------------------------------------

_odd_values = (
    st.none()
    | st.booleans()
    | st.integers(-(2**32), 2**32)
    | st.sampled_from([0, 1, 2, -1, 2**31 - 1, -(2**31), 1.5, "t", ""])
    | st.lists(st.integers(-3, 3) | st.sampled_from([None, True, 2**31, "x"]), max_size=3)
)
_state_keys = [
    "topic", "partition", "controller_epoch", "leader", "leader_epoch", "isr", "partition_epoch",
    "replicas", "adding_replicas", "removing_replicas", "is_new", "leader_recovery_state",
    "zk_version", "offline_replicas",
]  # fmt: skip


@st.composite
def _state_fields(draw: st.DrawFn) -> object:
    """Mostly well-formed partition states with some fields odd, missing or extra."""
    fields: dict[str, object] = {
        "topic": "t", "partition": draw(st.integers(0, 5)), "controller_epoch": 1, "leader": 0,
        "leader_epoch": 0, "isr": [0, 1], "partition_epoch": 0, "replicas": [0, 1],
        "zk_version": 0,
    }  # fmt: skip
    for key in draw(st.lists(st.sampled_from(_state_keys), max_size=3)):
        if draw(st.booleans()):
            fields[key] = draw(_odd_values)
        else:
            fields.pop(key, None)
    return draw(st.just(fields) | _odd_values)


def _general(decode: Callable[[Any], object], fields: object) -> object:
    try:
        return decode(JsonReader(REQ, fields))
    except bc.ZNodeDataError as e:
        return e


@given(_state_fields())
def test_plain_states_are_read_as_the_general_path_reads_them(fields: object) -> None:
    for plain, general in (
        (plain_leader_and_isr_state, read_leader_and_isr_state),
        (plain_update_metadata_state, read_update_metadata_state),
    ):
        fast = plain(fields)
        slow = _general(general, fields)
        if fast is not None:
            assert fast == slow and type(fast) is type(slow)
        else:  # only what the general path refuses leaves the plain one
            assert isinstance(slow, bc.ZNodeDataError)


def test_states_the_controller_writes_take_the_plain_path() -> None:
    for state in LEADER_AND_ISR.partition_states:
        fields = json.loads(encode_json(leader_and_isr_state_json(state)))
        assert plain_leader_and_isr_state(fields) == state
