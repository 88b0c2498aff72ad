"""Znode paths and JSON codecs against reference §6 and Kafka's own literals.

Kafka's key order is not a contract, so encoders are compared as parsed JSON; the "as emitted"
orderings must decode exactly like the canonical ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_topic_operator.kafka.brokers import (
    BrokerInfo,
    EndPoint,
    SecurityProtocol,
    SupportedVersionRange,
)
from kafka_topic_operator.kafka.errors import IllegalArgumentException
from kafka_topic_operator.kafka.ids import Uuid
from kafka_topic_operator.kafka.leader_and_isr import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    LeaderRecoveryState,
)
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes as z
from kafka_topic_operator.zk.json_codec import encode_json, json_root
from kafka_topic_operator.zk.znodes import (
    ConfigChangeNotification,
    ControllerData,
    FeatureZNodeData,
    FeatureZNodeStatus,
    ProducerIdBlock,
    TopicZNodeData,
    ZNodeDataError,
)

TOPIC_PATH = "/brokers/topics/t"
STATE_PATH = "/brokers/topics/t/partitions/0/state"
BROKER_PATH = "/brokers/ids/1"


def parsed(data: bytes) -> object:
    return json.loads(data.decode("utf-8"))


def raw(text: str) -> bytes:
    return text.encode("utf-8")


def assert_fails(path: str, call: Callable[[], object], *fragments: str) -> ZNodeDataError:
    with pytest.raises(ZNodeDataError) as failure:
        call()
    message = str(failure.value)
    assert path in message
    assert failure.value.path == path
    for fragment in fragments:
        assert fragment in message, message
    return failure.value


# ---- paths --------------------------------------------------------------------------------------


def test_paths_are_kafkas() -> None:
    tp = TopicPartition("orders", 3)
    assert z.broker_path(7) == "/brokers/ids/7"
    assert z.topic_path("orders") == "/brokers/topics/orders"
    assert z.topic_partitions_path("orders") == "/brokers/topics/orders/partitions"
    assert z.topic_partition_path(tp) == "/brokers/topics/orders/partitions/3"
    assert z.topic_partition_state_path(tp) == "/brokers/topics/orders/partitions/3/state"
    assert z.CONTROLLER_PATH == "/controller"
    assert z.CONTROLLER_EPOCH_PATH == "/controller_epoch"
    assert z.delete_topic_path("orders") == "/admin/delete_topics/orders"
    assert z.topic_config_path("orders") == "/config/topics/orders"
    assert z.config_entity_path(z.ConfigType.CLIENT, "app") == "/config/clients/app"
    assert z.config_change_path() == "/config/changes/config_change_"
    assert z.REASSIGN_PARTITIONS_PATH == "/admin/reassign_partitions"
    assert z.PREFERRED_REPLICA_ELECTION_PATH == "/admin/preferred_replica_election"
    assert z.isr_change_path() == "/isr_change_notification/isr_change_"
    assert z.log_dir_event_path() == "/log_dir_event_notification/log_dir_event_"
    assert z.BROKER_SEQUENCE_ID_PATH == "/brokers/seqid"
    assert z.CLUSTER_ID_PATH == "/cluster/id"
    assert z.FEATURE_PATH == "/feature"
    assert z.PRODUCER_ID_BLOCK_PATH == "/latest_producer_id_block"


def test_sequential_znode_names() -> None:
    # KafkaZkClientTest.testPropagateIsrChanges: the first node is isr_change_0000000000.
    first = z.isr_change_path(z.sequence_suffix(0))
    assert first == "/isr_change_notification/isr_change_0000000000"
    assert z.config_change_path(z.sequence_suffix(1)) == "/config/changes/config_change_0000000001"
    assert z.sequence_number(first, z.ISR_CHANGE_PREFIX) == "0000000000"
    assert z.sequence_number("log_dir_event_0000000042", z.LOG_DIR_EVENT_PREFIX) == "0000000042"


def test_persistent_paths_and_config_types() -> None:
    assert list(z.PERSISTENT_ZK_PATHS) == [
        "/consumers",
        "/brokers/ids",
        "/brokers/topics",
        "/config/changes",
        "/admin/delete_topics",
        "/brokers/seqid",
        "/isr_change_notification",
        "/latest_producer_id_block",
        "/log_dir_event_notification",
        "/config/topics",
        "/config/clients",
        "/config/users",
        "/config/brokers",
        "/config/ips",
    ]
    assert [str(t) for t in z.CONFIG_TYPES] == ["topics", "clients", "users", "brokers", "ips"]


def test_null_data_znodes_are_empty() -> None:
    assert z.DELETE_TOPIC_MARKER_DATA == b""
    assert z.BROKER_SEQUENCE_ID_DATA == b""
    assert z.TOPIC_PARTITIONS_DATA == b""
    assert (z.MATCH_ANY_VERSION, z.UNKNOWN_VERSION) == (-1, -2)


# ---- /brokers/topics/<t> ------------------------------------------------------------------------

TOPIC_ID = "q1s3mTg9RqSd3Y1y6G3l1w"
TOPIC_CANONICAL = (
    '{"version":3,"topic_id":"q1s3mTg9RqSd3Y1y6G3l1w","partitions":{"0":[0,1],"1":[1,2]},'
    '"adding_replicas":{},"removing_replicas":{}}'
)
TOPIC_REASSIGNING_CANONICAL = (
    '{"version":3,"topic_id":"q1s3mTg9RqSd3Y1y6G3l1w","partitions":{"0":[4,5,6,1,2,3]},'
    '"adding_replicas":{"0":[4,5,6]},"removing_replicas":{"0":[1,2,3]}}'
)
TOPIC_REASSIGNING_AS_EMITTED = (
    '{"partitions":{"0":[4,5,6,1,2,3]},"topic_id":"q1s3mTg9RqSd3Y1y6G3l1w",'
    '"adding_replicas":{"0":[4,5,6]},"removing_replicas":{"0":[1,2,3]},"version":3}'
)


def test_topic_canonical_literal() -> None:
    partitions = {0: ReplicaAssignment.of([0, 1]), 1: ReplicaAssignment.of([1, 2])}
    assert parsed(z.encode_topic(partitions, TOPIC_ID)) == parsed(raw(TOPIC_CANONICAL))
    assert z.decode_topic(TOPIC_PATH, raw(TOPIC_CANONICAL)) == TopicZNodeData(TOPIC_ID, partitions)


def test_topic_during_reassignment_literal_and_emitted_order() -> None:
    moving = ReplicaAssignment.of([1, 2, 3]).reassign_to([4, 5, 6])
    expected = TopicZNodeData(TOPIC_ID, {0: moving})
    assert parsed(z.encode_topic({0: moving}, TOPIC_ID)) == parsed(raw(TOPIC_REASSIGNING_CANONICAL))
    assert z.decode_topic(TOPIC_PATH, raw(TOPIC_REASSIGNING_CANONICAL)) == expected
    assert z.decode_topic(TOPIC_PATH, raw(TOPIC_REASSIGNING_AS_EMITTED)) == expected


def test_topic_encoder_always_writes_v3_with_both_maps() -> None:
    content = parsed(z.encode_topic({0: ReplicaAssignment.of([1])}))
    assert content == {
        "version": 3,
        "partitions": {"0": [1]},
        "adding_replicas": {},
        "removing_replicas": {},
    }
    only_adding = ReplicaAssignment.of([2, 1], adding=[2])
    content = parsed(z.encode_topic({0: ReplicaAssignment.of([1]), 1: only_adding}))
    assert isinstance(content, dict)
    assert content["adding_replicas"] == {"1": [2]}
    assert content["removing_replicas"] == {}


def test_topic_encoder_is_compact_utf8() -> None:
    data = z.encode_topic({0: ReplicaAssignment.of([1, 2])})
    assert b" " not in data
    assert data.decode("utf-8") == (
        '{"version":3,"partitions":{"0":[1,2]},"adding_replicas":{},"removing_replicas":{}}'
    )


def test_topic_decoder_reads_every_version_and_ignores_unknown_keys() -> None:
    v1 = raw('{"version":1,"partitions":{"0":[1,2,3]}}')
    assert z.decode_topic(TOPIC_PATH, v1) == TopicZNodeData(
        None, {0: ReplicaAssignment.of([1, 2, 3])}
    )
    v2 = raw(
        '{"version":2,"partitions":{"0":[3,1],"1":[2]},"adding_replicas":{"0":[3]},'
        '"removing_replicas":{}}'
    )
    assert z.decode_topic(TOPIC_PATH, v2) == TopicZNodeData(
        None, {0: ReplicaAssignment.of([3, 1], [3]), 1: ReplicaAssignment.of([2])}
    )
    future = raw('{"version":99,"partitions":{"0":[1]},"colour":"blue"}')
    assert z.decode_topic(TOPIC_PATH, future).partitions == {0: ReplicaAssignment.of([1])}
    no_version = raw('{"partitions":{"0":[1]}}')
    assert z.decode_topic(TOPIC_PATH, no_version).partitions == {0: ReplicaAssignment.of([1])}


def test_topic_without_partitions_is_empty() -> None:
    assert z.decode_topic(TOPIC_PATH, raw('{"version":3}')) == TopicZNodeData(None, {})
    assert z.decode_topic(TOPIC_PATH, raw("{}")) == TopicZNodeData(None, {})


def test_topic_adding_lists_of_unlisted_partitions_are_ignored() -> None:
    data = raw('{"partitions":{"0":[1]},"adding_replicas":{"5":[9],"x":"junk"}}')
    assert z.decode_topic(TOPIC_PATH, data).partitions == {0: ReplicaAssignment.of([1])}


def test_a_utf8_byte_order_mark_is_skipped_as_jackson_does() -> None:
    data = "\ufeff".encode() + raw('{"partitions":{"0":[1]}}')
    assert z.decode_topic(TOPIC_PATH, data).partitions == {0: ReplicaAssignment.of([1])}


def test_topic_id_is_canonicalised_as_kafka_reprints_it() -> None:
    padded = raw('{"topic_id":"q1s3mTg9RqSd3Y1y6G3l1w==","partitions":{}}')
    assert z.decode_topic(TOPIC_PATH, padded).topic_id == TOPIC_ID


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ('{"partitions":{"0":[1,2]', ("not valid JSON",)),
        ('{"partitions":[[1,2]]}', ("'partitions'", "expected a JSON object", "an array")),
        ('{"partitions":{"0":"1,2"}}', ("'partitions'.'0'", "expected a JSON array")),
        ('{"partitions":{"0":[1,"2"]}}', ("'partitions'.'0'[1]", "32-bit integer", "'2'")),
        ('{"partitions":{"0":[1.5]}}', ("32-bit integer", "1.5")),
        ('{"partitions":{"0":[true]}}', ("32-bit integer", "boolean true")),
        ('{"partitions":{"0":[2147483648]}}', ("32-bit integer",)),
        ('{"partitions":{"zero":[1]}}', ("partition key 'zero' is not an integer",)),
        ('{"partitions":{"-1":[1]}}', ("partition key '-1' is negative",)),
        ('{"partitions":{"0":[1]},"adding_replicas":[]}', ("'adding_replicas'",)),
        ('{"partitions":{"0":[1]},"removing_replicas":{"0":[null]}}', ("null",)),
        ('{"partitions":{"0":[1]},"adding_replicas":null}', ("'adding_replicas'", "null")),
        ('{"topic_id":"not-a-uuid","partitions":{}}', ("'topic_id'", "decoded as")),
        ('{"topic_id":null,"partitions":{}}', ("'topic_id'", "expected a string")),
        ('{"topic_id":7,"partitions":{}}', ("'topic_id'", "expected a string")),
        ("[1,2]", ("expected a JSON object",)),
        ('{"partitions":{"0":[NaN]}}', ("not valid JSON",)),
    ],
)
def test_malformed_topic_znode(text: str, fragments: tuple[str, ...]) -> None:
    assert_fails(TOPIC_PATH, lambda: z.decode_topic(TOPIC_PATH, raw(text)), *fragments)


def test_topic_encoder_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="negative"):
        z.encode_topic({-1: ReplicaAssignment.of([1])})
    with pytest.raises(IllegalArgumentException):
        z.encode_topic({0: ReplicaAssignment.of([1])}, "not-a-uuid")


# ---- partition state ----------------------------------------------------------------------------

STATE_CANONICAL = '{"version":1,"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1,2,3]}'
STATE_AS_EMITTED = '{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}'
STATE_THIRD_PARTY = (
    '{"controller_epoch":33,"leader":102,"version":1,"leader_epoch":8,"isr":[102,103]}'
)


def test_partition_state_literals() -> None:
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, (1, 2, 3), leader_epoch=0), 1)
    assert parsed(z.encode_partition_state(state)) == parsed(raw(STATE_CANONICAL))
    assert z.decode_partition_state(STATE_PATH, raw(STATE_CANONICAL), 0) == state
    assert z.decode_partition_state(STATE_PATH, raw(STATE_AS_EMITTED), 0) == state
    dump = z.decode_partition_state(STATE_PATH, raw(STATE_THIRD_PARTY), 12)
    assert dump == LeaderIsrAndControllerEpoch(
        LeaderAndIsr(102, (102, 103), leader_epoch=8, partition_epoch=12), 33
    )


def test_partition_epoch_comes_from_the_stat() -> None:
    decoded = z.decode_partition_state(STATE_PATH, raw(STATE_CANONICAL), 41)
    assert decoded.leader_and_isr.partition_epoch == 41


def test_leader_recovery_state_only_when_recovering() -> None:
    recovering = LeaderIsrAndControllerEpoch(
        LeaderAndIsr(2, (2,), 5, LeaderRecoveryState.RECOVERING), 3
    )
    assert parsed(z.encode_partition_state(recovering)) == {
        "version": 1,
        "leader": 2,
        "leader_epoch": 5,
        "controller_epoch": 3,
        "isr": [2],
        "leader_recovery_state": 1,
    }
    assert z.decode_partition_state(STATE_PATH, z.encode_partition_state(recovering), 0) == (
        recovering
    )
    recovered = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, (2,), 5), 3)
    content = parsed(z.encode_partition_state(recovered))
    assert isinstance(content, dict)
    assert "leader_recovery_state" not in content
    explicit_zero = raw(
        '{"version":1,"leader":2,"leader_epoch":5,"controller_epoch":3,"isr":[2],'
        '"leader_recovery_state":0}'
    )
    assert z.decode_partition_state(STATE_PATH, explicit_zero, 0) == recovered


def test_no_leader_is_minus_one() -> None:
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(-1, (), 4), 2)
    content = parsed(z.encode_partition_state(state))
    assert isinstance(content, dict)
    assert content["leader"] == -1
    assert content["isr"] == []
    assert z.decode_partition_state(STATE_PATH, z.encode_partition_state(state), 0) == state


@pytest.mark.parametrize("missing", ["leader", "leader_epoch", "isr", "controller_epoch"])
def test_partition_state_required_keys(missing: str) -> None:
    content = json.loads(STATE_CANONICAL)
    del content[missing]
    data = raw(json.dumps(content))
    assert_fails(
        STATE_PATH,
        lambda: z.decode_partition_state(STATE_PATH, data, 0),
        f"missing required key {missing!r}",
    )


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ('{"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1,2', ("not valid JSON",)),
        ('{"leader":"1","leader_epoch":0,"controller_epoch":1,"isr":[1]}', ("'leader'",)),
        ('{"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":1}', ("'isr'",)),
        ('{"leader":1,"leader_epoch":null,"controller_epoch":1,"isr":[1]}', ("'leader_epoch'",)),
        (
            '{"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1],'
            '"leader_recovery_state":2}',
            ("Value 2 is not a valid leader recovery state",),
        ),
        (
            '{"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1],'
            '"leader_recovery_state":null}',
            ("'leader_recovery_state'",),
        ),
    ],
)
def test_malformed_partition_state(text: str, fragments: tuple[str, ...]) -> None:
    data = raw(text)
    assert_fails(STATE_PATH, lambda: z.decode_partition_state(STATE_PATH, data, 0), *fragments)


# ---- /brokers/ids/<id> --------------------------------------------------------------------------

BROKER_V5_CANONICAL = (
    '{"version":5,"host":"kafka-0.kafka","port":9092,"endpoints":["PLAINTEXT://kafka-0.kafka:9092"],'
    '"jmx_port":-1,"timestamp":"1620000000000","rack":"zone-a",'
    '"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"features":{}}'
)
BROKER_V5_AS_EMITTED = (
    '{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
    '"endpoints":["PLAINTEXT://kafka-0.kafka:9092"],"rack":"zone-a","jmx_port":-1,"port":9092,'
    '"host":"kafka-0.kafka","version":5,"timestamp":"1620000000000"}'
)
# BrokerEndPointTest literals.
BROKER_V1 = (
    '{"jmx_port":-1,"timestamp":"1420485325400","host":"172.16.8.243","version":1,"port":9091}'
)
BROKER_V2 = (
    '{"version":2,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"1416974968782",'
    '"endpoints":["PLAINTEXT://localhost:9092"]}'
)
BROKER_V3 = (
    '{"version":3,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666",'
    '"endpoints":["PLAINTEXT://host1:9092", "SSL://host1:9093"],"rack":"dc1"}'
)
BROKER_V4 = (
    '{"version":4,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666",'
    '"endpoints":["CLIENT://host1:9092","REPLICATION://host1:9093"],'
    '"listener_security_protocol_map":{"CLIENT":"SSL","REPLICATION":"PLAINTEXT"},"rack":"dc1"}'
)
BROKER_V5 = (
    '{"version":5,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666",'
    '"endpoints":["CLIENT://host1:9092", "REPLICATION://host1:9093"],'
    '"listener_security_protocol_map":{"CLIENT":"SSL", "REPLICATION":"PLAINTEXT"},"rack":"dc1",'
    '"features": {"feature1": {"min_version": 1, "max_version": 2}, '
    '"feature2": {"min_version": 2, "max_version": 4}}}'
)
BROKER_FUTURE = (
    '{"foo":"bar","version":100,"host":"localhost","port":9092,"jmx_port":9999,'
    '"timestamp":"1416974968782","endpoints":["SSL://localhost:9093"]}'
)

KAFKA_0 = EndPoint("PLAINTEXT", "kafka-0.kafka", 9092, SecurityProtocol.PLAINTEXT)
CLIENT = EndPoint("CLIENT", "host1", 9092, SecurityProtocol.SSL)
REPLICATION = EndPoint("REPLICATION", "host1", 9093, SecurityProtocol.PLAINTEXT)


def test_broker_v5_example() -> None:
    info = BrokerInfo(0, (KAFKA_0,), rack="zone-a", jmx_port=-1, timestamp=1620000000000)
    assert parsed(z.encode_broker(info)) == parsed(raw(BROKER_V5_CANONICAL))
    path = z.broker_path(0)
    assert z.decode_broker(path, raw(BROKER_V5_CANONICAL)) == info
    assert z.decode_broker(path, raw(BROKER_V5_AS_EMITTED)) == info


def test_broker_v1_is_plaintext_host_and_port() -> None:
    info = z.decode_broker(BROKER_PATH, raw(BROKER_V1))
    assert info == BrokerInfo(
        1,
        (EndPoint("PLAINTEXT", "172.16.8.243", 9091, SecurityProtocol.PLAINTEXT),),
        jmx_port=-1,
        timestamp=1420485325400,
        version=1,
    )


def test_broker_v2_and_v3() -> None:
    v2 = z.decode_broker(BROKER_PATH, raw(BROKER_V2))
    assert v2.endpoints == (EndPoint("PLAINTEXT", "localhost", 9092, SecurityProtocol.PLAINTEXT),)
    assert (v2.rack, v2.jmx_port, v2.version) == (None, 9999, 2)
    v3 = z.decode_broker(BROKER_PATH, raw(BROKER_V3))
    assert v3.endpoint("SSL") == EndPoint("SSL", "host1", 9093, SecurityProtocol.SSL)
    assert v3.rack == "dc1"


def test_broker_v4_literal() -> None:
    assert z.decode_broker(BROKER_PATH, raw(BROKER_V4)) == BrokerInfo(
        1,
        (CLIENT, REPLICATION),
        rack="dc1",
        jmx_port=9999,
        timestamp=2233345666,
        features={},
        version=4,
    )


def test_broker_v5_literal_with_features() -> None:
    info = z.decode_broker(BROKER_PATH, raw(BROKER_V5))
    assert info.endpoint("CLIENT") == CLIENT
    assert info.rack == "dc1"
    assert info.features == {
        "feature1": SupportedVersionRange(1, 2),
        "feature2": SupportedVersionRange(2, 4),
    }


def test_broker_future_version_with_unknown_keys() -> None:
    info = z.decode_broker(BROKER_PATH, raw(BROKER_FUTURE))
    assert info.id == 1
    assert info.version == 100
    assert info.endpoint("SSL") == EndPoint("SSL", "localhost", 9093, SecurityProtocol.SSL)


@pytest.mark.parametrize("rack", [', "rack":null', ""])
def test_broker_rack_may_be_null_or_missing(rack: str) -> None:
    data = raw(
        '{"version":4,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666",'
        '"endpoints":["CLIENT://host1:9092","REPLICATION://host1:9093"],'
        f'"listener_security_protocol_map":{{"CLIENT":"SSL","REPLICATION":"PLAINTEXT"}}{rack}}}'
    )
    assert z.decode_broker(BROKER_PATH, data).rack is None
    assert z.broker_rack(BROKER_PATH, data) is None
    assert z.broker_rack(BROKER_PATH, raw(BROKER_V4)) == "dc1"


def test_broker_encoder_follows_the_version_rules() -> None:
    info = BrokerInfo(
        1,
        (CLIENT, REPLICATION),
        rack="dc1",
        jmx_port=9999,
        timestamp=2233345666,
        features={"feature1": SupportedVersionRange(1, 2)},
    )
    common = {
        "host": "host1",  # the first PLAINTEXT endpoint's
        "port": 9093,
        "endpoints": ["CLIENT://host1:9092", "REPLICATION://host1:9093"],
        "jmx_port": 9999,
        "timestamp": "2233345666",
    }
    protocol_map = {"CLIENT": "SSL", "REPLICATION": "PLAINTEXT"}
    assert parsed(z.encode_broker(info, 2)) == {"version": 2, **common}
    assert parsed(z.encode_broker(info, 3)) == {"version": 3, **common, "rack": "dc1"}
    assert parsed(z.encode_broker(info, 4)) == {
        "version": 4,
        **common,
        "rack": "dc1",
        "listener_security_protocol_map": protocol_map,
    }
    assert parsed(z.encode_broker(info, 5)) == {
        "version": 5,
        **common,
        "rack": "dc1",
        "listener_security_protocol_map": protocol_map,
        "features": {"feature1": {"min_version": 1, "max_version": 2}},
    }


def test_broker_without_plaintext_registers_no_default_host() -> None:
    info = BrokerInfo(3, (CLIENT,), timestamp=5)
    content = parsed(z.encode_broker(info))
    assert isinstance(content, dict)
    assert (content["host"], content["port"]) == (None, -1)
    assert "rack" not in content
    assert z.decode_broker(z.broker_path(3), z.encode_broker(info)) == info


def test_broker_36_features_round_trip() -> None:
    info = BrokerInfo(
        2,
        (EndPoint("PLAINTEXT", "b2", 9092, SecurityProtocol.PLAINTEXT),),
        timestamp=1,
        features={"metadata.version": SupportedVersionRange(1, 14)},
    )
    content = parsed(z.encode_broker(info))
    assert isinstance(content, dict)
    assert content["features"] == {"metadata.version": {"min_version": 1, "max_version": 14}}
    assert z.decode_broker(z.broker_path(2), z.encode_broker(info)) == info


def test_broker_encoder_refuses_what_kafka_cannot_read() -> None:
    with pytest.raises(ValueError, match="version 0"):
        z.encode_broker(BrokerInfo(1, (KAFKA_0,), timestamp=1), 0)
    with pytest.raises(ValueError, match="timestamp"):
        z.encode_broker(BrokerInfo(1, (KAFKA_0,)))


def test_security_protocol_map_keys_are_not_normalised() -> None:
    # Endpoint listener names are upper-cased, the map's keys are taken as written.
    data = raw(
        '{"version":4,"jmx_port":1,"endpoints":["client://h:1"],'
        '"listener_security_protocol_map":{"client":"ssl"}}'
    )
    assert_fails(
        BROKER_PATH,
        lambda: z.decode_broker(BROKER_PATH, data),
        "No security protocol defined for listener CLIENT",
    )
    lower_value = raw(
        '{"version":4,"jmx_port":1,"endpoints":["client://h:1"],'
        '"listener_security_protocol_map":{"CLIENT":"sasl_ssl"}}'
    )
    assert z.decode_broker(BROKER_PATH, lower_value).endpoints == (
        EndPoint("CLIENT", "h", 1, SecurityProtocol.SASL_SSL),
    )


@pytest.mark.parametrize(
    ("connection_string", "host", "port"),
    [
        # BrokerEndPointTest.testEndpointFromUri
        ("PLAINTEXT://localhost:9092", "localhost", 9092),
        ("PLAINTEXT://local_host:9092", "local_host", 9092),
        ("PLAINTEXT://:9092", None, 9092),
        ("PLAINTEXT://[::1]:9092", "::1", 9092),
        ("PLAINTEXT://[fe80::b1da:69ca:57f7:63d8%3]:9092", "fe80::b1da:69ca:57f7:63d8%3", 9092),
        ("PLAINTEXT://MyHostname:9092", "MyHostname", 9092),
    ],
)
def test_endpoint_from_uri(connection_string: str, host: str | None, port: int) -> None:
    endpoint = EndPoint.parse(connection_string)
    assert (endpoint.host, endpoint.port) == (host, port)
    assert endpoint.connection_string == connection_string


def test_endpoint_parse_errors_carry_kafkas_messages() -> None:
    with pytest.raises(ValueError, match="Unable to parse localhost:9092 to a broker endpoint"):
        EndPoint.parse("localhost:9092")
    with pytest.raises(IllegalArgumentException) as failure:
        EndPoint.parse("CLIENT://h:1")
    assert failure.value.message == "No security protocol defined for listener CLIENT"
    assert EndPoint.parse("ssl://h:-1") == EndPoint("SSL", "h", -1, SecurityProtocol.SSL)


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ('{"version":0,"jmx_port":1,"host":"h","port":1}', ("Unsupported version",)),
        ('{"version":-3,"jmx_port":1}', ("Unsupported version",)),
        ('{"jmx_port":1,"endpoints":[]}', ("missing required key 'version'",)),
        ('{"version":4,"endpoints":[]}', ("missing required key 'jmx_port'",)),
        ('{"version":"4","jmx_port":1,"endpoints":[]}', ("'version'",)),
        ('{"version":1,"jmx_port":1,"port":1}', ("missing required key 'host'",)),
        ('{"version":1,"jmx_port":1,"host":null,"port":1}', ("'host'", "expected a string")),
        ('{"version":1,"jmx_port":1,"host":"h","port":"9092"}', ("'port'",)),
        ('{"version":4,"jmx_port":1}', ("missing required key 'endpoints'",)),
        ('{"version":4,"jmx_port":1,"endpoints":"PLAINTEXT://h:1"}', ("'endpoints'",)),
        ('{"version":4,"jmx_port":1,"endpoints":[7]}', ("'endpoints'[0]",)),
        ('{"version":4,"jmx_port":1,"endpoints":["h:1"]}', ("Unable to parse h:1",)),
        ('{"version":4,"jmx_port":1,"endpoints":["PLAINTEXT://h:99999999999"]}', ("Unable",)),
        ('{"version":4,"jmx_port":1,"endpoints":["FOO://h:1"]}', ("listener FOO",)),
        (
            '{"version":4,"jmx_port":1,"endpoints":[],"listener_security_protocol_map":null}',
            ("'listener_security_protocol_map'",),
        ),
        (
            '{"version":4,"jmx_port":1,"endpoints":[],"listener_security_protocol_map":{"A":"B"}}',
            ("No enum constant org.apache.kafka.common.security.auth.SecurityProtocol.B",),
        ),
        ('{"version":4,"jmx_port":1,"endpoints":[],"rack":5}', ("'rack'",)),
        (
            '{"version":5,"jmx_port":1,"endpoints":[],"features":{"f":{"max_version":2}}}',
            ("min_version absent",),
        ),
        (
            '{"version":5,"jmx_port":1,"endpoints":[],'
            '"features":{"f":{"min_version":3,"max_version":2}}}',
            ("Expected minValue >= 1",),
        ),
        (
            '{"version":5,"jmx_port":1,"endpoints":[],'
            '"features":{"f":{"min_version":1,"max_version":"2"}}}',
            ("'features'.'f'.'max_version'",),
        ),
        ('{"version":5,"jmx_port":1,"endpoints":[],"features":[]}', ("'features'",)),
    ],
)
def test_malformed_broker_registration(text: str, fragments: tuple[str, ...]) -> None:
    data = raw(text)
    assert_fails(BROKER_PATH, lambda: z.decode_broker(BROKER_PATH, data), *fragments)


def test_broker_features_null_is_none() -> None:
    data = raw('{"version":5,"jmx_port":1,"endpoints":[],"features":null}')
    assert z.decode_broker(BROKER_PATH, data).features == {}


def test_broker_id_comes_from_the_znode_name() -> None:
    assert z.decode_broker("/brokers/ids/1001", raw(BROKER_V1)).id == 1001
    assert_fails("/brokers/ids/x", lambda: z.decode_broker("/brokers/ids/x", raw(BROKER_V1)), "'x'")


# ---- /controller and /controller_epoch ----------------------------------------------------------

CONTROLLER_V1 = '{"version":1,"brokerid":1,"timestamp":"1620000000000"}'
CONTROLLER_V2 = '{"version":2,"brokerid":1,"timestamp":"1620000000000","kraftControllerEpoch":-1}'


def test_controller_literals() -> None:
    v1 = z.encode_controller(1, 1620000000000, version=1)
    assert parsed(v1) == parsed(raw(CONTROLLER_V1))
    assert parsed(z.encode_controller(1, 1620000000000)) == parsed(raw(CONTROLLER_V2))
    assert z.decode_controller(z.CONTROLLER_PATH, raw(CONTROLLER_V1)) == ControllerData(
        1, 1620000000000, None
    )
    assert z.decode_controller(z.CONTROLLER_PATH, raw(CONTROLLER_V2)) == ControllerData(
        1, 1620000000000, -1
    )


def test_controller_timestamp_is_a_string_and_not_required() -> None:
    content = parsed(z.encode_controller(4, 17, version=1))
    assert isinstance(content, dict)
    assert content["timestamp"] == "17"
    # Kafka only reads brokerid (and kraftControllerEpoch); a bad timestamp is no error.
    for stamp in ("", ',"timestamp":17', ',"timestamp":"soon"'):
        data = raw(f'{{"version":1,"brokerid":4{stamp}}}')
        assert z.decode_controller(z.CONTROLLER_PATH, data) == ControllerData(4, None, None)


def test_controller_encoder_versions() -> None:
    with pytest.raises(ValueError, match="version 3"):
        z.encode_controller(1, 1, version=3)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"version":1,"timestamp":"1"}', "missing required key 'brokerid'"),
        ('{"version":1,"brokerid":"1"}', "'brokerid'"),
        ('{"version":2,"brokerid":1,"kraftControllerEpoch":null}', "'kraftControllerEpoch'"),
        ('{"version":1,"brokerid":1', "not valid JSON"),
    ],
)
def test_malformed_controller(text: str, fragment: str) -> None:
    data = raw(text)
    path = z.CONTROLLER_PATH
    assert_fails(path, lambda: z.decode_controller(path, data), fragment)


def test_controller_epoch_is_plain_integer_text() -> None:
    assert z.encode_controller_epoch(1) == b"1"
    assert z.encode_controller_epoch(0) == b"0"
    assert z.decode_controller_epoch(z.CONTROLLER_EPOCH_PATH, b"1") == 1
    assert z.decode_controller_epoch(z.CONTROLLER_EPOCH_PATH, b"+12") == 12


@pytest.mark.parametrize("data", [b"", b" 1", b"1.0", b"one", b"2147483648", b"\xff", b'"1"'])
def test_malformed_controller_epoch(data: bytes) -> None:
    path = z.CONTROLLER_EPOCH_PATH
    assert_fails(path, lambda: z.decode_controller_epoch(path, data))


# ---- /config ------------------------------------------------------------------------------------

CONFIG_LITERAL = '{"version":1,"config":{"retention.ms":"86400000"}}'
CONFIG_PATH = "/config/topics/t"


def test_topic_config_literal() -> None:
    assert parsed(z.encode_config({"retention.ms": "86400000"})) == parsed(raw(CONFIG_LITERAL))
    assert z.decode_config(CONFIG_PATH, raw(CONFIG_LITERAL)) == {"retention.ms": "86400000"}
    assert parsed(z.encode_config({})) == {"version": 1, "config": {}}


def test_config_encoder_keeps_utf8_and_refuses_non_strings() -> None:
    assert "é".encode() in z.encode_config({"k": "é"})
    with pytest.raises(ValueError, match="non-string"):
        z.encode_config({"retention.ms": 1})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    "data", [b"", None, b'{"version":1}', b'{"version":1,"config":null}', b'{"config":{}}']
)
def test_config_absent_is_empty(data: bytes | None) -> None:
    assert z.decode_config(CONFIG_PATH, data) == {}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"version":1,"config":{"retention.ms":86400000}}', "'config'.'retention.ms'"),
        ('{"version":1,"config":["a"]}', "'config'"),
        ('{"version":1,"config":{"a":"b"}', "not valid JSON"),
    ],
)
def test_malformed_config(text: str, fragment: str) -> None:
    data = raw(text)
    assert_fails(CONFIG_PATH, lambda: z.decode_config(CONFIG_PATH, data), fragment)


CHANGE_PATH = "/config/changes/config_change_0000000000"


def test_config_change_notification_literals() -> None:
    literal = '{"version":2,"entity_path":"topics/my-topic"}'
    assert parsed(z.encode_config_change("topics/my-topic")) == parsed(raw(literal))
    change = z.decode_config_change(CHANGE_PATH, raw(literal))
    assert change == ConfigChangeNotification(2, "topics/my-topic")
    assert (change.entity_type, change.entity_name) == ("topics", "my-topic")
    # KafkaZkClientTest.testCreateConfigChangeNotification writes the raw path it was given.
    kafka_test = '{"version":2,"entity_path":"/config/topics/topic1"}'
    assert parsed(z.encode_config_change("/config/topics/topic1")) == parsed(raw(kafka_test))
    raw_path = z.decode_config_change(CHANGE_PATH, raw(kafka_test))
    assert raw_path.entity_path == "/config/topics/topic1"
    # ZkConfigManager takes the text before the first '/' as the type: "" here, so it refuses.
    assert raw_path.entity_type == ""
    assert raw_path.entity_type not in z.CONFIG_TYPES


def test_config_change_hierarchical_and_v1() -> None:
    nested = z.decode_config_change(
        CHANGE_PATH, raw('{"version":2,"entity_path":"users/alice/clients/app"}')
    )
    assert (nested.entity_type, nested.entity_name) == ("users", "alice/clients/app")
    no_slash = ConfigChangeNotification(2, "topics")
    assert (no_slash.entity_type, no_slash.entity_name) == (None, None)
    v1 = z.decode_config_change(
        CHANGE_PATH, raw('{"version":1,"entity_type":"clients","entity_name":"app"}')
    )
    assert v1 == ConfigChangeNotification(1, "clients/app")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"entity_path":"topics/t"}', "missing required key 'version'"),
        ('{"version":3,"entity_path":"topics/t"}', "unsupported version '3'"),
        ('{"version":2}', "must specify 'entity_path'"),
        ('{"version":2,"entity_path":null}', "must specify 'entity_path'"),
        ('{"version":2,"entity_path":5}', "'entity_path'"),
        ('{"version":1,"entity_type":"users","entity_name":"u"}', "'clients' or 'topics'"),
        ('{"version":1,"entity_type":"topics"}', "does not specify 'entity_name'"),
        ("not json", "not valid JSON"),
    ],
)
def test_malformed_config_change(text: str, fragment: str) -> None:
    data = raw(text)
    assert_fails(CHANGE_PATH, lambda: z.decode_config_change(CHANGE_PATH, data), fragment)


# ---- /admin/reassign_partitions and /admin/preferred_replica_election ---------------------------

REASSIGNMENT = '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2]}]}'


def test_reassignment_literal() -> None:
    # ReassignPartitionsZNodeTest asserts the exact string (Jackson's bean property order).
    data = z.encode_reassignment({TopicPartition("foo", 0): [1, 2]})
    assert data == raw(REASSIGNMENT)
    assert parsed(data) == parsed(raw(REASSIGNMENT))
    decoded = z.decode_reassignment(z.REASSIGN_PARTITIONS_PATH, raw(REASSIGNMENT))
    assert decoded == {TopicPartition("foo", 0): [1, 2]}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("invalid json", "not valid JSON"),  # ReassignPartitionsZNodeTest.testDecodeInvalidJson
        ('{"version":1}', "missing required key 'partitions'"),
        ('{"version":1,"partitions":[{"topic":"foo","partition":0}]}', "'replicas'"),
        ('{"version":1,"partitions":[{"partition":0,"replicas":[1]}]}', "'topic'"),
        ('{"version":1,"partitions":[{"topic":"f","partition":-1,"replicas":[1]}]}', "negative"),
        ('{"version":1,"partitions":[{"topic":"f","partition":0,"replicas":["1"]}]}', "[0]"),
        ('{"version":1,"partitions":{"topic":"f"}}', "'partitions'"),
        ('{"version":1,"partitions":[7]}', "'partitions'[0]"),
    ],
)
def test_malformed_reassignment(text: str, fragment: str) -> None:
    data = raw(text)
    path = z.REASSIGN_PARTITIONS_PATH
    assert_fails(path, lambda: z.decode_reassignment(path, data), fragment)


def test_preferred_replica_election_literal() -> None:
    literal = '{"version":1,"partitions":[{"topic":"t","partition":0}]}'
    data = z.encode_preferred_replica_election([TopicPartition("t", 0)])
    assert parsed(data) == parsed(raw(literal))
    path = z.PREFERRED_REPLICA_ELECTION_PATH
    assert z.decode_preferred_replica_election(path, raw(literal)) == {TopicPartition("t", 0)}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"version":1}', "missing required key 'partitions'"),
        ('{"version":1,"partitions":[{"topic":"t"}]}', "missing required key 'partition'"),
        ('{"version":1,"partitions":[{"topic":1,"partition":0}]}', "'topic'"),
        ('{"version":1,"partitions":[{"topic":"t","partition":"0"}]}', "'partition'"),
    ],
)
def test_malformed_preferred_replica_election(text: str, fragment: str) -> None:
    data = raw(text)
    path = z.PREFERRED_REPLICA_ELECTION_PATH
    assert_fails(path, lambda: z.decode_preferred_replica_election(path, data), fragment)


# ---- notifications, cluster id, feature, producer ids -------------------------------------------

ISR_CHANGE = (
    '{"version":1,"partitions":[{"topic":"topic-a","partition":0},'
    '{"topic":"topic-b","partition":0}]}'
)


def test_isr_change_literal() -> None:
    partitions = [TopicPartition("topic-a", 0), TopicPartition("topic-b", 0)]
    assert parsed(z.encode_isr_change(partitions)) == parsed(raw(ISR_CHANGE))
    path = z.isr_change_path(z.sequence_suffix(0))
    assert z.decode_isr_change(path, raw(ISR_CHANGE)) == set(partitions)
    second = '{"version":1,"partitions":[{"topic":"topic-b","partition":0}]}'
    assert parsed(z.encode_isr_change([TopicPartition("topic-b", 0)])) == parsed(raw(second))


def test_isr_change_lists_each_partition_once() -> None:
    tp = TopicPartition("a", 1)
    content = parsed(z.encode_isr_change([tp, tp]))
    assert content == {"version": 1, "partitions": [{"topic": "a", "partition": 1}]}


def test_malformed_isr_change() -> None:
    path = z.isr_change_path(z.sequence_suffix(3))
    data = raw('{"version":1,"partitions":[{"topic":"a","partition":null}]}')
    assert_fails(path, lambda: z.decode_isr_change(path, data), "'partitions'[0].'partition'")


def test_log_dir_event_literal() -> None:
    literal = '{"version":1,"broker":3,"event":1}'
    assert parsed(z.encode_log_dir_event(3)) == parsed(raw(literal))
    path = z.log_dir_event_path(z.sequence_suffix(0))
    assert z.decode_log_dir_event(path, raw(literal)) == 3
    assert_fails(path, lambda: z.decode_log_dir_event(path, raw('{"version":1}')), "'broker'")


def test_cluster_id_literal() -> None:
    literal = '{"version":"1","id":"6f3dXmWbT2uB6f9RXiPlvg"}'
    data = z.encode_cluster_id("6f3dXmWbT2uB6f9RXiPlvg")
    assert parsed(data) == parsed(raw(literal))
    content = parsed(data)
    assert isinstance(content, dict)
    assert content["version"] == "1"
    assert z.decode_cluster_id(z.CLUSTER_ID_PATH, raw(literal)) == "6f3dXmWbT2uB6f9RXiPlvg"
    path = z.CLUSTER_ID_PATH
    assert_fails(path, lambda: z.decode_cluster_id(path, raw('{"version":"1"}')), "'id'")
    assert_fails(path, lambda: z.decode_cluster_id(path, raw('{"version":"1","id":1}')), "'id'")


def test_feature_literal() -> None:
    literal = '{"version":1,"status":1,"features":{}}'
    node = FeatureZNodeData(1, FeatureZNodeStatus.ENABLED, {})
    assert parsed(z.encode_feature(node)) == parsed(raw(literal))
    assert z.decode_feature(z.FEATURE_PATH, raw(literal)) == node


def test_feature_encode_decode() -> None:
    # FeatureZNodeTest.testEncodeDecode: v1 writes min = max, v2 only the max.
    features = {"feature1": 2, "feature2": 4}
    v1 = FeatureZNodeData(1, FeatureZNodeStatus.ENABLED, features)
    assert parsed(z.encode_feature(v1)) == {
        "version": 1,
        "status": 1,
        "features": {
            "feature1": {"min_version_level": 2, "max_version_level": 2},
            "feature2": {"min_version_level": 4, "max_version_level": 4},
        },
    }
    v2 = FeatureZNodeData(2, FeatureZNodeStatus.DISABLED, features)
    assert parsed(z.encode_feature(v2)) == {
        "version": 2,
        "status": 0,
        "features": {"feature1": {"max_version_level": 2}, "feature2": {"max_version_level": 4}},
    }
    for node in (v1, v2):
        assert z.decode_feature(z.FEATURE_PATH, z.encode_feature(node)) == node
    with pytest.raises(ValueError, match="version 3"):
        z.encode_feature(FeatureZNodeData(3, FeatureZNodeStatus.ENABLED))


def test_feature_decode_success() -> None:
    v1 = raw(
        '{"version":1,"status":1,"features":{"feature1": {"min_version_level": 1, '
        '"max_version_level": 2}, "feature2": {"min_version_level": 2, "max_version_level": 4}}}'
    )
    assert z.decode_feature(z.FEATURE_PATH, v1).features == {"feature1": 2, "feature2": 4}
    # Version 2 does not inspect min_version_level at all.
    v2 = raw(
        '{"version":2,"status":1,"features":{"f": {"min_version_level": 0, '
        '"max_version_level": 2}, "g": {"max_version_level": 1}}}'
    )
    assert z.decode_feature(z.FEATURE_PATH, v2).features == {"f": 2, "g": 1}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"version":0,"status":1,"features":{}}', "Unsupported version: 0"),
        ('{"version":3,"status":1,"features":{}}', "Unsupported version: 3"),
        ('{"version":2,"status":2,"features":{}}', "Malformed status: 2"),
        ('{"version":1,"features":{}}', "Status can not be absent"),
        ('{"version":1,"status":1}', "Features map can not be absent"),
        ('{"version":1,"status":1,"features":null}', "Features map can not be absent"),
        ('{"version":1,"status":1,"features":{"f":{"min_version_level":1}}}', "max_version_level"),
        ('{"version":1,"status":1,"features":{"f":{"max_version_level":1}}}', "min_version_level"),
        (
            '{"version":1,"status":1,"features":{"f":{"min_version_level":0,"max_version_level":2}}}',
            "Expected minValue >= 1",
        ),
        (
            '{"version":1,"status":1,"features":{"f":{"min_version_level":2,"max_version_level":1}}}',
            "Expected minValue >= 1",
        ),
        ('{"version":2,"status":1,"features":{"f":{"max_version_level":0}}}', "maxValue >= 1"),
        ('{"version":1,"status":1,"features":{"f":{"a":1},"partial"}}', "not valid JSON"),
        ('{"status":1,"features":{}}', "missing required key 'version'"),
    ],
)
def test_malformed_feature(text: str, fragment: str) -> None:
    data = raw(text)
    assert_fails(z.FEATURE_PATH, lambda: z.decode_feature(z.FEATURE_PATH, data), fragment)


def test_producer_id_block_literal() -> None:
    literal = '{"version":1,"broker":0,"block_start":"0","block_end":"999"}'
    block = ProducerIdBlock(0, 0, 999)
    assert parsed(z.encode_producer_id_block(block)) == parsed(raw(literal))
    assert z.decode_producer_id_block(z.PRODUCER_ID_BLOCK_PATH, raw(literal)) == block


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"version":1,"broker":0,"block_start":0,"block_end":"999"}', "'block_start'"),
        ('{"version":1,"broker":0,"block_start":"0"}', "'block_end'"),
        ('{"version":1,"broker":0,"block_start":"0","block_end":"9e3"}', "64-bit"),
        (
            '{"version":1,"broker":0,"block_start":"0","block_end":"9223372036854775808"}',
            "64-bit",
        ),
        ('{"version":1,"broker":0,"block_start":"0","block_end":"4294967296"}', "block size"),
        ('{"version":1,"block_start":"0","block_end":"9"}', "'broker'"),
    ],
)
def test_malformed_producer_id_block(text: str, fragment: str) -> None:
    data = raw(text)
    path = z.PRODUCER_ID_BLOCK_PATH
    assert_fails(path, lambda: z.decode_producer_id_block(path, data), fragment)


# ---- every decoder against generic garbage ------------------------------------------------------

DECODERS: dict[str, Callable[[str, bytes | None], object]] = {
    "/brokers/topics/t": z.decode_topic,
    "/brokers/topics/t/partitions/0/state": lambda p, d: z.decode_partition_state(p, d, 0),
    "/brokers/ids/1": z.decode_broker,
    "/controller": z.decode_controller,
    "/controller_epoch": z.decode_controller_epoch,
    "/config/topics/t": z.decode_config,
    "/config/changes/config_change_0000000000": z.decode_config_change,
    "/admin/reassign_partitions": z.decode_reassignment,
    "/admin/preferred_replica_election": z.decode_preferred_replica_election,
    "/isr_change_notification/isr_change_0000000000": z.decode_isr_change,
    "/log_dir_event_notification/log_dir_event_0000000000": z.decode_log_dir_event,
    "/cluster/id": z.decode_cluster_id,
    "/feature": z.decode_feature,
    "/latest_producer_id_block": z.decode_producer_id_block,
}

GARBAGE = [
    b"{",
    b'{"version":1,',
    b"\xff\xfe{}",
    b'{"version":1,"x":"\xc3"}',
    b"[]",
    b"null",
    b'"text"',
    b"42.5",
    b"NaN",
    b'{"version":Infinity}',
    b"{} {}",
    b"[" * 100_000,
]


@pytest.mark.parametrize("path", sorted(DECODERS))
@pytest.mark.parametrize("data", GARBAGE, ids=lambda d: repr(d[:16]))
def test_every_decoder_names_the_path_for_garbage(path: str, data: bytes) -> None:
    assert_fails(path, lambda: DECODERS[path](path, data))


@pytest.mark.parametrize("path", sorted(set(DECODERS) - {"/config/topics/t"}))
def test_every_json_decoder_refuses_no_data(path: str) -> None:
    assert_fails(path, lambda: DECODERS[path](path, b""), "no data")
    assert_fails(path, lambda: DECODERS[path](path, None), "no data")


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**40), max_value=2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)

GOLDEN = {
    "/brokers/topics/t": TOPIC_REASSIGNING_CANONICAL,
    "/brokers/topics/t/partitions/0/state": STATE_CANONICAL,
    "/brokers/ids/1": BROKER_V5,
    "/controller": CONTROLLER_V2,
    "/config/topics/t": CONFIG_LITERAL,
    "/config/changes/config_change_0000000000": (
        '{"version":1,"entity_type":"topics","entity_name":"t"}'
    ),
    "/admin/reassign_partitions": REASSIGNMENT,
    "/admin/preferred_replica_election": ISR_CHANGE,
    "/isr_change_notification/isr_change_0000000000": ISR_CHANGE,
    "/log_dir_event_notification/log_dir_event_0000000000": '{"version":1,"broker":3,"event":1}',
    "/cluster/id": '{"version":"1","id":"x"}',
    "/feature": (
        '{"version":1,"status":1,"features":{"f":{"min_version_level":1,"max_version_level":2}}}'
    ),
    "/latest_producer_id_block": '{"version":1,"broker":0,"block_start":"0","block_end":"999"}',
}


def _replace_somewhere(value: object, replacement: object, choice: int) -> object:
    """`value` with one nested member (picked by `choice`) replaced, or a key removed."""
    if isinstance(value, dict) and value:
        keys = sorted(value)
        key = keys[choice % len(keys)]
        out = dict(value)
        if choice % 5 == 4:
            del out[key]
        elif choice % 3 == 0:
            out[key] = replacement
        else:
            out[key] = _replace_somewhere(value[key], replacement, choice // 7)
        return out
    if isinstance(value, list) and value:
        index = choice % len(value)
        items = list(value)
        items[index] = (
            replacement
            if choice % 2 == 0
            else _replace_somewhere(value[index], replacement, choice // 3)
        )
        return items
    return replacement


@given(
    path=st.sampled_from(sorted(GOLDEN)),
    replacement=json_values,
    choice=st.integers(min_value=0, max_value=10_000),
)
def test_decoders_raise_only_znode_data_errors(path: str, replacement: object, choice: int) -> None:
    mutated = _replace_somewhere(json.loads(GOLDEN[path]), replacement, choice)
    data = json.dumps(mutated).encode()
    try:
        DECODERS[path](path, data)
    except ZNodeDataError as e:
        assert e.path == path


@given(path=st.sampled_from(sorted(DECODERS)), data=st.binary(max_size=40))
def test_decoders_raise_only_znode_data_errors_for_any_bytes(path: str, data: bytes) -> None:
    try:
        DECODERS[path](path, data)
    except ZNodeDataError as e:
        assert e.path == path


# ---- round trips --------------------------------------------------------------------------------

int32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
broker_ids = st.integers(min_value=0, max_value=2**31 - 1)
replica_lists = st.lists(broker_ids, max_size=5, unique=True)
topics = st.text(alphabet="abcdefghijklmnopqrstuvwxyz._-0123456789", min_size=1, max_size=20)
partitions_ = st.integers(min_value=0, max_value=2**31 - 1)
topic_partitions = st.builds(TopicPartition, topics, partitions_)
topic_ids = st.builds(lambda b: str(Uuid.from_bytes(b)), st.binary(min_size=16, max_size=16))


@st.composite
def replica_assignments(draw: st.DrawFn) -> ReplicaAssignment:
    origin = draw(replica_lists)
    if draw(st.booleans()):
        return ReplicaAssignment.of(origin)
    return ReplicaAssignment.of(origin).reassign_to(draw(replica_lists))


@given(st.dictionaries(partitions_, replica_assignments(), max_size=6), st.none() | topic_ids)
def test_topic_round_trip(partitions: dict[int, ReplicaAssignment], topic_id: str | None) -> None:
    assert z.decode_topic(TOPIC_PATH, z.encode_topic(partitions, topic_id)) == TopicZNodeData(
        topic_id, partitions
    )


@given(
    leader=int32,
    isr=st.lists(broker_ids, max_size=5),
    leader_epoch=int32,
    recovery=st.sampled_from(LeaderRecoveryState),
    controller_epoch=int32,
    version=st.integers(min_value=0, max_value=2**31 - 1),
)
def test_partition_state_round_trip(
    leader: int,
    isr: list[int],
    leader_epoch: int,
    recovery: LeaderRecoveryState,
    controller_epoch: int,
    version: int,
) -> None:
    state = LeaderIsrAndControllerEpoch(
        LeaderAndIsr(leader, tuple(isr), leader_epoch, recovery, version), controller_epoch
    )
    data = z.encode_partition_state(state)
    assert z.decode_partition_state(STATE_PATH, data, version) == state
    # The fast encoder of the states writes what the znode encoder would.
    assert data == encode_json(json.loads(data))


hosts = st.none() | st.sampled_from(["h1", "kafka-0.kafka", "::1", "10.0.0.1", "fe80::1%3"])
endpoints = st.builds(
    EndPoint,
    st.sampled_from(["PLAINTEXT", "SSL", "CLIENT", "REPLICATION", "INTERNAL"]),
    hosts,
    st.integers(min_value=-1, max_value=65535),
    st.sampled_from(SecurityProtocol),
)


@st.composite
def version_ranges(draw: st.DrawFn) -> SupportedVersionRange:
    low = draw(st.integers(min_value=1, max_value=2**15 - 1))
    return SupportedVersionRange(low, draw(st.integers(min_value=low, max_value=2**15 - 1)))


@given(
    broker_id=broker_ids,
    eps=st.lists(endpoints, max_size=4, unique_by=lambda e: e.listener_name),
    rack=st.none() | st.text(max_size=8),
    jmx_port=int32,
    timestamp=st.integers(min_value=0, max_value=2**63 - 1),
    features=st.dictionaries(st.text(max_size=8), version_ranges(), max_size=3),
    version=st.sampled_from([4, 5]),
)
def test_broker_round_trip(
    broker_id: int,
    eps: list[EndPoint],
    rack: str | None,
    jmx_port: int,
    timestamp: int,
    features: dict[str, SupportedVersionRange],
    version: int,
) -> None:
    info = BrokerInfo(broker_id, tuple(eps), rack, jmx_port, timestamp, features, version)
    decoded = z.decode_broker(z.broker_path(broker_id), z.encode_broker(info, version))
    expected_features = features if version >= 5 else {}
    assert decoded == BrokerInfo(
        broker_id, tuple(eps), rack, jmx_port, timestamp, expected_features, version
    )


@given(broker_id=broker_ids, timestamp=st.integers(min_value=0, max_value=2**63 - 1), kraft=int32)
def test_controller_round_trip(broker_id: int, timestamp: int, kraft: int) -> None:
    v1 = z.encode_controller(broker_id, timestamp, version=1)
    assert z.decode_controller(z.CONTROLLER_PATH, v1) == ControllerData(broker_id, timestamp)
    v2 = z.encode_controller(broker_id, timestamp, kraft_controller_epoch=kraft)
    assert z.decode_controller(z.CONTROLLER_PATH, v2) == ControllerData(broker_id, timestamp, kraft)


@given(int32)
def test_controller_epoch_round_trip(epoch: int) -> None:
    path = z.CONTROLLER_EPOCH_PATH
    assert z.decode_controller_epoch(path, z.encode_controller_epoch(epoch)) == epoch


@given(st.dictionaries(st.text(), st.text()))
def test_config_round_trip(config: dict[str, str]) -> None:
    assert z.decode_config(CONFIG_PATH, z.encode_config(config)) == config


@given(st.text())
def test_config_change_round_trip(entity_path: str) -> None:
    decoded = z.decode_config_change(CHANGE_PATH, z.encode_config_change(entity_path))
    assert decoded == ConfigChangeNotification(2, entity_path)


@given(st.dictionaries(topic_partitions, replica_lists, max_size=6))
def test_reassignment_round_trip(reassignment: dict[TopicPartition, list[int]]) -> None:
    path = z.REASSIGN_PARTITIONS_PATH
    assert z.decode_reassignment(path, z.encode_reassignment(reassignment)) == reassignment


@given(st.lists(topic_partitions, max_size=6))
def test_partition_set_round_trips(partitions: list[TopicPartition]) -> None:
    isr_path = z.isr_change_path(z.sequence_suffix(0))
    assert z.decode_isr_change(isr_path, z.encode_isr_change(partitions)) == set(partitions)
    path = z.PREFERRED_REPLICA_ELECTION_PATH
    data = z.encode_preferred_replica_election(partitions)
    assert z.decode_preferred_replica_election(path, data) == set(partitions)


@given(broker_ids, st.text(min_size=1))
def test_small_znode_round_trips(broker_id: int, cluster_id: str) -> None:
    path = z.log_dir_event_path(z.sequence_suffix(0))
    assert z.decode_log_dir_event(path, z.encode_log_dir_event(broker_id)) == broker_id
    assert z.decode_cluster_id(z.CLUSTER_ID_PATH, z.encode_cluster_id(cluster_id)) == cluster_id


@given(
    st.sampled_from([1, 2]),
    st.sampled_from(FeatureZNodeStatus),
    st.dictionaries(st.text(max_size=8), st.integers(min_value=1, max_value=2**15 - 1)),
)
def test_feature_round_trip(
    version: int, status: FeatureZNodeStatus, features: dict[str, int]
) -> None:
    node = FeatureZNodeData(version, status, features)
    assert z.decode_feature(z.FEATURE_PATH, z.encode_feature(node)) == node


@given(broker_ids, st.integers(min_value=0, max_value=2**62), st.integers(0, 2**31 - 2))
def test_producer_id_block_round_trip(broker_id: int, start: int, size: int) -> None:
    block = ProducerIdBlock(broker_id, start, start + size)
    path = z.PRODUCER_ID_BLOCK_PATH
    assert z.decode_producer_id_block(path, z.encode_producer_id_block(block)) == block


# JSON values shaped like topic znodes, odd ones included: keys that are not plain digits,
# replicas that are not 32-bit ints, adding/removing maps of every type.
_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**32), 2**32)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "1", "x"])
)
_partition_keys = st.sampled_from(["0", "1", "07", "12", "-1", "+1", "٣", "1234567890", "x", ""])
_replica_values = st.lists(st.integers(-3, 3) | _json_scalars, max_size=4) | _json_scalars
_partition_maps = st.dictionaries(_partition_keys, _replica_values, max_size=4)
_topic_fields = st.fixed_dictionaries(
    {},
    optional={
        "version": st.integers(1, 3),
        "partitions": _partition_maps | _json_scalars,
        "adding_replicas": _partition_maps | _json_scalars,
        "removing_replicas": _partition_maps | _json_scalars,
    },
)


@given(_topic_fields)
def test_topic_plain_path_agrees_with_the_general_one(fields: dict[str, object]) -> None:
    data = json.dumps(fields).encode()
    fast = z._plain_partitions(json.loads(data))
    try:
        general: object = z._partitions(json_root(TOPIC_PATH, data))
    except z.ZNodeDataError as e:
        general = e
    if fast is not None:  # where the plain path answers, it answers as the general one does
        assert fast == general
    try:
        decoded: object = z.decode_topic(TOPIC_PATH, data).partitions
    except z.ZNodeDataError as e:
        decoded = e
    assert str(decoded) == str(general)


@given(st.dictionaries(partitions_, replica_lists, max_size=6), st.none() | topic_ids)
def test_topic_znodes_kafka_writes_take_the_plain_path(
    replicas: dict[int, list[int]], topic_id: str | None
) -> None:
    partitions = {p: ReplicaAssignment.of(r) for p, r in replicas.items()}
    data = json.loads(z.encode_topic(partitions, topic_id))
    assert z._plain_partitions(data) == partitions
