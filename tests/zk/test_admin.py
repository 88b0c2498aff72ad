"""AdminZkClient's writes against a real ZooKeeper: what kafka-topics writes, and in bulk."""

from __future__ import annotations

import json

import pytest

from kafka_topic_operator.kafka.errors import (
    TopicAlreadyMarkedForDeletionException,
    TopicExistsException,
    UnknownTopicOrPartitionException,
)
from kafka_topic_operator.kafka.ids import Uuid
from kafka_topic_operator.kafka.new_topic import NewTopic
from kafka_topic_operator.topics.zookeeper_backend import ZooKeeperBackend
from kafka_topic_operator.zk import admin, znodes
from kafka_topic_operator.zk.client import ZkClient

pytestmark = pytest.mark.zookeeper


def written(zk: ZkClient, topic: str) -> tuple[dict[int, tuple[int, ...]], dict[str, str]]:
    node = zk.get(znodes.topic_path(topic))
    config = zk.get(znodes.topic_config_path(topic))
    assert node is not None and config is not None
    partitions = znodes.decode_topic(node.path, node.data).partitions
    return (
        {p: a.replicas for p, a in partitions.items()},
        dict(znodes.decode_config(config.path, config.data)),
    )


def test_create_topics_writes_what_create_topic_with_assignment_writes(zk: ZkClient) -> None:
    many = [
        NewTopic(f"t{i}", {0: [1, 2], 1: [2, 1]}, {"retention.ms": str(i)})
        for i in range(admin.TOPICS_PER_TRANSACTION + 5)
    ]
    assert admin.create_topics(zk, many) == {topic.name: None for topic in many}
    admin.create_topic_with_assignment(zk, "single", {0: [1, 2], 1: [2, 1]}, {"retention.ms": "7"})
    assert written(zk, "t7") == written(zk, "single")
    assert written(zk, "t204")[1] == {"retention.ms": "204"}


def test_a_failing_batch_is_redone_topic_by_topic(zk: ZkClient) -> None:
    admin.create_topic_with_assignment(zk, "taken", {0: [1]})
    zk.ensure_path(znodes.config_entity_type_path(znodes.ConfigType.TOPIC))
    zk.create(znodes.topic_config_path("leftover"), znodes.encode_config({}))  # config, no topic
    results = admin.create_topics(
        zk,
        [
            NewTopic("a", {0: [1]}),
            NewTopic("taken", {0: [2]}),
            NewTopic("leftover", {0: [1]}, {"cleanup.policy": "compact"}),
        ],
    )
    assert results["a"] is None and results["leftover"] is None
    assert isinstance(results["taken"], TopicExistsException)
    assert str(results["taken"]) == "Topic 'taken' already exists."
    assert written(zk, "taken")[0] == {0: (1,)}  # untouched
    assert written(zk, "leftover") == ({0: (1,)}, {"cleanup.policy": "compact"})


def test_refusals_are_worded_as_kafkas_admin_zk_client(zk: ZkClient) -> None:
    # AdminZkClient.deleteTopic / validateTopicConfig and ZkAdminManager.createPartitions (3.9).
    with pytest.raises(UnknownTopicOrPartitionException) as missing:
        admin.delete_topic(zk, "nope")
    assert str(missing.value) == "Topic `nope` to delete does not exist"
    with pytest.raises(UnknownTopicOrPartitionException) as missing:
        admin.change_topic_config(zk, "nope", {"retention.ms": "1"})
    assert str(missing.value) == "Topic 'nope' does not exist."
    with pytest.raises(UnknownTopicOrPartitionException) as missing:
        admin.add_partitions(zk, "nope", {1: [0]})
    assert str(missing.value) == "The topic 'nope' does not exist."
    admin.create_topic_with_assignment(zk, "t", {0: [0]})
    admin.delete_topic(zk, "t")
    with pytest.raises(TopicAlreadyMarkedForDeletionException) as marked:
        admin.delete_topic(zk, "t")
    assert str(marked.value) == "topic t is already marked for deletion"
    with pytest.raises(TopicExistsException) as exists:
        admin.create_topic_with_assignment(zk, "t", {0: [1]})
    assert str(exists.value) == "Topic 't' already exists."


def notifications(zk: ZkClient) -> list[tuple[str, object, int]]:
    """(name, parsed JSON, czxid) of each change notification, oldest first."""
    out = []
    for name in sorted(zk.children(znodes.CONFIG_CHANGES_PATH) or []):
        node = zk.get(f"{znodes.CONFIG_CHANGES_PATH}/{name}")
        assert node is not None
        out.append((name, json.loads(node.data), node.czxid))
    return out


def modified_zxid(zk: ZkClient, path: str) -> int:
    _data, stat = zk.raw.get(path)
    return int(stat.mzxid)


def test_a_config_change_is_written_as_change_entity_config_writes_it(zk: ZkClient) -> None:
    admin.create_topic_with_assignment(zk, "t", {0: [0]}, {"retention.ms": "1000"})
    assert zk.children(znodes.CONFIG_CHANGES_PATH) in (None, [])  # creation notifies nobody

    admin.change_topic_config(zk, "t", {"unclean.leader.election.enable": "true"})
    admin.change_broker_config(zk, 1, {"leader.replication.throttled.rate": "1000"})
    admin.change_broker_config(zk, None, {"log.cleaner.threads": "2"})

    changes = notifications(zk)
    assert [(name, data) for name, data, _ in changes] == [
        ("config_change_0000000000", {"version": 2, "entity_path": "topics/t"}),
        ("config_change_0000000001", {"version": 2, "entity_path": "brokers/1"}),
        ("config_change_0000000002", {"version": 2, "entity_path": "brokers/<default>"}),
    ]
    # The whole config is replaced, and written before its notification.
    assert written(zk, "t")[1] == {"unclean.leader.election.enable": "true"}
    assert admin.broker_config(zk, 1) == {"leader.replication.throttled.rate": "1000"}
    assert admin.broker_config(zk, None) == {"log.cleaner.threads": "2"}
    assert zk.exists("/config/brokers/<default>")
    for path, (_, _, notified) in zip(
        [znodes.topic_config_path("t"), "/config/brokers/1", "/config/brokers/<default>"],
        changes,
        strict=True,
    ):
        assert modified_zxid(zk, path) < notified


def test_the_zookeeper_backend_creates_topics_with_their_ids(zk: ZkClient) -> None:
    """As a 3.9 broker creates them (ZkAdminManager with usesTopicId): the id is in the first
    write, so the controller has none to add; an id given is kept."""
    given = "q1s3mTg9RqSd3Y1y6G3l1w"
    backend = ZooKeeperBackend(zk)
    assert backend.create_topics(
        [NewTopic("fresh", {0: [1]}), NewTopic("named", {0: [1]}, topic_id=given)]
    ) == {"fresh": None, "named": None}
    ids = {}
    for topic in ("fresh", "named"):
        node = zk.get(znodes.topic_path(topic))
        assert node is not None and node.version == 0  # written once
        ids[topic] = znodes.decode_topic(node.path, node.data).topic_id
    assert ids["named"] == given
    fresh = ids["fresh"]
    assert fresh is not None and fresh != given and not fresh.startswith("-")
    assert str(Uuid.from_string(fresh)) == fresh


@pytest.mark.parametrize(
    ("target", "why"),
    [([], "the replica list is empty"), ([1, 1], "the replica list has duplicate brokers"),
     ([1, -1], "the replica list has a negative broker id")],
)  # fmt: skip
def test_a_reassignment_kafkas_controller_would_never_finish_is_refused_unwritten(
    zk: ZkClient, target: list[int], why: str
) -> None:
    from kafka_topic_operator.kafka.errors import InvalidReplicaAssignmentException
    from kafka_topic_operator.kafka.topic_partition import TopicPartition

    targets = {TopicPartition("t", 1): [1, 2], TopicPartition("t", 0): target}
    with pytest.raises(InvalidReplicaAssignmentException) as refused:
        admin.reassign_partitions(zk, targets)
    assert str(refused.value) == (
        "Refusing to request a reassignment Kafka's controller would never finish: "
        f"t-0 to {target}: {why}"
    )
    assert not zk.exists(znodes.REASSIGN_PARTITIONS_PATH)
    admin.reassign_partitions(zk, targets, validate=False)  # as someone else may write it
    assert zk.exists(znodes.REASSIGN_PARTITIONS_PATH)


def test_a_preferred_election_leaves_out_partitions_that_never_came_online(zk: ZkClient) -> None:
    from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
    from kafka_topic_operator.kafka.topic_partition import TopicPartition

    led, never = TopicPartition("t", 0), TopicPartition("t", 1)
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, (1,)), 1)
    zk.create(znodes.topic_partition_state_path(led), znodes.encode_partition_state(state),
              makepath=True)  # fmt: skip
    assert admin.elect_preferred_leaders(zk, [never]) == []
    assert not zk.exists(znodes.PREFERRED_REPLICA_ELECTION_PATH)
    assert admin.elect_preferred_leaders(zk, [never, led]) == [led]
    node = zk.get(znodes.PREFERRED_REPLICA_ELECTION_PATH)
    assert node is not None
    assert znodes.decode_preferred_replica_election(node.path, node.data) == {led}
