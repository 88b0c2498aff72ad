"""A rebalance carried out on a KRaft cluster through Kafka's Admin API, as
kafka-reassign-partitions does it there, with `kafka_admin.backend.KafkaAdminBackend` (this
module only names what it needs of it: `AdminApi`).

- Throttles: the same configs with the same values as on ZooKeeper (`execution.steps`), through
  IncrementalAlterConfigs: each moving topic's leader and follower throttled-replica lists,
  merged with what the topic has, and the rates as dynamic configs of every broker involved; set
  before each batch that moves data, removed (where set) when the plan is done or stopped. A
  broker that is not alive is left out: its own configs are changed only through it, and it
  sends and receives nothing.
- Reassignments: one AlterPartitionReassignments per batch; refused when one of its partitions
  is moving already (someone else's request got there first: the next read waits for it).
- Waiting: there are no watches. ListPartitionReassignments every `interval` seconds until none
  of the partitions in flight is listed; each pause is a wait on `stop` (the daemon's), so a
  stopping operator is not held.
- Elections: ElectLeaders (PREFERRED), answered once the controller has elected. Partitions it
  could not elect (their preferred replica out of the ISR, or down) are asked for again after
  `election_retry` seconds, an election pending meanwhile, so that nothing spins.
- Reads: the topics' metadata comes from a broker, which learns of the controller's changes a
  moment later, and each read may reach another broker. A partition of the plan shown with
  neither its replicas before nor those after while nothing moves it (a broker that has not yet
  seen a move complete shows both sets) is read again, for up to `metadata_lag` seconds, before
  the plan is taken for outdated (when stopping meanwhile, for in flight: the next executor
  reads it again).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final, Literal, Protocol

from kafka_topic_operator.kafka.errors import ReassignmentInProgressException
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot, Expected
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.execution import steps as ex
from kafka_topic_operator.rebalance.execution.cluster import RebalanceCluster, now_of
from kafka_topic_operator.rebalance.results.summary import PartitionMove

log = logging.getLogger(__name__)

INTERVAL: Final = 0.5  # seconds between looks at the reassignments in progress
METADATA_LAG: Final = 10.0  # how long a broker's metadata may lag the controller's
ELECTION_RETRY: Final = 5.0  # seconds before partitions not elected are asked for again

REPLICA_KEYS: Final = (ex.LEADER_THROTTLED_REPLICAS, ex.FOLLOWER_THROTTLED_REPLICAS)
RATE_KEYS: Final = (ex.LEADER_THROTTLED_RATE, ex.FOLLOWER_THROTTLED_RATE)

ConfigKind = Literal["topic", "broker"]
Changes = dict[str, dict[str, str | None]]  # per topic or broker, each key's value; None: DELETE


class AdminApi(Protocol):
    """What the rebalance needs of `kafka_admin.backend.KafkaAdminBackend`."""

    def topic_names(self) -> list[str]: ...

    def read(
        self, topics: Iterable[str], *, list_topics: bool, expected: Expected | None = None
    ) -> ClusterSnapshot: ...

    def reassign(self, targets: Mapping[TopicPartition, Sequence[int]]) -> None:
        """Raises ReassignmentInProgressException where one is in progress already."""

    def list_reassignments(self) -> Mapping[TopicPartition, ReplicaAssignment]: ...

    def elect_preferred(
        self, partitions: Iterable[TopicPartition]
    ) -> Mapping[TopicPartition, Exception | None]: ...

    def dynamic_configs(
        self, kind: ConfigKind, names: Iterable[str], keys: Collection[str]
    ) -> Mapping[str, Mapping[str, str]]:
        """Among `keys`, each topic's or broker's own dynamic configs."""

    def alter_configs(
        self, kind: ConfigKind, changes: Mapping[str, Mapping[str, str | None]]
    ) -> None:
        """Each key SET to its value, or DELETEd for None."""


class Interruption(Protocol):
    """What stops a wait: a threading.Event, or kopf's `stopped`."""

    def is_set(self) -> bool: ...

    def wait(self, timeout: float | None = None) -> object: ...


def topic_throttles(
    batch: Iterable[PartitionMove], current: Mapping[str, Mapping[str, str]]
) -> Changes:
    """The throttled-replica lists each topic of a batch gets: its own merged with the batch's
    (`current`: each topic's lists as set now)."""
    return {
        topic: {
            ex.LEADER_THROTTLED_REPLICAS: ex.merge_throttle(
                current.get(topic, {}).get(ex.LEADER_THROTTLED_REPLICAS), leaders
            ),
            ex.FOLLOWER_THROTTLED_REPLICAS: ex.merge_throttle(
                current.get(topic, {}).get(ex.FOLLOWER_THROTTLED_REPLICAS), followers
            ),
        }
        for topic, (leaders, followers) in ex.throttled_replicas(batch).items()
    }


def broker_throttles(brokers: Iterable[int], rate: int) -> Changes:
    return {str(b): dict.fromkeys(RATE_KEYS, str(rate)) for b in brokers}


def removals(current: Mapping[str, Mapping[str, str]], keys: Collection[str]) -> Changes:
    """DELETE for each of `keys` a topic or broker has set; nothing for those without."""
    found: Changes = {
        name: dict.fromkeys((k for k in keys if k in configs), None)
        for name, configs in current.items()
    }
    return {name: ops for name, ops in sorted(found.items()) if ops}


class AdminApiCluster:
    """`RebalanceCluster` through Kafka's Admin API."""

    def __init__(
        self,
        admin: AdminApi,
        *,
        stop: Interruption | None = None,
        interval: float = INTERVAL,
        metadata_lag: float = METADATA_LAG,
        election_retry: float = ELECTION_RETRY,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"interval {interval} is not positive")
        self.admin = admin
        self.stop: Interruption = stop if stop is not None else threading.Event()
        self.interval = interval
        self.metadata_lag = metadata_lag
        self.election_retry = election_retry
        self._live: frozenset[int] | None = None  # the live brokers of the last read
        self._elect_again_at = 0.0  # monotonic; before it, an election counts as pending

    def snapshot(self) -> ClusterSnapshot:
        return self.admin.read(self.admin.topic_names(), list_topics=True)

    def now(self, plan: Sequence[PartitionMove]) -> ex.ClusterNow:
        topics = sorted({m.partition.topic for m in plan})
        deadline = time.monotonic() + self.metadata_lag
        while True:
            snapshot = self.admin.read(topics, list_topics=False)
            self._live = snapshot.live_brokers
            now = now_of(snapshot, self._election_pending())
            behind = ex.off_plan(plan, now)
            if not behind or time.monotonic() >= deadline:
                return now
            if self.stop.is_set():
                # Not settled, and no time to wait: taken for in flight, not for outdated.
                return replace(now, reassigning=now.reassigning | frozenset(behind))
            log.debug("%d partitions read neither before nor after their move (%s...): reading "
                      "again", len(behind), behind[0])  # fmt: skip
            self.stop.wait(self.interval)

    def set_throttles(self, batch: Sequence[PartitionMove], rate: int) -> None:
        topics = sorted({m.partition.topic for m in batch})
        current = self.admin.dynamic_configs("topic", topics, REPLICA_KEYS)
        self.admin.alter_configs("topic", topic_throttles(batch, current))
        self.admin.alter_configs("broker", broker_throttles(self._alive(batch), rate))

    def clear_throttles(self, plan: Sequence[PartitionMove]) -> None:
        topics = sorted({m.partition.topic for m in plan})
        current = self.admin.dynamic_configs("topic", topics, REPLICA_KEYS)
        self.admin.alter_configs("topic", removals(current, REPLICA_KEYS))
        brokers = [str(b) for b in self._alive(plan)]
        current = self.admin.dynamic_configs("broker", brokers, RATE_KEYS)
        self.admin.alter_configs("broker", removals(current, RATE_KEYS))

    def reassign(self, targets: Mapping[TopicPartition, Sequence[int]]) -> bool:
        try:
            self.admin.reassign(targets)
        except ReassignmentInProgressException as e:
            log.info("not reassigning yet: %s", e)
            return False
        return True

    def elect_preferred(self, partitions: Sequence[TopicPartition]) -> bool:
        outcomes = self.admin.elect_preferred(partitions)
        failed = {tp: e for tp, e in sorted(outcomes.items()) if e is not None}
        if failed:
            tp, error = next(iter(failed.items()))
            log.warning("preferred leaders not elected for %d partitions (%s: %s); asking again "
                        "in %g s", len(failed), tp, error, self.election_retry)  # fmt: skip
            self._elect_again_at = time.monotonic() + self.election_retry
        return True

    def wait_in_flight(self, now: ex.ClusterNow, timeout: float) -> bool:
        """Reassignments: until none of those read in flight is listed. Where none was listed
        at the first look, the read came from a broker that had not yet seen them end (the
        backend takes a move it knows of for in flight until a broker shows its target): one
        pause first, so that the next read does not ask that broker again at once."""
        deadline = time.monotonic() + timeout
        first = True
        while True:
            if now.election_pending:
                done = not self._election_pending()
                pause = self._elect_again_at - time.monotonic()
            else:
                done = not now.reassigning & set(self.admin.list_reassignments())
                pause = self.interval
                if done and first:
                    self.stop.wait(min(pause, max(0.0, deadline - time.monotonic())))
            left = deadline - time.monotonic()
            if done or left <= 0 or self.stop.is_set():
                return done
            first = False
            self.stop.wait(max(0.0, min(pause, left)))

    def _election_pending(self) -> bool:
        return time.monotonic() < self._elect_again_at

    def _alive(self, moves: Iterable[PartitionMove]) -> list[int]:
        """The brokers of `moves` that were alive at the last read (all, before any read)."""
        brokers = ex.throttled_brokers(moves)
        if self._live is None:
            return brokers
        gone = [b for b in brokers if b not in self._live]
        if gone:
            log.info("brokers %s are not alive: their throttle rates are left as they are",
                     ", ".join(map(str, gone)))  # fmt: skip
        return [b for b in brokers if b in self._live]


if TYPE_CHECKING:  # mypy checks that it is what the executor takes (structurally)

    def _is_a_rebalance_cluster(cluster: AdminApiCluster) -> RebalanceCluster:
        return cluster
