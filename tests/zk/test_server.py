"""The private ZooKeeper server used by tests and the dev cluster starts, answers and stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from kto_dev.zookeeper_server import ZooKeeperServer, four_letter_word

pytestmark = pytest.mark.zookeeper


def test_server_serves_on_its_own_port_and_stops(tmp_path: Path) -> None:
    with ZooKeeperServer(tmp_path / "zk") as server:
        assert server.is_serving()
        assert "Mode: standalone" in four_letter_word(server.port, "srvr")
        assert (tmp_path / "zk" / "zoo.cfg").read_text().count(f"clientPort={server.port}") == 1
    assert not server.is_serving()


def test_two_servers_run_side_by_side(tmp_path: Path) -> None:
    with ZooKeeperServer(tmp_path / "a") as a, ZooKeeperServer(tmp_path / "b") as b:
        assert a.port != b.port
        assert a.is_serving() and b.is_serving()
