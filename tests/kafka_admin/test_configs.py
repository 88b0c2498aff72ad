"""Topic and broker dynamic configs as the Admin API asks and answers (pure): the resources of
DescribeConfigs and IncrementalAlterConfigs, and a resource's own configs among the entries."""

from __future__ import annotations

from kafka.admin import ConfigResourceType

from kafka_topic_operator.kafka_admin.configs import (
    alter_resources,
    describe_resources,
    own_configs,
)

RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"


def entry(value: str | None, source: str) -> dict[str, object]:
    return {"value": value, "config_source": source, "read_only": False}


def test_describe_asks_for_the_keys_of_each_topic_or_broker() -> None:
    brokers = describe_resources("broker", ["0", "2"], [RATE, FOLLOWER_RATE])
    assert [(r.resource_type, r.name, r.configs) for r in brokers] == [
        (ConfigResourceType.BROKER, "0", {FOLLOWER_RATE: None, RATE: None}),
        (ConfigResourceType.BROKER, "2", {FOLLOWER_RATE: None, RATE: None}),
    ]
    (topic,) = describe_resources("topic", ["orders"], ["retention.ms"])
    assert (topic.resource_type, topic.name) == (ConfigResourceType.TOPIC, "orders")


def test_own_configs_are_the_dynamic_ones_of_the_resource_itself() -> None:
    broker = {
        RATE: entry("1000", "DYNAMIC_BROKER_CONFIG"),
        FOLLOWER_RATE: entry("5", "DYNAMIC_DEFAULT_BROKER_CONFIG"),  # the cluster-wide default
        "num.io.threads": entry("8", "STATIC_BROKER_CONFIG"),
        "log.retention.ms": entry(None, "DYNAMIC_BROKER_CONFIG"),
    }
    assert own_configs("broker", broker) == {RATE: "1000"}
    topic = {
        "leader.replication.throttled.replicas": entry("0:1", "DYNAMIC_TOPIC_CONFIG"),
        "retention.ms": entry("604800000", "DEFAULT_CONFIG"),
        RATE: entry("1000", "DYNAMIC_BROKER_CONFIG"),
    }
    assert own_configs("topic", topic) == {"leader.replication.throttled.replicas": "0:1"}


def test_alter_sets_values_deletes_nones_and_leaves_out_the_unchanged() -> None:
    resources = alter_resources(
        "broker", {"2": {RATE: "10", FOLLOWER_RATE: None}, "0": {}, "1": {RATE: None}}
    )
    assert [(r.resource_type, r.name, r.configs) for r in resources] == [
        (ConfigResourceType.BROKER, "1", {RATE: ("DELETE", None)}),
        (ConfigResourceType.BROKER, "2", {FOLLOWER_RATE: ("DELETE", None), RATE: "10"}),
    ]
    assert alter_resources("topic", {}) == []
