"""Reconcile steps against a real ZooKeeper, the controller and dev brokers: what a KafkaTopic's
spec turns into in Kafka's layout, and what is refused without writing anything."""

from __future__ import annotations

from typing import Any

import pytest
from invalid_specs import INVALID
from kto_testing import eventually

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.topics.plan import CreateTopic, Plan, Reason
from kafka_topic_operator.topics.reconcile import reconcile_topic
from kafka_topic_operator.zk import znodes

from .conftest import Cluster


def assignment(cluster: Cluster, topic: str) -> dict[int, tuple[int, ...]]:
    node = cluster.zk.get(znodes.topic_path(topic))
    assert node is not None
    return {p: a.replicas for p, a in znodes.decode_topic(node.path, node.data).partitions.items()}


def config(cluster: Cluster, topic: str) -> dict[str, str]:
    node = cluster.zk.get(znodes.topic_config_path(topic))
    assert node is not None
    return znodes.decode_config(node.path, node.data)


def test_create_grow_configure_and_raise_the_replication_factor(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    for broker in (0, 1, 2):
        cluster.start_broker(broker, rack=f"rack-{broker}")
    cluster.start_controller()
    spec = {"partitions": 3, "replicas": 2, "config": {"retention.ms": 60000}}
    step = reconcile_topic(cluster.backend, "orders", spec)
    assert isinstance(step.plan.actions[0], CreateTopic)
    cluster.wait_online("orders", 3)
    assert config(cluster, "orders") == {"retention.ms": "60000"}
    again = reconcile_topic(cluster.backend, "orders", spec, managed_topic="orders")
    assert again.plan.actions == ()

    grown = {**spec, "partitions": 5, "config": {"retention.ms": 1000, "cleanup.policy": "compact"}}
    reconcile_topic(cluster.backend, "orders", grown, managed_topic="orders")
    cluster.wait_online("orders", 5)
    assert config(cluster, "orders") == {"retention.ms": "1000", "cleanup.policy": "compact"}
    changes = cluster.zk.children(znodes.CONFIG_CHANGES_PATH) or []
    assert changes and all(c.startswith(znodes.CONFIG_CHANGE_PREFIX) for c in changes)

    raised = {**grown, "replicas": 3}
    # The reassignment names the replicas it was planned from (a KRaft backend refuses it if
    # they changed meanwhile).
    read = assignment(cluster, "orders")
    sent = cluster.backend.reassign
    seen: list[object] = []

    def reassign(targets: Any, expected: Any = None) -> None:
        seen.append(expected)
        sent(targets, expected=expected)

    monkeypatch.setattr(cluster.backend, "reassign", reassign)
    reconcile_topic(cluster.backend, "orders", raised, managed_topic="orders")
    assert seen == [{TopicPartition("orders", p): list(r) for p, r in read.items()}]
    eventually(
        lambda: (
            all(len(r) == 3 for r in assignment(cluster, "orders").values())
            and not cluster.zk.exists(znodes.REASSIGN_PARTITIONS_PATH)
        ),
        "the replication factor raised by a reassignment",
    )
    for p in range(5):
        cluster.wait_state(TopicPartition("orders", p), lambda lai: len(lai.isr) == 3)
    settled = reconcile_topic(cluster.backend, "orders", raised, managed_topic="orders")
    assert settled.plan.actions == ()
    # Another resource naming the same existing topic with another spec adopts nothing.
    other = reconcile_topic(cluster.backend, "orders", {"partitions": 7, "replicas": 3})
    assert other.plan.blocked == (
        Reason.CONFLICT,
        "Topic 'orders' already exists and differs from this spec: partitions 5 (spec: 7); "
        "config cleanup.policy=compact (spec: (default)); config retention.ms=1000 (spec: "
        "(default)). Change the spec to match to adopt it.",
    )
    assert reconcile_topic(cluster.backend, "orders", raised).plan == Plan()  # matches: adopted


def test_refusals_write_nothing(cluster: Cluster) -> None:
    cluster.start_broker(0)
    cluster.start_controller()
    before = cluster.zk.children(znodes.TOPICS_PATH) or []
    invalid = reconcile_topic(cluster.backend, "bad", {"partitions": 1, "replicas": 1,
                                                  "config": {"retention.mss": 1}})  # fmt: skip
    assert invalid.plan.blocked == (
        Reason.INVALID_SPEC,
        "spec.config: Unknown topic config name: retention.mss (did you mean retention.ms?)",
    )
    too_many = reconcile_topic(cluster.backend, "wide", {"partitions": 1, "replicas": 3})
    assert too_many.plan.blocked == (
        Reason.BROKERS_UNAVAILABLE,
        "Replication factor: 3 larger than available brokers: 1.",
    )
    assert (cluster.zk.children(znodes.TOPICS_PATH) or []) == before
    assert not cluster.zk.exists(znodes.topic_config_path("bad"))
    assert not cluster.zk.exists(znodes.topic_config_path("wide"))


def test_no_invalid_spec_of_the_corpus_writes_anything(cluster: Cluster) -> None:
    cluster.start_broker(0)
    for path in znodes.PERSISTENT_ZK_PATHS:
        cluster.zk.ensure_path(path)
    for name, spec, message in INVALID:
        step = reconcile_topic(cluster.backend, name, spec)
        assert step.plan.blocked is not None and step.plan.blocked[0] is Reason.INVALID_SPEC
        assert message in step.plan.blocked[1]
    assert len(INVALID) >= 90
    assert not cluster.zk.children(znodes.TOPICS_PATH)
    assert not cluster.zk.children(znodes.config_entity_type_path(znodes.ConfigType.TOPIC))
