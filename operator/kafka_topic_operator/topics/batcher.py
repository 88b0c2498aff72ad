"""Reconciles that arrive together go to the cluster together.

When a thousand KafkaTopics are applied at once, a thousand handlers each reading the broker
list, writing one topic and reading it back would send the cluster thousands of small requests
and keep as many threads waiting on them. Here handlers submit requests and wait on a future;
one thread takes every request waiting (distinct topics, at most `max_batch`) and reconciles
them with one read and pipelined writes (`reconcile_topics`), while a second thread waits for
the controller to create the new partitions of earlier batches and reads their state back in
one round. A request that arrives alone goes at once; one that arrives in a burst waits a
moment for others (LINGER).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Collection
from concurrent.futures import Future
from dataclasses import dataclass

from kafka_topic_operator.kafka.assignment import RandomSource
from kafka_topic_operator.kafka.errors import ClusterUnavailableError
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot, Expected
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.topics.backend import TopicBackend
from kafka_topic_operator.topics.plan import AddPartitions, CreateTopic
from kafka_topic_operator.topics.reconcile import Request, Step, reconcile_topics

log = logging.getLogger(__name__)

MAX_BATCH = 500
# How long the read-back waits for the controller to create new partitions, so a new topic is
# usually Ready after one pass instead of a retry: as long as partitions keep appearing (a
# thousand new topics take the controller a few seconds), unless none did for CREATION_WAIT
# (the controller may spend a second or two on other events meanwhile).
CREATION_WAIT = 3.0
CREATION_LIMIT = 30.0
# While requests keep coming (the last batch was taken less than BURST ago), a request waits
# up to LINGER for others to go with it, as a Kafka producer lingers. Each batch costs the
# controller and every broker a round of requests whatever its size, and the handlers of a
# burst of new KafkaTopics arrive one by one (each resource has its own kopf worker): without
# it, most batches of 10,000 new topics held a single topic. A request after a quiet spell
# goes at once.
LINGER = 0.5
BURST = 1.0


@dataclass(frozen=True, slots=True)
class Outcome:
    step: Step
    # What status reports: read after the writes, or what was read to plan when nothing was
    # written; None when the step was blocked (nothing of Kafka to show).
    snapshot: ClusterSnapshot | None
    # The backend's position before the snapshot was read (ZooKeeper's last zxid): a change
    # after it is not in the snapshot (the status follower watches from there).
    zxid: int = 0


@dataclass(slots=True)
class _Pending:
    request: Request
    future: Future[Outcome]
    arrived: float  # time.monotonic() at submit


@dataclass(slots=True)
class _Written:
    pending: _Pending
    step: Step


class ReconcileBatcher:
    def __init__(
        self,
        backend: TopicBackend,
        *,
        max_batch: int = MAX_BATCH,
        creation_wait: float = CREATION_WAIT,
        rng: RandomSource | None = None,
        linger: float = LINGER,
    ) -> None:
        self._backend = backend
        self._max_batch = max_batch
        self._creation_wait = creation_wait
        self._rng = rng
        self._linger = linger
        self._last_taken = float("-inf")
        self._brokers: Collection[int] = frozenset()  # of the last read: a guess for the next
        self._lock = threading.Condition()
        self._waiting: deque[_Pending] = deque()
        self._written: deque[_Written] = deque()
        self._stopped = False
        self._threads = [
            threading.Thread(target=self._plan_loop, name="topic-reconciles", daemon=True),
            threading.Thread(target=self._read_back_loop, name="topic-read-back", daemon=True),
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._lock.notify_all()
        for thread in self._threads:
            if thread.is_alive():
                thread.join()
        stopped = ClusterUnavailableError("the operator is stopping")
        for pending in [*self._waiting, *(w.pending for w in self._written)]:
            pending.future.set_exception(stopped)

    def submit(self, request: Request) -> Future[Outcome]:
        future: Future[Outcome] = Future()
        with self._lock:
            if self._stopped:
                future.set_exception(ClusterUnavailableError("the operator is stopping"))
                return future
            self._waiting.append(_Pending(request, future, time.monotonic()))
            self._lock.notify_all()
        return future

    # ---- reading, planning and writing ---------------------------------------------------------

    def _take(self) -> list[_Pending] | None:
        """Every waiting request naming a topic not already taken, in order; None once stopped."""
        with self._lock:
            self._lock.wait_for(lambda: self._waiting or self._stopped)
            if not self._stopped and time.monotonic() - self._last_taken < BURST:
                linger = self._waiting[0].arrived + self._linger - time.monotonic()
                self._lock.wait_for(
                    lambda: len(self._waiting) >= self._max_batch or self._stopped, linger
                )
            if self._stopped:
                return None
            batch: list[_Pending] = []
            later: list[_Pending] = []
            topics: set[str] = set()
            while self._waiting and len(batch) < self._max_batch:
                pending = self._waiting.popleft()
                topic = pending.request.topic
                (later if topic in topics else batch).append(pending)
                topics.add(topic)
            self._waiting.extendleft(reversed(later))
            self._last_taken = time.monotonic()
            return batch

    def _plan_loop(self) -> None:
        while (batch := self._take()) is not None:
            self._reconcile(batch)

    def _reconcile(self, batch: list[_Pending]) -> None:
        zxid = self._backend.position()
        try:
            outcomes = reconcile_topics(
                self._backend, [p.request for p in batch], self._rng, self._brokers
            )
        except ClusterUnavailableError as e:
            for pending in batch:
                pending.future.set_exception(e)
            return
        except Exception as e:  # a bug met by one request must not fail the others with it
            if len(batch) == 1:
                log.exception("reconciling %s failed", batch[0].request.topic)
                batch[0].future.set_exception(e)
                return
            for pending in batch:
                self._reconcile([pending])
            return
        written = []
        for pending, outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, Exception):
                pending.future.set_exception(outcome)
                continue
            if outcome.snapshot is not None:
                self._brokers = frozenset(outcome.snapshot.brokers)
            if outcome.desired is None or outcome.plan.blocked is not None:
                pending.future.set_result(Outcome(outcome, None, zxid))
            elif not outcome.plan.actions:
                pending.future.set_result(Outcome(outcome, outcome.snapshot, zxid))
            else:
                written.append(_Written(pending, outcome))
        if written:
            with self._lock:
                self._written.extend(written)
                self._lock.notify_all()

    # ---- reading back what was written ---------------------------------------------------------

    def _read_back_loop(self) -> None:
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._written or self._stopped)
                if self._stopped:
                    return
                batch = list(self._written)
                self._written.clear()
            try:
                snapshot, zxid = self._read_back(batch)
            except Exception as e:
                if not isinstance(e, ClusterUnavailableError):
                    log.exception("reading back %d topics failed", len(batch))
                for written in batch:
                    written.pending.future.set_exception(e)
                continue
            for written in batch:
                written.pending.future.set_result(Outcome(written.step, snapshot, zxid))

    def _read_back(self, batch: list[_Written]) -> tuple[ClusterSnapshot, int]:
        """The topics read once the controller made their new partitions, and the backend's
        position before that read (taken after the wait: the partitions made meanwhile are in
        the read, and the status follower does not report them again)."""
        # The controller creates a new topic's partition states in order: wait (a little) for
        # the last one of each topic created or grown.
        last = [
            TopicPartition(d.name, d.partitions - 1)
            for w in batch
            if (d := w.step.desired) is not None
            and any(isinstance(a, CreateTopic | AddPartitions) for a in w.step.plan.actions)
        ]
        if last:
            self._backend.wait_for_partitions(last, CREATION_LIMIT, self._creation_wait)
        partitions = {
            w.step.desired.name: range(w.step.desired.partitions)
            for w in batch
            if w.step.desired is not None
        }
        expected = Expected(brokers=self._brokers, partitions=partitions)
        zxid = self._backend.position()
        return self._backend.read(list(partitions), list_topics=False, expected=expected), zxid
