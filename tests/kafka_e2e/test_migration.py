"""KafkaTopics through a migration from ZooKeeper to KRaft, as the README's migration guide does
it: the operator manages topics on a ZooKeeper-mode Kafka 3.9 cluster, is stopped, the cluster
is migrated the way Kafka's guide says (`kto_dev.apache_kafka.migration`), ZooKeeper is stopped
for good, and the operator starts again on the Admin API (`--bootstrap-servers` instead of
`--zookeeper`) over the same resources. Every KafkaTopic is Ready again with the same topic id
(nothing recreated), the messages produced before are all there, and a change applied afterwards
takes effect."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka_client import consume_all, describe_configs, describe_topic, metadata, produce
from kto_testing import eventually

from kto_dev.apache_kafka.cluster import KafkaCluster
from kto_dev.apache_kafka.migration import ZkToKRaftMigration
from kto_dev.zookeeper_server import ZooKeeperServer

from .conftest import operating

pytestmark = [pytest.mark.kafka, pytest.mark.e2e]

RESOURCES: dict[str, dict[str, Any]] = {
    "orders": {"partitions": 6, "replicas": 3, "config": {"retention.ms": 86400000}},
    "payments": {"replicaAssignment": [[0, 1], [1, 2], [2, 0]],
                 "config": {"max.message.bytes": 2097152}},
    "audit": {"partitions": 2, "replicas": 2, "config": {"cleanup.policy": "compact"}},
}  # fmt: skip
MESSAGES = 300


@pytest.fixture
def zookeeper_mode(tmp_path: Path) -> Iterator[tuple[ZooKeeperServer, KafkaCluster]]:
    """Kafka 3.9 brokers on a ZooKeeper of their own (the test stops it for good)."""
    zookeeper = ZooKeeperServer(tmp_path / "zookeeper")
    zookeeper.start()
    cluster = KafkaCluster(f"{zookeeper.connect_string}/kafka", tmp_path / "kafka")
    try:
        cluster.start()
        yield zookeeper, cluster
    finally:
        cluster.kill()
        zookeeper.stop()


def dynamic(cluster: Any, topic: str) -> dict[str, str]:
    configs = describe_configs(cluster, "topic", topic)
    return {k: v for k, (v, source) in configs.items() if source == "DYNAMIC_TOPIC_CONFIG"}


def replicas(status: dict[str, Any]) -> dict[int, list[int]]:
    return {p["partition"]: [r["broker"] for r in p["replicas"]] for p in status["partitions"]}


def test_kafkatopics_stay_ready_through_a_migration_to_kraft(
    zookeeper_mode: tuple[ZooKeeperServer, KafkaCluster], tmp_path: Path
) -> None:
    zookeeper, cluster = zookeeper_mode
    migration = ZkToKRaftMigration(cluster)
    try:
        with operating(cluster, tmp_path / "operator") as operator:
            # On ZooKeeper: the operator creates the topics; messages go to one of them.
            for name, spec in RESOURCES.items():
                operator.apply(name, **spec)
            before = {name: operator.ready(name) for name in RESOURCES}
            ids = {n: obj["status"]["topicId"] for n, obj in before.items()}
            for name in RESOURCES:
                described = eventually(lambda n=name: describe_topic(cluster, n), f"{name} known")
                assert described[0] == ids[name]
            produce(cluster, "orders", MESSAGES)
            configs = {name: dynamic(cluster, name) for name in RESOURCES}
            assert configs["payments"] == {"max.message.bytes": "2097152"}

            # The guide: stop the operator, migrate, stop ZooKeeper for good.
            operator.stop()
            timings = migration.migrate()
            print("migration timings (s):", timings)
            zookeeper.stop()

            # The operator on the Admin API, over the same resources.
            operator.migrated_to = migration.bootstrap
            operator.start()
            for name in RESOURCES:
                obj = operator.ready(name)
                status = obj["status"]
                assert status["topicId"] == ids[name]  # the same topic: nothing recreated
                assert status["partitionCounts"]["offline"] == 0
                assert replicas(status) == replicas(before[name]["status"])  # not moved
                found = describe_topic(migration, name)
                assert found is not None and found[0] == ids[name]
                assert dynamic(migration, name) == configs[name]
            values = consume_all(migration, "orders", 6)
            assert sorted(values) == sorted(f"value-{i}" for i in range(MESSAGES))

            # A change after the migration takes effect, through the Admin API.
            operator.patch("orders", {"partitions": 8, "config": {"retention.ms": 43200000}})
            operator.ready("orders")
            grown = eventually(
                lambda: (m := metadata(migration, "orders")) and len(m) == 8 and m,
                "8 partitions in metadata",
            )
            assert all(len(p.replicas) == 3 for p in grown.values())
            # The new partitions are led by their preferred replicas (the old ones' leaders may
            # have moved in the brokers' rolling restarts).
            assert all(grown[p].leader == grown[p].replicas[0] for p in (6, 7))
            assert dynamic(migration, "orders") == {"retention.ms": "43200000"}
            # And a deletion: the finalizer sees Kafka report the topic gone.
            operator.delete("audit")
            operator.gone("audit")
            assert describe_topic(migration, "audit") is None
    finally:
        migration.kill()
