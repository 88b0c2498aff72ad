"""A topic to create, with its placement decided: what every backend's creation takes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final


@dataclass(frozen=True, slots=True)
class NewTopic:
    name: str
    assignment: Mapping[int, Sequence[int]]
    config: Mapping[str, str] = field(default_factory=dict)
    topic_id: str | None = None


# QuorumController.MAX_RECORDS_PER_USER_OP (Kafka 3.5 and later): a KRaft controller refuses a
# CreateTopics whose topics would take more metadata records than this, all of them together.
MAX_RECORDS_PER_REQUEST: Final = 10_000


# Configs whose ConfigRecord a KRaft controller follows with another record: min.insync.replicas
# with a ClearElrRecord (eligible leader replicas; measured on Kafka 4.1: a topic of one
# partition with it alone takes four records, with any other config alone three).
TWO_RECORD_CONFIGS: Final = frozenset({"min.insync.replicas"})


def creation_records(topic: NewTopic) -> int:
    """The metadata records a KRaft controller writes to create `topic`: a TopicRecord, a
    PartitionRecord per partition and a ConfigRecord per config (two for TWO_RECORD_CONFIGS)."""
    configs = sum(2 if key in TWO_RECORD_CONFIGS else 1 for key in topic.config)
    return 1 + len(topic.assignment) + configs


def within_record_limit(
    topics: Sequence[NewTopic], limit: int = MAX_RECORDS_PER_REQUEST
) -> list[list[NewTopic]]:
    """`topics` in order, as few requests as keep each under `limit` records; a topic over the
    limit by itself goes alone (for the controller to refuse with its own message)."""
    batches: list[list[NewTopic]] = []
    records = 0
    for topic in topics:
        needed = creation_records(topic)
        if not batches or records + needed > limit:
            batches.append([])
            records = 0
        batches[-1].append(topic)
        records += needed
    return batches
