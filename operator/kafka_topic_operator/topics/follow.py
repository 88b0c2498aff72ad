"""Status that follows the controller: the topics whose znodes changed, read again.

A KafkaTopic's status shows what Kafka's controller did (leaders, ISR, replicas on dead
brokers), and the controller changes that at any time: a broker dies, a follower rejoins the
ISR, a reassignment by someone else completes. Reconciles run only when the resource changes, so
this thread watches what status is made of (each followed topic's znode and partition states,
and `/brokers/ids`) and hands the topics whose znodes changed, freshly read, to a callback.
The topic's config znode is watched too: a change made behind the operator's back (a config
edited, partitions added, the topic deleted) reaches the callback at once, which reverts or
reports it; no timer per resource has to poll for drift, and nothing is read while nothing
changes. (ZooKeeper delivers every watch of a session; kazoo sets them again after a lost
connection relative to the last zxid seen, and an expired session makes this thread read every
followed topic again.)
Watches are set in bulk relative to the zxid of the read they follow (`ZkClient.set_watches`),
so a change made between the read and the watch fires at once instead of being missed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from kafka_topic_operator.kafka.snapshot import ClusterSnapshot
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.topics.backend import Changed
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import ZkClient, ZkConnectionError
from kafka_topic_operator.zk.snapshot_reader import read_cluster

log = logging.getLogger(__name__)

RETRY = 2.0  # after ZooKeeper was out of reach or the callback failed


def watched_paths(snapshot: ClusterSnapshot, topic: str) -> list[str]:
    """What a topic's status is made of: its znode (partitions, reassignments), its config
    (drift) and each partition's state (leader, ISR); only the znode while the topic does not
    exist."""
    found = snapshot.topics.get(topic)
    if found is None:
        return [znodes.topic_path(topic)]
    states = [
        znodes.topic_partition_state_path(TopicPartition(topic, p))
        for p in sorted(found.partitions)
    ]
    return [znodes.topic_path(topic), znodes.topic_config_path(topic), *states]


class StatusFollower:
    def __init__(self, zk: ZkClient, changed: Changed) -> None:
        self._zk = zk
        self._changed = changed
        self._lock = threading.Condition()
        self._followed: set[str] = set()
        self._dirty: set[str] = set()
        # Newly followed topics whose status was just written from a read after this zxid:
        # their first pass only sets watches (from that zxid), reporting nothing unless changed.
        self._quiet: dict[str, int] = {}
        self._brokers_changed = True  # the first pass sets the watch on /brokers/ids
        self._stopped = False
        # The kind of the last failure: one that repeats every RETRY seconds (the Kubernetes API
        # down for minutes) is logged in full once, then as one line each time.
        self._failing: str | None = None
        self._thread = threading.Thread(target=self._loop, name="status-follower", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._lock.notify_all()
        if self._thread.is_alive():
            self._thread.join()

    def follow(self, topic: str, since: int | None = None) -> None:
        """Reports `topic` now, and again each time its znodes change. `since`: the caller
        knows the topic as of this zxid (a status just written from it): report only changes
        made after it."""
        with self._lock:
            if topic not in self._followed:
                self._followed.add(topic)
                self._dirty.add(topic)  # read it and set its watches
                if since is not None:
                    self._quiet[topic] = since
                self._lock.notify_all()

    def refresh(self, topic: str) -> None:
        """Reports a followed `topic` again (its report could not be applied)."""
        with self._lock:
            if topic in self._followed:
                self._dirty.add(topic)
                self._lock.notify_all()

    def unfollow(self, topic: str) -> None:
        with self._lock:
            self._followed.discard(topic)
            self._dirty.discard(topic)
            self._quiet.pop(topic, None)

    @property
    def followed(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._followed)

    # ---- the thread --------------------------------------------------------------------------

    def _fired(self, event: Any) -> None:
        """A data watch: a topic's znode or one of its partition states changed."""
        if event.path is None:  # the session expired and kazoo dropped its watches: set anew
            self._brokers_fired(event)
            return
        path = str(event.path)
        _, found, rest = path.partition(znodes.TOPICS_PATH + "/")
        if not found:
            _, found, rest = path.partition(znodes.topic_config_path(""))
            if not found or str(event.type) == "DELETED":
                return  # a topic without a config znode: its znode's watch is enough
        topic = rest.split("/", 1)[0]
        with self._lock:
            if topic in self._followed:
                self._dirty.add(topic)
                self._lock.notify_all()

    def _brokers_fired(self, _event: Any) -> None:
        with self._lock:
            self._brokers_changed = True
            self._lock.notify_all()

    def _take(self) -> tuple[set[str], bool, dict[str, int]] | None:
        with self._lock:
            self._lock.wait_for(lambda: self._stopped or self._dirty or self._brokers_changed)
            if self._stopped:
                return None
            brokers = self._brokers_changed
            # Every followed topic's replica states depend on which brokers are alive.
            topics = set(self._followed) if brokers else set(self._dirty)
            quiet = {t: z for t, z in self._quiet.items() if t in topics}
            self._quiet.clear()
            self._dirty.clear()
            self._brokers_changed = False
            return topics, brokers, quiet

    def _loop(self) -> None:
        while (taken := self._take()) is not None:
            topics, brokers, quiet = taken
            try:
                self._pass(topics, brokers, quiet)
            except Exception as e:
                if not isinstance(e, ZkConnectionError):
                    self._failed(e, len(topics))
                with self._lock:
                    self._dirty.update(topics & self._followed)
                    self._brokers_changed |= brokers
                    self._lock.wait_for(lambda: self._stopped, RETRY)
            else:
                if self._failing is not None:
                    log.info("following the status of topics works again")
                    self._failing = None

    def _failed(self, error: Exception, count: int) -> None:
        kind = type(error).__qualname__
        if kind == self._failing:
            log.warning("following the status of %d topics still fails (%s: %s); retrying in "
                        "%g s", count, kind, error, RETRY)  # fmt: skip
            return
        self._failing = kind
        log.exception("following the status of %d topics failed; retrying every %g s", count, RETRY)

    def _watch_brokers(self) -> None:
        """A children watch on `/brokers/ids`; while no broker ever registered (no such
        znode, so no children watch), a watch for its creation."""
        while self._zk.children(znodes.BROKER_IDS_PATH, watch=self._brokers_fired) is None:
            if not self._zk.exists(znodes.BROKER_IDS_PATH, watch=self._brokers_fired):
                return

    def _pass(self, topics: set[str], brokers: bool, quiet: Mapping[str, int]) -> None:
        since = min([self._zk.raw.last_zxid, *quiet.values()])
        if brokers:
            self._watch_brokers()
        snapshot = read_cluster(self._zk, topics, list_topics=False)
        paths: list[str] = []
        for topic in sorted(topics):
            if topic in snapshot.topics:
                paths.extend(watched_paths(snapshot, topic))
            else:
                self.unfollow(topic)  # deleted: a new reconcile follows it again if it returns
        if paths:
            self._zk.set_watches(since, paths, [], self._fired)
        # Deleted ones too: behind the operator's back, the callback recreates them.
        reported = sorted(t for t in topics if t not in quiet or t not in snapshot.topics)
        if reported:
            self._changed(snapshot, reported)
