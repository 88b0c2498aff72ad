"""A plan cut into ConfigMap-sized parts (pure).

The API server refuses a ConfigMap whose values exceed 1 MiB, about 5,800 changed partitions
of a plan. A larger plan goes into several ConfigMaps, each holding a part in both forms: Kafka's
reassignment JSON (a valid `--reassignment-json-file` on its own: Kafka accepts any subset of a
plan) and the changes (replicas before and after). Parts keep the plan's order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from kafka_topic_operator.rebalance.results.summary import PartitionMove, reassignment_json

# What one ConfigMap's values may hold here: the API's 1 MiB less room for a future field.
PART_BYTES = 1000 * 1000


@dataclass(frozen=True, slots=True)
class PlanPart:
    plan_json: str  # Kafka's reassignment JSON of this part's partitions
    changes_json: str  # the same partitions' replicas before and after

    @property
    def size(self) -> int:
        return len(self.plan_json.encode()) + len(self.changes_json.encode())


def change_entry(move: PartitionMove) -> dict[str, object]:
    return {
        "topic": move.partition.topic,
        "partition": move.partition.partition,
        "before": list(move.before),
        "after": list(move.after),
    }


def changes_json(changes: Sequence[PartitionMove]) -> str:
    """changes.json: each changed partition's replicas before and after."""
    return json.dumps([change_entry(m) for m in changes])


def _entry_size(move: PartitionMove) -> int:
    """What one move adds to a part: its entries in both documents and their separators."""
    plan_entry = {
        "topic": move.partition.topic,
        "partition": move.partition.partition,
        "replicas": list(move.after),
    }
    return len(json.dumps(plan_entry).encode()) + len(json.dumps(change_entry(move)).encode()) + 4


def split_plan(changes: Sequence[PartitionMove], limit: int = PART_BYTES) -> list[PlanPart]:
    """The plan in parts of at most `limit` bytes each (at least one part, empty for an empty
    plan). ValueError if a single partition's entries exceed the limit."""
    envelope = len(reassignment_json([]).encode()) + len(changes_json([]).encode())
    groups: list[list[PartitionMove]] = [[]]
    size = envelope
    for move in changes:
        entry = _entry_size(move)
        if envelope + entry > limit:
            raise ValueError(f"partition {move.partition} alone exceeds {limit} bytes")
        if size + entry > limit:
            groups.append([])
            size = envelope
        groups[-1].append(move)
        size += entry
    return [PlanPart(reassignment_json(g), changes_json(g)) for g in groups]
