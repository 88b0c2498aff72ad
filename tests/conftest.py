"""Shared fixtures: one real ZooKeeper server per test session, and a private chroot per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from kafka_topic_operator.zk.server import ZooKeeperServer

if TYPE_CHECKING:
    from kafka_topic_operator.zk.client import ZkClient


@pytest.fixture(scope="session")
def zookeeper_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    server = ZooKeeperServer(Path(tmp_path_factory.mktemp("zookeeper")))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def zk_chroot(zookeeper_server: ZooKeeperServer) -> str:
    """A connect string with a fresh chroot, so tests never see each other's znodes."""
    from kafka_topic_operator.zk.client import ZkClient

    chroot = f"/test-{uuid.uuid4().hex[:12]}"
    root = ZkClient(zookeeper_server.connect_string)
    root.start()
    try:
        root.ensure_path(chroot)
    finally:
        root.stop()
    return zookeeper_server.connect_string + chroot


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
    from kafka_topic_operator.devbroker.broker import BrokerConfig, DevBroker

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
