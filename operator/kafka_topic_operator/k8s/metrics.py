"""Prometheus metrics of the operator, served on `/metrics` by `kto run --metrics-port`."""

from __future__ import annotations

import datetime
import threading
import time
from collections import Counter as Tally
from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.metrics_core import Metric

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
UNDER_REPLICATED_PARTITIONS = Gauge(
    "kto_under_replicated_partitions", "Partitions whose ISR is smaller than their replicas, "
    "over managed topics.", registry=REGISTRY,
)  # fmt: skip
DELETIONS_WAITING = Gauge(
    "kto_deletions_waiting", "KafkaTopics whose deletion waits (DeletionIneligible/Disabled).",
    registry=REGISTRY,
)  # fmt: skip
DELETION_WAIT_MAX = Gauge(
    "kto_deletion_wait_seconds_max", "How long the longest-waiting deletion has waited "
    "(DeletionIneligible/Disabled); 0 when none waits.", registry=REGISTRY,
)  # fmt: skip

REBALANCES = Gauge(
    "kto_rebalances", "KafkaRebalances by state (PendingProposal, ProposalReady, Rebalancing, "
    "Ready, Stopped, NotReady).", ["state"], registry=REGISTRY,
)  # fmt: skip
REBALANCE_PARTITIONS = Gauge(
    "kto_rebalance_partitions", "A running rebalance's partition moves by phase (done, "
    "in_flight, remaining); present while it rebalances.", ["namespace", "name", "phase"],
    registry=REGISTRY,
)  # fmt: skip
REBALANCE_PLAN_MOVES = Gauge(
    "kto_rebalance_plan_moves", "Moves in a KafkaRebalance's current proposal by kind (replica: "
    "replicas moved to another broker, leader: preferred leaders changed).",
    ["namespace", "name", "kind"], registry=REGISTRY,
)  # fmt: skip

# Registered by `export` when the operator uses that kind of cluster: the other one's gauge,
# always 0, would read as an outage on a dashboard or in an alert.
ZOOKEEPER_UP = Gauge(
    "kto_zookeeper_up", "1 while ZooKeeper answers the operator, 0 during an outage.",
    registry=None,
)  # fmt: skip
KAFKA_UP = Gauge(
    "kto_kafka_up", "1 while a KRaft cluster's brokers answer the operator's Admin API, 0 during "
    "an outage.", registry=None,
)  # fmt: skip
CLUSTER_UP = (ZOOKEEPER_UP, KAFKA_UP)
_exported: set[Gauge] = set()
_exporting = threading.Lock()


def export(gauge: Gauge) -> Gauge:
    """`gauge` (one of CLUSTER_UP) served on /metrics from now on."""
    with _exporting:
        if gauge not in _exported:
            REGISTRY.register(gauge)
            _exported.add(gauge)
    return gauge


def every_family() -> list[Metric]:
    """Every metric family the operator can serve, whichever kind of cluster it uses: what
    dashboards and alert rules may name."""
    families = list(REGISTRY.collect())
    served = {family.name for family in families}
    return families + [f for g in CLUSTER_UP for f in g.collect() if f.name not in served]


WAITING_REASONS = frozenset({"DeletionIneligible", "DeletionDisabled"})
# kto_reconciles_total's result label while the cluster does not answer, by status reason.
UNAVAILABLE_RESULTS = {"ZooKeeperUnavailable": "zookeeper_unavailable",
                       "KafkaUnavailable": "kafka_unavailable"}  # fmt: skip


class ResourceStates:
    """The last reason and offline count seen per resource, folded into the gauges. Tallies
    are kept as they change: a record costs the same with ten resources or ten thousand."""

    def __init__(self, clock: Any = time.time) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._reasons: dict[str, str] = {}
        self._offline: dict[str, int] = {}
        self._under: dict[str, int] = {}
        self._by_reason: Tally[str] = Tally()  # reasons once reported stay: their gauge drops to 0
        self._offline_total = 0
        self._under_total = 0
        self._waiting = 0
        # When each waiting deletion began (its deletionTimestamp, so a restarted operator
        # still knows), else when it was first seen waiting; kept while it keeps waiting.
        self._waiting_since: dict[str, float] = {}

    def record(
        self,
        resource: str,
        reason: str,
        offline: int,
        under_replicated: int = 0,
        deletion_timestamp: str | None = None,
    ) -> None:
        """`deletion_timestamp`: the resource's metadata.deletionTimestamp, if it has one."""
        deleted_at = _epoch(deletion_timestamp)
        with self._lock:
            since = deleted_at if deleted_at is not None else self._waiting_since.get(resource)
            self._drop(resource)
            self._reasons[resource] = reason
            self._offline[resource] = offline
            self._under[resource] = under_replicated
            self._by_reason[reason] += 1
            self._offline_total += offline
            self._under_total += under_replicated
            if reason in WAITING_REASONS:
                self._waiting += 1
                self._waiting_since[resource] = since if since is not None else self._clock()
            self._publish(reason)

    def record_status(
        self, resource: str, status: Mapping[str, Any], meta: Mapping[str, Any]
    ) -> None:
        """A KafkaTopic's record as its status (Ready first) and metadata now say."""
        conditions = status.get("conditions") or [{}]
        counts = status.get("partitionCounts") or {}
        self.record(
            resource,
            str(conditions[0].get("reason", "")),
            int(counts.get("offline", 0)),
            int(counts.get("underReplicated", 0)),
            meta.get("deletionTimestamp"),
        )

    def longest_wait(self) -> float:
        """Seconds the longest-waiting deletion has waited; 0 when none waits."""
        with self._lock:
            oldest = min(self._waiting_since.values(), default=None)
            return 0.0 if oldest is None else self._clock() - oldest

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
        self._waiting_since.pop(resource, None)
        self._offline_total -= self._offline.pop(resource, 0)
        self._under_total -= self._under.pop(resource, 0)
        return reason

    def _publish(self, reason: str | None) -> None:
        if reason is not None:
            TOPICS.labels(reason).set(self._by_reason[reason])
        OFFLINE_PARTITIONS.set(self._offline_total)
        UNDER_REPLICATED_PARTITIONS.set(self._under_total)
        DELETIONS_WAITING.set(self._waiting)


def _epoch(timestamp: str | None) -> float | None:
    """An RFC 3339 time as the API server writes it (2026-01-01T00:00:00Z), in epoch seconds."""
    try:
        return datetime.datetime.fromisoformat(str(timestamp)).timestamp() if timestamp else None
    except ValueError:
        return None


STATES = ResourceStates()
DELETION_WAIT_MAX.set_function(STATES.longest_wait)

PROGRESS_PHASES = {"done": "partitionsDone", "in_flight": "partitionsInFlight",
                   "remaining": "partitionsRemaining"}  # fmt: skip


class RebalanceStates:
    """Each KafkaRebalance's last state, progress and proposal, folded into the gauges as its
    daemon writes status."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[tuple[str, str], str] = {}
        self._by_state: Tally[str] = Tally()

    def record(self, namespace: str, name: str, state: str, status: Mapping[str, Any]) -> None:
        with self._lock:
            self._drop(namespace, name)
            self._states[namespace, name] = state
            self._by_state[state] += 1
            REBALANCES.labels(state).set(self._by_state[state])
            progress = status.get("progress")
            if state == "Rebalancing" and isinstance(progress, Mapping):
                for phase, key in PROGRESS_PHASES.items():
                    value = progress.get(key)
                    if isinstance(value, int):
                        REBALANCE_PARTITIONS.labels(namespace, name, phase).set(value)
            else:
                _remove(REBALANCE_PARTITIONS, namespace, name, PROGRESS_PHASES)
            result = status.get("optimizationResult")
            if isinstance(result, Mapping):
                for kind, key in (("replica", "replicaMoves"), ("leader", "leaderMoves")):
                    value = result.get(key)
                    if isinstance(value, int):
                        REBALANCE_PLAN_MOVES.labels(namespace, name, kind).set(value)

    def forget(self, namespace: str, name: str) -> None:
        with self._lock:
            self._drop(namespace, name)
            _remove(REBALANCE_PARTITIONS, namespace, name, PROGRESS_PHASES)
            _remove(REBALANCE_PLAN_MOVES, namespace, name, ("replica", "leader"))

    def _drop(self, namespace: str, name: str) -> None:
        state = self._states.pop((namespace, name), None)
        if state is not None:
            self._by_state[state] -= 1
            REBALANCES.labels(state).set(self._by_state[state])


def _remove(gauge: Gauge, namespace: str, name: str, last: Any) -> None:
    for label in last:
        gauge.remove(namespace, name, label)  # a label set never set is no error


REBALANCE_STATES = RebalanceStates()
