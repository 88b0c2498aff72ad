"""Reading the cluster back from real znodes, including someone else's malformed JSON."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kafka_topic_operator.cli.describe import cluster_report, render_text
from kafka_topic_operator.kafka.brokers import BrokerInfo, EndPoint, SecurityProtocol
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.snapshot import Expected, PartitionStatus
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import ZkClient
from kafka_topic_operator.zk.snapshot_reader import read_cluster

pytestmark = pytest.mark.zookeeper


@pytest.fixture
def zk(zk_chroot: str) -> Iterator[ZkClient]:
    client = ZkClient(zk_chroot)
    client.start()
    for path in znodes.PERSISTENT_ZK_PATHS:
        client.ensure_path(path)
    yield client
    client.stop()


def register(zk: ZkClient, broker: int, rack: str | None = None) -> None:
    info = BrokerInfo(
        broker,
        (EndPoint("PLAINTEXT", "localhost", 9092 + broker, SecurityProtocol.PLAINTEXT),),
        rack=rack,
        timestamp=1,
    )
    zk.create(znodes.broker_path(broker), znodes.encode_broker(info), ephemeral=True)


def write_topic(
    zk: ZkClient, topic: str, assignment: dict[int, list[int]], leaders: dict[int, list[int]]
) -> None:
    zk.create(
        znodes.topic_path(topic),
        znodes.encode_topic(
            {p: ReplicaAssignment.of(r) for p, r in assignment.items()}, "AAAAAAAAAAAAAAAAAAAAAQ"
        ),
    )
    zk.create(znodes.topic_config_path(topic), znodes.encode_config({"retention.ms": "1000"}))
    for p, isr in leaders.items():
        state = LeaderIsrAndControllerEpoch(LeaderAndIsr(isr[0], tuple(isr)), 1)
        zk.create(
            znodes.topic_partition_state_path(TopicPartition(topic, p)),
            znodes.encode_partition_state(state),
            makepath=True,
        )


def test_reads_topics_states_and_brokers(zk: ZkClient) -> None:
    register(zk, 0, "a")
    register(zk, 1, "b")
    write_topic(zk, "orders", {0: [0, 1], 1: [1, 2], 2: [2, 0]}, {0: [0, 1], 1: [2]})
    cluster = read_cluster(zk)
    assert cluster.live_brokers == {0, 1}
    orders = cluster.topics["orders"]
    assert orders.config == {"retention.ms": "1000"}
    assert orders.partitions[0].status(cluster.live_brokers) is PartitionStatus.ONLINE
    assert orders.partitions[1].status(cluster.live_brokers) is PartitionStatus.OFFLINE
    assert orders.partitions[2].status(cluster.live_brokers) is PartitionStatus.NEW
    assert orders.partitions[1].under_replicated()
    report = cluster_report(cluster)
    assert report["offline_partitions"] == ["orders-1"]
    assert report["under_replicated_partitions"] == ["orders-1"]
    assert [b["id"] for b in report["brokers"]] == [0, 1, 2]
    assert report["brokers"][2]["alive"] is False


def test_deletion_waits_are_explained(zk: ZkClient) -> None:
    register(zk, 0)
    write_topic(zk, "doomed", {0: [0, 1]}, {0: [0, 1]})
    zk.create(znodes.delete_topic_path("doomed"))
    report = cluster_report(read_cluster(zk), ["doomed"])
    waiting = report["topics"][0]["deletion_waiting_on"]
    assert any("offline brokers 1" in reason for reason in waiting)
    assert any("no active controller" in reason for reason in waiting)
    assert "Deletion waits: replicas on offline brokers 1" in render_text(report)


def test_malformed_znodes_are_reported_with_their_path_not_raised(zk: ZkClient) -> None:
    register(zk, 0)
    write_topic(zk, "good", {0: [0]}, {0: [0]})
    zk.create(znodes.topic_path("bad"), b'{"partitions": ')
    zk.create(znodes.broker_path(7), b"[]", ephemeral=True)
    cluster = read_cluster(zk)
    assert set(cluster.topics) == {"good"}
    assert any("/brokers/topics/bad" in p for p in cluster.problems)
    assert any("/brokers/ids/7" in p for p in cluster.problems)


def test_each_topics_unreadable_znodes_are_named_with_it(zk: ZkClient) -> None:
    register(zk, 0)
    write_topic(zk, "good", {0: [0]}, {0: [0]})
    write_topic(zk, "state", {0: [0], 1: [0]}, {0: [0], 1: [0]})
    zk.set(znodes.topic_partition_state_path(TopicPartition("state", 1)), b"garbage")
    write_topic(zk, "config", {0: [0]}, {0: [0]})
    zk.set(znodes.topic_config_path("config"), b"[1, 2]")
    zk.create(znodes.topic_path("bad"), b'{"partitions": ')
    for cluster in (read_cluster(zk), read_cluster(zk, ["good", "state", "config", "bad"])):
        assert set(cluster.unreadable) == {"state", "config", "bad"}
        (state,) = cluster.unreadable["state"]
        assert state.startswith(
            "Malformed data in znode /brokers/topics/state/partitions/1/state: "
        )
        assert cluster.unreadable["config"][0].startswith(
            "Malformed data in znode /config/topics/config: "
        )
        assert cluster.unreadable["bad"][0].startswith(
            "Malformed data in znode /brokers/topics/bad: "
        )
        assert sorted(cluster.problems) == sorted(
            p for ps in cluster.unreadable.values() for p in ps
        )


def test_reading_a_subset_of_topics(zk: ZkClient) -> None:
    write_topic(zk, "a", {0: [0]}, {})
    write_topic(zk, "b", {0: [0]}, {})
    assert set(read_cluster(zk, ["b", "nope"]).topics) == {"b"}


class CountingRounds:
    """Counts the rounds of reads (read_many calls) a reader makes."""

    def __init__(self, zk: ZkClient, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rounds = 0
        read_many = zk.read_many

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.rounds += 1
            return read_many(*args, **kwargs)

        monkeypatch.setattr(zk, "read_many", counted)


@pytest.mark.parametrize(
    ("expected", "rounds"),
    [
        (None, 2),
        (Expected(brokers=[0, 1], partitions={"orders": [0, 1, 2]}), 1),
        # Wrong guesses: a broker gone and one not guessed, partitions too many and too few.
        (Expected(brokers=[0, 5], partitions={"orders": [0, 1, 2, 3]}), 2),
        (Expected(brokers=[0, 1], partitions={"orders": [0], "other": [0]}), 2),
    ],
)
def test_a_right_guess_saves_a_round_and_any_guess_reads_the_same(
    zk: ZkClient, monkeypatch: pytest.MonkeyPatch, expected: Expected | None, rounds: int
) -> None:
    register(zk, 0, "a")
    register(zk, 1, "b")
    write_topic(zk, "orders", {0: [0, 1], 1: [1, 0], 2: [0, 1]}, {0: [0, 1], 1: [1]})
    plain = read_cluster(zk, ["orders"], list_topics=False)
    counting = CountingRounds(zk, monkeypatch)
    guessed = read_cluster(zk, ["orders"], list_topics=False, expected=expected)
    assert counting.rounds == rounds
    assert guessed == plain
