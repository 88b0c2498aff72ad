"""KafkaTopic specs checked with Kafka's rules: the precise InvalidSpec message for each bad
manifest, and Kafka's stored form for good ones."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_topic_operator.kafka.assignment import RackAwareMode
from kafka_topic_operator.topics.spec import (
    DeletionPolicy,
    DesiredTopic,
    InvalidSpec,
    desired_topic,
)

BASE: dict[str, Any] = {"partitions": 3, "replicas": 2}


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


INVALID: list[tuple[str, dict[str, Any], str]] = [
    # counts
    ("orders", {"partitions": 3}, "spec: partitions and replicas are required unless "
     "replicaAssignment is given"),
    ("orders", {"replicas": 3}, "spec: partitions and replicas are required"),
    ("orders", {}, "spec: partitions and replicas are required"),
    ("orders", {"partitions": 0, "replicas": 1}, "spec.partitions: Input should be greater than "
     "or equal to 1"),
    ("orders", {"partitions": -4, "replicas": 1}, "spec.partitions: Input should be greater"),
    ("orders", {"partitions": 2**31, "replicas": 1}, "spec.partitions: Input should be less than "
     "or equal to 2147483647"),
    ("orders", {"partitions": 1, "replicas": 0}, "spec.replicas: Input should be greater than or "
     "equal to 1"),
    ("orders", {"partitions": 1, "replicas": 32768}, "spec.replicas: Input should be less than or "
     "equal to 32767"),
    ("orders", {"partitions": "3", "replicas": 1}, "spec.partitions: Input should be a valid "
     "integer"),
    ("orders", {"partitions": 3.5, "replicas": 1}, "spec.partitions: Input should be a valid "
     "integer"),
    ("orders", {"partitions": True, "replicas": 1}, "spec.partitions: Input should be a valid "
     "integer"),
    ("orders", {"partitions": 1, "replicas": None}, "spec: partitions and replicas are required"),
    ("orders", {**BASE, "color": "red"}, "spec.color: Extra inputs are not permitted"),
    # names
    ("orders", {**BASE, "topicName": "a b"}, "spec.topicName: Topic name is invalid: 'a b' "
     "contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"),
    ("orders", {**BASE, "topicName": ""}, "spec.topicName: Topic name is invalid: the empty "
     "string is not allowed"),
    ("orders", {**BASE, "topicName": "."}, "spec.topicName: Topic name is invalid: '.' is not "
     "allowed"),
    ("orders", {**BASE, "topicName": ".."}, "spec.topicName: Topic name is invalid: '..' is not "
     "allowed"),
    ("orders", {**BASE, "topicName": "t" * 250}, "the max allowed length 249"),
    ("orders", {**BASE, "topicName": "caf\u00e9"}, "contains one or more characters other than"),
    ("orders", {**BASE, "topicName": "a/b"}, "contains one or more characters other than"),
    ("orders", {**BASE, "topicName": 7}, "spec.topicName: Input should be a valid string"),
    ("x" * 250, BASE, "metadata.name: Topic name is invalid: the length of"),
    # placement
    ("orders", {"replicaAssignment": []}, "spec.replicaAssignment: at least one partition is "
     "required"),
    ("orders", {"replicaAssignment": [[]]}, "spec.replicaAssignment: Cannot have replication "
     "factor of 0 for partition id 0."),
    ("orders", {"replicaAssignment": [[1, 1]]}, "spec.replicaAssignment: Duplicate brokers not "
     "allowed in replica assignment: 1, 1 for partition id 0."),
    ("orders", {"replicaAssignment": [[1, 2], [3, 3]]}, "Duplicate brokers not allowed in "
     "replica assignment: 3, 3 for partition id 1."),
    ("orders", {"replicaAssignment": [[1, 2], [3]]}, "spec.replicaAssignment: Inconsistent "
     "replication factor between partitions, partition 0 has 2 while partitions [1] have "
     "replication factors [1], respectively."),
    ("orders", {"replicaAssignment": [[1, 2]], "replicas": 3}, "partition 0 has 3 while "
     "partitions [0] have replication factors [2]"),
    ("orders", {"replicaAssignment": [[1, 2]], "partitions": 2}, "spec.replicaAssignment: 1 "
     "partitions listed but spec.partitions is 2"),
    ("orders", {"replicaAssignment": [[-1]]}, "spec.replicaAssignment: Broker ids must be "
     "non-negative, partition id 0 has -1."),
    ("orders", {"replicaAssignment": [["1"]]}, "spec.replicaAssignment.0.0: Input should be a "
     "valid integer"),
    ("orders", {"replicaAssignment": [1, 2]}, "spec.replicaAssignment.0: Input should be a valid "
     "list"),
    ("orders", {"replicaAssignment": "1:2,2:3"}, "spec.replicaAssignment: Input should be a valid "
     "list"),
    # modes
    ("orders", {**BASE, "rackAwareMode": "Maybe"}, "spec.rackAwareMode: Input should be "
     "'Enforced', 'Safe' or 'Disabled'"),
    ("orders", {**BASE, "rackAwareMode": "enforced"}, "spec.rackAwareMode: Input should be"),
    ("orders", {**BASE, "deletionPolicy": "Orphan"}, "spec.deletionPolicy: Input should be "
     "'Delete' or 'Retain'"),
    # configs, with Kafka's own messages
    ("orders", {**BASE, "config": {"retention.mss": 1}}, "spec.config: Unknown topic config "
     "name: retention.mss"),
    ("orders", {**BASE, "config": {"retention.ms": "abc"}}, "spec.config: Invalid value abc for "
     "configuration retention.ms: Not a number of type LONG"),
    ("orders", {**BASE, "config": {"retention.ms": True}}, "spec.config: Invalid value true for "
     "configuration retention.ms: Expected value to be a 64-bit integer, but it was a "
     "java.lang.Boolean"),
    ("orders", {**BASE, "config": {"retention.ms": 1.5}}, "spec.config.retention.ms: a config "
     "value must be a string, an integer or a boolean, not a number with a fraction"),
    ("orders", {**BASE, "config": {"retention.ms": None}}, "spec.config.retention.ms: a config "
     "value must be a string, an integer or a boolean, not null"),
    ("orders", {**BASE, "config": {"cleanup.policy": ["compact"]}}, "not a list"),
    ("orders", {**BASE, "config": {"cleanup.policy": "zap"}}, "spec.config: Invalid value zap "
     "for configuration cleanup.policy: String must be one of: compact, delete"),
    ("orders", {**BASE, "config": {"min.insync.replicas": 0}}, "spec.config: Invalid value 0 for "
     "configuration min.insync.replicas: Value must be at least 1"),
    ("orders", {**BASE, "config": {"unclean.leader.election.enable": "yes"}}, "Invalid value yes "
     "for configuration unclean.leader.election.enable: Expected value to be either true or "
     "false"),
    ("orders", {**BASE, "config": {"compression.type": "brotli"}}, "Invalid value brotli for "
     "configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, "
     "gzip, producer"),
    ("orders", {**BASE, "config": {"max.message.bytes": -1}}, "Invalid value -1 for "
     "configuration max.message.bytes: Value must be at least 0"),
    ("orders", {**BASE, "config": {"segment.bytes": 10}}, "Invalid value 10 for configuration "
     "segment.bytes: Value must be at least 14"),
    ("orders", {**BASE, "config": "retention.ms=1"}, "spec.config: Input should be a valid "
     "dictionary"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "spec", "message"), INVALID)
def test_invalid_specs_get_a_precise_reason(name: str, spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        desired_topic(name, spec)
    assert message in str(error.value)
