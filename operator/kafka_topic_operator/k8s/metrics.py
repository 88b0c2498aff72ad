"""Prometheus metrics of the operator, served on `/metrics` by `kto run --metrics-port`."""

from __future__ import annotations

import threading
from collections import Counter as Tally

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry()

RECONCILES = Counter(
    "kto_reconciles", "Reconcile passes of KafkaTopics, by outcome.", ["result"], registry=REGISTRY
)
RECONCILE_SECONDS = Histogram(
    "kto_reconcile_duration_seconds", "Time of one reconcile pass.", registry=REGISTRY
)
TOPICS = Gauge(
    "kto_topics", "KafkaTopics by their Ready condition's reason.", ["reason"], registry=REGISTRY
)
OFFLINE_PARTITIONS = Gauge(
    "kto_offline_partitions", "Partitions without a live leader, over managed topics.",
    registry=REGISTRY,
)  # fmt: skip
DELETIONS_WAITING = Gauge(
    "kto_deletions_waiting", "KafkaTopics whose deletion waits (DeletionIneligible/Disabled).",
    registry=REGISTRY,
)  # fmt: skip

ZOOKEEPER_UP = Gauge(
    "kto_zookeeper_up", "1 while ZooKeeper answers the operator, 0 during an outage.",
    registry=REGISTRY,
)  # fmt: skip

KAFKA_UP = Gauge(
    "kto_kafka_up", "1 while a KRaft cluster's brokers answer the operator's Admin API, 0 during "
    "an outage.", registry=REGISTRY,
)  # fmt: skip


WAITING_REASONS = frozenset({"DeletionIneligible", "DeletionDisabled"})


class ResourceStates:
    """The last reason and offline count seen per resource, folded into the gauges. Tallies
    are kept as they change: a record costs the same with ten resources or ten thousand."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reasons: dict[str, str] = {}
        self._offline: dict[str, int] = {}
        self._by_reason: Tally[str] = Tally()  # reasons once reported stay: their gauge drops to 0
        self._offline_total = 0
        self._waiting = 0

    def record(self, resource: str, reason: str, offline: int) -> None:
        with self._lock:
            self._drop(resource)
            self._reasons[resource] = reason
            self._offline[resource] = offline
            self._by_reason[reason] += 1
            self._offline_total += offline
            self._waiting += reason in WAITING_REASONS
            self._publish(reason)

    def forget(self, resource: str) -> None:
        with self._lock:
            self._publish(self._drop(resource))

    def _drop(self, resource: str) -> str | None:
        """Takes a resource's last record out of the tallies; its reason, if it had one."""
        reason = self._reasons.pop(resource, None)
        if reason is not None:
            self._by_reason[reason] -= 1
            self._waiting -= reason in WAITING_REASONS
            TOPICS.labels(reason).set(self._by_reason[reason])
        self._offline_total -= self._offline.pop(resource, 0)
        return reason

    def _publish(self, reason: str | None) -> None:
        if reason is not None:
            TOPICS.labels(reason).set(self._by_reason[reason])
        OFFLINE_PARTITIONS.set(self._offline_total)
        DELETIONS_WAITING.set(self._waiting)


STATES = ResourceStates()
