"""Our ZooKeeper admin path and config validation against Kafka 3.9 itself: the brokers refuse
the configs we refuse, with our words; accept what we accept; and see config changes written by
zk/admin.py without a restart (the `/config/changes` notification)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    ConfigResource,
    ConfigSource,
    NewTopic,
    ResourceType,
)
from kto_testing import eventually

from kafka_topic_operator.kafka.configs import TOPIC_CONFIGS, normalize_topic_config
from kafka_topic_operator.kafka.errors import InvalidConfigurationException
from kafka_topic_operator.zk import admin
from kafka_topic_operator.zk.client import ZkClient
from kto_dev.apache_kafka.cluster import KafkaCluster

from .helpers import create_topic_through_zookeeper, unique

pytestmark = pytest.mark.kafka

TOPIC, BROKER = ResourceType.TOPIC, ResourceType.BROKER


def kafka_refusal(client: AdminClient, config: dict[str, str]) -> str | None:
    """The broker's answer to a validate-only CreateTopics with `config`: its error message, or
    None when it accepts."""
    name = unique("validate")
    future = client.create_topics(
        [NewTopic(name, num_partitions=1, replication_factor=1, config=config)],
        validate_only=True,
    )[name]
    try:
        future.result(timeout=30)
    except KafkaException as e:
        return str(e.args[0].str())
    return None


def our_refusal(config: dict[str, str]) -> str | None:
    try:
        normalize_topic_config(config)
    except InvalidConfigurationException as e:
        return str(e)
    return None


@pytest.mark.parametrize(
    "config",
    [
        {"retention.msx": "1"},
        {"min.insync.replicas": "0"},
        {"retention.ms": " -5 "},
        {"min.cleanable.dirty.ratio": "2"},
        {"min.cleanable.dirty.ratio": "1e10"},
        {"segment.bytes": "2147483648"},
        {"cleanup.policy": "compact,purge"},
        {"cleanup.policy": "compact,,delete"},
        {"compression.type": " brotli"},
        {"compression.gzip.level": "0"},
        {"preallocate": "yes"},
        {"leader.replication.throttled.replicas": "0-1"},
        {"leader.replication.throttled.replicas": "0 : 1"},
        {"follower.replication.throttled.replicas": "0:1,*"},
        {"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"},
        {"remote.log.copy.disable": "true"},
        # Accepted by both.
        {"message.downconversion.enable": " FALSE "},
        {"leader.replication.throttled.replicas": " 0:1 , 1:2,,"},
        {"follower.replication.throttled.replicas": "*,"},
        {"compression.zstd.level": "-131072", "min.cleanable.dirty.ratio": "NaN"},
    ],
    ids=lambda config: ",".join(f"{k}={v}" for k, v in config.items()),
)
def test_kafka_refuses_what_we_refuse_in_our_words(
    kafka_cluster: KafkaCluster, config: dict[str, str]
) -> None:
    client = AdminClient({"bootstrap.servers": kafka_cluster.bootstrap, "log_level": 0})
    assert our_refusal(config) == kafka_refusal(client, config)


def test_our_topic_configs_are_kafkas(kafka_cluster: KafkaCluster) -> None:
    topic = unique("names")
    create_topic_through_zookeeper(kafka_cluster, topic, 1, replication_factor=1)
    client = AdminClient({"bootstrap.servers": kafka_cluster.bootstrap, "log_level": 0})
    described = eventually(lambda: known_to_all(client, topic), f"{topic}'s configs")
    assert described is not None
    assert set(described) == set(TOPIC_CONFIGS)
    # Kafka's defaults are ours (no broker here overrides a topic default).
    assert {n: value for n, (value, _) in described.items()} == {
        n: key.default for n, key in TOPIC_CONFIGS.items()
    }


def known_to_all(client: AdminClient, topic: str) -> dict[str, tuple[str, str]] | None:
    """The topic's configs, or None while the broker asked does not know the topic yet."""
    try:
        return describe(client, TOPIC, topic)
    except KafkaException:
        return None


def describe(client: AdminClient, kind: ResourceType, name: str) -> dict[str, tuple[str, str]]:
    resource = ConfigResource(kind, name)
    entries = client.describe_configs([resource])[resource].result(timeout=30)
    return {n: (e.value, ConfigSource(e.source).name) for n, e in entries.items()}


def test_config_changes_through_zookeeper_reach_every_broker_without_a_restart(
    kafka_cluster: KafkaCluster,
) -> None:
    topic = unique("configs")
    create_topic_through_zookeeper(kafka_cluster, topic, 3, replication_factor=3)
    client = AdminClient({"bootstrap.servers": kafka_cluster.bootstrap, "log_level": 0})
    zk = ZkClient(kafka_cluster.zookeeper)
    zk.start()
    try:
        admin.change_topic_config(
            zk, topic, {"unclean.leader.election.enable": "true", "retention.ms": "3600000"}
        )

        def topic_sees() -> bool:
            seen = known_to_all(client, topic)
            if seen is None:
                return False
            return seen["unclean.leader.election.enable"] == ("true", "DYNAMIC_TOPIC_CONFIG") and (
                seen["retention.ms"] == ("3600000", "DYNAMIC_TOPIC_CONFIG")
            )

        eventually(topic_sees, "the topic's new configs")

        # A broker describes its own in-memory config: each one must have read the notification.
        admin.change_broker_config(zk, None, {"unclean.leader.election.enable": "true"})
        admin.change_broker_config(zk, 1, {"log.retention.ms": "7200000"})

        def every_broker_sees(check: Callable[[int, dict[str, tuple[str, str]]], bool]) -> bool:
            return all(check(b, describe(client, BROKER, str(b))) for b in kafka_cluster.brokers)

        eventually(
            lambda: every_broker_sees(
                lambda b, seen: (
                    seen["unclean.leader.election.enable"]
                    == ("true", "DYNAMIC_DEFAULT_BROKER_CONFIG")
                    and (seen["log.retention.ms"][1] == "DYNAMIC_BROKER_CONFIG") == (b == 1)
                )
            ),
            "every broker to apply the new broker configs",
        )
        assert describe(client, BROKER, "1")["log.retention.ms"] == (
            "7200000",
            "DYNAMIC_BROKER_CONFIG",
        )
    finally:
        # The cluster is shared: its brokers go back to their static configs.
        admin.change_broker_config(zk, None, {})
        admin.change_broker_config(zk, 1, {})
        eventually(
            lambda: all(
                describe(client, BROKER, str(b))["unclean.leader.election.enable"][1]
                != "DYNAMIC_DEFAULT_BROKER_CONFIG"
                and describe(client, BROKER, str(b))["log.retention.ms"][1]
                != "DYNAMIC_BROKER_CONFIG"
                for b in kafka_cluster.brokers
            ),
            "every broker to drop the dynamic configs",
        )
        zk.stop()
