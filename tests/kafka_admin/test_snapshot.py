"""The ClusterSnapshot made from the Admin API's answers, shaped as kafka-python 3.0 returns them
(describe_cluster, describe_metadata_quorum, describe_topics, list_partition_reassignments,
describe_configs): no cluster needed."""

from __future__ import annotations

import uuid
from typing import Any

from kafka.structs import TopicPartition as KafkaTopicPartition

from kafka_topic_operator.kafka.brokers import BrokerInfo, EndPoint, SecurityProtocol
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.snapshot import PartitionStatus
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.kafka_admin.snapshot import (
    cluster_snapshot,
    dynamic_topic_config,
    kafka_topic_id,
    live_brokers,
    quorum_leader,
    reassignments_around,
    replicas_changed,
    topic_fingerprint,
)

ORDERS_ID = "e43bfb48-8916-48cf-81f2-c82ee8a2af81"


def broker(broker_id: int, rack: str | None, *, fenced: bool = False) -> dict[str, Any]:
    return {"broker_id": broker_id, "host": "127.0.0.1", "port": 9092 + broker_id,
            "rack": rack, "is_fenced": fenced}  # fmt: skip


CLUSTER = {
    "brokers": [broker(0, "a"), broker(1, "b"), broker(2, "c", fenced=True)],
    "cluster_id": "9NRmiocjQSaktWX_eizrzA",
    "controller_id": 1,  # a random live broker, as KRaft brokers answer: not the controller
    "authorized_operations": [],
}

QUORUM = {
    "nodes": [],
    "topics": [
        {
            "topic_name": "__cluster_metadata",
            "partitions": [
                {"partition_index": 0, "error": None, "leader_id": 2, "leader_epoch": 7,
                 "high_watermark": 490, "current_voters": [], "observers": []}
            ],
        }
    ],
}  # fmt: skip


def partition(
    index: int,
    leader: int,
    replicas: list[int],
    isr: list[int],
    offline: list[int] | None = None,
    epoch: int = 0,
    error: int = 0,
) -> dict[str, Any]:
    return {"error_code": error, "partition_index": index, "leader_id": leader,
            "leader_epoch": epoch, "replica_nodes": replicas, "isr_nodes": isr,
            "offline_replicas": offline or []}  # fmt: skip


def topic(name: str, partitions: list[dict[str, Any]], topic_id: str | None = ORDERS_ID,
          error: int = 0) -> dict[str, Any]:  # fmt: skip
    return {"error_code": error, "name": name, "topic_id": topic_id, "is_internal": False,
            "partitions": partitions, "authorized_operations": []}  # fmt: skip


def config(value: str, source: str) -> dict[str, Any]:
    return {"value": value, "config_source": source, "read_only": False, "is_sensitive": False,
            "config_type": "LONG", "synonyms": [], "documentation": None}  # fmt: skip


ORDERS_CONFIGS = {
    "retention.ms": config("86400000", "DYNAMIC_TOPIC_CONFIG"),
    "cleanup.policy": config("compact,delete", "DYNAMIC_TOPIC_CONFIG"),
    "segment.ms": config("604800000", "DEFAULT_CONFIG"),
    "min.insync.replicas": config("2", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
    "max.message.bytes": config("2000000", "DYNAMIC_BROKER_CONFIG"),
    "compression.type": config("lz4", "STATIC_BROKER_CONFIG"),
}

ORDERS = topic(
    "orders",
    [
        partition(1, 1, [1, 0, 2], [1, 0], offline=[2], epoch=3),
        partition(0, 0, [0, 1], [0, 1]),
        # Reassigning from [0, 1] to [1, 2]: the metadata lists every replica, target first.
        partition(2, 0, [1, 2, 0], [0, 1], offline=[2], epoch=1),
        partition(3, -1, [2], [2], offline=[2], epoch=4, error=5),  # LEADER_NOT_AVAILABLE
    ],
)

REASSIGNMENTS = {
    KafkaTopicPartition("orders", 2): {
        "replicas": [1, 2, 0],
        "adding_replicas": [2],
        "removing_replicas": [0],
    }
}


def snapshot(**changes: Any) -> Any:
    arguments: dict[str, Any] = {
        "cluster": CLUSTER,
        "topics": [ORDERS, topic("missing", [], topic_id=None, error=3)],
        "reassignments": REASSIGNMENTS,
        "configs": {"orders": ORDERS_CONFIGS},
        "quorum": QUORUM,
        "requested": ["orders", "missing"],
    }
    arguments.update(changes)
    return cluster_snapshot(**arguments)


def test_brokers_are_the_unfenced_ones_with_their_racks() -> None:
    assert live_brokers(CLUSTER) == {
        0: BrokerInfo(0, (EndPoint("PLAINTEXT", "127.0.0.1", 9092, SecurityProtocol.PLAINTEXT),),
                      rack="a"),
        1: BrokerInfo(1, (EndPoint("PLAINTEXT", "127.0.0.1", 9093, SecurityProtocol.PLAINTEXT),),
                      rack="b"),
    }  # fmt: skip
    sasl = live_brokers({"brokers": [broker(4, None)]}, SecurityProtocol.SASL_SSL)
    assert sasl[4].endpoints == (
        EndPoint("SASL_SSL", "127.0.0.1", 9096, SecurityProtocol.SASL_SSL),
    )
    assert sasl[4].rack is None


def test_the_controller_is_the_metadata_quorum_leader_not_describe_clusters_answer() -> None:
    found = snapshot()
    assert (found.controller_id, found.controller_epoch) == (2, 7)
    assert quorum_leader(None) == (None, None)
    leaderless = {"topics": [{"topic_name": "__cluster_metadata", "partitions": [
        {"partition_index": 0, "error": None, "leader_id": -1, "leader_epoch": 8}]}]}  # fmt: skip
    assert quorum_leader(leaderless) == (None, 8)
    assert snapshot(quorum=None).controller_id is None


def test_a_topic_id_is_printed_as_kafka_prints_it() -> None:
    assert kafka_topic_id(ORDERS_ID) == "5Dv7SIkWSM-B8sgu6KKvgQ"
    assert kafka_topic_id(uuid.UUID(ORDERS_ID)) == "5Dv7SIkWSM-B8sgu6KKvgQ"
    assert kafka_topic_id(None) is None
    assert kafka_topic_id("00000000-0000-0000-0000-000000000000") is None
    assert snapshot().topics["orders"].topic_id == "5Dv7SIkWSM-B8sgu6KKvgQ"


def test_only_dynamic_topic_configs_are_the_topics_config() -> None:
    # Neither Kafka's defaults, nor static or dynamic broker settings the topic inherits.
    assert dynamic_topic_config(ORDERS_CONFIGS) == {
        "cleanup.policy": "compact,delete",
        "retention.ms": "86400000",
    }
    assert snapshot().topics["orders"].config == dynamic_topic_config(ORDERS_CONFIGS)
    assert dynamic_topic_config({"segment.ms": config("1", "DEFAULT_CONFIG")}) == {}


def test_partitions_with_leaders_isr_and_epochs() -> None:
    orders = snapshot().topics["orders"]
    assert list(orders.partitions) == [0, 1, 2, 3]
    first = orders.partitions[1]
    assert first.assignment == ReplicaAssignment((1, 0, 2))
    # KRaft's partition records carry no controller epoch.
    assert first.state == LeaderIsrAndControllerEpoch(LeaderAndIsr(1, (1, 0), leader_epoch=3), -1)
    assert first.state_version is None
    assert orders.replication_factor == 2


def test_a_reassignment_in_progress() -> None:
    found = snapshot()
    moving = found.topics["orders"].partitions[2]
    assert moving.assignment == ReplicaAssignment((1, 2, 0), (2,), (0,))
    assert moving.assignment.target_replicas == (1, 2)
    assert moving.assignment.origin_replicas == (1, 0)
    assert found.topics["orders"].being_reassigned == (2,)
    assert found.pending_reassignments == {TopicPartition("orders", 2): (1, 2)}
    # Without the controller's listing (finished meanwhile) only the metadata's replicas.
    assert snapshot(reassignments={}).topics["orders"].partitions[2].assignment == (
        ReplicaAssignment((1, 2, 0))
    )


def test_a_reassignment_either_listing_names_is_read_as_in_progress() -> None:
    """Listed before DescribeTopics and ended before the second listing: the metadata may
    still show every replica, which must not read as replication factor 3."""
    ended = snapshot(reassignments=reassignments_around(REASSIGNMENTS, {}))
    assert ended.topics["orders"].being_reassigned == (2,)
    assert ended.topics["orders"].partitions[2].assignment.target_replicas == (1, 2)
    began = snapshot(reassignments=reassignments_around({}, REASSIGNMENTS))
    assert began.topics["orders"].being_reassigned == (2,)
    # Named by both: as the later listing has it.
    later = {KafkaTopicPartition("orders", 2): {"replicas": [1, 2, 0], "adding_replicas": [],
                                                "removing_replicas": [0]}}  # fmt: skip
    both = snapshot(reassignments=reassignments_around(REASSIGNMENTS, later))
    assert both.topics["orders"].partitions[2].assignment == ReplicaAssignment((1, 2, 0), (), (0,))
    assert reassignments_around({}, {}) == {}


def test_replicas_changed_since_a_read() -> None:
    described = [ORDERS, topic("missing", [], topic_id=None, error=3)]
    orders = TopicPartition("orders", 0)
    assert replicas_changed(described, {orders: [0, 1]}) == []
    assert replicas_changed(described, {orders: (0, 1)}) == []  # any sequence
    assert replicas_changed(described, {orders: [1, 0]}) == [orders]  # the order counts
    # Partition 2 as read in the middle of its reassignment, and since: ended.
    ended = topic("orders", [partition(0, 0, [0, 1], [0, 1]), partition(2, 1, [1, 2], [1, 2])])
    moved = TopicPartition("orders", 2)
    assert replicas_changed([ended], {orders: [0, 1], moved: [1, 2, 0]}) == [moved]
    # A partition or topic gone counts as changed.
    gone = [TopicPartition("orders", 9), TopicPartition("missing", 0)]
    assert replicas_changed(described, {tp: [0] for tp in gone}) == sorted(gone)


def test_an_offline_leader_and_a_fenced_brokers_replicas() -> None:
    found = snapshot()
    live = found.live_brokers
    assert live == frozenset({0, 1})
    partitions = found.topics["orders"].partitions
    offline = partitions[3]
    assert offline.leader == -1 and offline.state is not None
    assert offline.status(live) is PartitionStatus.OFFLINE
    assert partitions[0].status(live) is PartitionStatus.ONLINE
    # The fenced broker's replicas are offline, as the metadata's offline_replicas say.
    assert partitions[1].offline_replicas(live) == (2,)
    assert partitions[1].under_replicated()
    assert found.deletion_blockers("orders") == [
        "replicas on offline brokers 2 (deletion resumes when they return)",
        "partition reassignment in progress for partitions 2",
    ]


def test_unknown_topics_are_absent_and_names_are_those_read_unless_listed() -> None:
    found = snapshot()
    assert set(found.topics) == {"orders"}
    assert found.topic_names == frozenset({"orders"})
    listed = snapshot(
        topics=[ORDERS, topic("other", [partition(0, 0, [0], [0])])],
        requested=["orders"],
        listed=True,
        configs={"orders": ORDERS_CONFIGS, "other": {}},
    )
    assert set(listed.topics) == {"orders"}
    assert listed.topic_names == frozenset({"orders", "other"})
    assert listed.unreadable == {}


def test_every_topic_when_none_is_named() -> None:
    found = snapshot(requested=None, listed=True)
    assert set(found.topics) == {"orders"} and found.topic_names == frozenset({"orders"})


def test_a_topic_kafka_will_not_describe_is_unreadable() -> None:
    found = snapshot(
        topics=[topic("secret", [], error=29), ORDERS],
        requested=["secret", "orders"],
        configs={},
        problems=["the metadata quorum cannot be described: nope"],
    )
    assert found.topics == {}
    assert found.unreadable == {
        "secret": ("Kafka answers error 29 about topic 'secret'",),
        "orders": ("Kafka gives no configs for topic 'orders' (deleted meanwhile?)",),
    }
    assert found.problems == (
        "the metadata quorum cannot be described: nope",
        "Kafka answers error 29 about topic 'secret'",
        "Kafka gives no configs for topic 'orders' (deleted meanwhile?)",
    )


def test_a_fingerprint_changes_with_what_status_shows_and_only_then() -> None:
    base = topic_fingerprint(snapshot(), "orders")
    assert topic_fingerprint(snapshot(), "orders") == base
    assert topic_fingerprint(snapshot(), "missing") is None
    moved = topic(
        "orders",
        [
            partition(0, 1, [0, 1], [0, 1], epoch=1),  # another leader
            *ORDERS["partitions"][:1],
            *ORDERS["partitions"][2:],
        ],
    )
    shrunk = topic("orders", [partition(0, 0, [0, 1], [0]), *ORDERS["partitions"][:1],
                              *ORDERS["partitions"][2:]])  # fmt: skip
    retention = config("1", "DYNAMIC_TOPIC_CONFIG")
    changed_config = {"orders": {**ORDERS_CONFIGS, "retention.ms": retention}}
    for different in (
        snapshot(topics=[moved]),
        snapshot(topics=[shrunk]),
        snapshot(configs=changed_config),
        snapshot(reassignments={}),
        snapshot(cluster={"brokers": [broker(0, "a")]}),  # broker 1's replicas go offline
        snapshot(configs={}),  # unreadable
    ):
        assert topic_fingerprint(different, "orders") != base
    # Neither a default config nor the controller moving is part of a topic's status.
    defaults = {"orders": {**ORDERS_CONFIGS, "segment.ms": config("1", "DEFAULT_CONFIG")}}
    assert topic_fingerprint(snapshot(configs=defaults), "orders") == base
    assert topic_fingerprint(snapshot(quorum=None), "orders") == base
