"""Whether ZooKeeper answers: for handlers that wait on it, the readiness endpoint and a metric.

During an outage a handler says `ZooKeeperUnavailable` in status and then waits here, not in
kopf's retry timer: the moment ZooKeeper answers again every waiting handler resumes (a fixed or
growing retry delay would outlive the outage). Liveness is not tied to ZooKeeper: restarting
the operator does not bring ZooKeeper back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable

from kafka_topic_operator.k8s import metrics
from kafka_topic_operator.zk.client import ZkClient, is_connected_state

log = logging.getLogger(__name__)

CHECK_TIMEOUT = 1.0  # a read ZooKeeper does not answer in a second: it is not answering
RECHECK_INTERVAL = 0.5  # while it is down, asked again this often (one read, for all handlers)


class ZooKeeperHealth:
    """Tracks one client's connection. `down` is set when kazoo loses the connection or a read
    goes unanswered (a frozen server still looks connected to kazoo for a while), and cleared
    when kazoo reconnects or a read is answered again. Lives on kopf's event loop; kazoo's
    state listener reaches it through `call_soon_threadsafe`."""

    def __init__(
        self, zk: ZkClient, loop: asyncio.AbstractEventLoop, probe: ZkClient | None = None
    ) -> None:
        """`probe`: a connection of its own for the checks, so that a read queued behind a
        busy client's big batches is not taken for an outage (ten thousand resources applied
        at once keep the main connection busy for minutes)."""
        self._zk = zk
        self._probe = probe
        self._loop = loop
        self._up = asyncio.Event()
        self._down_since: float | None = None
        self._rechecking: asyncio.Task[None] | None = None
        self._checking: asyncio.Future[bool] | None = None
        self.ready = threading.Event()  # read by the readiness endpoint's thread
        if zk.connected:
            self._mark_up()
        else:
            self._mark_down("not connected")
        zk.add_state_listener(self._state_changed)

    def close(self) -> None:
        if self._probe is not None:
            self._probe.stop()

    @property
    def down(self) -> bool:
        return self._down_since is not None

    async def check(self) -> bool:
        """One read with a short timeout (shared by the handlers asking meanwhile); marks the
        connection up or down by the answer."""
        if self._checking is None:
            self._checking = self._loop.create_future()
            answered = await asyncio.to_thread((self._probe or self._zk).answers, CHECK_TIMEOUT)
            checking, self._checking = self._checking, None
            if answered:
                self._mark_up()
            else:
                self._mark_down(f"no answer within {CHECK_TIMEOUT} s")
            checking.set_result(answered)
            return answered
        return await asyncio.shield(self._checking)

    def report_failure(self, why: str) -> None:
        """A handler's ZooKeeper call failed (ZkConnectionError); from any thread."""
        self._soon(self._mark_down, why)

    def report_answer(self) -> None:
        """A handler's ZooKeeper calls were answered (on the loop)."""
        if self.down and self._zk.connected:
            self._mark_up()

    async def wait_up(self) -> None:
        await self._up.wait()

    def _state_changed(self, state: str) -> None:  # kazoo's thread
        if is_connected_state(state):
            self._soon(self._mark_up)
        else:
            self._soon(self._mark_down, f"connection {state.lower()}")

    def _soon(self, callback: Callable[..., None], *args: object) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed: the operator is stopping
            self._loop.call_soon_threadsafe(callback, *args)

    def _mark_up(self) -> None:
        if self._down_since is not None:
            log.info("ZooKeeper answers again after %.1f s", time.monotonic() - self._down_since)
        self._down_since = None
        self._up.set()
        self.ready.set()
        metrics.ZOOKEEPER_UP.set(1)

    def _mark_down(self, why: str) -> None:
        if self._down_since is None:
            self._down_since = time.monotonic()
            log.warning("ZooKeeper at %s is not answering (%s): waiting for it", self._zk.hosts,
                        why)  # fmt: skip
        self._up.clear()
        self.ready.clear()
        metrics.ZOOKEEPER_UP.set(0)
        if self._rechecking is None or self._rechecking.done():
            self._rechecking = self._loop.create_task(self._recheck())

    async def _recheck(self) -> None:
        """Asks again while it is down: a server that was frozen (not disconnected) answers
        again without kazoo noticing anything."""
        while self.down:
            await asyncio.sleep(RECHECK_INTERVAL)
            if self.down:
                await self.check()
