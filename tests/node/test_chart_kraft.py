"""The chart on a KRaft cluster (Kafka 4.x, `kafka.bootstrapServers`): the operator as a pod of
the built image speaks Kafka's Admin API to real KRaft nodes listening where pods reach them. A
KafkaTopic applied with kubectl becomes a topic clients use, the operator's log and metrics say
so, `helm upgrade` rolls the pod without recreating the topic, `helm uninstall` leaves it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka_client import consume_all, describe_topic, produce
from kto_testing import eventually
from node_session import NodeSession

from kto_dev.apache_kafka.kraft import KRaftCluster
from kto_dev.node import chart

from .helpers import install, kafka_topic, run_pod, unique

pytestmark = [pytest.mark.node, pytest.mark.kafka]

SCRAPE = (
    "import sys, urllib.request; "
    "print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())"
)


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
    name = pod["metadata"]["name"]
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

    url = f"http://{release.fullname}-metrics.{release.namespace}.svc.cluster.local:9090/metrics"
    scraped = run_pod(release.node, release.namespace, "scrape", ["python3", "-c", SCRAPE, url])
    assert "kto_kafka_up 1.0" in scraped
    assert 'kto_topics{reason="Created"} 1.0' in scraped

    # An upgrade rolls the pod; the topic keeps its id and the status its conditions.
    release.upgrade(logLevel="DEBUG")
    eventually(lambda: [p["metadata"]["name"] for p in release.pods()] not in ([], [name]),
               "a new operator pod", timeout=60)  # fmt: skip
    (rolled,) = release.pods()
    assert "--log-level=DEBUG" in rolled["spec"]["containers"][0]["args"]
    after = release.ready_topic(topic)
    assert after["status"]["conditions"] == before["status"]["conditions"]
    assert describe_topic(kraft, topic) == (topic_id, partitions)

    # Uninstalling leaves the KafkaTopic and its topic.
    chart.uninstall(release.node, release.name, release.namespace)
    assert release.pods() == []
    assert release.get("kafkatopic", topic)["metadata"]["name"] == topic
    assert describe_topic(kraft, topic) == (topic_id, partitions)
