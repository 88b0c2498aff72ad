"""A dev broker's log directory, written in Kafka's layout (`kafka/log_dir_layout.py`).

Each hosted partition gets an empty first segment (`00000000000000000000.log`, `.index`,
`.timeindex`) and `partition.metadata` with the topic id; `meta.properties` is checked against
the broker and cluster ids, as KafkaServer does; deletion renames to
`<topic>-<partition>.<id>-delete` first, as LogManager.asyncDelete does. The broker's status
file (`.kto-broker-state.json`) is written here atomically.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from kafka_topic_operator.kafka.log_dir_layout import (
    DELETE_DIR_SUFFIX,
    FIRST_SEGMENT,
    META_PROPERTIES,
    PARTITION_METADATA,
    RENAMED_DIR,
    SEGMENT_SUFFIXES,
    decode_partition_metadata,
    encode_partition_metadata,
    parse_meta_properties,
    parse_partition_dir_name,
    partition_dir_name,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition

STATUS_FILE: Final = ".kto-broker-state.json"


class InconsistentBrokerIdException(RuntimeError):
    """kafka.common.InconsistentBrokerIdException: the log directory belongs to another broker."""


class InconsistentClusterIdException(RuntimeError):
    """kafka.common.InconsistentClusterIdException: the log directory belongs to another cluster."""


def _write_atomically(path: str | Path, text: str, *, durable: bool = True) -> None:
    # Write beside the target and rename over it, so readers never see a partial file. `durable`
    # flushes this file at once; partition.metadata files wait for LogDir.flush, and the status
    # file is only a view.
    # os calls, not open(): thousands of partition.metadata files arrive in one LeaderAndIsr.
    path = os.fspath(path)
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        data = text.encode()
        while data:
            data = data[os.write(fd, data) :]
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


@functools.cache
def _syncfs() -> Any:
    return getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)


def _sync_file_system(path: Path) -> None:
    """syncfs(2) on the file system holding `path`: one flush for a whole request's files
    instead of an fsync per file (os.sync where libc has no syncfs)."""
    syncfs = _syncfs()
    if syncfs is None:
        os.sync()
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        if syncfs(fd) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, os.strerror(errno), str(path))
    finally:
        os.close(fd)


@dataclass
class LogDir:
    """One log directory; every method may raise OSError when the disk does not cooperate."""

    path: Path
    _unflushed: bool = field(default=False, init=False, repr=False)

    @property
    def status_path(self) -> Path:
        return self.path / STATUS_FILE

    def partition_dir(self, partition: TopicPartition) -> Path:
        return self.path / partition_dir_name(partition)

    # ---- startup ----------------------------------------------------------------------------

    def open(self, broker_id: int, cluster_id: str | None) -> None:
        """Creates the directory, checks and writes meta.properties, and finishes deletions
        interrupted by a crash (LogManager deletes `-delete` directories at startup)."""
        self.path.mkdir(parents=True, exist_ok=True)
        self._check_meta_properties(broker_id, cluster_id)
        for child in self.path.iterdir():
            renamed = RENAMED_DIR.match(child.name)
            if renamed and renamed.group(4) == "delete" and child.is_dir():
                shutil.rmtree(child, ignore_errors=True)

    def read_meta_properties(self) -> dict[str, str]:
        path = self.path / META_PROPERTIES
        if not path.exists():
            return {}
        return parse_meta_properties(path.read_text(encoding="utf-8"))

    def _check_meta_properties(self, broker_id: int, cluster_id: str | None) -> None:
        props = self.read_meta_properties()
        stored_id = props.get("broker.id")
        if stored_id is not None and stored_id != str(broker_id):
            # KafkaServer.getOrGenerateBrokerId; Scala prints the stored id as an Option.
            raise InconsistentBrokerIdException(
                f"Configured broker.id {broker_id} doesn't match stored broker.id "
                f"Some({stored_id}) in meta.properties. If you moved your data, make sure your "
                "configured broker.id matches. If you intend to create a new broker, you should "
                "remove all data in your data directories (log.dirs)."
            )
        stored_cluster = props.get("cluster.id")
        if cluster_id is not None and stored_cluster is not None and stored_cluster != cluster_id:
            raise InconsistentClusterIdException(
                f"The Cluster ID {cluster_id} doesn't match stored clusterId "
                f"Some({stored_cluster}) in meta.properties. The broker is trying to join the "
                "wrong cluster. Configured zookeeper.connect may be wrong."
            )
        lines = ["#", "version=0", f"broker.id={broker_id}"]
        if cluster_id is not None:
            lines.append(f"cluster.id={cluster_id}")
        _write_atomically(self.path / META_PROPERTIES, "\n".join(lines) + "\n")

    # ---- partitions -------------------------------------------------------------------------

    def logs(self) -> list[TopicPartition]:
        """The partitions with a live log directory here, sorted."""
        found = []
        with os.scandir(self.path) as entries:  # d_type: no stat per entry
            for entry in entries:
                partition = parse_partition_dir_name(entry.name) if entry.is_dir() else None
                if partition is not None:
                    found.append(partition)
        return sorted(found)

    def has_log(self, partition: TopicPartition) -> bool:
        return self.partition_dir(partition).is_dir()

    def create_log(self, partition: TopicPartition, topic_id: str | None) -> bool:
        """Creates the partition's directory and first segment if missing (True if it did), and
        records the topic id in partition.metadata when one is known. What it writes is on disk
        once `flush` returns."""
        # os calls on strings, not pathlib: a LeaderAndIsr brings thousands of partitions.
        directory = os.path.join(self.path, partition_dir_name(partition))
        try:
            os.mkdir(directory)
            created = True
        except FileExistsError:
            created = False
        for suffix in SEGMENT_SUFFIXES:
            segment = os.path.join(directory, FIRST_SEGMENT + suffix)
            os.close(os.open(segment, os.O_WRONLY | os.O_CREAT, 0o644))
        if topic_id is not None and (created or self.topic_id(partition) != topic_id):
            metadata = encode_partition_metadata(topic_id)
            self._unflushed = True
            path = os.path.join(directory, PARTITION_METADATA)
            _write_atomically(path, metadata, durable=False)
        return created

    def flush(self) -> None:
        """Makes what `create_log` wrote durable: one file-system flush per request, not one
        fsync per partition (thousands of partitions arrive in one LeaderAndIsr)."""
        if self._unflushed:
            _sync_file_system(self.path)
            self._unflushed = False

    def topic_id(self, partition: TopicPartition) -> str | None:
        path = os.path.join(self.path, partition_dir_name(partition), PARTITION_METADATA)
        try:
            with open(path, encoding="utf-8") as f:
                return decode_partition_metadata(f.read())
        except (FileNotFoundError, NotADirectoryError):
            return None

    def delete_log(self, partition: TopicPartition) -> bool:
        """Renames the partition's directory to `<tp>.<id>-delete`, then removes it; False if
        there was none. Only the rename can fail the call: after it the log is gone."""
        directory = self.partition_dir(partition)
        if not directory.exists():
            return False
        doomed = self.path / f"{directory.name}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}"
        directory.rename(doomed)
        shutil.rmtree(doomed, ignore_errors=True)
        return True

    # ---- status -----------------------------------------------------------------------------

    def write_status(self, status: Mapping[str, object]) -> None:
        # No indent: json's C encoder only runs without one, and a status holds thousands of
        # partitions.
        text = json.dumps(status, sort_keys=True) + "\n"
        _write_atomically(self.status_path, text, durable=False)


def read_status(log_dir: Path) -> dict[str, object] | None:
    """A dev broker's last status (see DevBroker.status), or None if it never wrote one."""
    try:
        text = (log_dir / STATUS_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"{log_dir / STATUS_FILE}: expected a JSON object")
    return value
