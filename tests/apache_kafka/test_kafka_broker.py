"""The real-Kafka launcher: configuration, start-up failures as one line, and brokers that start,
shut down under control and crash as Kafka's do."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from kto_testing import Waiter

from kafka_topic_operator.zk.client import ZkClient
from kto_dev.apache_kafka import distribution
from kto_dev.apache_kafka.broker import (
    BrokerSpec,
    KafkaBroker,
    KafkaBrokerError,
    answers_metadata,
    server_properties,
    startup_failure,
)
from kto_dev.apache_kafka.cluster import KafkaCluster
from kto_dev.ports import free_port
from kto_dev.zookeeper_server import ZooKeeperServer


def spec(tmp_path: Path, zookeeper: str = "127.0.0.1:1/kafka", **fields: object) -> BrokerSpec:
    return BrokerSpec(broker_id=0, zookeeper=zookeeper, directory=tmp_path / "b0",
                      port=free_port(), **fields)  # type: ignore[arg-type]  # fmt: skip


def test_properties_are_kafkas_with_what_a_small_cluster_needs(tmp_path: Path) -> None:
    overrides = {"auto.leader.rebalance.enable": "false", "num.io.threads": "2"}
    s = spec(tmp_path, rack="a", internal_replication_factor=1, overrides=overrides)
    properties = server_properties(s)
    assert properties["broker.id"] == "0"
    assert properties["broker.rack"] == "a"
    assert properties["listeners"] == f"PLAINTEXT://127.0.0.1:{s.port}"
    assert properties["zookeeper.connect"] == "127.0.0.1:1/kafka"
    assert properties["delete.topic.enable"] == "true"
    assert properties["auto.create.topics.enable"] == "false"
    assert properties["offsets.topic.replication.factor"] == "1"
    assert properties["transaction.state.log.min.isr"] == "1"
    assert properties["auto.leader.rebalance.enable"] == "false"
    assert properties["num.io.threads"] == "2"  # an override wins
    assert "broker.rack" not in server_properties(spec(tmp_path))


def test_the_version_is_pinned_to_the_last_zookeeper_line() -> None:
    assert distribution.KAFKA_VERSION.startswith("3.9.")
    assert f"<version>{distribution.KAFKA_VERSION}</version>" in distribution.pom()


def test_missing_jars_say_how_to_get_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KTO_KAFKA_CACHE", str(tmp_path / "empty"))
    with pytest.raises(KafkaBrokerError, match=r"Kafka 3\.9\.\d+ jars not found in .*make setup"):
        KafkaBroker(spec(tmp_path)).start()


def test_missing_java_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    with pytest.raises(KafkaBrokerError, match=r"^Java not found: install Java 17"):
        KafkaBroker(spec(tmp_path)).start()


def test_a_taken_port_is_refused_before_java_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        s = BrokerSpec(0, "127.0.0.1:1/kafka", tmp_path / "b0", taken.getsockname()[1])
        taken_message = rf"^broker 0: port {s.port} on 127\.0\.0\.1 is taken$"
        with pytest.raises(KafkaBrokerError, match=taken_message):
            KafkaBroker(s).start()
    assert not (tmp_path / "b0" / "server.properties").exists()


def test_zookeeper_out_of_reach_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(KafkaBrokerError, match=r"^ZooKeeper at 127\.0\.0\.1:\d+ is not reachable$"):
        KafkaBroker(spec(tmp_path, zookeeper=f"127.0.0.1:{free_port()}/kafka")).start()


def test_the_first_error_kafka_logged_is_the_reason(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "[2026-11-25 03:00:00,000] INFO starting (kafka.server.KafkaServer)\n"
        "[2026-11-25 03:00:01,000] ERROR Fatal error during KafkaServer startup. Prepare to "
        "shutdown (kafka.server.KafkaServer)\n"
        "org.apache.kafka.common.config.ConfigException: Invalid value x for configuration "
        "num.io.threads\n\tat org.apache.kafka...\n"
    )
    assert startup_failure(log) == (
        "Fatal error during KafkaServer startup. Prepare to shutdown (kafka.server.KafkaServer): "
        "org.apache.kafka.common.config.ConfigException: Invalid value x for configuration "
        "num.io.threads"
    )


@pytest.mark.kafka
def test_a_broker_that_kafka_refuses_fails_with_kafkas_reason(
    zookeeper_server: ZooKeeperServer, tmp_path: Path
) -> None:
    s = spec(tmp_path, zookeeper=zookeeper_server.connect_string + "/bad",
             overrides={"num.io.threads": "many"})  # fmt: skip
    with pytest.raises(
        KafkaBrokerError, match=r"^broker 0 exited during start-up: .*num\.io\.threads"
    ):
        KafkaBroker(s).start()


@pytest.mark.kafka
def test_brokers_register_answer_metadata_and_stop_as_kafkas_do(
    fresh_kafka_cluster: Callable[..., KafkaCluster], zookeeper_server: ZooKeeperServer
) -> None:
    cluster = fresh_kafka_cluster(size=2)
    zk = ZkClient(cluster.zookeeper)
    zk.start()
    try:
        assert sorted(zk.children("/brokers/ids") or []) == ["0", "1"]
        node = zk.get("/brokers/ids/1")
        assert node is not None
        registration = json.loads(node.data)
        assert registration["rack"] == "b"
        port = cluster.brokers[1].spec.port
        assert registration["endpoints"] == [f"PLAINTEXT://127.0.0.1:{port}"]
        assert all(answers_metadata(b.spec) for b in cluster.brokers.values())

        # SIGTERM: a controlled shutdown deregisters at once.
        cluster.brokers[1].stop()
        assert zk.children("/brokers/ids") == ["0"]
        assert not answers_metadata(cluster.brokers[1].spec, timeout=0.5)

        # SIGKILL: the registration stays until the session expires; a restart waits for that.
        cluster.brokers[0].kill()
        assert zk.exists("/brokers/ids/0")
        Waiter(zk).exists("/brokers/ids/0", present=False)
        cluster.brokers[1].start()
        cluster.brokers[0].start()
        assert sorted(zk.children("/brokers/ids") or []) == ["0", "1"]
    finally:
        zk.stop()


def test_group_members_as_kafkas_consumer_group_command_prints_them() -> None:
    from kto_dev.apache_kafka.tools import parse_group_members

    output = (
        "\nGROUP   CONSUMER-ID        HOST        CLIENT-ID  #PARTITIONS  ASSIGNMENT\n"
        "g       member-0-1fb5      /127.0.0.1  member-0   3            (0,1,2)\n"
        "g       member-2-4c21      /127.0.0.1  member-2   3            a(5,6),b(0)\n"
        "g       member-1-1f0c      /127.0.0.1  member-1   0            -\n"
    )
    assert parse_group_members(output) == {
        "member-0-1fb5": {"": [0, 1, 2]},
        "member-2-4c21": {"a": [5, 6], "b": [0]},
        "member-1-1f0c": {},
    }
    assert parse_group_members("Consumer group 'g' has no active members.") == {}
