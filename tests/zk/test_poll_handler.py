"""The poll-based select kazoo's I/O thread calls: select()'s contract on real sockets."""

from __future__ import annotations

import socket
import time

import pytest

from kafka_topic_operator.zk.poll_handler import poll_select


def test_readable_writable_and_timeout() -> None:
    a, b = socket.socketpair()
    with a, b:
        assert poll_select([a], [], [], 0) == ([], [], [])
        assert poll_select([a], [a], [], 0) == ([], [a], [])
        b.sendall(b"x")
        assert poll_select([a, b], [], [], 1) == ([a], [], [])
        began = time.monotonic()
        assert poll_select([b], [], [], 0.05) == ([], [], [])
        assert time.monotonic() - began >= 0.05


def test_a_closed_peer_makes_the_socket_readable() -> None:
    a, b = socket.socketpair()
    with a:
        b.close()
        assert poll_select([a], [], [], 1)[0] == [a]
        assert a.recv(1) == b""  # the read that follows sees the end, as with select()


def test_bad_arguments_are_refused_as_select_refuses_them() -> None:
    a, b = socket.socketpair()
    with a, b:
        with pytest.raises(ValueError, match="non-negative"):
            poll_select([a], [], [], -1)
        with pytest.raises(TypeError):
            poll_select([a], [], [], "1")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        poll_select([a], [], [], 0)  # closed: fileno() is -1
