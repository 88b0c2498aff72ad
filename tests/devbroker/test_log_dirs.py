"""The dev broker's log directory: meta.properties checks, creation, deletion, the status file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kto_dev.devbroker.log_dirs import (
    InconsistentBrokerIdException,
    InconsistentClusterIdException,
    LogDir,
    read_status,
)

T0 = TopicPartition("t", 0)


def test_meta_properties_ties_the_directory_to_one_broker(tmp_path: Path) -> None:
    LogDir(tmp_path).open(1, "cluster-a")
    assert LogDir(tmp_path).read_meta_properties() == {
        "version": "0",
        "broker.id": "1",
        "cluster.id": "cluster-a",
    }
    LogDir(tmp_path).open(1, "cluster-a")  # the same broker again is fine
    with pytest.raises(InconsistentBrokerIdException) as other_broker:
        LogDir(tmp_path).open(2, "cluster-a")
    assert str(other_broker.value).startswith(
        "Configured broker.id 2 doesn't match stored broker.id Some(1) in meta.properties."
    )
    with pytest.raises(InconsistentClusterIdException) as other_cluster:
        LogDir(tmp_path).open(1, "cluster-b")
    assert str(other_cluster.value).startswith(
        "The Cluster ID cluster-b doesn't match stored clusterId Some(cluster-a) in "
        "meta.properties."
    )


def test_opening_finishes_interrupted_deletions(tmp_path: Path) -> None:
    doomed = tmp_path / "t-0.0123456789abcdef0123456789abcdef-delete"
    doomed.mkdir()
    (doomed / "00000000000000000000.log").touch()
    future = tmp_path / "t-1.0123456789abcdef0123456789abcdef-future"
    future.mkdir()
    log_dir = LogDir(tmp_path)
    log_dir.open(1, None)
    assert not doomed.exists() and future.exists()
    assert log_dir.logs() == []


def test_create_and_delete(tmp_path: Path) -> None:
    log_dir = LogDir(tmp_path)
    assert log_dir.create_log(T0, None) is True
    assert log_dir.create_log(T0, "abc") is False
    assert log_dir.topic_id(T0) == "abc"
    assert log_dir.logs() == [T0]
    assert log_dir.delete_log(T0) is True
    assert log_dir.delete_log(T0) is False
    assert list(tmp_path.iterdir()) == []


def test_status_is_replaced_whole(tmp_path: Path) -> None:
    log_dir = LogDir(tmp_path)
    assert read_status(tmp_path) is None
    log_dir.write_status({"state": "running", "partitions": []})
    log_dir.write_status({"state": "stopped"})
    assert read_status(tmp_path) == {"state": "stopped"}
    assert json.loads((tmp_path / ".kto-broker-state.json").read_text()) == {"state": "stopped"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [".kto-broker-state.json"]
