"""Topic configs: Kafka 3.9's keys, defaults and validators, ConfigDef's parsing and messages."""
# ruff: noqa: E501 (Kafka's messages are kept whole, one per line, so they read as Kafka prints them)

from __future__ import annotations

import pytest

from kafka_topic_operator.kafka.configs import (
    TOPIC_CONFIGS,
    ConfigType,
    ConfigValue,
    normalize_topic_config,
    topic_config_warnings,
    unclean_leader_election_enabled,
    validate_topic_config,
)
from kafka_topic_operator.kafka.errors import InvalidConfigurationException


def error(config: dict[str, ConfigValue]) -> str:
    with pytest.raises(InvalidConfigurationException) as e:
        normalize_topic_config(config)
    return str(e.value)


@pytest.mark.parametrize(
    ("name", "type_", "default", "server"),
    [
        ("cleanup.policy", ConfigType.LIST, "delete", "log.cleanup.policy"),
        ("retention.ms", ConfigType.LONG, "604800000", "log.retention.ms"),
        ("retention.bytes", ConfigType.LONG, "-1", "log.retention.bytes"),
        ("min.insync.replicas", ConfigType.INT, "1", "min.insync.replicas"),
        ("segment.bytes", ConfigType.INT, "1073741824", "log.segment.bytes"),
        ("max.message.bytes", ConfigType.INT, "1048588", "message.max.bytes"),
        ("min.cleanable.dirty.ratio", ConfigType.DOUBLE, "0.5", "log.cleaner.min.cleanable.ratio"),
        ("unclean.leader.election.enable", ConfigType.BOOLEAN, "false",
         "unclean.leader.election.enable"),
        ("compression.type", ConfigType.STRING, "producer", "compression.type"),
        ("message.timestamp.type", ConfigType.STRING, "CreateTime", "log.message.timestamp.type"),
    ],
)  # fmt: skip
def test_well_known_keys(name: str, type_: ConfigType, default: str, server: str) -> None:
    key = TOPIC_CONFIGS[name]
    assert (key.type, key.default, key.server_default_property) == (type_, default, server)


def test_every_default_is_itself_valid() -> None:
    for name, key in TOPIC_CONFIGS.items():
        if key.default != "":
            assert normalize_topic_config({name: key.default}) == {name: key.default}, name


def test_table_covers_kafka_39_topic_configs() -> None:
    assert len(TOPIC_CONFIGS) == 36  # LogConfig.configNames() in 3.9
    assert TOPIC_CONFIGS["segment.bytes"].minimum == 14  # LegacyRecord.RECORD_OVERHEAD_V0
    assert TOPIC_CONFIGS["remote.storage.enable"].since == "3.6"
    assert TOPIC_CONFIGS["message.format.version"].deprecated


def test_normalisation_to_kafkas_strings() -> None:
    assert normalize_topic_config(
        {
            "retention.ms": 86400000,
            "min.insync.replicas": " 2 ",
            "unclean.leader.election.enable": True,
            "preallocate": "FALSE",
            "min.cleanable.dirty.ratio": 0.25,
            "cleanup.policy": "compact, delete",
            "compression.type": "zstd",
            "leader.replication.throttled.replicas": "0:1, 1:2",
        }
    ) == {
        "cleanup.policy": "compact,delete",
        "compression.type": "zstd",
        "leader.replication.throttled.replicas": "0:1,1:2",
        "min.cleanable.dirty.ratio": "0.25",
        "min.insync.replicas": "2",
        "preallocate": "false",
        "retention.ms": "86400000",
        "unclean.leader.election.enable": "true",
    }


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"retention.msx": 1}, "Unknown topic config name: retention.msx"),
        (
            {"min.insync.replicas": 0},
            "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1",
        ),
        (
            {"retention.ms": -2},
            "Invalid value -2 for configuration retention.ms: Value must be at least -1",
        ),
        (
            {"min.cleanable.dirty.ratio": 1.5},
            "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1",
        ),
        (
            {"cleanup.policy": "compact,purge"},
            "Invalid value purge for configuration cleanup.policy: String must be one of: compact, delete",
        ),
        (
            {"compression.type": "brotli"},
            "Invalid value brotli for configuration compression.type: String must be one of: "
            "uncompressed, zstd, lz4, snappy, gzip, producer",
        ),
        (
            {"segment.bytes": "abc"},
            "Invalid value abc for configuration segment.bytes: Not a number of type INT",
        ),
        (
            {"segment.bytes": 2**31},
            "Invalid value 2147483648 for configuration segment.bytes: Not a number of type INT",
        ),
        (
            {"segment.bytes": True},
            "Invalid value true for configuration segment.bytes: Expected value to be a 32-bit "
            "integer, but it was a java.lang.Boolean",
        ),
        (
            {"retention.ms": 1.5},
            "Invalid value 1.5 for configuration retention.ms: Expected value to be a 64-bit integer, "
            "but it was a java.lang.Double",
        ),
        (
            {"preallocate": 1},
            "Invalid value 1 for configuration preallocate: Expected value to be either true or false",
        ),
        (
            {"preallocate": "yes"},
            "Invalid value yes for configuration preallocate: Expected value to be either true or false",
        ),
        (
            {"min.cleanable.dirty.ratio": "nan"},
            "Invalid value nan for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE",
        ),
        (
            {"leader.replication.throttled.replicas": "0-1"},
            "Invalid value [0-1] for configuration leader.replication.throttled.replicas: "
            "leader.replication.throttled.replicas must be the literal '*' or a list of replicas in "
            "the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
        ),
        (
            {"message.format.version": "banana"},
            "Invalid value banana for configuration message.format.version: Version banana is not a "
            "valid version",
        ),
        (
            {"message.format.version": " 9.9 "},
            "Invalid value 9.9 for configuration message.format.version: Version 9.9 is not a "
            "valid version",
        ),
        (
            {"compression.type": 5},
            "Invalid value 5 for configuration compression.type: Expected value to be a string, but it "
            "was a java.lang.Integer",
        ),
        (
            {"min.compaction.lag.ms": 10, "max.compaction.lag.ms": 5},
            "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)",
        ),
        (
            {"remote.storage.enable": True, "retention.ms": 1000, "local.retention.ms": 2000},
            "Invalid value 2000 for configuration local.retention.ms: Value must not be more than "
            "retention.ms property value: 1000",
        ),
        (
            {"remote.storage.enable": True, "retention.bytes": 1000, "local.retention.bytes": -1},
            "Invalid value -1 for configuration local.retention.bytes: Value must not be -1 as "
            "retention.bytes value is set as 1000.",
        ),
    ],
)
def test_bad_values_name_the_key_and_the_rule(config: dict[str, ConfigValue], message: str) -> None:
    assert error(config) == message


def test_throttled_replicas_accept_the_wildcard_and_empty() -> None:
    validate_topic_config({"follower.replication.throttled.replicas": "*"})
    validate_topic_config({"follower.replication.throttled.replicas": ""})


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("*", "*"),
        (" * ", "*"),
        ("*,", "*"),  # the items joined are "*"
        (",*", "*"),
        ("", ""),
        ("  ", ""),
        ("0:1", "0:1"),
        (" 0:1 ,\t1:2 ", "0:1,1:2"),
        ("0:1,,1:2", "0:1,1:2"),  # empty items pass Kafka's check; brokers cannot parse them
        ("0:1,", "0:1"),
        ("007:1", "007:1"),
    ],
)
def test_throttled_replica_lists_kafka_accepts(value: str, stored: str) -> None:
    # ThrottledReplicaListValidator (3.9) on ConfigDef's LIST parsing; stored without what
    # ConfigHandler.parseThrottledPartitions would fail on.
    name = "leader.replication.throttled.replicas"
    assert normalize_topic_config({name: value}) == {name: stored}


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("0 : 1", "[0 : 1]"),  # no whitespace inside an item
        ("*,*", "[*, *]"),
        ("0:1,*", "[0:1, *]"),
        ("0:1 , 1:x", "[0:1, 1:x]"),
        ("0:1:2", "[0:1:2]"),
        ("-1:2", "[-1:2]"),
        ("0:\u0661", "[0:\u0661]"),  # ASCII digits only
        ("\u00a00:1", "[\u00a00:1]"),  # trim stops at U+0020
    ],
)
def test_throttled_replica_lists_kafka_refuses(value: str, shown: str) -> None:
    name = "follower.replication.throttled.replicas"
    assert error({name: value}) == (
        f"Invalid value {shown} for configuration {name}: {name} must be the literal '*' or a "
        "list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."
    )


def test_message_downconversion_is_a_plain_topic_config_in_39() -> None:
    name = "message.downconversion.enable"
    assert normalize_topic_config({name: " FALSE "}) == {name: "false"}
    assert normalize_topic_config({name: True}) == {name: "true"}
    assert error({name: "no"}) == (
        f"Invalid value no for configuration {name}: Expected value to be either true or false"
    )
    assert topic_config_warnings({name: "false"}, 3) == []  # not deprecated before 4.0


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"compression.gzip.level": "-1"}, "-1"),
        ({"compression.gzip.level": 9}, "9"),
        ({"compression.zstd.level": "-131072"}, "-131072"),
        ({"compression.lz4.level": "+17"}, "17"),
    ],
)
def test_compression_levels_of_38(config: dict[str, ConfigValue], expected: str) -> None:
    assert list(normalize_topic_config(config).values()) == [expected]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"compression.gzip.level": 0},
            "Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1",
        ),
        (
            {"compression.lz4.level": 18},
            "Invalid value 18 for configuration compression.lz4.level: Value must be no more than 17",
        ),
        (
            {"retention.ms": " -5 "},  # the parsed value is shown, as Range shows it
            "Invalid value -5 for configuration retention.ms: Value must be at least -1",
        ),
        (
            {"min.cleanable.dirty.ratio": "2"},
            "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1",
        ),
        (
            {"min.cleanable.dirty.ratio": "Infinity"},
            "Invalid value Infinity for configuration min.cleanable.dirty.ratio: Value must be no more than 1",
        ),
        (
            {"min.cleanable.dirty.ratio": "-1e10"},
            "Invalid value -1.0E10 for configuration min.cleanable.dirty.ratio: Value must be at least 0",
        ),
        (
            {"cleanup.policy": 5},
            "Invalid value 5 for configuration cleanup.policy: Expected a comma separated list.",
        ),
        (
            {"remote.log.copy.disable": "true"},
            "It is invalid to set `remote.log.delete.on.disable` or `remote.log.copy.disable` under Zookeeper's mode.",
        ),
    ],
)
def test_more_refusals_as_kafka_39_words_them(config: dict[str, ConfigValue], message: str) -> None:
    assert error(config) == message


def test_java_number_and_boolean_syntax() -> None:
    # Double.parseDouble's literals; NaN passes Range in Kafka too.
    ratio = "min.cleanable.dirty.ratio"
    assert normalize_topic_config({ratio: "0.5d"}) == {ratio: "0.5"}
    assert normalize_topic_config({ratio: "0x1p-2"}) == {ratio: "0.25"}
    assert normalize_topic_config({ratio: "NaN"}) == {ratio: "NaN"}
    # equalsIgnoreCase and String.trim.
    assert normalize_topic_config({"preallocate": "\tTrUe\n"}) == {"preallocate": "true"}
    assert error({"preallocate": "\u00a0true"}).endswith(
        "Expected value to be either true or false"
    )


def test_warnings() -> None:
    assert topic_config_warnings({"min.insync.replicas": "3"}, 2) == [
        "min.insync.replicas (3) is greater than the replication factor (2): producers with "
        "acks=all will always fail (NotEnoughReplicas)"
    ]
    assert topic_config_warnings({"min.insync.replicas": "2"}, 3) == []
    assert topic_config_warnings({"message.format.version": "2.8"}, 3) == [
        "message.format.version is deprecated in Kafka 3.x"
    ]


def test_unclean_election_lookup() -> None:
    assert unclean_leader_election_enabled({"unclean.leader.election.enable": "true"})
    assert not unclean_leader_election_enabled({}, default=False)
    assert unclean_leader_election_enabled({}, default=True)
    assert not unclean_leader_election_enabled(
        {"unclean.leader.election.enable": "false"}, default=True
    )
