"""Three of Kafka's own console consumers in one group, once per assignor: the assignment Kafka's
consumer-group command reports is what `kto consumers` computes for the same member ids."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import ConsumerGroupState
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin._group import ConsumerGroupDescription
from kto_testing import eventually

from kafka_topic_operator import cli
from kafka_topic_operator.apache_kafka.cluster import KafkaCluster
from kafka_topic_operator.kafka.assignors import Strategy, assign

from .helpers import (
    CONSOLE_CONSUMER,
    CONSUMER_GROUP_COMMAND,
    create_topic_through_zookeeper,
    java_processes,
    java_tool_command,
    quiet_log4j,
    run_java_tool,
    unique,
)

pytestmark = pytest.mark.kafka

PARTITIONS = 11  # not a multiple of 3: range and round-robin give different shapes
MEMBERS = 3
ASSIGNOR_CLASSES: dict[Strategy, str] = {
    "range": "org.apache.kafka.clients.consumer.RangeAssignor",
    "roundrobin": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
    "sticky": "org.apache.kafka.clients.consumer.StickyAssignor",
    "cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
}
# GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS ASSIGNMENT, as ConsumerGroupCommand prints a
# member of a group without static members (the assignment's topic name is not printed).
_MEMBER_LINE = re.compile(
    r"(?P<group>\S+)\s+(?P<member>\S+)\s+\S+\s+\S+\s+(?P<count>\d+)\s+(?P<assignment>\(\S*\)|-)"
)


def parse_members(output: str, group: str) -> dict[str, list[int]]:
    """`--describe --members --verbose` output: member id → its partitions."""
    members: dict[str, list[int]] = {}
    for line in output.splitlines():
        match = _MEMBER_LINE.fullmatch(line.strip())
        if match is None or match["group"] != group:
            continue
        text = match["assignment"]
        partitions = [] if text == "-" else sorted(int(p) for p in text[1:-1].split(","))
        assert len(partitions) == int(match["count"]), line
        members[match["member"]] = partitions
    return members


def settled(client: AdminClient, group: str) -> Callable[[], ConsumerGroupDescription | None]:
    """The group once it is Stable with all members and every partition assigned."""

    def read() -> ConsumerGroupDescription | None:
        description: ConsumerGroupDescription = client.describe_consumer_groups([group])[
            group
        ].result(timeout=10)
        assigned = sorted(
            tp.partition for m in description.members for tp in m.assignment.topic_partitions
        )
        if (
            description.state == ConsumerGroupState.STABLE
            and len(description.members) == MEMBERS
            and assigned == list(range(PARTITIONS))
        ):
            return description
        return None

    return read


def check_group(
    cluster: KafkaCluster,
    topic: str,
    strategy: Strategy,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    group = unique(f"group-{strategy}")
    log4j = quiet_log4j(tmp_path)
    arguments = ["--bootstrap-server", cluster.bootstrap, "--topic", topic, "--group", group,
                 "--consumer-property",
                 f"partition.assignment.strategy={ASSIGNOR_CLASSES[strategy]}",
                 # One client id for all: member ids (client id, '-', a random UUID) then sort
                 # in a different order each run.
                 "--consumer-property", "client.id=console"]  # fmt: skip
    consumers = [java_tool_command(CONSOLE_CONSUMER, arguments, log4j) for _ in range(MEMBERS)]
    logs = tmp_path / group
    logs.mkdir()
    client = AdminClient({"bootstrap.servers": cluster.bootstrap})
    with java_processes(consumers, logs):
        eventually(settled(client, group), f"group {group} to settle", timeout=90)
        reported = parse_members(
            run_java_tool(
                CONSUMER_GROUP_COMMAND,
                ["--bootstrap-server", cluster.bootstrap, "--describe", "--members", "--verbose",
                 "--group", group],
                log4j,
            ),
            group,
        )  # fmt: skip
    assert len(reported) == MEMBERS, reported
    member_ids = list(reported)
    assert reported == assign(strategy, PARTITIONS, member_ids)
    # The CLI's JSON is the library's answer; member ids given in any order.
    arguments = ["consumers", "--partitions", str(PARTITIONS), "--strategy", strategy,
                 "--members", ",".join(reversed(member_ids)), "--output", "json"]  # fmt: skip
    assert cli.main(arguments) == 0
    assert json.loads(capsys.readouterr().out) == reported


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
def test_stateless_assignors_match_kto_consumers(
    strategy: Strategy,
    kafka_cluster: KafkaCluster,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Range and round-robin ignore history, so members joining one by one (the shared
    # cluster rebalances at once: group.initial.rebalance.delay.ms=0) end where a fresh group
    # would.
    topic = unique(f"members-{strategy}")
    create_topic_through_zookeeper(kafka_cluster, topic, PARTITIONS, replication_factor=2)
    check_group(kafka_cluster, topic, strategy, tmp_path, capsys)


def test_sticky_assignors_match_kto_consumers(
    fresh_kafka_cluster: Callable[..., KafkaCluster],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The sticky assignors keep what members owned, so kto's fresh-group answer holds only
    # when all three join the group's first generation: one broker that waits for joiners
    # (Kafka's default is 3 s; each new member extends the wait).
    cluster = fresh_kafka_cluster(size=1, overrides={"group.initial.rebalance.delay.ms": "4000"})
    topic = unique("members-sticky")
    create_topic_through_zookeeper(cluster, topic, PARTITIONS, replication_factor=1)
    for strategy in ("sticky", "cooperative-sticky"):
        check_group(cluster, topic, strategy, tmp_path, capsys)
