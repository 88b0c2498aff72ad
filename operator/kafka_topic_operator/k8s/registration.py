"""How `kto run` registers the KafkaTopic handlers (`handlers`) with kopf: for the resources
its `--selector` picks, with its `--drift-interval`."""

from __future__ import annotations

from collections.abc import Mapping

import kopf

from kafka_topic_operator.k8s.finalizer import finalized
from kafka_topic_operator.k8s.handlers import (
    DRIFT_INTERVAL,
    GROUP,
    MANAGED,
    PAUSE,
    PLURAL,
    VERSION,
    drift,
    reconcile,
    unsettled,
)
from kafka_topic_operator.k8s.topic_deletion import delete


def register(selector: Mapping[str, str], drift_interval: float = DRIFT_INTERVAL) -> None:
    """Registers the KafkaTopic handlers with kopf, for the resources `kto run --selector`
    picks. kopf matches the labels itself: a `when` callback is called, with its keyword
    arguments built, for every handler on every event."""
    labels: dict[str, str] | None = dict(selector) or None
    # Pausing or resuming, and managing or releasing, take effect at once, not at the next
    # drift pass.
    kopf.on.update(GROUP, VERSION, PLURAL, field=("metadata", "annotations", MANAGED),
                   id="reconcile/managed", labels=labels)(reconcile)  # fmt: skip
    kopf.on.update(GROUP, VERSION, PLURAL, field=("metadata", "annotations", PAUSE),
                   id="reconcile/paused", labels=labels)(reconcile)  # fmt: skip
    kopf.on.update(GROUP, VERSION, PLURAL, field="spec", labels=labels)(reconcile)
    kopf.on.create(GROUP, VERSION, PLURAL, labels=labels)(reconcile)
    kopf.on.resume(GROUP, VERSION, PLURAL, labels=labels)(reconcile)
    # Only resources carrying the finalizer (their reconcile added it): kopf does not add it in
    # a cycle of its own (`finalizer`).
    kopf.on.delete(GROUP, VERSION, PLURAL, labels=labels, when=finalized)(delete)
    _register_drift_timer(labels, drift_interval)


def _register_drift_timer(labels: dict[str, str] | None, interval: float) -> None:
    """The retry timer, with `kto run`'s `--drift-interval`, for resources whose topic is not
    (yet) as declared: blocked, in conflict, invalid, paused. A settled resource has none
    (kopf stops a timer whose filter stops matching): its topic's znodes are watched by the
    status follower, which reverts or reports drift at once (`refresh_statuses`), and ten
    thousand idle resources cost no timer each."""
    kopf.timer(GROUP, VERSION, PLURAL, interval=interval, idle=interval, labels=labels,
               when=unsettled)(drift)  # fmt: skip
