"""The Admin API backend over SASL_PLAINTEXT with PLAIN, against a KRaft cluster whose nodes also
listen with SASL (their JAAS users in `listener.name.sasl_plaintext.plain.sasl.jaas.config`),
connected as `kto run`'s flags describe it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kto_testing import eventually

from kafka_topic_operator.kafka.errors import ClusterUnavailableError
from kafka_topic_operator.kafka.new_topic import NewTopic
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.kafka_admin.backend import KafkaAdminBackend
from kafka_topic_operator.kafka_admin.connection import (
    KafkaConnection,
    add_kafka_arguments,
    kafka_connection,
)
from kafka_topic_operator.kafka_admin.metadata import MetadataClient
from kafka_topic_operator.process.argparsing import RaisingParser
from kto_dev.apache_kafka.kraft import KRaftCluster

# A refused login ends in refused connections: see conftest.py.
pytestmark = [
    pytest.mark.kafka,
    pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning"),
]

JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'user_operator="op-s3cret" user_admin="admin-s3cret";'
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftCluster]:
    kraft = KRaftCluster(
        Path(tmp_path_factory.mktemp("kraft-sasl")),
        extra_listener="SASL_PLAINTEXT",
        overrides={
            "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        },
    )
    kraft.start()
    yield kraft
    kraft.kill()


def connection(cluster: KRaftCluster, tmp_path: Path, password: str) -> KafkaConnection:
    (tmp_path / "password").write_text(password + "\n")
    parser = RaisingParser()
    add_kafka_arguments(parser)
    args = parser.parse_args(
        ["--bootstrap-servers", cluster.extra_bootstrap,
         "--kafka-security-protocol", "SASL_PLAINTEXT", "--kafka-sasl-mechanism", "PLAIN",
         "--kafka-sasl-username", "operator",
         "--kafka-sasl-password-file", str(tmp_path / "password")]
    )  # fmt: skip
    found = kafka_connection(args)
    assert found is not None
    return found


def found(backend: KafkaAdminBackend, topic: str) -> ClusterSnapshot | None:
    snapshot = backend.read([topic], list_topics=False)
    return snapshot if topic in snapshot.topics else None


def test_the_backend_works_over_sasl_plain(cluster: KRaftCluster, tmp_path: Path) -> None:
    backend = KafkaAdminBackend(connection(cluster, tmp_path, "op-s3cret"))
    try:
        secured = NewTopic("secured", {0: [0, 1], 1: [1, 2]}, {"retention.ms": "1000"})
        assert backend.create_topics([secured]) == {"secured": None}
        assert backend.wait_for_partitions([TopicPartition("secured", 1)], limit=30, idle=10)
        snapshot = eventually(lambda: found(backend, "secured"), "secured")
        assert snapshot is not None and snapshot.topics["secured"].config == {
            "retention.ms": "1000"
        }
        # The brokers as reached: through the listener the client came in on.
        endpoints = {b: info.endpoints[0] for b, info in snapshot.brokers.items()}
        assert {str(e.security_protocol) for e in endpoints.values()} == {"SASL_PLAINTEXT"}
        assert {f"127.0.0.1:{e.port}" for e in endpoints.values()} == set(
            cluster.extra_bootstrap.split(",")
        )
        backend.change_config("secured", {})
        backend.delete_topic("secured")
        eventually(lambda: not backend.topic_exists("secured"), "secured deleted")
    finally:
        backend.close()


def test_a_wrong_password_is_an_unavailable_cluster(cluster: KRaftCluster, tmp_path: Path) -> None:
    backend = KafkaAdminBackend(connection(cluster, tmp_path, "wrong"), timeout=2.0)
    started = time.monotonic()
    try:
        with pytest.raises(ClusterUnavailableError) as raised:
            backend.topic_names()
    finally:
        backend.close()
    assert time.monotonic() - started < 5
    assert str(raised.value).startswith(f"Kafka at {cluster.extra_bootstrap} did not answer")
    assert str(raised.value).endswith("(refused credentials or certificates end so too)")


def test_the_followers_librdkafka_client_works_over_sasl_plain(
    cluster: KRaftCluster, tmp_path: Path
) -> None:
    backend = KafkaAdminBackend(connection(cluster, tmp_path, "op-s3cret"))
    source = MetadataClient(connection(cluster, tmp_path, "op-s3cret"), timeout=10)
    try:
        followed = NewTopic("followed", {0: [0, 1], 1: [1, 2]}, {"retention.ms": "1000"})
        assert backend.create_topics([followed]) == {"followed": None}
        assert backend.wait_for_partitions([TopicPartition("followed", 1)], limit=30, idle=10)
        eventually(lambda: "followed" in source.views(), "followed in the metadata")
        assert source.live_brokers() == {0, 1, 2}
        configs = eventually(lambda: source.configs(["followed"])["followed"], "its configs")
        assert configs == {"retention.ms": "1000"}
        assert source.configs(["no-such-topic"]) == {"no-such-topic": None}
    finally:
        backend.close()
        source.close()

    refused = MetadataClient(connection(cluster, tmp_path, "wrong"), timeout=2)
    with pytest.raises(ClusterUnavailableError) as raised:
        refused.views()
    assert str(raised.value).startswith(f"Kafka at {cluster.extra_bootstrap} did not answer")
    assert "wrong" not in str(raised.value)
