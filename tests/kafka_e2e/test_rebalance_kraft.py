"""A KafkaRebalance draining a broker of a real KRaft cluster (Kafka 4.x), as
test_rebalance.py drains one in ZooKeeper mode: planned by the local engine, approved, and
carried out by Kafka's controller from the reassignments the operator submits through the Admin
API, with replication throttles set while data moves (data in the topics, a low throttle) and
removed afterwards. A cluster of its own, since every replica leaves broker 2."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka_client import describe_configs, metadata, reassigning
from kto_testing import eventually

from kto_dev.apache_kafka.kraft import KRaftCluster

from .conftest import GROUP, REBALANCES, VERSION, Operator, operating
from .test_topics import status_partitions

pytestmark = [pytest.mark.kafka, pytest.mark.e2e]

TOPICS = ("drain-orders", "drain-payments", "drain-audit")
REPLICA_THROTTLES = ("leader.replication.throttled.replicas",
                     "follower.replication.throttled.replicas")  # fmt: skip
RATE_THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
THROTTLES = {*REPLICA_THROTTLES, *RATE_THROTTLES}
# About 3 MB leave broker 2, throttled to RATE bytes a second into each of brokers 0 and 1 (the
# quota measures over ten seconds, so little of it is held back: the move takes seconds).
RATE = 200_000
MESSAGES = 1500  # of 1 KB, per topic
TIMEOUT = 300.0


@pytest.fixture
def operator(tmp_path: Path) -> Iterator[Operator]:
    cluster = KRaftCluster(tmp_path / "kraft")
    cluster.start()
    try:
        with operating(cluster, tmp_path / "operator") as op:
            yield op
    finally:
        cluster.kill()


def state_of(operator: Operator, name: str) -> tuple[str, str] | None:
    for c in ((operator.get(name, REBALANCES) or {}).get("status") or {}).get("conditions") or []:
        if c["status"] == "True":
            return str(c["type"]), str(c["reason"])
    return None


def wait_state(operator: Operator, name: str, state: str, timeout: float) -> dict[str, Any]:
    eventually(lambda: (state_of(operator, name) or ("",))[0] == state, f"{name} {state}", timeout)
    found = operator.get(name, REBALANCES)
    assert found is not None
    return found


def produce(cluster: KRaftCluster, topic: str, count: int) -> None:
    """`count` messages of 1 KB, spread over the partitions, each on every in-sync replica."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all",
                         "linger.ms": 20, "log_level": 0})  # fmt: skip
    for i in range(count):
        producer.produce(topic, b"x" * 1000, key=str(i).encode())
        producer.poll(0)
    assert producer.flush(60) == 0, "messages left undelivered"


def throttles(cluster: KRaftCluster, kind: str, name: str) -> dict[str, str]:
    """The throttle configs DescribeConfigs shows on a topic or broker."""
    return {k: v for k, (v, _source) in describe_configs(cluster, kind, name).items()
            if k in THROTTLES}  # fmt: skip


def test_a_broker_drained_by_the_kraft_controller(operator: Operator) -> None:
    cluster = operator.cluster
    assert isinstance(cluster, KRaftCluster)
    for topic in TOPICS:
        operator.apply(topic, partitions=6, replicas=2)
    before = {}
    for topic in TOPICS:
        operator.ready(topic)
        before[topic] = eventually(lambda t=topic: metadata(cluster, t), f"{topic} in metadata")
        produce(cluster, topic, MESSAGES)
    moving = sum(1 for m in before.values() for p in m.values() if 2 in p.replicas)
    assert moving

    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KafkaRebalance",
            "metadata": {"name": "drain-2"},
            "spec": {"mode": "remove-brokers", "brokers": [2], "replicationThrottle": RATE,
                     "concurrentPartitionMovementsPerBroker": 3}}  # fmt: skip
    operator.api.create_namespaced_custom_object(GROUP, VERSION, "default", REBALANCES, body)
    proposal = wait_state(operator, "drain-2", "ProposalReady", timeout=TIMEOUT)
    result = proposal["status"]["optimizationResult"]
    assert result["replicaMoves"] == result["drainReplicaMoves"] == moving
    assert {b["broker"]: b["replicasAfter"] for b in result["brokers"]}[2] == 0

    patch = {"metadata": {"annotations": {"kto.dev/rebalance": "approve"}}}
    operator.api.patch_namespaced_custom_object(GROUP, VERSION, "default", REBALANCES,
                                                "drain-2", patch)  # fmt: skip

    # While the data moves: Kafka's controller lists the reassignments, and DescribeConfigs
    # shows the throttles on the moving topics and on the brokers (all three send or receive).
    # Kafka lists a wave of reassignments for well under a second (a quota lets a burst of ten
    # seconds' worth through before it holds anything back), shorter than one look at six
    # configs: the throttles are looked for while any replica is still on broker 2, and Kafka is
    # asked for its reassignments before and after each look until it has listed some.
    rate = dict.fromkeys(RATE_THROTTLES, str(RATE))
    listed = False

    def throttled_move() -> dict[str, dict[str, str]] | None:
        nonlocal listed
        listed = listed or bool(reassigning(cluster))
        if not any(2 in p.replicas for t in TOPICS for p in (metadata(cluster, t) or {}).values()):
            return None
        on_topics = {t: throttles(cluster, "topic", t) for t in TOPICS}
        on_brokers = [throttles(cluster, "broker", str(b)) for b in (0, 1, 2)]
        listed = listed or bool(reassigning(cluster))
        if (
            listed
            and any(set(c) == set(REPLICA_THROTTLES) for c in on_topics.values())
            and all(c == rate for c in on_brokers)
        ):
            return on_topics
        return None

    during = eventually(throttled_move, "a move with its throttles", TIMEOUT)
    for topic, config in during.items():
        if config:
            # partition:broker entries: the replicas before the move lead, broker 2's
            # replacements follow.
            leaders = config["leader.replication.throttled.replicas"].split(",")
            followers = config["follower.replication.throttled.replicas"].split(",")
            assert any(e.endswith(":2") for e in leaders), (topic, config)
            assert not any(e.endswith(":2") for e in followers), (topic, config)

    wait_state(operator, "drain-2", "Ready", timeout=TIMEOUT)
    assert state_of(operator, "drain-2") == ("Ready", "RebalanceComplete")

    # What clients see: nothing on broker 2, every replica in sync, nothing moving.
    def drained_in_metadata() -> bool:
        for topic in TOPICS:
            seen = metadata(cluster, topic) or {}
            if len(seen) != 6 or any(
                2 in p.replicas or len(p.replicas) != 2 or p.isr != tuple(sorted(p.replicas))
                for p in seen.values()
            ):
                return False
        return True

    eventually(drained_in_metadata, "every partition off broker 2 and in sync")
    assert reassigning(cluster) == set()
    # The throttles are gone from every topic and broker, as DescribeConfigs answers.
    for topic in TOPICS:
        assert throttles(cluster, "topic", topic) == {}
    for broker in (0, 1, 2):
        assert throttles(cluster, "broker", str(broker)) == {}
    # And the KafkaTopics' status follows what Kafka's controller did.
    for topic in TOPICS:

        def drained(t: str = topic) -> bool:
            obj = operator.get(t) or {}
            rows = (obj.get("status") or {}).get("partitions") or []
            return len(rows) == 6 and all(
                2 not in [r["broker"] for r in row["replicas"]] for row in rows
            )

        eventually(drained, f"{topic}'s status without broker 2", TIMEOUT)
        obj = operator.ready(topic)
        shown = metadata(cluster, topic) or {}
        assert status_partitions(obj) == {p: (s.leader, s.isr) for p, s in shown.items()}
