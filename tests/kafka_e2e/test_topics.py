"""KafkaTopics on real Kafka with Kafka's own controller: each test asserts what a Kafka client
sees (DescribeTopics, metadata, DescribeConfigs) and that status follows Kafka. Tests taking
`operator` run twice: on Kafka 3.9 in ZooKeeper mode and on Kafka 4.x in KRaft mode (the Admin
API backend); those taking `zk_operator` or `kraft_operator` are about one kind. The tests
share the session's clusters and one operator per kind; each names its topics uniquely and
starts again any broker it stops."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from kafka_client import (
    Partition,
    consume_all,
    describe_configs,
    describe_topic,
    metadata,
    produce,
    reassigning,
    topic_names,
)
from kto_testing import Waiter, eventually

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kto_dev.apache_kafka.distribution import KAFKA_VERSION, require_libs

from .conftest import Operator

pytestmark = [pytest.mark.kafka, pytest.mark.e2e]

RACKS = {0: "a", 1: "b", 2: "c"}


def status_partitions(obj: dict[str, Any]) -> dict[int, tuple[int, tuple[int, ...]]]:
    """status.partitions as {partition: (leader, sorted ISR)}."""
    return {
        p["partition"]: (p["leader"], tuple(sorted(p["isr"]))) for p in obj["status"]["partitions"]
    }


def seen(operator: Operator, topic: str) -> dict[int, Partition]:
    """The topic as DescribeTopics shows it, once the brokers know it."""
    found = eventually(lambda: describe_topic(operator.cluster, topic), f"{topic} described")
    return found[1]


def status_follows(operator: Operator, name: str, topic: str) -> dict[str, Any]:
    """Waits until status shows each partition's leader and ISR as Kafka's metadata does."""

    def agree() -> dict[str, Any] | None:
        obj = operator.get(name) or {}
        shown = metadata(operator.cluster, topic) or {}
        wanted = {p: (s.leader, s.isr) for p, s in shown.items()}
        return obj if "partitions" in obj.get("status", {}) and (
            status_partitions(obj) == wanted
        ) else None  # fmt: skip

    return eventually(agree, f"the status of {name} to follow Kafka", timeout=60)


@pytest.fixture
def brokers_back(operator: Operator) -> Iterator[Operator]:
    """The operator, with every broker running again after the test."""
    yield operator
    operator.start_every_broker()


@pytest.fixture
def zk_brokers_back(zk_operator: Operator) -> Iterator[Operator]:
    yield zk_operator
    zk_operator.start_every_broker()


def no_reassignment_left(operator: Operator, topic: str) -> None:
    """Kafka's controller finished: on ZooKeeper it removed /admin/reassign_partitions, on KRaft
    nothing is listed as being reassigned."""
    if operator.zk is not None:
        assert not operator.zk.exists(znodes.REASSIGN_PARTITIONS_PATH)
    else:
        assert not {tp for tp in reassigning(operator.cluster) if tp[0] == topic}


def test_created_with_racks_and_configs_as_asked(operator: Operator) -> None:
    config = {"retention.ms": 3600000, "cleanup.policy": "compact", "min.insync.replicas": 2}
    operator.apply("e2e-racks", partitions=6, replicas=3, config=config)
    obj = operator.ready("e2e-racks")
    topic_id, partitions = eventually(
        lambda: describe_topic(operator.cluster, "e2e-racks"), "e2e-racks described"
    )
    assert sorted(partitions) == list(range(6))
    for p in partitions.values():
        assert len(p.replicas) == 3
        assert sorted(p.racks, key=str) == ["a", "b", "c"]  # one replica per rack
        assert p.leader == p.replicas[0]  # the preferred leader
    # Kafka's rack-aware assignment also spreads leaders: two per broker.
    assert sorted(p.leader for p in partitions.values()) == [0, 0, 1, 1, 2, 2]
    configs = describe_configs(operator.cluster, "topic", "e2e-racks")
    assert configs == {
        "retention.ms": ("3600000", "DYNAMIC_TOPIC_CONFIG"),
        "cleanup.policy": ("compact", "DYNAMIC_TOPIC_CONFIG"),
        "min.insync.replicas": ("2", "DYNAMIC_TOPIC_CONFIG"),
    }
    status = obj["status"]
    assert status["topicId"] == topic_id  # the id Kafka's controller gave it
    assert status["partitionCounts"] == {"total": 6, "online": 6, "offline": 0,
                                         "underReplicated": 0}  # fmt: skip
    for row in status["partitions"]:
        p = partitions[row["partition"]]
        assert row["state"] == "OnlinePartition"
        assert (row["leader"], sorted(row["isr"])) == (p.leader, sorted(p.replicas))
        assert [r["broker"] for r in row["replicas"]] == list(p.replicas)
        assert {r["state"] for r in row["replicas"]} == {"OnlineReplica"}


def test_kto_describe_shows_what_kafka_topics_describe_shows(zk_operator: Operator) -> None:
    operator = zk_operator
    operator.apply("e2e-described", partitions=4, replicas=2, config={"retention.ms": 7200000})
    operator.ready("e2e-described")
    seen(operator, "e2e-described")
    ours = subprocess.run(
        [sys.executable, "-m", "kafka_topic_operator.cli", "describe",
         "--zookeeper", operator.zookeeper_connect, "e2e-described"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    kafkas = subprocess.run(
        ["java", "-cp", f"{require_libs(KAFKA_VERSION)}/*", "org.apache.kafka.tools.TopicCommand",
         "--bootstrap-server", operator.cluster.bootstrap, "--describe", "--topic",
         "e2e-described"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip

    def topic_lines(text: str, fields: int) -> list[str]:
        """The lines about the topic, each cut to its first `fields` tab-separated fields
        (Kafka's tool adds ELR fields, kto describe partition states)."""
        return [
            "\t".join(line.split("\t")[:fields])
            for line in text.splitlines()
            if line.strip().startswith("Topic: e2e-described")
        ]

    assert topic_lines(ours, 6) == topic_lines(kafkas, 6)
    assert len(topic_lines(kafkas, 6)) == 5


def test_partitions_grow_and_the_replication_factor_changes(operator: Operator) -> None:
    operator.apply("e2e-grow", partitions=12, replicas=1)
    operator.ready("e2e-grow")
    assert len(seen(operator, "e2e-grow")) == 12

    operator.patch("e2e-grow", {"partitions": 16})
    operator.ready("e2e-grow")
    grown = eventually(
        lambda: (m := metadata(operator.cluster, "e2e-grow")) and len(m) == 16 and m,
        "16 partitions in metadata",
    )
    assert all(len(p.replicas) == 1 and p.leader == p.replicas[0] for p in grown.values())

    # 1 -> 3: a reassignment that Kafka's controller carries out, keeping each leader.
    operator.patch("e2e-grow", {"replicas": 3})
    obj = operator.ready("e2e-grow")
    no_reassignment_left(operator, "e2e-grow")
    assert obj["status"]["partitionCounts"]["underReplicated"] == 0  # done: every ISR full
    # Status reads the controller's own state; a broker learns the full ISRs from the
    # controller's UpdateMetadata a moment later, so DescribeTopics may lag behind Ready.
    tripled = eventually(
        lambda: (
            (d := describe_topic(operator.cluster, "e2e-grow"))
            and all(p.isr == tuple(sorted(p.replicas)) for p in d[1].values())
            and d[1]
        ),
        "every replica in sync as the brokers describe it",
    )
    for p, partition in tripled.items():
        assert len(partition.replicas) == 3 and partition.replicas[0] == grown[p].replicas[0]
    status_follows(operator, "e2e-grow", "e2e-grow")

    # 3 -> 2: one replica dropped from each partition.
    operator.patch("e2e-grow", {"replicas": 2})
    operator.ready("e2e-grow")
    halved = eventually(
        lambda: (
            (m := metadata(operator.cluster, "e2e-grow"))
            and all(len(p.replicas) == 2 and len(p.isr) == 2 for p in m.values())
            and m
        ),
        "two replicas in sync everywhere",
    )
    for p, partition in halved.items():
        assert set(partition.replicas) < set(tripled[p].replicas)
    no_reassignment_left(operator, "e2e-grow")
    status_follows(operator, "e2e-grow", "e2e-grow")


def config_changes(operator: Operator) -> set[str]:
    return set(operator.zookeeper.children(znodes.CONFIG_CHANGES_PATH) or [])


def test_a_config_change_takes_effect(operator: Operator) -> None:
    operator.apply("e2e-changed", partitions=3, replicas=3,
                   config={"retention.ms": 1000000, "cleanup.policy": "compact"})  # fmt: skip
    operator.ready("e2e-changed")
    seen(operator, "e2e-changed")
    operator.patch("e2e-changed", {"config": {"retention.ms": 2000000, "segment.ms": 600000,
                                              "cleanup.policy": None}})  # fmt: skip
    operator.ready("e2e-changed")
    configs = describe_configs(operator.cluster, "topic", "e2e-changed")
    # (A KRaft cluster also shows min.insync.replicas as a cluster-wide dynamic default.)
    assert {k: v for k, v in configs.items() if v[1] == "DYNAMIC_TOPIC_CONFIG"} == {
        "retention.ms": ("2000000", "DYNAMIC_TOPIC_CONFIG"),
        "segment.ms": ("600000", "DYNAMIC_TOPIC_CONFIG"),
    }


def test_a_config_change_reaches_the_brokers_without_a_restart(zk_operator: Operator) -> None:
    operator = zk_operator
    operator.apply("e2e-configs", partitions=3, replicas=3, config={"retention.ms": 1000000})
    operator.ready("e2e-configs")
    seen(operator, "e2e-configs")  # the brokers' metadata follows the znodes a moment later
    before = config_changes(operator)
    operator.patch("e2e-configs", {"config": {"retention.ms": 2000000, "segment.ms": 600000}})
    operator.ready("e2e-configs")
    # The notification exactly as Kafka's AdminZkClient writes it: a persistent sequential znode.
    (new,) = config_changes(operator) - before
    assert new.startswith("config_change_") and new[len("config_change_") :].isdigit()
    node = operator.zookeeper.get(f"{znodes.CONFIG_CHANGES_PATH}/{new}")
    assert node is not None and node.ephemeral_owner == 0
    assert json.loads(node.data) == {"version": 2, "entity_path": "topics/e2e-configs"}
    assert describe_configs(operator.cluster, "topic", "e2e-configs") == {
        "retention.ms": ("2000000", "DYNAMIC_TOPIC_CONFIG"),
        "segment.ms": ("600000", "DYNAMIC_TOPIC_CONFIG"),
    }

    # Every broker's ZkConfigManager processed the notification: the log configs in use changed.
    def processed(broker_id: int) -> bool:
        log = operator.kafka_cluster.brokers[broker_id].spec.log_file.read_text(errors="replace")
        return "Processing override for entityPath: topics/e2e-configs with config: " in log and (
            "retention.ms -> 2000000" in log
        )

    for broker_id in operator.kafka_cluster.brokers:
        eventually(lambda b=broker_id: processed(b), f"broker {broker_id} reloading the configs")


def test_unclean_leader_election_enabled_on_the_resource_takes_effect(
    zk_brokers_back: Operator,
) -> None:
    """A partition whose only in-sync replica died stays offline until the resource enables
    unclean leader election; Kafka's controller then elects the out-of-sync replica."""
    operator = zk_brokers_back
    operator.apply("e2e-unclean", replicaAssignment=[[1, 2]],
                   config={"unclean.leader.election.enable": False})  # fmt: skip
    operator.ready("e2e-unclean")
    seen(operator, "e2e-unclean")
    cluster, waiter = operator.kafka_cluster, Waiter(operator.zookeeper)
    state_path = znodes.topic_partition_state_path(TopicPartition("e2e-unclean", 0))

    def state(watch: Any) -> tuple[int, tuple[int, ...]]:
        node = operator.zookeeper.get(state_path, watch=watch)
        assert node is not None
        decoded = znodes.decode_partition_state(node.path, node.data, node.version).leader_and_isr
        return decoded.leader, decoded.isr

    cluster.brokers[2].stop()  # a controlled shutdown takes 2 out of the ISR
    waiter.until(state, lambda s: s == (1, (1,)), "ISR [1]")
    cluster.brokers[1].kill()  # the only in-sync replica dies
    waiter.until(state, lambda s: s[0] == -1, "no leader", timeout=30)
    cluster.brokers[2].start()
    operator.reason("e2e-unclean", "PartitionsOffline")
    assert state(None)[0] == -1  # 2 is not in the ISR: no clean leader

    operator.patch("e2e-unclean", {"config": {"unclean.leader.election.enable": True}})
    waiter.until(state, lambda s: s == (2, (2,)), "broker 2 elected uncleanly", timeout=30)
    eventually(lambda: (m := metadata(cluster, "e2e-unclean")) and m[0].leader == 2,
               "leader 2 in metadata")  # fmt: skip
    operator.ready("e2e-unclean")
    assert describe_configs(cluster, "topic", "e2e-unclean") == {
        "unclean.leader.election.enable": ("true", "DYNAMIC_TOPIC_CONFIG")
    }


def test_deletion(operator: Operator) -> None:
    operator.apply("e2e-deleted", partitions=3, replicas=2)
    operator.ready("e2e-deleted")
    seen(operator, "e2e-deleted")
    operator.delete("e2e-deleted")
    operator.gone("e2e-deleted")
    assert "e2e-deleted" not in topic_names(operator.cluster)
    assert describe_topic(operator.cluster, "e2e-deleted") is None
    if operator.zk is not None:  # nothing left of it in ZooKeeper either
        assert not operator.zk.exists(znodes.topic_path("e2e-deleted"))
        assert not operator.zk.exists(znodes.delete_topic_path("e2e-deleted"))
        assert not operator.zk.exists(znodes.topic_config_path("e2e-deleted"))


def test_deletion_waits_for_a_stopped_broker(zk_brokers_back: Operator) -> None:
    operator = zk_brokers_back
    operator.apply("e2e-stuck", replicaAssignment=[[2, 0], [0, 2]])
    operator.ready("e2e-stuck")
    seen(operator, "e2e-stuck")
    operator.stop_broker(2)
    operator.delete("e2e-stuck")
    status, _, message = operator.reason("e2e-stuck", "DeletionIneligible")
    assert status == "False"
    assert message == ("Deletion of topic 'e2e-stuck' waits: replicas on offline brokers 2 "
                       "(deletion resumes when they return)")  # fmt: skip
    obj = operator.get("e2e-stuck")
    assert obj is not None and obj["metadata"]["finalizers"] == ["kto.dev/topic-deletion"]
    assert obj["status"]["deletion"]["waitingOn"] == [
        "replicas on offline brokers 2 (deletion resumes when they return)"
    ]
    # Kafka's TopicDeletionManager keeps the marker while the replica is ineligible.
    assert operator.zookeeper.exists(znodes.delete_topic_path("e2e-stuck"))
    assert operator.zookeeper.exists(znodes.topic_path("e2e-stuck"))

    operator.start_broker(2)
    operator.gone("e2e-stuck")
    assert describe_topic(operator.cluster, "e2e-stuck") is None
    assert not operator.zookeeper.exists(znodes.delete_topic_path("e2e-stuck"))


def test_deletion_on_kraft_does_not_wait_for_a_stopped_broker(kraft_operator: Operator) -> None:
    """KRaft's controller removes a topic from the metadata at once; a broker that was away
    deletes its replicas' logs when it comes back. The finalizer has nothing to wait for."""
    operator = kraft_operator
    operator.apply("e2e-away", replicaAssignment=[[2, 0], [0, 2]])
    operator.ready("e2e-away")
    seen(operator, "e2e-away")
    operator.stop_broker(2)
    try:
        operator.delete("e2e-away")
        operator.gone("e2e-away")
        assert "e2e-away" not in topic_names(operator.cluster)
    finally:
        operator.start_broker(2)
    assert describe_topic(operator.cluster, "e2e-away") is None


def test_a_colliding_name_is_refused(operator: Operator) -> None:
    operator.apply("e2e-dotted", topicName="e2e.collide", partitions=1, replicas=1)
    operator.ready("e2e-dotted")
    operator.apply("e2e-underscored", topicName="e2e_collide", partitions=1, replicas=1)
    _, _, message = operator.reason("e2e-underscored", "Conflict")
    assert message == "Topic 'e2e_collide' collides with existing topics: e2e.collide"
    names = topic_names(operator.cluster)
    assert "e2e.collide" in names and "e2e_collide" not in names


def test_a_manual_assignment_is_honoured(operator: Operator) -> None:
    assignment = [[2, 0], [0, 1], [1, 2], [2, 1]]
    operator.apply("e2e-manual", replicaAssignment=assignment)
    operator.ready("e2e-manual")
    partitions = seen(operator, "e2e-manual")
    assert {p: list(s.replicas) for p, s in partitions.items()} == dict(enumerate(assignment))
    assert {p: s.leader for p, s in partitions.items()} == {0: 2, 1: 0, 2: 1, 3: 2}


def test_a_killed_broker_moves_leaders_and_status_follows(brokers_back: Operator) -> None:
    operator = brokers_back
    operator.apply("e2e-failover", partitions=6, replicas=3)
    operator.ready("e2e-failover")
    before = seen(operator, "e2e-failover")
    led = {p for p, s in before.items() if s.leader == 1}
    assert led  # two of six partitions are led by each broker
    operator.kill_broker(1)

    def moved() -> dict[int, Partition] | None:
        m = metadata(operator.cluster, "e2e-failover")
        return m if m and all(p.leader not in (1, -1) and 1 not in p.isr
                              for p in m.values()) else None  # fmt: skip

    eventually(moved, "leaders off broker 1 and 1 out of every ISR", timeout=60)
    obj = status_follows(operator, "e2e-failover", "e2e-failover")
    for row in obj["status"]["partitions"]:
        assert row["state"] == "OnlinePartition"
        states = {r["broker"]: r["state"] for r in row["replicas"]}
        assert states[1] == "OfflineReplica"
    assert obj["status"]["partitionCounts"]["underReplicated"] == 6
    produce(operator.cluster, "e2e-failover", 120)  # acknowledged by the two brokers left

    operator.start_broker(1)
    eventually(lambda: (m := metadata(operator.cluster, "e2e-failover"))
               and all(p.isr == (0, 1, 2) for p in m.values()), "1 back in every ISR",
               timeout=60)  # fmt: skip
    obj = status_follows(operator, "e2e-failover", "e2e-failover")
    assert obj["status"]["partitionCounts"]["underReplicated"] == 0
    assert all(
        {r["state"] for r in row["replicas"]} == {"OnlineReplica"}
        for row in obj["status"]["partitions"]
    )
    values = consume_all(operator.cluster, "e2e-failover", 6)
    assert sorted(values) == sorted(f"value-{i}" for i in range(120))
