"""The chart installed with helm on the real node, the operator a pod of the image built from
the Dockerfile, on real Kafka (ZooKeeper mode): Ready through the chart's probes under its
securityContext, a KafkaTopic applied with kubectl becomes a topic clients use, `kubectl logs`,
the metrics Service scraped from another pod by its DNS name, `helm upgrade` rolls the pod and
loses nothing, `helm uninstall` leaves the topics."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from kafka_client import consume_all, produce
from node_session import NodeSession

from kafka_topic_operator.zk.client import ZkClient

from .helpers import (
    OPERATOR_IMAGE,
    install,
    kafka_topic,
    scraped_metrics,
    uninstall_keeps_the_kafka_topic,
    unique,
    upgrade_rolls_the_pod,
)

pytestmark = pytest.mark.node


def topic_znode(session: NodeSession, topic: str) -> tuple[dict[str, object], int]:
    """/brokers/topics/<topic>: its JSON and its creation transaction (a recreated topic has
    another)."""
    client = ZkClient(session.kafka_zookeeper)
    client.start()
    try:
        node = client.get(f"/brokers/topics/{topic}")
        assert node is not None, f"{topic} is not in ZooKeeper"
        return json.loads(node.data), node.czxid
    finally:
        client.stop()


def test_the_chart_runs_the_operator_as_a_pod_that_makes_real_topics(
    node_session: NodeSession,
) -> None:
    release = install(node_session, "zk", logLevel="INFO")  # uninstalled by the test itself
    (pod,) = release.pods()
    # The chart's securityContext holds a real process: uid 10001, a read-only root.
    spec = pod["spec"]
    assert spec["serviceAccountName"] == release.fullname
    assert spec["containers"][0]["image"] == "kafka-topic-operator:0.1.0"
    name = pod["metadata"]["name"]
    assert release.kubectl("exec", name, "--", "id", "-u").strip() == "10001"
    refused = release.kubectl("exec", name, "--", "sh", "-c", "touch /x 2>&1; true")
    assert "Read-only file system" in refused
    ready = [c for c in pod["status"]["conditions"] if c["type"] == "Ready"]
    assert ready and ready[0]["status"] == "True"

    topic = unique("orders")
    release.apply(kafka_topic(topic, partitions=3, replicas=3))
    before = release.ready_topic(topic)
    cluster = SimpleNamespace(bootstrap=node_session.bootstrap)
    produce(cluster, topic, 30)  # type: ignore[arg-type]
    assert sorted(consume_all(cluster, topic, 3)) == sorted(f"value-{i}" for i in range(30))  # type: ignore[arg-type]
    assert topic in release.kubectl("logs", f"deployment/{release.fullname}")

    # The metrics Service, from another pod, by its cluster DNS name.
    scraped = scraped_metrics(release)
    assert 'kto_topics{reason="Created"} 1.0' in scraped
    assert "kto_zookeeper_up 1.0" in scraped

    # An upgrade to a changed value rolls the pod; the topic is neither recreated nor its
    # status interrupted.
    data, created = topic_znode(node_session, topic)
    upgrade_rolls_the_pod(release, topic, before)
    assert topic_znode(node_session, topic) == (data, created)

    # Uninstalling the chart leaves the KafkaTopics and their topics.
    uninstall_keeps_the_kafka_topic(release, topic)
    assert topic_znode(node_session, topic) == (data, created)
    assert OPERATOR_IMAGE.endswith(":0.1.0")
