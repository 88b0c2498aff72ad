"""Test helpers shared by the test packages: waiting on ZooKeeper conditions through watches."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import TypeVar

from kafka_topic_operator.zk.client import ZkClient

T = TypeVar("T")
DEADLINE = 20.0


class Waiter:
    """Waits for a ZooKeeper condition by re-reading it each time a watch fires (no polling)."""

    def __init__(self, zk: ZkClient) -> None:
        self.zk = zk

    def until(
        self,
        read: Callable[[Callable[[object], None]], T],
        done: Callable[[T], bool],
        what: str,
        timeout: float = DEADLINE,
    ) -> T:
        """`read(watch)` reads the state with `watch` set; returns the first state `done` likes."""
        deadline = time.monotonic() + timeout
        while True:
            fired = threading.Event()

            def watch(_event: object, fired: threading.Event = fired) -> None:
                fired.set()

            value = read(watch)
            if done(value):
                return value
            left = deadline - time.monotonic()
            if left <= 0 or not fired.wait(left):
                raise AssertionError(
                    f"timed out after {timeout} s waiting for {what}; last {value}"
                )

    def children(
        self, path: str, done: Callable[[list[str]], bool], timeout: float = DEADLINE
    ) -> list[str]:
        return self.until(
            lambda watch: self.zk.children(path, watch=watch) or [],
            done,
            f"children of {path}",
            timeout,
        )

    def exists(self, path: str, present: bool = True, timeout: float = DEADLINE) -> None:
        self.until(
            lambda watch: self.zk.exists(path, watch=watch),
            lambda exists: exists == present,
            f"{path} to {'appear' if present else 'vanish'}",
            timeout,
        )


def new_chroot(connect_string: str, prefix: str = "test") -> str:
    """A connect string with a fresh chroot (created), so runs never see each other's znodes."""
    chroot = f"/{prefix}-{uuid.uuid4().hex[:12]}"
    root = ZkClient(connect_string)
    root.start()
    try:
        root.ensure_path(chroot)
    finally:
        root.stop()
    return connect_string + chroot


def eventually(condition: Callable[[], T | None], what: str, timeout: float = DEADLINE) -> T:
    """Polls a condition nothing can watch (files, another thread's memory) until it holds
    (a true value, returned; None and false values mean not yet)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}; last {value}")
        time.sleep(0.02)


def expire_session(zk: ZkClient, timeout: float = DEADLINE) -> None:
    """ZooKeeper's own way to expire a session: attach to it from a second client and close it.
    The owner reconnecting meanwhile takes the session back and drops the second client's
    connection, maybe before its close went out: then it is tried again, until the owner holds
    a session of its own."""
    from kazoo.client import KazooClient

    session, client_id = zk.session_id, zk.raw.client_id
    # Without the chroot: kazoo's start would check it exists, a request the drop can fail.
    servers = zk.hosts.split("/", 1)[0]
    deadline = time.monotonic() + timeout
    while True:
        thief = KazooClient(hosts=servers, client_id=client_id)
        try:
            thief.start(timeout=5)
            thief.stop()
        except Exception:  # the owner took the session back first, or the session is gone
            pass
        finally:
            thief.close()
        try:
            eventually(lambda: zk.session_id not in (0, session), "a new session", timeout=5)
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
