"""What the real cluster's controllers do with what the operator makes: deleting a namespace
runs its KafkaTopics' finalizers (each topic deleted in Kafka unless it says Retain) and then
the namespace goes away."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from kto_testing import eventually
from node_session import NodeSession

from kafka_topic_operator.zk.client import ZkClient

from .helpers import Release, kafka_topic, unique

pytestmark = pytest.mark.node


def in_kafka(session: NodeSession, topic: str) -> bool:
    client = ZkClient(session.kafka_zookeeper)
    client.start()
    try:
        return client.exists(f"/brokers/topics/{topic}")
    finally:
        client.stop()


def test_deleting_a_namespace_runs_its_kafka_topics_finalizers(
    node_session: NodeSession, chart_release: Callable[..., Release]
) -> None:
    # A cluster-wide operator, as most install it, kept to this test's KafkaTopics by a label.
    label = unique("gc")
    release = chart_release(
        "gc-operator", watch={"namespaces": [], "selector": f"kto.dev/test={label}"}
    )
    node = release.node
    namespace = unique("gc-topics")
    node.kubectl("create", "namespace", namespace)
    deleted, retained = unique("deleted"), unique("retained")
    topics = [kafka_topic(deleted, partitions=1, replicas=1),
              kafka_topic(retained, partitions=1, replicas=1, deletionPolicy="Retain")]  # fmt: skip
    for topic in topics:
        topic["metadata"]["labels"] = {"kto.dev/test": label}
    topics_namespace = Release(node, release.name, namespace, {})
    topics_namespace.apply(*topics)
    for name in (deleted, retained):
        topics_namespace.ready_topic(name)
        assert in_kafka(node_session, name)

    node.kubectl("delete", "namespace", namespace, "--wait=false")

    def gone() -> bool:
        listed = json.loads(node.kubectl("get", "namespaces", "-o", "json"))["items"]
        return namespace not in {n["metadata"]["name"] for n in listed}

    eventually(gone, "the namespace gone", timeout=120)
    eventually(lambda: not in_kafka(node_session, deleted), "the topic deleted in Kafka", 60)
    assert in_kafka(node_session, retained)
