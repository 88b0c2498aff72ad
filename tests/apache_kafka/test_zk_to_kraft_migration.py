"""A ZooKeeper-mode Kafka 3.9 cluster migrated to KRaft the way Kafka 3.9's operations guide does
it ("ZooKeeper to KRaft Migration"), step by step, with topics and messages on it: the topics keep
their ids, assignments and configs through every step, the messages are all there afterwards,
and the cluster takes new topics and config changes with ZooKeeper gone.

The configuration each node gets at each step is checked first, without Java; the migration
itself runs once for the module (about a minute on two cores)."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from kto_testing import eventually

from kafka_topic_operator.zk.client import ZkClient
from kto_dev.apache_kafka.broker import BrokerSpec, KafkaBrokerError, render_properties
from kto_dev.apache_kafka.cluster import KafkaCluster
from kto_dev.apache_kafka.migration import (
    MigrationState,
    ZkToKRaftMigration,
    format_controller,
    fully_replicated,
    read_cluster_id,
)
from kto_dev.apache_kafka.migration_config import (
    FIRST_CONTROLLER_ID,
    MIGRATION_IBP,
    ControllerSpec,
    controller_properties,
    kraft_broker_properties,
    migrating_broker_overrides,
)
from kto_dev.zookeeper_server import ZooKeeperServer

# Explicit assignments over brokers 0, 1, 2, and a dynamic config on each topic.
TOPICS: dict[str, tuple[list[list[int]], dict[str, str]]] = {
    "orders": ([[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1]],
               {"retention.ms": "86400000", "min.insync.replicas": "2"}),
    "payments": ([[1, 2], [2, 0], [0, 1]],
                 {"retention.ms": "3600000", "max.message.bytes": "2097152"}),
    "audit": ([[2, 0, 1]], {"cleanup.policy": "compact", "segment.ms": "600000"}),
}  # fmt: skip
# A config changed after the topic was created (a /config/changes notification in ZooKeeper).
ALTERED = ("orders", "retention.ms", "172800000")
MESSAGES = 600
GROUP = "before-migration"
STEPS = (
    "provision_controllers",
    "enter_migration_mode",
    "wait_for_metadata_migration",
    "migrate_brokers_to_kraft",
    "finalize",
)

Snapshot = dict[str, tuple[str, list[tuple[int, list[int]]]]]
Record = tuple[str, bytes, bytes]


def expected_configs() -> dict[str, dict[str, str]]:
    configs = {name: dict(config) for name, (_, config) in TOPICS.items()}
    topic, key, value = ALTERED
    configs[topic][key] = value
    return configs


# ---- each node's configuration at each step (no Java) ----------------------------------------


def broker_spec(tmp_path: Path, **fields: Any) -> BrokerSpec:
    return BrokerSpec(broker_id=1, zookeeper="127.0.0.1:2181/kafka", directory=tmp_path / "b1",
                      port=9092, rack="b", **fields)  # fmt: skip


def test_a_controller_ready_for_migration_is_the_guides_sample(tmp_path: Path) -> None:
    spec = ControllerSpec(node_id=3000, directory=tmp_path, port=9093, quorum="127.0.0.1:9093",
                          zookeeper="127.0.0.1:2181/kafka")  # fmt: skip
    properties = controller_properties(spec)
    assert properties["process.roles"] == "controller"
    assert properties["node.id"] == "3000"
    assert properties["controller.quorum.bootstrap.servers"] == "127.0.0.1:9093"
    assert properties["controller.listener.names"] == "CONTROLLER"
    assert properties["listeners"] == "CONTROLLER://127.0.0.1:9093"
    assert properties["zookeeper.metadata.migration.enable"] == "true"
    assert properties["zookeeper.connect"] == "127.0.0.1:2181/kafka"  # the brokers' chroot
    assert properties["inter.broker.listener.name"] == "PLAINTEXT"

    # Finalized: "removing the zookeeper.metadata.migration.enable property" and ZooKeeper's.
    finalized = controller_properties(ControllerSpec(3000, tmp_path, 9093, "127.0.0.1:9093", None))
    assert not {k for k in finalized if k.startswith("zookeeper.")}
    assert finalized["process.roles"] == "controller"


@pytest.mark.kafka
def test_a_controller_is_formatted_with_a_cluster_id_that_starts_with_a_dash(
    tmp_path: Path,
) -> None:
    # A ZooKeeper-mode broker draws its cluster id as plain base64url, so one id in 64 starts
    # with "-" (a CI run's did): `kafka-storage format -t -6hI...` took it for a flag.
    cluster_id = "-6hI5aKWQq-vYqQYeBiAQw"
    spec = ControllerSpec(node_id=3000, directory=tmp_path, port=9093, quorum="127.0.0.1:9093",
                          zookeeper="127.0.0.1:2181/kafka")  # fmt: skip
    spec.properties_file.write_text(render_properties(controller_properties(spec)))
    format_controller(spec, cluster_id)
    meta = (spec.log_dir / "meta.properties").read_text()
    assert f"cluster.id={cluster_id}" in meta.splitlines()


def test_a_broker_enters_migration_mode_with_the_guides_settings() -> None:
    overrides = migrating_broker_overrides("127.0.0.1:9093")
    assert overrides == {
        "inter.broker.protocol.version": MIGRATION_IBP,
        "zookeeper.metadata.migration.enable": "true",
        "controller.quorum.bootstrap.servers": "127.0.0.1:9093",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    }
    assert MIGRATION_IBP == "3.9"


def test_a_kraft_broker_keeps_its_id_listener_and_data_without_zookeeper(tmp_path: Path) -> None:
    migrating = broker_spec(tmp_path, overrides={
        "num.io.threads": "2", **migrating_broker_overrides("127.0.0.1:9093")})  # fmt: skip
    properties = kraft_broker_properties(migrating, "127.0.0.1:9093")
    assert properties["process.roles"] == "broker"
    assert properties["node.id"] == "1"
    assert properties["listeners"] == "PLAINTEXT://127.0.0.1:9092"
    assert properties["log.dirs"] == str(migrating.log_dir)
    assert properties["broker.rack"] == "b"
    assert properties["controller.quorum.bootstrap.servers"] == "127.0.0.1:9093"
    assert properties["num.io.threads"] == "2"  # the cluster's own overrides stay
    for gone in (
        "broker.id",
        "inter.broker.protocol.version",
        "zookeeper.connect",
        "zookeeper.metadata.migration.enable",
        "zookeeper.session.timeout.ms",
    ):
        assert gone not in properties  # fmt: skip


def test_the_migration_znode_says_when_the_metadata_is_copied() -> None:
    before = MigrationState.parse(b'{"version":0,"kraft_controller_id":3000,'
                                  b'"kraft_controller_epoch":1,"kraft_metadata_offset":-1,'
                                  b'"kraft_metadata_epoch":-1}')  # fmt: skip
    assert not before.metadata_migrated
    after = MigrationState.parse(b'{"version":0,"kraft_controller_id":3000,'
                                 b'"kraft_controller_epoch":1,"kraft_metadata_offset":52,'
                                 b'"kraft_metadata_epoch":1}')  # fmt: skip
    assert after.metadata_migrated and after.kraft_controller_id == 3000


@pytest.mark.zookeeper
def test_no_cluster_id_in_zookeeper_is_one_line(zk_chroot: str) -> None:
    with pytest.raises(KafkaBrokerError, match=r"^no /cluster/id in .*: no broker has started"):
        read_cluster_id(zk_chroot)


def test_steps_out_of_order_are_refused(tmp_path: Path) -> None:
    migration = ZkToKRaftMigration(KafkaCluster("127.0.0.1:1/kafka", tmp_path))
    with pytest.raises(KafkaBrokerError, match=r"^the metadata migration has not completed"):
        migration.migrate_brokers_to_kraft()
    with pytest.raises(KafkaBrokerError, match=r"^brokers still in ZooKeeper mode"):
        migration.finalize()
    with pytest.raises(KafkaBrokerError, match=r"^ZooKeeper at 127\.0\.0\.1:1/kafka is not"):
        migration.read_cluster_id()


@pytest.mark.kafka
def test_a_controller_that_kafka_refuses_fails_with_kafkas_reason(tmp_path: Path) -> None:
    cluster = KafkaCluster("127.0.0.1:1/kafka", tmp_path)
    migration = ZkToKRaftMigration(cluster, controller_overrides={"num.io.threads": "many"})
    migration.cluster_id = "MkU3OEVBNTcwNTJENDM2Qk"
    with pytest.raises(KafkaBrokerError, match=r"^controller 3000: formatting .* failed: "
                       r"org\.apache\.kafka\.common\.config\.ConfigException: Invalid value many "
                       r"for configuration num\.io\.threads"):  # fmt: skip
        migration.provision_controllers()
    assert not any(c.running for c in migration.controllers.values())


# ---- the migration of a real cluster ---------------------------------------------------------


@dataclass
class Migrated:
    migration: ZkToKRaftMigration
    zookeeper: ZooKeeperServer
    cluster_id_before: str
    produced: Counter[Record]
    committed: dict[tuple[str, int], int]
    before: Snapshot
    after_step: dict[str, Snapshot] = field(default_factory=dict)
    controller_znode: dict[str, Any] = field(default_factory=dict)


def admin_client(bootstrap: str) -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})


def snapshot(bootstrap: str) -> Snapshot:
    """Each topic's id and partitions (id, replicas), as describe_topics reports them."""
    from confluent_kafka import TopicCollection

    admin = admin_client(bootstrap)  # referenced until the futures are done
    described = admin.describe_topics(TopicCollection(sorted(TOPICS)))
    result: Snapshot = {}
    for name, future in described.items():
        topic = future.result(timeout=30)
        partitions = [(p.id, [r.id for r in p.replicas]) for p in topic.partitions]
        result[name] = (str(topic.topic_id), sorted(partitions))
    return result


def described_configs(bootstrap: str) -> dict[str, dict[str, str]]:
    """Each topic's dynamic (topic-level) configs."""
    from confluent_kafka.admin import ConfigResource, ConfigSource

    admin = admin_client(bootstrap)
    resources = [ConfigResource("topic", name) for name in TOPICS]
    found = {}
    for resource, future in admin.describe_configs(resources).items():
        entries = future.result(timeout=30).values()
        found[resource.name] = {
            e.name: e.value for e in entries
            if e.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
        }  # fmt: skip
    return found


def create_topics(bootstrap: str) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

    admin = admin_client(bootstrap)
    created = admin.create_topics(
        [NewTopic(name, num_partitions=len(assignment), replica_assignment=assignment,
                  config=config)
         for name, (assignment, config) in TOPICS.items()]
    )  # fmt: skip
    for future in created.values():
        future.result(timeout=30)
    topic, key, value = ALTERED
    resource = ConfigResource("topic", topic, incremental_configs=[
        ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET)])  # fmt: skip
    admin.incremental_alter_configs([resource])[resource].result(timeout=30)


def produce(bootstrap: str) -> Counter[Record]:
    """MESSAGES keyed messages over the topics, every one acknowledged by all in-sync replicas."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                         "enable.idempotence": True, "log_level": 0})  # fmt: skip
    names = sorted(TOPICS)
    sent: Counter[Record] = Counter()
    failed: list[Any] = []

    def delivered(error: Any, message: Any) -> None:
        if error is not None:
            failed.append(error)
        else:
            sent[(message.topic(), message.key(), message.value())] += 1

    for i in range(MESSAGES):
        topic = names[i % len(names)]
        producer.produce(topic, key=f"key-{i}".encode(), value=f"value-{i}".encode(),
                         on_delivery=delivered)  # fmt: skip
        producer.poll(0)
    assert producer.flush(60) == 0
    assert not failed
    assert sum(sent.values()) == MESSAGES
    return sent


def consume_all(bootstrap: str) -> Counter[Record]:
    """Every message in the topics, read from the start of each partition to its end."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4()}",
                         "enable.auto.commit": False, "log_level": 0})  # fmt: skip
    try:
        partitions = [TopicPartition(name, p, OFFSET_BEGINNING)
                      for name, (assignment, _) in TOPICS.items()
                      for p in range(len(assignment))]  # fmt: skip
        ends = {(tp.topic, tp.partition): consumer.get_watermark_offsets(tp, timeout=30)[1]
                for tp in partitions}  # fmt: skip
        consumer.assign(partitions)
        read: Counter[Record] = Counter()
        positions = {key: 0 for key in ends}
        deadline = time.monotonic() + 60
        while any(positions[key] < end for key, end in ends.items()):
            assert time.monotonic() < deadline, f"read {sum(read.values())} of {ends}"
            message = consumer.poll(1.0)
            if message is None:
                continue
            assert message.error() is None, message.error()
            read[(message.topic(), message.key(), message.value())] += 1
            positions[(message.topic(), message.partition())] = message.offset() + 1
        return read
    finally:
        consumer.close()


def commit_group_offsets(bootstrap: str) -> dict[tuple[str, int], int]:
    """GROUP's committed offset on every partition: half of what it holds (in __consumer_offsets,
    a topic like any other for the migration)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "log_level": 0})
    try:
        offsets = {}
        for name, (assignment, _) in TOPICS.items():
            for p in range(len(assignment)):
                end = consumer.get_watermark_offsets(TopicPartition(name, p), timeout=30)[1]
                offsets[(name, p)] = end // 2
        consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()],
                        asynchronous=False)  # fmt: skip
        return offsets
    finally:
        consumer.close()


def committed_offsets(bootstrap: str) -> dict[tuple[str, int], int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "log_level": 0})
    try:
        partitions = [TopicPartition(name, p) for name, (assignment, _) in TOPICS.items()
                      for p in range(len(assignment))]  # fmt: skip
        return {(tp.topic, tp.partition): tp.offset
                for tp in consumer.committed(partitions, timeout=30)}  # fmt: skip
    finally:
        consumer.close()


def wait_replicated(bootstrap: str) -> None:
    eventually(lambda: fully_replicated(bootstrap, {0, 1, 2}) is None, "topics in sync", 60)


def controller_znode(zookeeper: str) -> dict[str, Any]:
    zk = ZkClient(zookeeper)
    zk.start()
    try:
        node = zk.get("/controller")
        return {} if node is None else dict(json.loads(node.data))
    finally:
        zk.stop()


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Migrated]:
    """Three ZooKeeper-mode brokers on a ZooKeeper of their own, with topics and messages,
    migrated step by step to KRaft (a snapshot of the topics after each step); then ZooKeeper
    is stopped."""
    directory = tmp_path_factory.mktemp("migration")
    zookeeper = ZooKeeperServer(directory / "zookeeper")
    zookeeper.start()
    cluster = KafkaCluster(f"{zookeeper.connect_string}/kafka", directory / "kafka")
    migration = None
    try:
        cluster.start()
        bootstrap = cluster.bootstrap
        create_topics(bootstrap)
        wait_replicated(bootstrap)
        produced = produce(bootstrap)
        committed = commit_group_offsets(bootstrap)
        migration = ZkToKRaftMigration(cluster)
        state = Migrated(migration, zookeeper, migration.read_cluster_id(), produced, committed,
                         snapshot(bootstrap))  # fmt: skip
        started = time.monotonic()
        migration.check_prepared()
        for step in STEPS:
            getattr(migration, step)()
            if step == "wait_for_metadata_migration":
                state.controller_znode = controller_znode(cluster.zookeeper)
            state.after_step[step] = snapshot(bootstrap)
        migration.timings["total"] = time.monotonic() - started
        zookeeper.stop()
        yield state
    finally:
        if migration is not None:
            migration.kill()
        cluster.kill()
        zookeeper.stop()


@pytest.mark.kafka
def test_every_step_keeps_the_topics_ids_and_partitions(migrated: Migrated) -> None:
    assert set(migrated.before) == set(TOPICS)
    assert list(migrated.after_step) == list(STEPS)
    for step, topics in migrated.after_step.items():
        assert topics == migrated.before, f"after {step}"


@pytest.mark.kafka
def test_the_kraft_controller_took_over_with_the_same_cluster_id(migrated: Migrated) -> None:
    migration = migrated.migration
    assert migration.cluster_id == migrated.cluster_id_before
    for spec in migration.controller_specs.values():
        assert spec.node_id >= FIRST_CONTROLLER_ID
        meta = (spec.log_dir / "meta.properties").read_text()
        assert f"cluster.id={migrated.cluster_id_before}" in meta
    # During the migration the active KRaft controller held /controller, as a ZK controller does.
    assert migrated.controller_znode["brokerid"] == FIRST_CONTROLLER_ID
    assert "kraftControllerEpoch" in migrated.controller_znode
    state = migration.migration_state
    assert state is not None and state.metadata_migrated
    assert state.kraft_controller_id == FIRST_CONTROLLER_ID
    # Everything runs in KRaft mode now, and nothing knows ZooKeeper any more.
    assert all(node.running for node in migration.kraft_brokers.values())
    assert not any(broker.running for broker in migration.cluster.brokers.values())
    for spec in migration.zk_specs.values():
        assert "zookeeper" not in spec.properties_file.read_text()
    for spec in migration.controller_specs.values():
        assert "zookeeper" not in spec.properties_file.read_text()


@pytest.mark.kafka
def test_without_zookeeper_topics_keep_ids_assignments_and_configs(migrated: Migrated) -> None:
    assert not migrated.zookeeper.is_serving()
    bootstrap = migrated.migration.bootstrap
    after = snapshot(bootstrap)
    assert after == migrated.before
    for name, (assignment, _) in TOPICS.items():
        assert [replicas for _, replicas in after[name][1]] == assignment
    assert described_configs(bootstrap) == expected_configs()
    metadata = admin_client(bootstrap).list_topics(timeout=30)
    assert metadata.cluster_id == migrated.cluster_id_before
    assert sorted(metadata.brokers) == [0, 1, 2]


@pytest.mark.kafka
def test_the_messages_produced_before_are_all_read_back(migrated: Migrated) -> None:
    assert not migrated.zookeeper.is_serving()
    read = consume_all(migrated.migration.bootstrap)
    assert sum(read.values()) == MESSAGES
    assert read == migrated.produced
    # The group's offsets committed before the migration are still its offsets.
    assert committed_offsets(migrated.migration.bootstrap) == migrated.committed


@pytest.mark.kafka
def test_topics_are_created_and_configured_through_kraft(migrated: Migrated) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

    assert not migrated.zookeeper.is_serving()
    bootstrap = migrated.migration.bootstrap
    admin = admin_client(bootstrap)
    name = f"after-{uuid.uuid4().hex[:6]}"
    assignment = [[2, 1, 0], [0, 2, 1]]
    admin.create_topics([NewTopic(name, num_partitions=2, replica_assignment=assignment,
                                  config={"retention.ms": "1000000"})]
                        )[name].result(timeout=30)  # fmt: skip
    resource = ConfigResource("topic", name, incremental_configs=[
        ConfigEntry("retention.ms", "2000000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.SET),
    ])  # fmt: skip
    admin.incremental_alter_configs([resource])[resource].result(timeout=30)

    def configured() -> dict[str, str] | None:
        entries = admin.describe_configs([ConfigResource("topic", name)])
        values = {e.name: e.value for e in next(iter(entries.values())).result(30).values()}
        wanted = {"retention.ms": "2000000", "cleanup.policy": "compact"}
        return values if all(values.get(k) == v for k, v in wanted.items()) else None

    eventually(configured, f"{name}'s new configs")
    replicas = eventually(
        lambda: [list(p.replicas) for _, p in sorted(
            admin.list_topics(name, timeout=10).topics[name].partitions.items())] or None,
        f"{name}'s partitions",
    )  # fmt: skip
    assert replicas == assignment


@pytest.mark.kafka
def test_how_long_the_migration_took(
    migrated: Migrated, capsys: pytest.CaptureFixture[str]
) -> None:
    timings = migrated.migration.timings
    assert set(timings) == {"provision controllers", "enter migration mode",
                            "wait for metadata migration", "migrate brokers to KRaft",
                            "finalize", "total"}  # fmt: skip
    with capsys.disabled():
        report = ", ".join(f"{step} {seconds:.1f} s" for step, seconds in timings.items())
        print(f"\nZooKeeper to KRaft migration of 3 brokers: {report}")
    assert timings["total"] < 240
