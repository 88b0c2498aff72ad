"""Both sides of what stands in for Kafka's Fetch requests between dev brokers: a follower
publishes, per leader, the partitions it follows at their leader epochs
(`broker_channel.fetching`); a leader reads what each live broker follows from it, and admits a
replica to an ISR only once it follows there at the leader's epoch. Without it a returning
broker joined ISRs as soon as it registered, before the controller had made it a follower.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from kafka_topic_operator.broker_channel import (
    decode_fetching,
    encode_fetching,
    fetching_path,
    fetching_root,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk.client import NoNodeError, ZkClient
from kafka_topic_operator.zk.znodes import ZNodeDataError

log = logging.getLogger(__name__)

Following = Mapping[int, Mapping[str, Mapping[int, int]]]
"""By leader: each topic's partitions followed, with the leader epoch followed."""


class Fetches:
    def __init__(self, zk: ZkClient, broker_id: int, wake: Callable[[], None]) -> None:
        self._zk = zk
        self._broker_id = broker_id
        self._wake = wake
        self._published: dict[int, dict[str, dict[int, int]]] = {}
        self.fetchers: dict[int, dict[TopicPartition, int]] = {}
        """What each live broker follows from this one: partition → leader epoch."""
        self._lock = threading.Lock()  # the two below are set from kazoo's thread
        self._changed: set[int] = set()
        self._all = True

    # ---- the follower's side ----------------------------------------------------------------

    def clear(self) -> None:
        """Before registering: what an earlier run of this broker followed is followed no more."""
        root = fetching_root(self._broker_id)
        self._zk.ensure_path(root)
        for leader in self._zk.children(root) or []:
            self._zk.delete(f"{root}/{leader}")
        self._published = {}

    def publish(self, following: Following) -> None:
        """Writes, for each leader whose partitions changed, what is followed from it now."""
        for leader in sorted(following.keys() | self._published.keys()):
            now = {topic: dict(ps) for topic, ps in following.get(leader, {}).items()}
            if now == self._published.get(leader, {}):
                continue
            path, data = fetching_path(self._broker_id, leader), encode_fetching(now)
            try:
                self._zk.set(path, data)
            except NoNodeError:
                self._zk.create(path, data, makepath=True)
            self._published[leader] = now

    # ---- the leader's side ------------------------------------------------------------------

    def on_change(self, event: Any) -> None:
        """A watch on a follower's fetches from this broker fired (on kazoo's thread)."""
        with self._lock:
            if event.path is None:  # kazoo forgot its watches with the connection
                self._all = True
            else:
                try:
                    self._changed.add(int(str(event.path).split("/")[3]))
                except (IndexError, ValueError):
                    self._all = True
        self._wake()

    def read(self, live: set[int]) -> set[TopicPartition]:
        """Reads again what the live brokers that changed (or are new) follow from this one;
        returns the partitions whose followers or epochs changed."""
        with self._lock:
            changed = set(live) if self._all else self._changed & live
            self._all, self._changed = False, set()
        for gone in set(self.fetchers) - live:
            del self.fetchers[gone]
        changed |= live - set(self.fetchers) - {self._broker_id}
        touched: set[TopicPartition] = set()
        try:
            for follower in sorted(changed - {self._broker_id}):
                now = self._read_one(follower)
                before = self.fetchers.get(follower, {})
                touched |= {tp for tp in now.keys() | before.keys()
                            if now.get(tp) != before.get(tp)}  # fmt: skip
                self.fetchers[follower] = now
        except BaseException:
            with self._lock:
                self._all = True  # ZooKeeper out of reach: read them all next time
            raise
        return touched

    def _read_one(self, follower: int) -> dict[TopicPartition, int]:
        path = fetching_path(follower, self._broker_id)
        node = self._zk.get(path, watch=self.on_change)
        if node is None:
            if self._zk.exists(path, watch=self.on_change):
                return self._read_one(follower)  # created in between
            return {}
        try:
            decoded = decode_fetching(path, node.data)
        except ZNodeDataError as e:
            log.warning("Ignoring what broker %d follows: %s", follower, e)
            return {}
        return {TopicPartition(topic, p): epoch
                for topic, ps in decoded.items() for p, epoch in ps.items()}  # fmt: skip
