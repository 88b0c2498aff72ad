"""Real clients against the real brokers: topics written through our ZooKeeper admin path, Kafka's
own Java command-line tools run from the fetched jars, and a Python client (confluent_kafka)."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from confluent_kafka.admin import AdminClient
from kto_testing import eventually

from kafka_topic_operator.apache_kafka import distribution
from kafka_topic_operator.apache_kafka.broker import java_executable
from kafka_topic_operator.apache_kafka.cluster import KafkaCluster
from kafka_topic_operator.kafka.assignment import BrokerMetadata, assign_replicas_to_brokers
from kafka_topic_operator.zk import admin
from kafka_topic_operator.zk.client import ZkClient

CONSOLE_PRODUCER = "kafka.tools.ConsoleProducer"
CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
CONSUMER_GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
TOOL_TIMEOUT = 120.0


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def java_tool_command(main_class: str, args: Sequence[str], log4j: Path) -> list[str]:
    """A Kafka tool as `bin/kafka-*.sh` would start it, with a small heap and quick start-up."""
    return [
        java_executable(),
        "-Xmx128m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-XX:-UsePerfData",
        f"-Dlog4j.configuration=file:{log4j}",
        "-cp",
        f"{distribution.require_libs()}/*",
        main_class,
        *args,
    ]


def quiet_log4j(directory: Path) -> Path:
    """Tools log warnings to stderr only, so stdout holds just what they print."""
    path = directory / "tools-log4j.properties"
    path.write_text(
        "log4j.rootLogger=WARN, stderr\n"
        "log4j.appender.stderr=org.apache.log4j.ConsoleAppender\n"
        "log4j.appender.stderr.Target=System.err\n"
        "log4j.appender.stderr.layout=org.apache.log4j.PatternLayout\n"
        "log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
    )
    return path


def run_java_tool(
    main_class: str, args: Sequence[str], log4j: Path, stdin: str | None = None
) -> str:
    """Runs a tool to completion; its stdout, or an AssertionError with its stderr."""
    done = subprocess.run(
        java_tool_command(main_class, args, log4j),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TOOL_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"{main_class} exited with {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


@contextmanager
def java_processes(
    commands: Sequence[list[str]], logs: Path
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Starts long-running tools together; each is stopped (SIGTERM, then SIGKILL) on exit."""
    started: list[subprocess.Popen[bytes]] = []
    try:
        for index, command in enumerate(commands):
            with (logs / f"process-{index}.log").open("wb") as out:
                started.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=out))
        yield started
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


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
    client = AdminClient({"bootstrap.servers": cluster.bootstrap})

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
