"""AdminZkClient's writes against a real ZooKeeper: what kafka-topics writes, and in bulk."""

from __future__ import annotations

import pytest

from kafka_topic_operator.kafka.errors import TopicExistsException
from kafka_topic_operator.zk import admin, znodes
from kafka_topic_operator.zk.admin import NewTopic
from kafka_topic_operator.zk.client import ZkClient

pytestmark = pytest.mark.zookeeper


def written(zk: ZkClient, topic: str) -> tuple[dict[int, tuple[int, ...]], dict[str, str]]:
    node = zk.get(znodes.topic_path(topic))
    config = zk.get(znodes.topic_config_path(topic))
    assert node is not None and config is not None
    partitions = znodes.decode_topic(node.path, node.data).partitions
    return (
        {p: a.replicas for p, a in partitions.items()},
        dict(znodes.decode_config(config.path, config.data)),
    )


def test_create_topics_writes_what_create_topic_with_assignment_writes(zk: ZkClient) -> None:
    many = [
        NewTopic(f"t{i}", {0: [1, 2], 1: [2, 1]}, {"retention.ms": str(i)})
        for i in range(admin.TOPICS_PER_TRANSACTION + 5)
    ]
    assert admin.create_topics(zk, many) == {topic.name: None for topic in many}
    admin.create_topic_with_assignment(zk, "single", {0: [1, 2], 1: [2, 1]}, {"retention.ms": "7"})
    assert written(zk, "t7") == written(zk, "single")
    assert written(zk, "t204")[1] == {"retention.ms": "204"}


def test_a_failing_batch_is_redone_topic_by_topic(zk: ZkClient) -> None:
    admin.create_topic_with_assignment(zk, "taken", {0: [1]})
    zk.ensure_path(znodes.config_entity_type_path(znodes.ConfigType.TOPIC))
    zk.create(znodes.topic_config_path("leftover"), znodes.encode_config({}))  # config, no topic
    results = admin.create_topics(
        zk,
        [
            NewTopic("a", {0: [1]}),
            NewTopic("taken", {0: [2]}),
            NewTopic("leftover", {0: [1]}, {"cleanup.policy": "compact"}),
        ],
    )
    assert results["a"] is None and results["leftover"] is None
    assert isinstance(results["taken"], TopicExistsException)
    assert str(results["taken"]) == "Topic 'taken' already exists."
    assert written(zk, "taken")[0] == {0: (1,)}  # untouched
    assert written(zk, "leftover") == ({0: (1,)}, {"cleanup.policy": "compact"})
