"""The status follower on a real ZooKeeper: a followed topic is reported again when its
partition state, its znode or the live brokers change, and no longer once it is gone."""

from __future__ import annotations

import queue
from collections.abc import Collection, Iterator

import pytest
from kto_testing import eventually

from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.topics.follow import StatusFollower
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import ZkClient

pytestmark = pytest.mark.zookeeper

Report = tuple[ClusterSnapshot, list[str]]


@pytest.fixture
def reports(zk: ZkClient) -> Iterator[tuple[StatusFollower, queue.Queue[Report]]]:
    """A started follower and what it reports, in a cluster with brokers registered (none yet:
    `/brokers/ids` exists, so its children can be watched)."""
    zk.ensure_path(znodes.BROKER_IDS_PATH)
    found: queue.Queue[Report] = queue.Queue()

    def changed(snapshot: ClusterSnapshot, topics: Collection[str]) -> None:
        found.put((snapshot, sorted(topics)))

    follower = StatusFollower(zk, changed)
    follower.start()
    yield follower, found
    follower.stop()


def write_state(zk: ZkClient, topic: str, leader: int, isr: tuple[int, ...]) -> None:
    path = znodes.topic_partition_state_path(TopicPartition(topic, 0))
    data = znodes.encode_partition_state(LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, isr), 1))
    if zk.exists(path):
        zk.set(path, data)
    else:
        zk.create(path, data, makepath=True)


def create_topic(zk: ZkClient, topic: str) -> None:
    zk.create(znodes.topic_path(topic),
              znodes.encode_topic({0: ReplicaAssignment((0, 1))}, None), makepath=True)  # fmt: skip
    write_state(zk, topic, 0, (0, 1))


def leader(report: Report, topic: str) -> int:
    return report[0].topics[topic].partitions[0].leader


def test_a_followed_topic_is_reported_when_kafka_changes_it(
    zk: ZkClient, reports: tuple[StatusFollower, queue.Queue[Report]]
) -> None:
    follower, found = reports
    create_topic(zk, "orders")
    create_topic(zk, "other")
    follower.follow("orders")
    first = found.get(timeout=10)
    assert first[1] == ["orders"] and leader(first, "orders") == 0

    write_state(zk, "other", 1, (1,))  # not followed: nothing
    write_state(zk, "orders", 1, (1,))  # a new leader
    moved = found.get(timeout=10)
    assert moved[1] == ["orders"] and leader(moved, "orders") == 1
    assert moved[0].topics["orders"].partitions[0].isr == (1,)

    zk.create(znodes.broker_path(7), b"{}", ephemeral=True)  # the live brokers changed
    again = found.get(timeout=10)
    assert again[1] == ["orders"]

    zk.delete(znodes.topic_path("orders"), recursive=True)  # deleted: no longer followed
    eventually(lambda: "orders" not in follower.followed, "orders unfollowed")
    while not found.empty():  # what the follower saw of the deletion on its way
        found.get()
    create_topic(zk, "orders")  # a topic of that name again: not followed until asked
    follower.follow("other")
    assert found.get(timeout=10)[1] == ["other"]
    write_state(zk, "orders", 1, (1,))
    write_state(zk, "other", 0, (0,))
    assert found.get(timeout=10)[1] == ["other"]


def test_a_config_changed_behind_the_operators_back_is_reported_at_once(
    zk: ZkClient, reports: tuple[StatusFollower, queue.Queue[Report]]
) -> None:
    follower, found = reports
    create_topic(zk, "orders")
    zk.create(znodes.topic_config_path("orders"),
              znodes.encode_config({"retention.ms": "1000"}), makepath=True)  # fmt: skip
    follower.follow("orders")
    assert found.get(timeout=10)[0].topics["orders"].config == {"retention.ms": "1000"}
    zk.set(znodes.topic_config_path("orders"), znodes.encode_config({"retention.ms": "5"}))
    snapshot, topics = found.get(timeout=10)
    assert topics == ["orders"] and snapshot.topics["orders"].config == {"retention.ms": "5"}


def test_a_deleted_topic_is_reported_once_and_unfollowed(
    zk: ZkClient, reports: tuple[StatusFollower, queue.Queue[Report]]
) -> None:
    follower, found = reports
    create_topic(zk, "orders")
    follower.follow("orders")
    found.get(timeout=10)
    zk.delete(znodes.topic_path("orders"), recursive=True)
    while (report := found.get(timeout=10))[0].topics:  # partition states went first
        pass
    assert report[1] == ["orders"]  # gone: the callback decides (recreate or not)
    assert "orders" not in follower.followed


def test_a_topic_followed_as_of_a_zxid_is_reported_only_when_changed_after_it(
    zk: ZkClient, reports: tuple[StatusFollower, queue.Queue[Report]]
) -> None:
    follower, found = reports
    create_topic(zk, "orders")
    create_topic(zk, "changed")
    known = zk.raw.last_zxid  # both as the caller read them
    write_state(zk, "changed", 1, (1,))  # ...and this one changed since
    follower.follow("orders", since=known)
    follower.follow("changed", since=known)
    first = found.get(timeout=10)
    assert first[1] == ["changed"] and leader(first, "changed") == 1
    write_state(zk, "orders", 1, (1,))  # its watch was set from the zxid given
    moved = found.get(timeout=10)
    assert moved[1] == ["orders"] and leader(moved, "orders") == 1


def test_a_failure_that_repeats_is_logged_in_full_once_then_in_one_line(
    zk: ZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    """The Kubernetes API down for minutes: the status write fails every RETRY seconds; the log
    gets one traceback, then one line per retry, and says when it works again."""
    zk.ensure_path(znodes.BROKER_IDS_PATH)
    create_topic(zk, "orders")
    calls: queue.Queue[int] = queue.Queue()

    def changed(snapshot: ClusterSnapshot, topics: Collection[str]) -> None:
        calls.put(1)
        if calls.qsize() <= 3:
            raise ConnectionRefusedError(111, "Connection refused")

    follower = StatusFollower(zk, changed)
    follower.start()
    try:
        with caplog.at_level("INFO", logger="kafka_topic_operator.topics.follow"):
            follower.follow("orders")
            eventually(lambda: calls.qsize() >= 4, "the fourth pass, which succeeds", timeout=30)
            eventually(lambda: "works again" in caplog.text, "the recovery logged")
    finally:
        follower.stop()
    records = [r for r in caplog.records if r.name == "kafka_topic_operator.topics.follow"]
    assert [(r.levelname, r.exc_info is not None) for r in records] == [
        ("ERROR", True), ("WARNING", False), ("WARNING", False), ("INFO", False)]  # fmt: skip
    assert "still fails (ConnectionRefusedError: [Errno 111] Connection refused)" in (
        records[1].getMessage()
    )
