"""The shape two of a dev broker's publications share: a number for each partition, by topic.

{"version":1,"partitions":{"orders":{"0":1,"1":-1}}}
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from kafka_topic_operator.broker_channel.framing import pack, read_root, read_version

PartitionMap = Mapping[str, Mapping[int, int]]
"""Each topic's partitions, each with its number (32-bit)."""


def encode_partition_map(values: PartitionMap) -> bytes:
    partitions = {
        topic: {str(p): value for p, value in sorted(by_partition.items())}
        for topic, by_partition in sorted(values.items())
    }
    return pack(json.dumps({"version": 1, "partitions": partitions},
                           separators=(",", ":")).encode())  # fmt: skip


def decode_partition_map(path: str, data: bytes | None) -> dict[str, dict[int, int]]:
    """Raises ZNodeDataError naming the field for anything but what encode writes."""
    root = read_root(path, data)
    read_version(root)
    found: dict[str, dict[int, int]] = {}
    for topic, by_partition in root["partitions"].items():
        partitions: dict[int, int] = {}
        for key, value in by_partition.items():
            if not key.isdigit():
                raise by_partition.fail(f"partition {key!r} is not a partition number")
            partitions[int(key)] = value.int32()
        found[topic] = partitions
    return found
