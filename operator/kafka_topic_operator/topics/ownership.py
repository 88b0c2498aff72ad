"""Which KafkaTopic resource owns a topic name: the oldest of those naming it (pure).

Every resource claims one topic name (spec.topicName, else its own name). When several claim
the same name, the oldest by creationTimestamp owns it (ties by namespace, then name, so every
operator replica decides alike) and the others are told Conflict. The operator feeds the claims
from the watch stream, after seeding them with one list at startup, and its handlers ask from
worker threads: hence the lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafka_topic_operator.topics.spec import topic_of

ResourceKey = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped


@dataclass(frozen=True, slots=True, order=True)
class Claim:
    created: str  # RFC 3339 in UTC with a Z, so the text sorts as the time does
    namespace: str
    name: str
    topic: str

    @property
    def key(self) -> ResourceKey:
        return (self.namespace, self.name)


def claim_of(namespace: str | None, name: str, spec: Mapping[str, Any],
             meta: Mapping[str, Any]) -> Claim:  # fmt: skip
    """A resource's claim on the topic it names."""
    topic = topic_of(name, spec)
    return Claim(str(meta.get("creationTimestamp") or ""), namespace or "", name, topic)


class TopicClaims:
    """The claims of the resources an operator watches, by topic name."""

    def __init__(self, claims: Iterable[Claim] = ()) -> None:
        self._lock = threading.Lock()
        self._by_resource: dict[ResourceKey, Claim] = {}
        self._by_topic: dict[str, dict[ResourceKey, Claim]] = {}
        for claim in claims:
            self.claim(claim)

    def claim(self, claim: Claim) -> None:
        """Records (or moves, when its topic name changed) a resource's claim."""
        with self._lock:
            self._drop(claim.key)
            self._by_resource[claim.key] = claim
            self._by_topic.setdefault(claim.topic, {})[claim.key] = claim

    def release(self, namespace: str, name: str) -> None:
        """Forgets a resource: deleted, or no longer selected."""
        with self._lock:
            self._drop((namespace, name))

    def owner(self, topic: str) -> ResourceKey | None:
        """The resource owning `topic`, or None when no resource names it."""
        with self._lock:
            claims = self._by_topic.get(topic)
            return min(claims.values()).key if claims else None

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_resource)

    def _drop(self, key: ResourceKey) -> None:
        old = self._by_resource.pop(key, None)
        if old is not None:
            same_topic = self._by_topic[old.topic]
            del same_topic[key]
            if not same_topic:
                del self._by_topic[old.topic]
