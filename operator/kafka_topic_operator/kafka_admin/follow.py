"""Status that follows Kafka's controller on a KRaft cluster, by polling.

The Admin API has nothing to watch, so this thread polls, and spends its CPU only on what
changed: a full read of a topic (what the reconciler reads: partitions, reassignments, configs,
through `PolledBackend`) is made only for a topic whose cheap view differs from the last one
(`MetadataSource`), and the callback gets the topics whose full read differs from their last
(`topic_fingerprint`): their partitions, replicas (adding, removing, offline), leaders, ISR or
config, or the topic gone (it is unfollowed, and still reported: the callback recreates a topic
deleted behind the operator's back).

- Every `broker_interval` seconds the live brokers are read (DescribeCluster); when they change,
  every followed topic with a replica on a broker that came or went is read (its replicas'
  states depend on it; no other topic's status does).
- A sweep reads every topic's partitions in one Metadata request (`MetadataSource.views`): every
  `interval` seconds, or less often where the sweep itself takes more than SWEEP_SHARE of a core
  (measured on this thread), so that a large cluster at rest costs little.
- A config sweep reads the followed topics' own configs every `config_interval` seconds (the
  drift interval), or less often where it takes more than CONFIG_SHARE of a core (measured on
  the process: librdkafka decodes in threads of its own).
- A read that a sweep or the brokers led to takes each topic's configs as last read (configs
  change apart from partitions, and describing them is most of a read's cost); a topic followed
  or refreshed, or whose configs the config sweep found changed, is read with its configs.

The contract is `topics.follow.StatusFollower`'s: `follow(topic)` reports the topic at once,
`follow(topic, since=position)` only if it changed after the caller's own read, `refresh(topic)`
at once. For `since`, the read log (`ReadLog`, shared with the reconciler's backend) remembers,
per topic, what its last reads saw and at which position (`Baseline`): the first read after
`since` is the caller's own (or one as recent), and the topic is reported only if what this
follower reads differs from it, or if no such read is known.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from kafka_topic_operator.kafka.errors import ClusterUnavailableError
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot, Expected
from kafka_topic_operator.kafka_admin.metadata import Views
from kafka_topic_operator.kafka_admin.snapshot import topic_fingerprint
from kafka_topic_operator.topics.backend import Changed

log = logging.getLogger(__name__)

INTERVAL = 2.0  # seconds between two sweeps, at the least
BROKER_INTERVAL = 1.0  # seconds between two reads of the live brokers
CONFIG_INTERVAL = 60.0  # seconds between two config sweeps, at the least (the drift interval)
SWEEP_SHARE = 0.01  # of a core: a sweep taking 50 ms is made every 5 s
CONFIG_SHARE = 0.005
READ_CHUNK = 500  # topics per full read, each chunk reported as it is read


def touched_by(
    brokers: Collection[int],
    replicas: Mapping[str, frozenset[int]],
    followed: Iterable[str],
) -> set[str]:
    """The followed topics whose status may differ once `brokers` came or went: those with a
    replica on one of them, and those whose replicas are not known."""
    if not brokers:
        return set()  # the broker check's usual answer: no topic looked at (10,000 a second)
    changed = frozenset(brokers)
    return {t for t in followed if (r := replicas.get(t)) is None or not r.isdisjoint(changed)}


def next_due(now: float, interval: float, cost: float, share: float) -> float:
    """When a periodic read that took `cost` seconds of CPU is made next: `interval` after
    `now`, or later, so that it takes at most `share` of a core on average."""
    return now + max(interval, cost / share)


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
    """The full read of topics (`KafkaAdminBackend`, on a client of its own)."""

    def read(
        self,
        topics: Iterable[str],
        *,
        list_topics: bool,
        expected: Expected | None = None,
        configs: Mapping[str, Mapping[str, str]] | None = None,
    ) -> ClusterSnapshot:
        """`configs`: the own configs of some of `topics`, known already: not described."""


class MetadataSource(Protocol):
    """The cheap reads (`kafka_admin.metadata.MetadataClient`)."""

    def views(self) -> Views:
        """Every topic's partitions, as a fingerprint, in one request."""

    def live_brokers(self) -> frozenset[int]: ...

    def configs(self, topics: Sequence[str]) -> Mapping[str, Mapping[str, str] | None]:
        """Each topic's own configs; None for one Kafka could not describe."""


@dataclass(frozen=True, slots=True)
class _Due:
    """What a pass does: the topics to read and report whatever they read, the quiet ones with
    their `since`, and which of the periodic reads are due."""

    dirty: frozenset[str]
    quiet: Mapping[str, int]
    touched: frozenset[str]  # on a broker that came or went: read, reported if changed
    brokers: bool
    sweep: bool
    configs: bool


class PollingStatusFollower:
    def __init__(
        self,
        backend: PolledBackend,
        reads: ReadLog,
        changed: Changed,
        source: MetadataSource,
        interval: float = INTERVAL,
        *,
        broker_interval: float = BROKER_INTERVAL,
        config_interval: float = CONFIG_INTERVAL,
    ) -> None:
        """`reads`: the log `backend` and the reconciler's backend share; `source`: the cheap
        reads, on a client of their own."""
        for name, value in (("interval", interval), ("broker_interval", broker_interval),
                            ("config_interval", config_interval)):  # fmt: skip
            if value <= 0:
                raise ValueError(f"{name} {value} is not positive")
        self._backend = backend
        self._reads = reads
        self._changed = changed
        self._source = source
        self._interval = interval
        self._broker_interval = broker_interval
        self._config_interval = config_interval
        self._lock = threading.Condition()
        self._followed: set[str] = set()
        self._dirty: set[str] = set()  # to read and report at the next pass, changed or not
        self._quiet: dict[str, int] = {}  # newly followed with `since`: report only a change
        self._seen: dict[str, Hashable] = {}  # each followed topic as its last full read saw it
        self._configs: dict[str, Mapping[str, str]] = {}  # its own configs in that read
        self._views: dict[str, Hashable] = {}  # its cheap view when it was last read in full
        self._replicas: dict[str, frozenset[int]] = {}  # its brokers in that read
        # The live brokers as last seen, by a broker check or a full read (both DescribeCluster).
        self._live: frozenset[int] | None = None
        self._came_or_went: set[int] = set()  # brokers whose topics the next pass reads
        now = time.monotonic()
        self._next_sweep = now
        self._next_brokers = now
        self._next_configs = now + config_interval
        self._stopped = False
        # The kind of the last failure: one that repeats every interval is logged in full
        # once, then as one line each time.
        self._failing: str | None = None
        self._thread = threading.Thread(target=self._loop, name="status-poller", daemon=True)

    def start(self) -> None:
        with self._lock:
            now = time.monotonic()
            self._next_sweep = now + self._interval
            self._next_brokers = now + self._broker_interval
            self._next_configs = now + self._config_interval
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
        self._configs.pop(topic, None)
        self._views.pop(topic, None)
        self._replicas.pop(topic, None)

    @property
    def followed(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._followed)

    # ---- the thread --------------------------------------------------------------------------

    def _take(self) -> _Due | None:
        """The next pass, once one is due: some topic waits to be reported, or a periodic
        read's time has come. Quiet topics (followed since the caller's read) wait for the next
        sweep: their status was just written, and the sweep reads them with their view, so
        that the sweep after reads them no more."""
        with self._lock:
            while True:
                if self._stopped:
                    return None
                now = time.monotonic()
                brokers = now >= self._next_brokers
                # The topics the brokers' change touched are read with their views taken first.
                sweep = now >= self._next_sweep or bool(self._came_or_went)
                configs = now >= self._next_configs
                if brokers or sweep or configs or self._dirty:
                    break
                self._lock.wait(min(self._next_brokers, self._next_sweep, self._next_configs)
                                - now)  # fmt: skip
            if brokers:
                self._next_brokers = now + self._broker_interval
            dirty = frozenset(self._dirty)
            touched = touched_by(self._came_or_went, self._replicas, self._followed) - dirty
            quiet: dict[str, int] = {}
            if sweep:
                quiet = {t: s for t, s in self._quiet.items() if t not in dirty}
                self._quiet.clear()
            self._dirty.clear()
            self._came_or_went.clear()
            return _Due(dirty, quiet, frozenset(touched - quiet.keys()), brokers, sweep, configs)

    def _loop(self) -> None:
        while (due := self._take()) is not None:
            read: set[str] = set(due.dirty) | set(due.quiet) | due.touched
            try:
                self._pass(due, read)
            except Exception as e:
                if not isinstance(e, ClusterUnavailableError):
                    self._failed(e, len(read))
                with self._lock:
                    # Once it works, reported whether changed or not: whatever the failed pass
                    # would have reported is among them.
                    self._dirty.update(read & self._followed)
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

    def _pass(self, due: _Due, read: set[str]) -> None:
        """The periodic reads due, then the full read of `read` and of whatever they found
        changed (added to `read`, so that a failure reads it again)."""
        with self._lock:
            followed = sorted(self._followed)
        views = self._sweep(followed, read) if due.sweep else None
        if due.brokers:
            self._saw_brokers(self._source.live_brokers())
        described = set(due.dirty) | set(due.quiet)  # read with their configs
        if due.configs:
            described |= self._config_sweep(followed, read)
        self._read(sorted(read), due.dirty, due.quiet, views, described)

    def _saw_brokers(self, live: frozenset[int]) -> None:
        """Where the live brokers differ from those last seen, the next pass, at once, reads
        the topics with a replica on a broker that came or went."""
        with self._lock:
            if self._live is not None and live != self._live:
                self._came_or_went.update(live ^ self._live)
                self._lock.notify_all()
            self._live = live

    def _sweep(self, followed: Sequence[str], read: set[str]) -> Mapping[str, Hashable]:
        began = time.thread_time()
        views = self._source.views()
        with self._lock:
            read.update(
                t
                for t in followed
                if t in self._followed and views.get(t, _ABSENT) != self._views.get(t, _UNKNOWN)
            )
            cost = time.thread_time() - began
            self._next_sweep = next_due(time.monotonic(), self._interval, cost, SWEEP_SHARE)
        return views

    def _config_sweep(self, followed: Sequence[str], read: set[str]) -> set[str]:
        """The topics whose own configs changed (added to `read` too)."""
        began = time.process_time()
        configs = self._source.configs(followed)
        with self._lock:
            changed = {
                t for t, config in configs.items()
                if config is not None and t in self._configs and config != self._configs[t]
            }  # fmt: skip
            read.update(changed)
            cost = time.process_time() - began
            self._next_configs = next_due(
                time.monotonic(), self._config_interval, cost, CONFIG_SHARE
            )
        return changed

    def _read(
        self,
        topics: Sequence[str],
        dirty: Collection[str],
        quiet: Mapping[str, int],
        views: Mapping[str, Hashable] | None,
        described: Collection[str],
    ) -> None:
        """The full reads of `topics`, READ_CHUNK at a time, each chunk reported as it is read;
        the configs of those not `described` as last read."""
        for start in range(0, len(topics), READ_CHUNK):
            chunk = topics[start : start + READ_CHUNK]
            with self._lock:
                known = {t: self._configs[t] for t in chunk
                         if t not in described and t in self._configs}  # fmt: skip
            quiet_here = {t: quiet[t] for t in chunk if t in quiet}
            self._report(set(chunk), dirty, quiet_here, views, known)

    def _report(
        self,
        topics: set[str],
        dirty: Collection[str],
        quiet: Mapping[str, int],
        views: Mapping[str, Hashable] | None,
        known: Mapping[str, Mapping[str, str]],
    ) -> None:
        # Before this pass's own read, which the backend remembers too.
        baselines = {t: self._reads.baseline(t, since) for t, since in quiet.items()}
        snapshot = self._backend.read(sorted(topics), list_topics=False, configs=known)
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
        self._saw_brokers(snapshot.live_brokers)  # this read may see a change first
        reported: list[str] = []
        with self._lock:
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
                found = snapshot.topics.get(topic)
                if found is not None:
                    self._configs[topic] = found.config
                    self._replicas[topic] = frozenset(
                        r for p in found.partitions.values() for r in p.replicas
                    )
                if views is not None:
                    # The view read before this read: a change since shows in the next sweep.
                    self._views[topic] = views.get(topic, _ABSENT)
                if topic in dirty or fingerprint != previous:
                    reported.append(topic)
        if reported:
            self._changed(snapshot, reported)


class _Unknown:
    """No earlier view of a topic: anything read differs from it."""

    def __repr__(self) -> str:
        return "<unknown>"


_UNKNOWN: Hashable = _Unknown()
_ABSENT: Hashable = ("absent from the views",)  # a topic the sweep did not find
