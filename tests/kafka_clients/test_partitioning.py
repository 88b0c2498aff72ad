"""Keyed records land where `kto partition-for` says, for the Java producer (Kafka's own console
producer, the reference) and for librdkafka's murmur2 partitioner, on a topic that our ZooKeeper
admin path created; every record is read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition

from kafka_topic_operator import cli
from kafka_topic_operator.apache_kafka.cluster import KafkaCluster
from kafka_topic_operator.kafka.partitioner import partition_for_key

from .helpers import (
    CONSOLE_PRODUCER,
    create_topic_through_zookeeper,
    quiet_log4j,
    run_java_tool,
    unique,
)

pytestmark = pytest.mark.kafka

PARTITIONS = 12
# Plain keys, keys that differ in one character, and non-ASCII ones (UTF-8, as StringSerializer).
KEYS = (
    [f"key-{i}" for i in range(180)] + [f"order/{i:05d}" for i in range(17)] + ["ü", "日本", "€uro"]
)
ASCII_KEYS = [k for k in KEYS if k.isascii()]


def produce_with_librdkafka(bootstrap: str, topic: str) -> dict[str, int]:
    """Each key once; the partition the broker acknowledged it on."""
    producer = Producer(
        {"bootstrap.servers": bootstrap, "partitioner": "murmur2_random", "acks": "all"}
    )
    acknowledged: dict[str, int] = {}
    failures: list[str] = []

    def delivered(error: KafkaError | None, message: Message) -> None:
        key = (message.key() or b"").decode()
        if error is not None:
            failures.append(f"{key}: {error}")
        else:
            partition = message.partition()
            assert partition is not None
            acknowledged[key] = partition

    for key in KEYS:
        producer.produce(topic, key=key.encode(), value=f"librdkafka:{key}".encode(),
                         on_delivery=delivered)  # fmt: skip
    assert producer.flush(30) == 0
    assert not failures
    return acknowledged


def consume_all(bootstrap: str, topic: str, count: int) -> list[tuple[int | None, str, str]]:
    """(partition, key, value) of the first `count` records, read from the start of every
    partition."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("reader"),
            "enable.auto.commit": False,
            "enable.partition.eof": False,
        }
    )
    consumer.assign([TopicPartition(topic, p, -2) for p in range(PARTITIONS)])  # -2: beginning
    records: list[tuple[int | None, str, str]] = []
    try:
        for _ in range(600):
            for message in consumer.consume(num_messages=500, timeout=0.5):
                assert message.error() is None, message.error()
                records.append(
                    (message.partition(), (message.key() or b"").decode(),
                     (message.value() or b"").decode())
                )  # fmt: skip
            if len(records) >= count:
                return records
    finally:
        consumer.close()
    raise AssertionError(f"read {len(records)} of {count} records from {topic}")


def test_keys_land_where_kto_partition_for_says(
    kafka_cluster: KafkaCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = unique("keyed")
    create_topic_through_zookeeper(kafka_cluster, topic, PARTITIONS, replication_factor=2)
    expected = {key: partition_for_key(key, PARTITIONS) for key in KEYS}
    assert len(set(expected.values())) == PARTITIONS  # every partition gets some keys

    # The CLI says the same as the library it wraps.
    assert (
        cli.main(["partition-for", "--partitions", str(PARTITIONS), "--output", "json", *KEYS]) == 0
    )
    assert json.loads(capsys.readouterr().out) == expected

    # librdkafka's murmur2 partitioner: the broker acknowledged each key on kto's partition.
    assert produce_with_librdkafka(kafka_cluster.bootstrap, topic) == expected

    # Kafka's own Java producer, the reference for the default partitioner.
    run_java_tool(
        CONSOLE_PRODUCER,
        ["--bootstrap-server", kafka_cluster.bootstrap, "--topic", topic,
         "--producer-property", "acks=all",
         "--property", "parse.key=true", "--property", "key.separator=\t"],
        quiet_log4j(tmp_path),
        stdin="".join(f"{key}\tjava:{key}\n" for key in ASCII_KEYS),
    )  # fmt: skip

    records = consume_all(kafka_cluster.bootstrap, topic, len(KEYS) + len(ASCII_KEYS))
    assert sorted(records) == sorted(
        [(expected[key], key, f"librdkafka:{key}") for key in KEYS]
        + [(expected[key], key, f"java:{key}") for key in ASCII_KEYS]
    )
