"""Partition sizes, for the bytes a plan moves and the DiskUsageDistribution goal.

Three sources, which `kto plan` reads with `--sizes` (either document) and `--log-dirs`, and a
KafkaRebalance from the ConfigMap its spec.partitionSizes names (either document):

- a metrics file, JSON, one entry per partition (sizes in bytes, whole numbers):

      {"partitions": [{"topic": "orders", "partition": 0, "sizeBytes": 1073741824}, ...]}

- what `kafka-log-dirs.sh --describe` prints: its JSON line (the lines before it are prose),
  each broker's replicas in each log directory, `"partition"` spelled `<topic>-<partition>`:

      {"version": 1, "brokers": [{"broker": 1, "logDirs": [{"logDir": "/var/kafka", "error":
       null, "partitions": [{"partition": "orders-0", "size": 1073741824, "offsetLag": 0,
       "isFuture": false}]}]}]}

- brokers' log directories (Kafka's layout, as dev brokers keep it): each `<topic>-<partition>`
  directory holds a replica, whose size is the bytes of its log segments (`*.log`), as
  `kafka-log-dirs.sh --describe` reports it; `meta.properties` says whose directory it is.

A partition's size is its leader's replica's: followers may lag behind it. Parsing and combining
are pure; only `read_log_dir` touches the disk.
"""

from __future__ import annotations

import base64
import json
import os
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kafka_topic_operator.kafka.log_dir_layout import (
    META_PROPERTIES,
    parse_meta_properties,
    parse_partition_dir_name,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition

ENTRY_KEYS = ("topic", "partition", "sizeBytes")
GZIP_MAGIC = b"\x1f\x8b"
# A gzipped document inflates at most this far: sizes of millions of replicas, not a zip bomb.
MAX_INFLATED = 512 * 1024 * 1024
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


def parse_log_dirs_describe(
    text: str, source: str = "log dirs"
) -> dict[int, dict[TopicPartition, int]]:
    """Replica sizes by broker from `kafka-log-dirs.sh --describe`'s output, or SizesError
    naming `source` and the bad entry. A future replica (being moved between a broker's log
    directories, `isFuture`) is the current one's copy and is skipped; so is a log directory
    that reports an error (it lists no replicas)."""
    line = next((x for x in reversed(text.splitlines()) if x.lstrip().startswith("{")), None)
    if line is None:
        raise SizesError(f"{source}: no JSON line (kafka-log-dirs.sh --describe prints one)")
    try:
        data = json.loads(line)
    except json.JSONDecodeError as e:
        raise SizesError(f"{source}: not JSON: {e}") from None
    brokers = _field(data, "brokers", list, source)
    read: list[tuple[str, int, dict[TopicPartition, int]]] = []
    for i, entry in enumerate(brokers):
        where = f"{source}: brokers[{i}]"
        broker = _field(entry, "broker", int, where)
        if not _whole(broker):
            raise SizesError(f"{where}: broker must be a whole number >= 0, not {broker!r}")
        for j, log_dir in enumerate(_field(entry, "logDirs", list, where)):
            at = f"{where}.logDirs[{j}]"
            if not isinstance(log_dir, dict):
                raise SizesError(f"{at}: expected an object")
            if log_dir.get("error") is not None:
                continue
            path = str(log_dir.get("logDir", at))
            read.append((path, broker, _replicas(_field(log_dir, "partitions", list, at), at)))
    return merge_log_dirs(read)


def _field(obj: Any, name: str, kind: type, where: str) -> Any:
    if not isinstance(obj, dict):
        raise SizesError(f"{where}: expected an object")
    if name not in obj:
        raise SizesError(f"{where}: {name} missing")
    value = obj[name]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise SizesError(f"{where}: {name} must be a {_KINDS[kind]}, not {value!r}")
    return value


_KINDS = {list: "list", int: "whole number", str: "string"}


def _replicas(entries: list[Any], where: str) -> dict[TopicPartition, int]:
    out: dict[TopicPartition, int] = {}
    for k, entry in enumerate(entries):
        at = f"{where}.partitions[{k}]"
        name = _field(entry, "partition", str, at)
        size = _field(entry, "size", int, at)
        topic, _, number = name.rpartition("-")
        if not topic or not number.isdigit():
            raise SizesError(f"{at}: partition must read <topic>-<partition>, not {name!r}")
        if size < 0:
            raise SizesError(f"{at}: size must be a whole number >= 0, not {size!r}")
        if entry.get("isFuture") is True:
            continue
        out[TopicPartition(topic, int(number))] = size
    return out


def read_sizes_document(
    text: str, source: str, leaders: Mapping[TopicPartition, int]
) -> dict[TopicPartition, int]:
    """Partition sizes from either document: the metrics file, or kafka-log-dirs.sh's output
    (a partition's size is then its leader's replica's, see `partition_sizes`)."""
    return sizes_from_documents({source: text}, leaders)


def sizes_from_documents(
    documents: Mapping[str, str], leaders: Mapping[TopicPartition, int]
) -> dict[TopicPartition, int]:
    """Partition sizes from several documents by name (a ConfigMap's keys): the replicas of
    log-dirs outputs are merged (each may describe some brokers), metrics files may not name a
    partition twice, and a metrics file's size wins over the log directories'."""
    replicas: list[tuple[str, int, Mapping[TopicPartition, int]]] = []
    metrics: dict[TopicPartition, int] = {}
    named: dict[TopicPartition, str] = {}
    for name in sorted(documents):
        text = documents[name]
        if _is_log_dirs(text):
            by_broker = parse_log_dirs_describe(text, name)
            replicas += [(name, broker, sizes) for broker, sizes in by_broker.items()]
            continue
        for tp, size in parse_sizes(text, name).items():
            if tp in named:
                raise SizesError(f"{name}: {tp} is also in {named[tp]}")
            named[tp] = name
            metrics[tp] = size
    return partition_sizes(merge_log_dirs(replicas), leaders) | metrics


def config_map_documents(
    name: str,
    data: Mapping[str, str] | None,
    binary_data: Mapping[str, str] | None,
    key: str | None,
) -> dict[str, str]:
    """The sizes documents of a ConfigMap (`data` as text, `binary_data` base64 as the API gives
    it), each named `ConfigMap <name> key <key>` for messages: `key`'s, or every key's when it
    is None. SizesError when the key is missing or the ConfigMap holds nothing."""
    text, raw = dict(data or {}), dict(binary_data or {})
    held = sorted({*text, *raw})
    if key is not None and key not in held:
        listed = ", ".join(held) or "none"
        raise SizesError(f"ConfigMap {name} has no key {key} (its keys: {listed})")
    if not held:
        raise SizesError(f"ConfigMap {name} holds no data")
    documents = {}
    for k in held if key is None else [key]:
        where = f"ConfigMap {name} key {k}"
        documents[where] = (
            text[k] if k in text else decode_document(base64.b64decode(raw[k]), where)
        )
    return documents


def decode_document(raw: bytes, source: str) -> str:
    """A document given as bytes (a ConfigMap's binaryData): gzipped (`gzip log-dirs.txt`, which
    fits about ten times as many partitions in a ConfigMap's 1 MiB) or plain UTF-8."""
    if raw.startswith(GZIP_MAGIC):
        inflate = zlib.decompressobj(wbits=31)
        try:
            raw = inflate.decompress(raw, MAX_INFLATED)
        except zlib.error as e:
            raise SizesError(f"{source}: not a valid gzip stream: {e}") from None
        if inflate.unconsumed_tail:
            raise SizesError(f"{source}: inflates to more than {MAX_INFLATED >> 20} MiB")
    try:
        return raw.decode()
    except UnicodeDecodeError:
        raise SizesError(f"{source}: neither gzip nor UTF-8 text") from None


def _is_log_dirs(text: str) -> bool:
    return '"brokers"' in text and '"logDirs"' in text


def _whole(value: Any) -> bool:
    # JSON's true is a Python int: refused, as is 1.0 (a size is a count of bytes).
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def read_log_dir(path: Path) -> tuple[int, dict[TopicPartition, int]]:
    """(broker id, bytes of each replica) of one log directory; SizesError if it is not a
    broker's log directory."""
    if not path.is_dir():
        raise SizesError(f"{path}: no such directory")
    try:
        meta = (path / META_PROPERTIES).read_text(encoding="utf-8")
    except FileNotFoundError:
        meta = ""
    broker = parse_meta_properties(meta).get("broker.id")
    if broker is None or not broker.isdigit():
        raise SizesError(f"{path}: not a broker's log directory (no broker.id in meta.properties)")
    sizes = {}
    with os.scandir(path) as entries:  # d_type: no stat per entry
        for entry in entries:
            tp = parse_partition_dir_name(entry.name) if entry.is_dir() else None
            if tp is None:
                continue
            with os.scandir(entry.path) as files:
                sizes[tp] = sum(
                    f.stat().st_size
                    for f in files
                    if f.name.endswith(SEGMENT_SUFFIX) and f.is_file(follow_symlinks=False)
                )
    return int(broker), dict(sorted(sizes.items()))


def merge_log_dirs(
    read: Iterable[tuple[Path | str, int, Mapping[TopicPartition, int]]],
) -> dict[int, dict[TopicPartition, int]]:
    """Replica sizes by broker from (path, broker, sizes) of each log directory: a broker may
    have several (JBOD), but a replica lives in only one of them."""
    by_broker: dict[int, dict[TopicPartition, int]] = {}
    seen: dict[tuple[int, TopicPartition], Path | str] = {}
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
