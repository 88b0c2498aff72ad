"""Where keys and consumers land, checked against real Kafka: the Java producer's partitioner
and the Java consumer's assignors, run from the fetched jars, agree with `kto partition-for` and
`kto consumers`. The topics are created through the project's own ZooKeeper writes, so Kafka's
controller accepting them is checked too."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kto_testing import eventually

from kafka_topic_operator.cli import main as kto
from kafka_topic_operator.kafka.assignors import Strategy, assign
from kafka_topic_operator.kafka.partitioner import partition_for_key
from kto_dev.apache_kafka import tools
from kto_dev.apache_kafka.cluster import KafkaCluster

from .helpers import create_topic_through_zookeeper, unique

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]


def create_topic(cluster: KafkaCluster, partitions: int, rf: int = 2) -> str:
    topic = unique("keys")
    create_topic_through_zookeeper(cluster, topic, partitions, rf)
    return topic


def consume_all(cluster: KafkaCluster, topic: str, count: int) -> dict[str, int]:
    """Key → partition of every message, read back by a consumer."""
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": f"read-{topic}",
                         "auto.offset.reset": "earliest", "log_level": 0})  # fmt: skip
    consumer.subscribe([topic])
    seen: dict[str, int] = {}
    try:
        eventually(lambda: _poll_into(consumer, seen) >= count, f"{count} messages back", 60)
    finally:
        consumer.close()
    return seen


def _poll_into(consumer: Any, seen: dict[str, int]) -> int:
    for message in consumer.consume(500, timeout=0.5):
        if message.error() is None:
            seen[message.key().decode()] = message.partition()
    return len(seen)


def test_200_keys_land_where_kto_partition_for_says(
    kafka_cluster: KafkaCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    from confluent_kafka import Producer

    topic = create_topic(kafka_cluster, 12)
    keys = [f"user-{i}" for i in range(200)]
    assert kto(["partition-for", "--partitions", "12", "--output", "json", *keys]) == 0
    predicted = {k: int(p) for k, p in json.loads(capsys.readouterr().out).items()}
    assert predicted == {k: partition_for_key(k, 12) for k in keys}

    # Kafka's own Java producer, the reference partitioner.
    java = subprocess.run(
        tools.tool_command(tools.CONSOLE_PRODUCER, "--bootstrap-server", kafka_cluster.bootstrap,
                           "--topic", topic, "--property", "parse.key=true",
                           "--property", "key.separator=\t"),
        input="".join(f"{k}\tjava\n" for k in keys), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert java.returncode == 0, java.stderr
    assert consume_all(kafka_cluster, topic, 200) == predicted

    # confluent-kafka with the Java-compatible partitioner, into a second topic.
    topic2 = create_topic(kafka_cluster, 12)
    producer = Producer({"bootstrap.servers": kafka_cluster.bootstrap,
                         "partitioner": "murmur2_random", "log_level": 0})  # fmt: skip
    for key in keys:
        producer.produce(topic2, key=key, value=b"python")
    assert producer.flush(30) == 0
    assert consume_all(kafka_cluster, topic2, 200) == predicted


@pytest.fixture(scope="module")
def group_cluster(
    zookeeper_server: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KafkaCluster]:
    """One broker whose group coordinator waits 4 s for members before the first assignment, so
    three consumers started together form one generation: a new group's assignment."""
    cluster = KafkaCluster(f"{zookeeper_server.connect_string}/groups-{uuid.uuid4().hex[:8]}",
                           tmp_path_factory.mktemp("groups"), 1,
                           overrides={"group.initial.rebalance.delay.ms": "4000"})  # fmt: skip
    cluster.start()
    yield cluster
    cluster.kill()


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_java_console_consumers_are_assigned_as_kto_consumers_says(
    group_cluster: KafkaCluster, strategy: Strategy
) -> None:
    topic = create_topic(group_cluster, 7, rf=1)
    group = f"group-{strategy}"
    strategy_class = tools.ASSIGNOR_CLASSES[strategy]
    consumers = [
        subprocess.Popen(
            tools.tool_command(
                tools.CONSOLE_CONSUMER, "--bootstrap-server", group_cluster.bootstrap,
                "--topic", topic, "--group", group, "--consumer-property", f"client.id=member-{n}",
                "--consumer-property", f"partition.assignment.strategy={strategy_class}",
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for n in range(3)
    ]  # fmt: skip
    try:

        def describe() -> dict[str, dict[str, list[int]]]:
            command = tools.tool_command(
                tools.CONSUMER_GROUPS, "--bootstrap-server", group_cluster.bootstrap,
                "--describe", "--members", "--verbose", "--group", group,
            )  # fmt: skip
            done = subprocess.run(command, capture_output=True, text=True, timeout=60)
            return tools.parse_group_members(done.stdout)

        def settled() -> dict[str, dict[str, list[int]]] | None:
            members = describe()
            total = sum(len(p) for t in members.values() for p in t.values())
            return members if len(members) == 3 and total == 7 else None

        members = eventually(settled, f"three members sharing 7 partitions ({strategy})", 90)
        reported = {m: sorted(p for ps in t.values() for p in ps) for m, t in members.items()}
        assert reported == assign(strategy, 7, list(members))
    finally:
        for consumer in consumers:
            consumer.terminate()
        for consumer in consumers:
            consumer.wait(timeout=30)
