"""`kto describe` and `kto plan` on real Kafka 4 KRaft nodes (`--bootstrap-servers`), read
through the same cluster object `kto run` uses; each in a process of its own, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka_client import describe_topic
from kto_testing import eventually

import kafka_topic_operator.kafka_admin  # noqa: F401  (kafka-python's warning silenced)
from kafka_topic_operator.clusters.connect import connect
from kafka_topic_operator.clusters.kraft import KRaftCluster as Connected
from kafka_topic_operator.kafka.new_topic import NewTopic
from kafka_topic_operator.kafka_admin.connection import KafkaConnection
from kafka_topic_operator.rebalance.in_process import plan_in_process
from kafka_topic_operator.rebalance.inputs import planning_input
from kafka_topic_operator.rebalance.results.summary import reassignment_json
from kafka_topic_operator.rebalance.spec import rebalance_spec
from kto_dev.apache_kafka.kraft import KRaftCluster
from kto_dev.ports import free_port

pytestmark = [pytest.mark.kafka]

CROWDED = ("crowded-orders", "crowded-payments")


def settled(kraft_cluster: KRaftCluster, topic: str) -> bool:
    described = describe_topic(kraft_cluster, topic)
    return described is not None and all(
        p.leader >= 0 and len(p.isr) == len(p.replicas) for p in described[1].values()
    )


def kto(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafka_topic_operator.cli", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)  # fmt: skip


@pytest.fixture(scope="module")
def cluster(kraft_cluster: KRaftCluster) -> Iterator[Connected]:
    """The KRaft nodes as the commands reach them, with two topics whose replicas are all on
    nodes 0 and 1 (node 2 holds none of them)."""
    connected = connect(KafkaConnection(tuple(kraft_cluster.bootstrap.split(","))), timeout=15)
    assert isinstance(connected, Connected)
    try:
        placed = {p: [p % 2, (p + 1) % 2] for p in range(4)}
        outcomes = connected.backend.create_topics([NewTopic(t, placed) for t in CROWDED])
        assert all(o is None for o in outcomes.values()), outcomes
        for topic in CROWDED:  # led and in sync, as every node knows them
            eventually(lambda t=topic: settled(kraft_cluster, t), f"{topic} settled")
        yield connected
    finally:
        connected.close()


def test_describe_prints_what_kafka_topics_describe_shows(
    kraft_cluster: KRaftCluster, cluster: Connected
) -> None:
    described = describe_topic(kraft_cluster, "crowded-orders")
    assert described is not None
    topic_id, partitions = described
    done = kto("describe", "--bootstrap-servers", kraft_cluster.bootstrap, "crowded-orders")
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert (
        f"Topic: crowded-orders\tTopicId: {topic_id}\tPartitionCount: 4\tReplicationFactor: 2"
        in done.stdout
    )
    for partition, p in partitions.items():
        line = (f"\tTopic: crowded-orders\tPartition: {partition}\tLeader: {p.leader}\t"
                f"Replicas: {','.join(map(str, p.replicas))}\tIsr: ")  # fmt: skip
        assert line in done.stdout, done.stdout

    json_done = kto("describe", "--bootstrap-servers", kraft_cluster.bootstrap,
                    "--output", "json", *CROWDED)  # fmt: skip
    assert json_done.returncode == 0, json_done.stderr
    report = json.loads(json_done.stdout)
    assert [t["topic"] for t in report["topics"]] == sorted(CROWDED)
    assert report["topics"][0]["topic_id"] == topic_id
    assert report["topics"][0]["configs"] == {}  # no topic-level config set
    assert report["controller"]["broker_id"] in (0, 1, 2)  # the quorum's active controller
    assert {b["id"] for b in report["brokers"]} == {0, 1, 2}
    assert all(b["alive"] for b in report["brokers"])
    assert report["offline_partitions"] == [] and report["problems"] == []


def test_describe_says_in_one_line_what_is_wrong(kraft_cluster: KRaftCluster) -> None:
    unknown = kto("describe", "--bootstrap-servers", kraft_cluster.bootstrap, "no-such-topic")
    assert unknown.returncode == 2  # the report of what is there, on stdout, as on ZooKeeper
    assert unknown.stderr == "kto describe: error: topics not found: no-such-topic\n"

    dead = f"127.0.0.1:{free_port()}"
    gone = kto("describe", "--bootstrap-servers", dead, "--timeout", "2")
    assert (gone.returncode, gone.stdout) == (1, "")
    assert gone.stderr.startswith(f"kto describe: error: Kafka at {dead} did not answer")
    assert gone.stderr.count("\n") == 1, gone.stderr

    both = kto("describe", "--bootstrap-servers", kraft_cluster.bootstrap, "--zookeeper", "zk:1")
    assert both.returncode == 2
    assert both.stderr == (
        "kto describe: error: give either --zookeeper (a ZooKeeper-mode cluster) or "
        "--bootstrap-servers (a KRaft cluster)\n"
    )


def test_plan_reads_the_brokers_and_plans_as_the_operator_would(
    kraft_cluster: KRaftCluster, cluster: Connected, tmp_path: Path
) -> None:
    done = kto("plan", "--bootstrap-servers", kraft_cluster.bootstrap, "--output", "plan.json",
               "--report", "plan.html", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    plan = json.loads((tmp_path / "plan.json").read_text())

    # The same plan as the in-process planner makes of what the brokers say now (this worker's
    # other tests do not run meanwhile).
    snapshot = cluster.snapshot()
    expected = plan_in_process(planning_input(snapshot, rebalance_spec({"mode": "full"})))
    assert expected is not None
    assert plan == json.loads(reassignment_json(expected.changes))

    after = {(t.name, p): s.assignment.replicas
             for t in snapshot.topics.values() for p, s in t.partitions.items()}  # fmt: skip
    for entry in plan["partitions"]:
        after[entry["topic"], entry["partition"]] = tuple(entry["replicas"])
    counts = Counter(b for replicas in after.values() for b in replicas)
    assert max(counts.values()) - min(counts.values()) <= 1, counts  # node 2 took its share
    assert (tmp_path / "plan.html").read_text().startswith("<!DOCTYPE html>")
    assert "report written to plan.html" in done.stdout


def test_plan_refuses_a_broker_the_cluster_does_not_have(
    kraft_cluster: KRaftCluster, cluster: Connected, tmp_path: Path
) -> None:
    done = kto("plan", "--bootstrap-servers", kraft_cluster.bootstrap, "--output", "plan.json",
               "--mode", "add-brokers", "--brokers", "9", cwd=tmp_path)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "kto plan: brokers 9 to add are not registered (the cluster's brokers: 0, 1, 2)\n"
    )
    assert not (tmp_path / "plan.json").exists()

    mixed = kto("plan", "--bootstrap-servers", kraft_cluster.bootstrap, "--output", "plan.json",
                "--zookeeper-digest-file", "digest", cwd=tmp_path)  # fmt: skip
    assert mixed.returncode == 2
    assert mixed.stderr.startswith("kto plan: ") and "--zookeeper-digest-file" in mixed.stderr
