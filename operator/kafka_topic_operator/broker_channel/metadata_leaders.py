"""A dev broker's metadata as a client would be told it: each partition's leader in the broker's
metadata cache (what its UpdateMetadata requests said), published at `paths.metadata_path` by
the broker once it applied them. A dev broker has no Kafka listener to ask, so this is its
acknowledgement: the operator's Ready waits until every broker's shows every partition led.

{"version":1,"partitions":{"orders":{"0":1,"1":-1}}}  (leader -1: none)
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from kafka_topic_operator.broker_channel.framing import pack, read_root, read_version

# Each topic's partitions, each with its leader (-1: none).
Leaders = Mapping[str, Mapping[int, int]]


def encode_metadata_leaders(leaders: Leaders) -> bytes:
    partitions = {
        topic: {str(p): leader for p, leader in sorted(by_partition.items())}
        for topic, by_partition in sorted(leaders.items())
    }
    return pack(json.dumps({"version": 1, "partitions": partitions},
                           separators=(",", ":")).encode())  # fmt: skip


def decode_metadata_leaders(path: str, data: bytes | None) -> dict[str, dict[int, int]]:
    """Raises ZNodeDataError naming the field for anything but what encode writes."""
    root = read_root(path, data)
    read_version(root)
    found: dict[str, dict[int, int]] = {}
    for topic, by_partition in root["partitions"].items():
        partitions: dict[int, int] = {}
        for key, leader in by_partition.items():
            if not key.isdigit():
                raise by_partition.fail(f"partition {key!r} is not a partition number")
            partitions[int(key)] = leader.int32()
        found[topic] = partitions
    return found
