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


class ResourceStates:
    """The last reason and offline count seen per resource, folded into the gauges."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reasons: dict[str, str] = {}
        self._offline: dict[str, int] = {}
        self._seen: set[str] = set()  # reasons once reported: their gauge drops to 0, not away

    def record(self, resource: str, reason: str, offline: int) -> None:
        with self._lock:
            self._reasons[resource] = reason
            self._offline[resource] = offline
            self._publish()

    def forget(self, resource: str) -> None:
        with self._lock:
            self._reasons.pop(resource, None)
            self._offline.pop(resource, None)
            self._publish()

    def _publish(self) -> None:
        counts = Tally(self._reasons.values())
        self._seen.update(counts)
        for reason in self._seen:
            TOPICS.labels(reason).set(counts.get(reason, 0))
        OFFLINE_PARTITIONS.set(sum(self._offline.values()))
        DELETIONS_WAITING.set(
            sum(
                1 for r in self._reasons.values() if r in ("DeletionIneligible", "DeletionDisabled")
            )
        )


STATES = ResourceStates()
