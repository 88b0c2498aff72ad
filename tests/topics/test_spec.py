"""KafkaTopic specs checked with Kafka's rules: the precise InvalidSpec message for each bad
manifest, and Kafka's stored form for good ones."""

from __future__ import annotations

from typing import Any

import pytest
from invalid_specs import INVALID

from kafka_topic_operator.kafka.assignment import RackAwareMode
from kafka_topic_operator.topics.spec import (
    DeletionPolicy,
    DesiredTopic,
    InvalidSpec,
    desired_topic,
)


def test_a_strimzi_manifest_becomes_kafkas_topic() -> None:
    spec = {
        "partitions": 12,
        "replicas": 3,
        "config": {"retention.ms": 604800000, "cleanup.policy": "compact", "preallocate": True},
    }
    assert desired_topic("orders", spec) == DesiredTopic(
        name="orders",
        partitions=12,
        replication_factor=3,
        config={"cleanup.policy": "compact", "preallocate": "true", "retention.ms": "604800000"},
        assignment=None,
        rack_aware_mode=RackAwareMode.ENFORCED,
        deletion_policy=DeletionPolicy.DELETE,
    )


def test_topic_name_overrides_the_resource_name_and_placement_sets_the_counts() -> None:
    topic = desired_topic(
        "orders-prod",
        {
            "topicName": "Orders_v2",
            "replicaAssignment": [[1, 2], [2, 3]],
            "deletionPolicy": "Retain",
        },
    )
    assert (topic.name, topic.partitions, topic.replication_factor) == ("Orders_v2", 2, 2)
    assert topic.assignment == {0: (1, 2), 1: (2, 3)}
    assert topic.deletion_policy is DeletionPolicy.RETAIN


@pytest.mark.parametrize(("name", "spec", "message"), INVALID)
def test_invalid_specs_get_a_precise_reason(name: str, spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        desired_topic(name, spec)
    assert message in str(error.value)
