"""Whether the cluster answers (ZooKeeper, or Kafka's brokers on KRaft): for handlers that wait
on it, the readiness endpoint and a metric.

During an outage a handler says `ZooKeeperUnavailable` (`KafkaUnavailable`) in status and then
waits here, not in kopf's retry timer: the moment the cluster answers again every waiting
handler resumes (a fixed or growing retry delay would outlive the outage). Liveness is not tied
to the cluster: restarting the operator does not bring ZooKeeper or the brokers back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable

from prometheus_client import Gauge

from kafka_topic_operator.clusters.cluster import HealthCheck
from kafka_topic_operator.k8s import metrics

log = logging.getLogger(__name__)

CHECK_TIMEOUT = 1.0  # a read not answered in a second: the cluster is not answering
RECHECK_INTERVAL = 0.5  # while it is down, asked again this often (one read, for all handlers)


class ClusterHealth:
    """Tracks whether the cluster answers. `down` is set when a handler's call or a check goes
    unanswered (or, on ZooKeeper, kazoo loses the connection: a frozen server still looks
    connected to kazoo for a while), and cleared when a check is answered again (or kazoo
    reconnects). Lives on kopf's event loop; other threads reach it through
    `call_soon_threadsafe`."""

    def __init__(
        self,
        what: str,
        where: str,
        loop: asyncio.AbstractEventLoop,
        answers: Callable[[float], bool],
        gauge: Gauge,
        *,
        up: bool = True,
        connected: Callable[[], bool] = lambda: True,
        close: Callable[[], None] = lambda: None,
    ) -> None:
        """`answers(timeout)`: one check, ideally on a connection of its own, so that a read
        queued behind a busy client's big batches is not taken for an outage (ten thousand
        resources applied at once keep the main connection busy for minutes)."""
        self.what = what  # "ZooKeeper", "Kafka"
        self._where = where
        self._answers = answers
        self._gauge = metrics.export(gauge)
        self._connected = connected
        self._close = close
        self._loop = loop
        self._up = asyncio.Event()
        self._down_since: float | None = None
        self._rechecking: asyncio.Task[None] | None = None
        self._checking: asyncio.Future[bool] | None = None
        self.ready = threading.Event()  # read by the readiness endpoint's thread
        if up:
            self._mark_up()
        else:
            self._mark_down("not connected")

    def close(self) -> None:
        self._close()

    @property
    def down(self) -> bool:
        return self._down_since is not None

    async def check(self) -> bool:
        """One read with a short timeout (shared by the handlers asking meanwhile); marks the
        connection up or down by the answer."""
        if self._checking is None:
            self._checking = self._loop.create_future()
            answered = await asyncio.to_thread(self._answers, CHECK_TIMEOUT)
            checking, self._checking = self._checking, None
            if answered:
                self._mark_up()
            else:
                self._mark_down(f"no answer within {CHECK_TIMEOUT} s")
            checking.set_result(answered)
            return answered
        return await asyncio.shield(self._checking)

    def report_failure(self, why: str) -> None:
        """A handler's call failed (ClusterUnavailableError); from any thread."""
        self._soon(self._mark_down, why)

    def report_answer(self) -> None:
        """A handler's calls were answered (on the loop)."""
        if self.down and self._connected():
            self._mark_up()

    async def wait_up(self) -> None:
        await self._up.wait()

    def connection_changed(self, connected: bool, why: str) -> None:
        """The client's connection came or went (kazoo's state listener); from any thread."""
        if connected:
            self._soon(self._mark_up)
        else:
            self._soon(self._mark_down, why)

    def _soon(self, callback: Callable[..., None], *args: object) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed: the operator is stopping
            self._loop.call_soon_threadsafe(callback, *args)

    def _mark_up(self) -> None:
        if self._down_since is not None:
            log.info("%s answers again after %.1f s", self._where,
                     time.monotonic() - self._down_since)  # fmt: skip
        self._down_since = None
        self._up.set()
        self.ready.set()
        self._gauge.set(1)

    def _mark_down(self, why: str) -> None:
        if self._down_since is None:
            self._down_since = time.monotonic()
            log.warning("%s is not answering (%s): waiting for it", self._where, why)
        self._up.clear()
        self.ready.clear()
        self._gauge.set(0)
        if self._rechecking is None or self._rechecking.done():
            self._rechecking = self._loop.create_task(self._recheck())

    async def _recheck(self) -> None:
        """Asks again while it is down: a server that was frozen (not disconnected) answers
        again without kazoo noticing anything."""
        while self.down:
            await asyncio.sleep(RECHECK_INTERVAL)
            if self.down:
                await self.check()


# Which metric says whether the cluster answers, by what is checked.
GAUGES: dict[str, Gauge] = {"ZooKeeper": metrics.ZOOKEEPER_UP, "Kafka": metrics.KAFKA_UP}


def cluster_health(check: HealthCheck, loop: asyncio.AbstractEventLoop) -> ClusterHealth:
    """The cluster's health by its check, and the main connection's changes taken at once
    where its client tells them (kazoo's)."""
    health = ClusterHealth(
        check.what, check.where, loop, check.answers, GAUGES[check.what],
        up=check.up, connected=check.connected, close=check.close,
    )  # fmt: skip
    check.listen(health.connection_changed)
    return health
