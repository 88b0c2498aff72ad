"""Kafka's on-disk layout of a broker's log directory (`log.dirs`), as LogManager keeps it: one
directory per hosted partition (`<topic>-<partition>/`) with its log segments and
`partition.metadata` (kafka.server.PartitionMetadataFile), `meta.properties` tying the directory
to one broker and cluster, `-delete`/`-future` renames. Names and file formats only: the dev
broker writes this layout, the rebalance planner reads sizes from it.
"""

from __future__ import annotations

import re
from typing import Final

from kafka_topic_operator.kafka.topic_partition import TopicPartition

META_PROPERTIES: Final = "meta.properties"
PARTITION_METADATA: Final = "partition.metadata"
FIRST_SEGMENT: Final = "00000000000000000000"
SEGMENT_SUFFIXES: Final = (".log", ".index", ".timeindex")
DELETE_DIR_SUFFIX: Final = "-delete"

# Log.DeleteDirPattern / FutureDirPattern: `<topic>-<partition>.<uuid>-delete|-future`.
RENAMED_DIR = re.compile(r"^(\S+)-(\d+)\.(\S+)-(delete|future)$")


def partition_dir_name(partition: TopicPartition) -> str:
    return f"{partition.topic}-{partition.partition}"


def parse_partition_dir_name(name: str) -> TopicPartition | None:
    """Log.parseTopicPartitionName for a live log directory; None for anything else."""
    if name.startswith(".") or RENAMED_DIR.match(name):
        return None
    topic, sep, number = name.rpartition("-")
    if not sep or not topic or not number.isascii() or not number.isdigit():
        return None
    return TopicPartition(topic, int(number))


def encode_partition_metadata(topic_id: str) -> str:
    """PartitionMetadataFileFormatter.toFile: two lines, no trailing newline."""
    return f"version: 0\ntopic_id: {topic_id}"


def decode_partition_metadata(text: str) -> str | None:
    """The topic id, or None if the file is empty or not what Kafka writes."""
    lines = text.splitlines()
    if len(lines) < 2:
        return None
    version = re.split(r":\s+", lines[0], maxsplit=1)
    topic_id = re.split(r":\s+", lines[1], maxsplit=1)
    if len(version) != 2 or version[1].strip() != "0" or len(topic_id) != 2:
        return None
    return topic_id[1].strip() or None


def parse_meta_properties(text: str) -> dict[str, str]:
    """A `meta.properties` file's keys and values (java.util.Properties' simple form)."""
    props: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "!")):
            continue
        key, _, value = line.partition("=")
        props[key.strip()] = value.strip()
    return props
