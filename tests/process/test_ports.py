"""The ports the dev cluster and the tests give their servers."""

from __future__ import annotations

import socket
from pathlib import Path

from kto_dev import ports


def test_a_port_comes_from_below_the_ephemeral_range_and_is_bindable() -> None:
    low, _ = ports.ephemeral_range()
    handed = [ports.free_port() for _ in range(50)]
    assert len(set(handed)) == 50
    assert all(ports.LOWEST <= p < low for p in handed)
    with socket.socket() as s:
        s.bind(("127.0.0.1", handed[0]))


def test_a_port_in_use_is_not_free() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert not ports.is_free(taken.getsockname()[1])


def test_the_range_falls_back_to_linux_defaults_when_unreadable(tmp_path: Path) -> None:
    assert ports.ephemeral_range(tmp_path / "missing") == (32768, 60999)
    source = tmp_path / "range"
    source.write_text("40000\t50000\n")
    assert ports.ephemeral_range(source) == (40000, 50000)


def test_a_port_accepts_connections_once_listened_on_not_once_bound() -> None:
    # A KRaft node is named in the metadata a moment before its listeners accept connections.
    with socket.socket() as server:
        server.bind(("127.0.0.1", ports.free_port()))
        port = server.getsockname()[1]
        assert not ports.accepts_connections(port)
        server.listen()
        assert ports.accepts_connections(port)
    assert not ports.accepts_connections(port)
