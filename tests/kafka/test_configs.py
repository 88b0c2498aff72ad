"""Topic configs: Kafka 3.6's keys, defaults and validators, ConfigDef's parsing and messages."""
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


def test_table_covers_kafka_36_topic_configs() -> None:
    assert len(TOPIC_CONFIGS) == 31
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
            "Invalid value 0-1 for configuration leader.replication.throttled.replicas: must be the "
            "literal '*' or a list of replicas in the following format: "
            "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
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
