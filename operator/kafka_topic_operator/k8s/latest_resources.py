"""The KafkaTopics as kopf's watch last delivered them, for the status follower.

The follower reports thousands of topics at once when a broker goes; reading each resource
from the API before writing its status doubled the API calls. It takes the resource from here
instead, and writes conditionally on the resourceVersion it took (a copy the watch has not
caught up with yet gets a 409, and is then read from the API). What it does to Kafka for drift
is never decided from here: that path reads the resource from the API.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any


class LatestResources:
    """Each resource's body from its last watch event (read-only: shared with kopf). Written
    on kopf's loop, read from the follower's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bodies: dict[tuple[str, str], Mapping[str, Any]] = {}

    def saw(self, namespace: str, name: str, body: Mapping[str, Any] | None) -> None:
        """The body an event delivered; None: the resource is gone, or no longer selected."""
        with self._lock:
            if body is None:
                self._bodies.pop((namespace, name), None)
            else:
                self._bodies[(namespace, name)] = body

    def get(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        with self._lock:
            return self._bodies.get((namespace, name))

    def __len__(self) -> int:
        with self._lock:
            return len(self._bodies)
