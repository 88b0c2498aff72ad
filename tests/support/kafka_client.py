"""What a real Kafka client sees, through confluent_kafka's AdminClient: topics as
DescribeTopics and metadata requests answer, and configs as DescribeConfigs answers
(reassignments in progress through kafka-python's, which lists them)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, Protocol

REQUEST_TIMEOUT = 10.0


class KafkaCluster(Protocol):
    """A cluster of either kind, reached through its brokers."""

    @property
    def bootstrap(self) -> str: ...


@dataclass(frozen=True)
class Partition:
    leader: int  # -1: none
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    racks: tuple[str | None, ...]  # of the replicas, in order


def describe_topic(cluster: KafkaCluster, topic: str) -> tuple[str, dict[int, Partition]] | None:
    """DescribeTopics: the topic id and each partition; None when the brokers do not know it."""
    from confluent_kafka import KafkaException, TopicCollection
    from confluent_kafka.admin import AdminClient

    client = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 0})
    future = client.describe_topics(TopicCollection([topic]), request_timeout=REQUEST_TIMEOUT)
    try:
        description = future[topic].result()
    except KafkaException as e:
        if e.args[0].name() == "UNKNOWN_TOPIC_OR_PART":
            return None
        raise
    partitions = {
        p.id: Partition(
            leader=p.leader.id if p.leader is not None else -1,
            replicas=tuple(r.id for r in p.replicas),
            isr=tuple(sorted(r.id for r in p.isr)),
            racks=tuple(r.rack for r in p.replicas),
        )
        for p in description.partitions
    }
    return kafka_uuid(description.topic_id), partitions


def kafka_uuid(uuid: Any) -> str:
    """A client's Uuid as Kafka writes it (Uuid.toString: URL-safe base64 without padding;
    the client's own str() uses the standard alphabet)."""
    raw = b"".join(
        bits.to_bytes(8, "big", signed=True)
        for bits in (uuid.get_most_significant_bits(), uuid.get_least_significant_bits())
    )
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def metadata(cluster: KafkaCluster, topic: str) -> dict[int, Partition] | None:
    """A metadata request (what producers and consumers act on); None for an unknown topic."""
    from confluent_kafka.admin import AdminClient

    client = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 0})
    found = client.list_topics(topic, timeout=REQUEST_TIMEOUT).topics.get(topic)
    if found is None or found.error is not None:
        return None
    return {
        p.id: Partition(p.leader, tuple(p.replicas), tuple(sorted(p.isrs)), ())
        for p in found.partitions.values()
    }


def topic_names(cluster: KafkaCluster) -> set[str]:
    from confluent_kafka.admin import AdminClient

    client = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 0})
    return set(client.list_topics(timeout=REQUEST_TIMEOUT).topics)


def describe_configs(cluster: KafkaCluster, kind: str, name: str) -> dict[str, tuple[str, str]]:
    """DescribeConfigs of a topic or broker (`kind` "topic" or "broker"): each config's value
    and source, only those not at their defaults."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource

    client = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 0})
    resource = ConfigResource(kind, name)
    (future,) = client.describe_configs([resource], request_timeout=REQUEST_TIMEOUT).values()
    entries = future.result()
    return {
        key: (entry.value, ConfigSource(entry.source).name)
        for key, entry in entries.items()
        if entry.source != ConfigSource.DEFAULT_CONFIG.value
    }


def produce(cluster: KafkaCluster, topic: str, count: int) -> None:
    """`count` keyed messages with acks=all (each written to every in-sync replica)."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all",
                         "partitioner": "murmur2_random", "log_level": 0})  # fmt: skip
    failed: list[object] = []
    for i in range(count):
        producer.produce(topic, key=f"key-{i}", value=f"value-{i}",
                         on_delivery=lambda err, _msg: err and failed.append(err))  # fmt: skip
    assert producer.flush(30) == 0, "messages left undelivered"
    assert not failed, failed


def consume_all(cluster: KafkaCluster, topic: str, partitions: int) -> list[str]:
    """Every message's value, read from the start of each partition to its end."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": f"read-{topic}",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "log_level": 0})  # fmt: skip
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        values: list[str] = []
        ended: set[int] = set()
        while len(ended) < partitions:
            message = consumer.poll(10)
            assert message is not None, f"no message nor end of partition within 10 s: {ended}"
            if message.error():
                assert message.error().code() == -191, message.error()  # _PARTITION_EOF
                ended.add(message.partition())
            else:
                values.append(message.value().decode())
        return values
    finally:
        consumer.close()


def reassigning(cluster: KafkaCluster) -> set[tuple[str, int]]:
    """ListPartitionReassignments: the partitions being reassigned, as (topic, partition)."""
    # kafka-python imported first where its import warnings are silenced.
    import kafka_topic_operator.kafka_admin  # noqa: F401

    # isort: split
    from kafka.admin import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    try:
        return {(tp.topic, tp.partition) for tp in client.list_partition_reassignments()}
    finally:
        client.close()
