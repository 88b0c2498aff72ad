"""Real Apache Kafka 4.x in KRaft mode (no ZooKeeper): the launcher's configuration, and a
three-node cluster that takes a topic with an explicit assignment through the Admin API, as the
KRaft backend will (issue 24)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kto_testing import eventually

from kto_dev.apache_kafka import distribution
from kto_dev.apache_kafka.kraft import (
    KRaftCluster,
    KRaftNodeSpec,
    new_cluster_id,
    server_properties,
)


def test_a_cluster_id_is_a_kafka_uuid() -> None:
    cluster_id = new_cluster_id()
    assert len(cluster_id) == 22
    assert len(base64.urlsafe_b64decode(cluster_id + "==")) == 16


def test_kafka_4_is_kraft_only_and_logs_through_log4j_2() -> None:
    assert distribution.is_kraft_only(distribution.KRAFT_KAFKA_VERSION)
    assert not distribution.is_kraft_only(distribution.KAFKA_VERSION)
    kraft = {a for _, a, _ in distribution.artifacts(distribution.KRAFT_KAFKA_VERSION)}
    assert "log4j-slf4j-impl" in kraft and "slf4j-reload4j" not in kraft


def test_a_node_is_broker_and_controller_in_a_static_quorum(tmp_path: Path) -> None:
    voters = "0@127.0.0.1:9091,1@127.0.0.1:9093"
    spec = KRaftNodeSpec(node_id=1, directory=tmp_path, port=9092, controller_port=9093,
                         voters=voters, cluster_id="x", rack="b")  # fmt: skip
    properties = server_properties(spec)
    assert properties["process.roles"] == "broker,controller"
    assert properties["node.id"] == "1"
    assert properties["controller.quorum.voters"] == "0@127.0.0.1:9091,1@127.0.0.1:9093"
    assert properties["listeners"] == "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"
    assert properties["advertised.listeners"] == "PLAINTEXT://127.0.0.1:9092"
    assert properties["broker.rack"] == "b"
    assert "zookeeper.connect" not in properties


def test_a_node_on_another_host_listens_and_advertises_there(tmp_path: Path) -> None:
    """A real node's link address instead of loopback: where pods reach the brokers."""
    voters = "0@10.213.0.1:9091,1@10.213.0.1:9093"
    spec = KRaftNodeSpec(node_id=1, directory=tmp_path, port=9092, controller_port=9093,
                         voters=voters, cluster_id="x", host="10.213.0.1",
                         extra_listener=("SASL_PLAINTEXT", 9094))  # fmt: skip
    assert spec.bootstrap == "10.213.0.1:9092"
    properties = server_properties(spec)
    assert properties["listeners"] == ("PLAINTEXT://10.213.0.1:9092,CONTROLLER://10.213.0.1:9093,"
                                       "SASL_PLAINTEXT://10.213.0.1:9094")  # fmt: skip
    assert properties["advertised.listeners"] == (
        "PLAINTEXT://10.213.0.1:9092,SASL_PLAINTEXT://10.213.0.1:9094"
    )
    cluster = KRaftCluster(tmp_path, 2, host="10.213.0.1")
    assert all(s.host == "10.213.0.1" for s in cluster.specs.values())
    assert cluster.specs[0].voters.count("@10.213.0.1:") == 2


@pytest.mark.kafka
def test_three_nodes_take_a_topic_with_an_explicit_assignment(tmp_path: Path) -> None:
    with KRaftCluster(tmp_path) as cluster:
        # Formatted with the cluster's id, as Kafka requires before a KRaft node's first start.
        meta = (cluster.specs[0].log_dir / "meta.properties").read_text()
        assert f"cluster.id={cluster.specs[0].cluster_id}" in meta
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 0})
        assignment = [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1]]
        created = admin.create_topics(
            # librdkafka takes an explicit assignment with the partition count it implies.
            [NewTopic("orders", num_partitions=len(assignment), replica_assignment=assignment,
                      config={"retention.ms": "86400000"})]
        )  # fmt: skip
        created["orders"].result(timeout=30)

        def described() -> list[tuple[list[int], int]] | None:
            topics = admin.list_topics("orders", timeout=10).topics
            partitions = topics["orders"].partitions if "orders" in topics else {}
            found = [(list(p.replicas), p.leader) for _, p in sorted(partitions.items())]
            return found if len(found) == 4 and all(leader >= 0 for _, leader in found) else None

        # Kafka keeps the assignment as given and elects each partition's preferred replica.
        assert eventually(described, "orders' partitions led") == [
            (replicas, replicas[0]) for replicas in assignment
        ]
        admin.delete_topics(["orders"])["orders"].result(timeout=30)
        eventually(lambda: "orders" not in admin.list_topics(timeout=10).topics, "orders gone")
