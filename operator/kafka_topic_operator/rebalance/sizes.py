"""Partition sizes, for the bytes a plan moves and the DiskUsageDistribution goal.

Two sources, which `kto plan` reads with `--sizes` and `--log-dirs`:

- a metrics file, JSON, one entry per partition (sizes in bytes, whole numbers):

      {"partitions": [{"topic": "orders", "partition": 0, "sizeBytes": 1073741824}, ...]}

- brokers' log directories (Kafka's layout, as dev brokers keep it): each `<topic>-<partition>`
  directory holds a replica, whose size is the bytes of its log segments (`*.log`), as
  `kafka-log-dirs.sh --describe` reports it; `meta.properties` says whose directory it is.

A partition's size is its leader's replica's: followers may lag behind it. Parsing and combining
are pure; only `read_log_dir` touches the disk.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kafka_topic_operator.devbroker.log_dirs import LogDir
from kafka_topic_operator.kafka.topic_partition import TopicPartition

ENTRY_KEYS = ("topic", "partition", "sizeBytes")
SEGMENT_SUFFIX = ".log"


class SizesError(ValueError):
    """Sizes that cannot be read; the message names the file and the entry."""


def parse_sizes(text: str, source: str = "sizes") -> dict[TopicPartition, int]:
    """The metrics file's sizes, or SizesError naming `source` and the bad entry."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SizesError(f"{source}: not JSON: {e}") from None
    if not isinstance(data, dict) or set(data) != {"partitions"}:
        raise SizesError(f'{source}: expected one object {{"partitions": [...]}}')
    entries = data["partitions"]
    if not isinstance(entries, list):
        raise SizesError(f"{source}: partitions: expected a list")
    sizes: dict[TopicPartition, int] = {}
    first: dict[TopicPartition, int] = {}
    for i, entry in enumerate(entries):
        where = f"{source}: partitions[{i}]"
        tp, size = _entry(entry, where)
        if tp in first:
            raise SizesError(f"{where}: {tp} is listed twice (also partitions[{first[tp]}])")
        first[tp] = i
        sizes[tp] = size
    return sizes


def _entry(entry: Any, where: str) -> tuple[TopicPartition, int]:
    if not isinstance(entry, dict):
        raise SizesError(f"{where}: expected an object with {', '.join(ENTRY_KEYS)}")
    missing = [k for k in ENTRY_KEYS if k not in entry]
    unknown = sorted(k for k in entry if k not in ENTRY_KEYS)
    if missing:
        raise SizesError(f"{where}: {', '.join(missing)} missing")
    if unknown:
        raise SizesError(f"{where}: unknown field {', '.join(unknown)}")
    topic, partition, size = (entry[k] for k in ENTRY_KEYS)
    if not isinstance(topic, str) or not topic:
        raise SizesError(f"{where}: topic must be a non-empty string, not {topic!r}")
    if not _whole(partition):
        raise SizesError(f"{where}: partition must be a whole number >= 0, not {partition!r}")
    if not _whole(size):
        raise SizesError(f"{where}: sizeBytes must be a whole number >= 0, not {size!r}")
    return TopicPartition(topic, partition), size


def _whole(value: Any) -> bool:
    # JSON's true is a Python int: refused, as is 1.0 (a size is a count of bytes).
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def read_log_dir(path: Path) -> tuple[int, dict[TopicPartition, int]]:
    """(broker id, bytes of each replica) of one log directory; SizesError if it is not a
    broker's log directory."""
    if not path.is_dir():
        raise SizesError(f"{path}: no such directory")
    log_dir = LogDir(path)
    broker = log_dir.read_meta_properties().get("broker.id")
    if broker is None or not broker.isdigit():
        raise SizesError(f"{path}: not a broker's log directory (no broker.id in meta.properties)")
    sizes = {}
    for tp in log_dir.logs():
        with os.scandir(log_dir.partition_dir(tp)) as files:
            sizes[tp] = sum(
                f.stat().st_size
                for f in files
                if f.name.endswith(SEGMENT_SUFFIX) and f.is_file(follow_symlinks=False)
            )
    return int(broker), sizes


def merge_log_dirs(
    read: Iterable[tuple[Path, int, Mapping[TopicPartition, int]]],
) -> dict[int, dict[TopicPartition, int]]:
    """Replica sizes by broker from (path, broker, sizes) of each log directory: a broker may
    have several (JBOD), but a replica lives in only one of them."""
    by_broker: dict[int, dict[TopicPartition, int]] = {}
    seen: dict[tuple[int, TopicPartition], Path] = {}
    for path, broker, sizes in read:
        mine = by_broker.setdefault(broker, {})
        for tp, size in sizes.items():
            if (broker, tp) in seen:
                raise SizesError(
                    f"{path}: {tp} of broker {broker} is also in {seen[broker, tp]}: a replica "
                    "lives in one log directory"
                )
            seen[broker, tp] = path
            mine[tp] = size
    return by_broker


def partition_sizes(
    replicas: Mapping[int, Mapping[TopicPartition, int]], leaders: Mapping[TopicPartition, int]
) -> dict[TopicPartition, int]:
    """Each partition's size: its leader's replica's when that was read, else the largest
    replica read (a follower is at most behind its leader)."""
    found: dict[TopicPartition, list[tuple[int, int]]] = {}
    for broker, sizes in replicas.items():
        for tp, size in sizes.items():
            found.setdefault(tp, []).append((broker, size))
    out = {}
    for tp, held in found.items():
        by_broker = dict(held)
        leader = leaders.get(tp)
        out[tp] = by_broker[leader] if leader in by_broker else max(by_broker.values())
    return out


def read_partition_sizes(
    log_dirs: Iterable[Path], leaders: Mapping[TopicPartition, int]
) -> dict[TopicPartition, int]:
    """Partition sizes from brokers' log directories (see `partition_sizes`)."""
    return partition_sizes(merge_log_dirs((p, *read_log_dir(p)) for p in log_dirs), leaders)
