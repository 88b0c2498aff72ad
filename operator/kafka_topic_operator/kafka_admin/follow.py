"""Status that follows Kafka's controller on a KRaft cluster, by polling.

The Admin API has nothing to watch: where the ZooKeeper follower (`topics.follow`) sets watches,
this one reads every followed topic again every `interval` seconds, in one `read()`, and hands
the topics whose view changed to the callback: their partitions, replicas (adding, removing,
offline), leaders, ISR or config, or the topic gone (it is unfollowed, and still reported: the
callback recreates a topic deleted behind the operator's back). When the live brokers change,
every followed topic is reported, since each replica's state depends on them. The contract is
`topics.follow.StatusFollower`'s: `follow(topic)` reports the topic at once, `follow(topic,
since=position)` only if it changed after the caller's own read, `refresh(topic)` at once.

For `since`, the backend remembers, per topic, what its last reads saw and at which position
(`Baseline`): the first read after `since` is the caller's own (or one as recent), and the topic
is reported only if what this follower reads differs from it, or if no such read is known.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from kafka_topic_operator.kafka.errors import ClusterUnavailableError
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot, Expected
from kafka_topic_operator.kafka_admin.snapshot import topic_fingerprint
from kafka_topic_operator.topics.backend import Changed

log = logging.getLogger(__name__)

INTERVAL = 2.0


@dataclass(frozen=True, slots=True)
class Baseline:
    """What a read saw of a topic (`topic_fingerprint`; None: no such topic), and its position."""

    position: int
    fingerprint: Hashable


class ReadHistory:
    """The last few reads of each topic, for `baseline` (not thread-safe: its owner locks)."""

    def __init__(self, kept: int = 4) -> None:
        self._kept = kept
        self._reads: dict[str, deque[Baseline]] = {}
        self._forgotten: dict[str, int] = {}  # per topic, the last position dropped

    def remember(self, topic: str, read: Baseline) -> None:
        """A read of `topic`, at a position above every one remembered before."""
        reads = self._reads.setdefault(topic, deque())
        if len(reads) == self._kept:
            self._forgotten[topic] = reads.popleft().position
        reads.append(read)

    def baseline(self, topic: str, since: int) -> Baseline | None:
        """The first read of `topic` after position `since`; None if none is remembered, or
        if one may have been forgotten."""
        if self._forgotten.get(topic, 0) > since:
            return None
        return next((b for b in self._reads.get(topic, ()) if b.position > since), None)


class ReadLog:
    """Numbers the reads of one cluster and remembers what the last few saw of each topic,
    for every client reading it: the follower, on a client of its own, compares what it reads
    with the reconciler's reads. Thread-safe."""

    def __init__(self, kept: int = 4) -> None:
        self._lock = threading.Lock()
        self._position = 0
        self._history = ReadHistory(kept)

    def position(self) -> int:
        """The number of reads begun: a later read has a higher position."""
        with self._lock:
            return self._position

    def begin(self) -> int:
        """A new read's position."""
        with self._lock:
            self._position += 1
            return self._position

    def remember(self, position: int, snapshot: ClusterSnapshot, topics: Iterable[str]) -> None:
        """What the read at `position` saw of `topics`."""
        with self._lock:
            for topic in topics:
                self._history.remember(
                    topic, Baseline(position, topic_fingerprint(snapshot, topic))
                )

    def baseline(self, topic: str, since: int) -> Baseline | None:
        """The first remembered read of `topic` at a position after `since`; None if none is,
        or if one may have been forgotten."""
        with self._lock:
            return self._history.baseline(topic, since)


class PolledBackend(Protocol):
    """What the follower reads through (`KafkaAdminBackend`, on a client of its own)."""

    def read(
        self, topics: Iterable[str], *, list_topics: bool, expected: Expected | None = None
    ) -> ClusterSnapshot: ...


class PollingStatusFollower:
    def __init__(
        self,
        backend: PolledBackend,
        reads: ReadLog,
        changed: Changed,
        interval: float = INTERVAL,
    ) -> None:
        """`reads`: the log `backend` and the reconciler's backend share."""
        if interval <= 0:
            raise ValueError(f"interval {interval} is not positive")
        self._backend = backend
        self._reads = reads
        self._changed = changed
        self._interval = interval
        self._lock = threading.Condition()
        self._followed: set[str] = set()
        self._dirty: set[str] = set()  # to report at the next pass, changed or not
        self._quiet: dict[str, int] = {}  # newly followed with `since`: report only a change
        self._seen: dict[str, Hashable] = {}  # each followed topic as this follower last read it
        self._brokers: frozenset[int] | None = None  # the live brokers of the last pass
        self._report_all = False  # the brokers changed in a pass that did not read every topic
        self._next_poll = 0.0
        self._stopped = False
        # The kind of the last failure: one that repeats every interval is logged in full
        # once, then as one line each time.
        self._failing: str | None = None
        self._thread = threading.Thread(target=self._loop, name="status-poller", daemon=True)

    def start(self) -> None:
        with self._lock:
            self._next_poll = time.monotonic() + self._interval
        self._thread.start()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._lock.notify_all()
        if self._thread.is_alive():
            self._thread.join()

    def follow(self, topic: str, since: int | None = None) -> None:
        """Reports `topic` now, and again each time it changes. `since`: a `position()` the
        caller took before the read its status was written from: report only changes after
        that read."""
        with self._lock:
            if topic not in self._followed:
                self._followed.add(topic)
                if since is None:
                    self._dirty.add(topic)
                else:
                    self._quiet[topic] = since
                self._lock.notify_all()

    def refresh(self, topic: str) -> None:
        """Reports a followed `topic` again (its report could not be applied)."""
        with self._lock:
            if topic in self._followed:
                self._dirty.add(topic)
                self._quiet.pop(topic, None)
                self._lock.notify_all()

    def unfollow(self, topic: str) -> None:
        with self._lock:
            self._unfollow(topic)

    def _unfollow(self, topic: str) -> None:
        self._followed.discard(topic)
        self._dirty.discard(topic)
        self._quiet.pop(topic, None)
        self._seen.pop(topic, None)

    @property
    def followed(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._followed)

    # ---- the thread --------------------------------------------------------------------------

    def _take(self) -> tuple[set[str], set[str], dict[str, int], bool] | None:
        """The next pass: the topics to read, those to report whatever they read, the quiet
        ones with their `since`, and whether every followed topic is read. Waits until one is
        due: the interval has passed, or some topic waits to be reported."""
        with self._lock:
            while True:
                if self._stopped:
                    return None
                now = time.monotonic()
                full = now >= self._next_poll or self._report_all
                if full or self._dirty or self._quiet:
                    break
                self._lock.wait(self._next_poll - now)
            if full:
                self._next_poll = now + self._interval
                topics = set(self._followed)
            else:
                topics = self._dirty | set(self._quiet)
            dirty = set(self._dirty) | (topics if self._report_all else set())
            quiet = {t: s for t, s in self._quiet.items() if t not in dirty}
            self._dirty.clear()
            self._quiet.clear()
            self._report_all = False
            return topics, dirty, quiet, full

    def _loop(self) -> None:
        while (taken := self._take()) is not None:
            topics, dirty, quiet, full = taken
            try:
                self._pass(topics, dirty, quiet, full)
            except Exception as e:
                if not isinstance(e, ClusterUnavailableError):
                    self._failed(e, len(topics))
                with self._lock:
                    # Once it works, reported whether changed or not: whatever the failed pass
                    # would have reported is among them.
                    self._dirty.update(topics & self._followed)
                    self._lock.wait_for(lambda: self._stopped, self._interval)
            else:
                if self._failing is not None:
                    log.info("following the status of topics works again")
                    self._failing = None

    def _failed(self, error: Exception, count: int) -> None:
        kind = type(error).__qualname__
        if kind == self._failing:
            log.warning("following the status of %d topics still fails (%s: %s); retrying in "
                        "%g s", count, kind, error, self._interval)  # fmt: skip
            return
        self._failing = kind
        log.exception(
            "following the status of %d topics failed; retrying every %g s", count, self._interval
        )

    def _pass(
        self, topics: set[str], dirty: set[str], quiet: Mapping[str, int], full: bool
    ) -> None:
        if not topics:
            return
        # Before this pass's own read, which the backend remembers too.
        baselines = {t: self._reads.baseline(t, since) for t, since in quiet.items()}
        snapshot = self._backend.read(sorted(topics), list_topics=False)
        gone = [t for t in topics if t not in snapshot.topics and t not in snapshot.unreadable]
        if gone:
            # Each read may reach another broker, and one whose metadata lags the controller's
            # does not know a topic just created yet: what looks deleted is read once more.
            again = self._backend.read(sorted(gone), list_topics=False)
            snapshot = replace(
                snapshot,
                topics={**snapshot.topics, **again.topics},
                unreadable={**snapshot.unreadable, **again.unreadable},
                problems=(*snapshot.problems, *again.problems),
                topic_names=snapshot.topic_names | again.topic_names,
            )
        brokers = snapshot.live_brokers
        reported: list[str] = []
        with self._lock:
            brokers_changed = self._brokers is not None and brokers != self._brokers
            self._brokers = brokers
            if brokers_changed and not full:
                # Every followed topic's replica states changed: a pass that reads them all.
                self._report_all = True
                self._lock.notify_all()
            for topic in sorted(topics):
                if topic not in self._followed:
                    continue  # unfollowed during the read
                fingerprint = topic_fingerprint(snapshot, topic)
                if topic in quiet:
                    baseline = baselines[topic]
                    previous = baseline.fingerprint if baseline is not None else _UNKNOWN
                else:
                    previous = self._seen.get(topic, _UNKNOWN)
                if topic not in snapshot.topics and topic not in snapshot.unreadable:
                    # Deleted: a new reconcile follows it again if it returns.
                    self._unfollow(topic)
                    reported.append(topic)
                    continue
                self._seen[topic] = fingerprint
                if topic in dirty or brokers_changed or fingerprint != previous:
                    reported.append(topic)
        if reported:
            self._changed(snapshot, reported)


class _Unknown:
    """No earlier view of a topic: anything read differs from it."""

    def __repr__(self) -> str:
        return "<unknown>"


_UNKNOWN: Hashable = _Unknown()
