"""Kafka's own Java command-line tools (console producer and consumer, consumer-group command),
run from the same fetched jars as the brokers: the reference clients the project is checked
against."""

from __future__ import annotations

from pathlib import Path

from kto_dev.apache_kafka.broker import kafka_java
from kto_dev.apache_kafka.distribution import KAFKA_VERSION, require_libs

CONSOLE_PRODUCER = "kafka.tools.ConsoleProducer"  # still in core (Scala) in 3.9
CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"

# partition.assignment.strategy class for each `kto consumers --strategy`.
ASSIGNOR_CLASSES = {
    "range": "org.apache.kafka.clients.consumer.RangeAssignor",
    "roundrobin": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
    "sticky": "org.apache.kafka.clients.consumer.StickyAssignor",
    "cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
}


def _quiet_log4j(libs: Path) -> Path:
    """Warnings and errors to stderr, as Kafka's own tools-log4j.properties does."""
    path = libs.parent / "tools-log4j.properties"
    if not path.exists():
        path.write_text(
            "log4j.rootLogger=WARN, stderr\n"
            "log4j.appender.stderr=org.apache.log4j.ConsoleAppender\n"
            "log4j.appender.stderr.layout=org.apache.log4j.PatternLayout\n"
            "log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
            "log4j.appender.stderr.Target=System.err\n"
        )
    return path


def tool_command(main_class: str, *args: str, heap_mb: int = 128) -> list[str]:
    """`java -cp 'libs/*' MAIN ARGS...` for one of Kafka's tools."""
    libs = require_libs(KAFKA_VERSION)
    logging = f"-Dlog4j.configuration=file:{_quiet_log4j(libs)}"
    return kafka_java(libs, heap_mb, logging, main_class, *args)


def parse_group_members(output: str) -> dict[str, dict[str, list[int]]]:
    """`ConsumerGroupCommand --describe --members --verbose`: member id → topic → partitions.

    The table's last column is the assignment, `topic(0,1,2)` entries separated by commas, or
    `-` for none; topic names cannot hold parentheses or commas. Kafka 3.9 leaves the topic
    name out (`(0,1,2)`) where a member's partitions are all of one topic: those come under
    the name ""."""
    members: dict[str, dict[str, list[int]]] = {}
    lines = [line for line in output.splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines) if line.split()[:2] == ["GROUP", "CONSUMER-ID"]]
    header = starts[0] if starts else None
    if header is None:
        return members
    columns = lines[header].split()
    for line in lines[header + 1 :]:
        fields = line.split(None, len(columns) - 1)
        if len(fields) < len(columns):
            continue
        member, assignment = fields[1], fields[-1].strip()
        topics: dict[str, list[int]] = {}
        if assignment != "-":
            for entry in assignment.split("),"):
                name, _, partitions = entry.rstrip(")").partition("(")
                topics[name.strip(", ")] = [int(p) for p in partitions.split(",") if p]
        members[member] = topics
    return members
