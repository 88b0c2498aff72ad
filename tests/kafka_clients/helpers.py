"""Topics written through our ZooKeeper admin path for the real-client tests."""

from __future__ import annotations

import uuid

from confluent_kafka.admin import AdminClient
from kto_testing import eventually

from kafka_topic_operator.kafka.assignment import BrokerMetadata, assign_replicas_to_brokers
from kafka_topic_operator.zk import admin
from kafka_topic_operator.zk.client import ZkClient
from kto_dev.apache_kafka.cluster import KafkaCluster


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_topic_through_zookeeper(
    cluster: KafkaCluster, topic: str, partitions: int, replication_factor: int
) -> dict[int, list[int]]:
    """Creates the topic as the operator does (AdminZkClient's znodes, Kafka's rack-aware
    placement) and waits until every partition has a leader in the brokers' metadata."""
    brokers = [
        BrokerMetadata(broker_id, broker.spec.rack)
        for broker_id, broker in sorted(cluster.brokers.items())
    ]
    assignment = assign_replicas_to_brokers(brokers, partitions, replication_factor)
    zk = ZkClient(cluster.zookeeper)
    zk.start()
    try:
        admin.create_topic_with_assignment(zk, topic, assignment)
    finally:
        zk.stop()
    client = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 0})

    def led() -> bool:
        metadata = client.list_topics(topic, timeout=10).topics.get(topic)
        return (
            metadata is not None
            and metadata.error is None
            and len(metadata.partitions) == partitions
            and all(p.leader >= 0 for p in metadata.partitions.values())
        )

    eventually(led, f"every partition of {topic} to have a leader", timeout=60)
    return assignment
