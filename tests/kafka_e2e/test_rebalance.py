"""A KafkaRebalance draining a broker of a real Kafka 3.9 cluster: planned by the local engine
(exactly, without starting Spark), approved, and carried out by Kafka's own controller from the
operator's reassignments, with replication throttles set while data moves and removed
afterwards. A cluster of its own, since every replica leaves broker 2."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka_client import describe_configs, metadata
from kto_testing import eventually

from kafka_topic_operator.zk import admin, znodes
from kto_dev.apache_kafka.cluster import KafkaCluster

from .conftest import GROUP, REBALANCES, VERSION, Operator, operating
from .test_topics import status_partitions

pytestmark = [pytest.mark.kafka, pytest.mark.e2e]

TOPICS = ("drain-orders", "drain-payments", "drain-audit")
THROTTLES = {
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
}


@pytest.fixture
def operator(
    fresh_kafka_cluster: Callable[..., KafkaCluster], tmp_path: Path
) -> Iterator[Operator]:
    with operating(fresh_kafka_cluster(), tmp_path / "operator") as op:
        yield op


def state_of(operator: Operator, name: str) -> str | None:
    for c in ((operator.get(name, REBALANCES) or {}).get("status") or {}).get("conditions") or []:
        if c["status"] == "True":
            return str(c["type"])
    return None


def wait_state(operator: Operator, name: str, state: str, timeout: float) -> dict[str, Any]:
    eventually(lambda: state_of(operator, name) == state, f"{name} {state}", timeout)
    found = operator.get(name, REBALANCES)
    assert found is not None
    return found


def throttles_processed(cluster: KafkaCluster) -> list[str]:
    """The throttle overrides each broker's config manager took up, from the brokers' logs."""
    lines = []
    for broker in cluster.brokers.values():
        for line in broker.spec.log_file.read_text(errors="replace").splitlines():
            if "Processing override for entityPath" in line and "throttled" in line:
                lines.append(line)
    return lines


def test_a_broker_drained_by_kafkas_controller(operator: Operator) -> None:
    cluster = operator.cluster
    for topic in TOPICS:
        operator.apply(topic, partitions=6, replicas=2)
    before = {}
    for topic in TOPICS:
        operator.ready(topic)
        before[topic] = eventually(lambda t=topic: metadata(cluster, t), f"{topic} in metadata")
    assert any(2 in p.replicas for m in before.values() for p in m.values())

    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KafkaRebalance",
            "metadata": {"name": "drain-2"},
            "spec": {"mode": "remove-brokers", "brokers": [2], "replicationThrottle": 10000000,
                     "concurrentPartitionMovementsPerBroker": 3}}  # fmt: skip
    operator.api.create_namespaced_custom_object(GROUP, VERSION, "default", REBALANCES, body)
    proposal = wait_state(operator, "drain-2", "ProposalReady", timeout=180)
    result = proposal["status"]["optimizationResult"]
    moving = sum(1 for m in before.values() for p in m.values() if 2 in p.replicas)
    assert result["replicaMoves"] == result["drainReplicaMoves"] == moving
    ready = [c for c in proposal["status"]["conditions"] if c["type"] == "ProposalReady"]
    assert f"({moving} off the brokers being removed, 0 to balance)" in ready[0]["message"]
    assert {b["broker"]: b["replicasAfter"] for b in result["brokers"]}[2] == 0

    patch = {"metadata": {"annotations": {"kto.dev/rebalance": "approve"}}}
    operator.api.patch_namespaced_custom_object(GROUP, VERSION, "default", REBALANCES,
                                                "drain-2", patch)  # fmt: skip
    wait_state(operator, "drain-2", "Ready", timeout=180)

    # What clients see: nothing on broker 2, every replica in sync (once the brokers have the
    # controller's last UpdateMetadata, which follows the reassignment's end).
    for topic in TOPICS:
        seen = eventually(
            lambda t=topic: (m := metadata(cluster, t)) and all(
                p.isr == tuple(sorted(p.replicas)) for p in m.values()) and m,
            f"{topic}'s replicas in sync as the brokers report them",
        )  # fmt: skip
        assert len(seen) == 6
        for p in seen.values():
            assert 2 not in p.replicas and len(p.replicas) == 2 and p.leader in p.replicas
    # Kafka removed the reassignment znode when done.
    assert not operator.zookeeper.exists(znodes.REASSIGN_PARTITIONS_PATH)
    # The throttles were set while the data moved, and are gone: from ZooKeeper, from what
    # DescribeConfigs answers, and from the brokers (their config managers took both changes).
    assert throttles_processed(cluster)
    for topic in TOPICS:
        assert not THROTTLES & set(admin.topic_config(operator.zookeeper, topic))
        assert not THROTTLES & set(describe_configs(cluster, "topic", topic))
    for broker in cluster.brokers:
        assert not THROTTLES & set(admin.broker_config(operator.zookeeper, broker))
        assert not THROTTLES & set(describe_configs(cluster, "broker", str(broker)))
    # And the KafkaTopics' status follows what Kafka's controller did.
    for topic in TOPICS:

        def drained(t: str = topic) -> bool:
            obj = operator.get(t) or {}
            rows = (obj.get("status") or {}).get("partitions") or []
            return len(rows) == 6 and all(
                2 not in [r["broker"] for r in row["replicas"]] for row in rows
            )

        eventually(drained, f"{topic}'s status without broker 2")
        operator.ready(topic)

        def agree(t: str = topic) -> bool:
            shown = metadata(cluster, t) or {}
            obj = operator.get(t) or {}
            return status_partitions(obj) == {p: (s.leader, s.isr) for p, s in shown.items()}

        eventually(agree, f"{topic}'s status to match what the brokers report")
