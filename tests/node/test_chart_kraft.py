"""The chart on a KRaft cluster (Kafka 4.x, `kafka.bootstrapServers`): the operator as a pod of
the built image speaks Kafka's Admin API to real KRaft nodes listening where pods reach them. A
KafkaTopic applied with kubectl becomes a topic clients use, the operator's log and metrics say
so, `helm upgrade` rolls the pod without recreating the topic, `helm uninstall` leaves it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka_client import consume_all, describe_topic, produce
from node_session import NodeSession

from kto_dev.apache_kafka.kraft import KRaftCluster

from .helpers import (
    install,
    kafka_topic,
    scraped_metrics,
    uninstall_keeps_the_kafka_topic,
    unique,
    upgrade_rolls_the_pod,
)

pytestmark = [pytest.mark.node, pytest.mark.kafka]


@pytest.fixture
def kraft(node_session: NodeSession, tmp_path: Path) -> Iterator[KRaftCluster]:
    """Three combined KRaft nodes on the node's host address, where its pods reach them."""
    with KRaftCluster(tmp_path / "kraft", host=node_session.node.host_address) as cluster:
        yield cluster


def test_the_chart_on_kraft_makes_real_topics_through_the_admin_api(
    node_session: NodeSession, kraft: KRaftCluster
) -> None:
    release = install(node_session, "kraft", kafka={"bootstrapServers": kraft.bootstrap})
    (pod,) = release.pods()
    args = pod["spec"]["containers"][0]["args"]
    assert "--bootstrap-servers=$(KTO_KAFKA_BOOTSTRAP_SERVERS)" in args
    assert not [a for a in args if a.startswith("--zookeeper")]

    topic = unique("orders")
    release.apply(kafka_topic(topic, partitions=3, replicas=3))
    before = release.ready_topic(topic)
    described = describe_topic(kraft, topic)
    assert described is not None
    topic_id, partitions = described
    assert sorted(partitions) == [0, 1, 2]
    assert all(len(p.replicas) == 3 for p in partitions.values())
    produce(kraft, topic, 30)
    assert sorted(consume_all(kraft, topic, 3)) == sorted(f"value-{i}" for i in range(30))
    assert topic in release.kubectl("logs", f"deployment/{release.fullname}")

    scraped = scraped_metrics(release)
    assert "kto_kafka_up 1.0" in scraped
    assert 'kto_topics{reason="Created"} 1.0' in scraped

    # An upgrade rolls the pod; the topic keeps its id and the status its conditions.
    upgrade_rolls_the_pod(release, topic, before)
    assert describe_topic(kraft, topic) == (topic_id, partitions)

    # Uninstalling leaves the KafkaTopic and its topic.
    uninstall_keeps_the_kafka_topic(release, topic)
    assert describe_topic(kraft, topic) == (topic_id, partitions)
