"""Watch fan-out: one hub per resource, with a bounded ring of recent events for resumption.

A write touches only the watchers of its own resource (and, among those, the ones on its
namespace or on all namespaces); a watch that resumes from a resourceVersion older than the ring
gets kube-apiserver's 410 "too old resource version" answer.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ApiError, gone

Obj = dict[str, Any]

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"

DEFAULT_RING_CAPACITY = 10_000


@dataclass(slots=True)
class Event:
    """One committed change of one object; `old` is the previous state for MODIFIED."""

    type: str
    obj: Obj
    old: Obj | None
    rv: int
    namespace: str


# What a watcher receives: an (event type, object) pair, or None when the stream must end.
Delivery = tuple[str, Obj] | None


class Watcher:
    """One open watch stream: filters events and queues what its client must see."""

    def __init__(self, namespace: str | None, matches: Callable[[Obj], bool] | None) -> None:
        self.namespace = namespace
        self.matches = matches
        self.queue: asyncio.Queue[Delivery] = asyncio.Queue()

    def offer(self, event: Event) -> None:
        """Queue the event as this watcher sees it (selector transitions become ADDED/DELETED)."""
        if self.matches is None:
            self.queue.put_nowait((event.type, event.obj))
            return
        now = self.matches(event.obj)
        if event.type != MODIFIED:
            if now:
                self.queue.put_nowait((event.type, event.obj))
            return
        before = event.old is not None and self.matches(event.old)
        if now and before:
            self.queue.put_nowait((MODIFIED, event.obj))
        elif now:
            self.queue.put_nowait((ADDED, event.obj))
        elif before:
            self.queue.put_nowait((DELETED, event.obj))

    def close(self) -> None:
        self.queue.put_nowait(None)


class WatchHub:
    """Watchers and recent events of one resource (all versions share one hub)."""

    def __init__(self, capacity: int = DEFAULT_RING_CAPACITY, floor: int = 0) -> None:
        self.ring: deque[Event] = deque(maxlen=capacity)
        # Events with rv <= floor are no longer available: resuming before it is "too old".
        self.floor = floor
        self._watchers: dict[str | None, set[Watcher]] = {}

    def publish(self, event: Event) -> None:
        ring = self.ring
        if ring.maxlen is not None and len(ring) == ring.maxlen:
            self.floor = ring[0].rv
        ring.append(event)
        for key in (event.namespace, None):
            for watcher in self._watchers.get(key, ()):
                watcher.offer(event)

    def events_after(self, rv: int) -> list[Event]:
        """The buffered events after `rv`, oldest first; 410 Gone if some were dropped."""
        if rv < self.floor:
            oldest = self.ring[0].rv if self.ring else self.floor + 1
            raise too_old(rv, oldest)
        found: list[Event] = []
        for event in reversed(self.ring):
            if event.rv <= rv:
                break
            found.append(event)
        found.reverse()
        return found

    def subscribe(self, watcher: Watcher) -> None:
        self._watchers.setdefault(watcher.namespace, set()).add(watcher)

    def unsubscribe(self, watcher: Watcher) -> None:
        watchers = self._watchers.get(watcher.namespace)
        if watchers is not None:
            watchers.discard(watcher)

    def watchers(self) -> list[Watcher]:
        return [w for ws in self._watchers.values() for w in ws]

    def watcher_count(self) -> int:
        return sum(len(ws) for ws in self._watchers.values())


def too_old(requested: int, oldest: int) -> ApiError:
    return gone(f"too old resource version: {requested} ({oldest})")
