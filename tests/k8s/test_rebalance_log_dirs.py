"""Partition sizes the operator reads from the log directories `kto run --log-dirs` names: used
when they cover the cluster, left out of a plan that needs none when they do not, a refusal for
one that does (DiskUsageDistribution)."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from kafka_topic_operator.k8s.rebalance_planning import Proposals, Settings
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.sizes import SizesError
from kafka_topic_operator.rebalance.spec import rebalance_spec
from kafka_topic_operator.zk.client import ZkClient
from kto_dev.devbroker.log_dirs import LogDir

A0, A1 = TopicPartition("a", 0), TopicPartition("a", 1)
COUNTS = rebalance_spec({})
DISK = rebalance_spec({"goals": ["ReplicaDistribution", "DiskUsageDistribution"]})
RESOURCE = SimpleNamespace(namespace="default", name="r")


def broker_dir(path: Path, broker: int, sizes: dict[TopicPartition, int]) -> Path:
    directory = LogDir(path)
    directory.open(broker, "cluster")
    for tp, size in sizes.items():
        directory.create_log(tp, None)
        (directory.partition_dir(tp) / "00000000000000000000.log").write_bytes(b"x" * size)
    return path


def sizes_with(dirs: list[Path], spec: object) -> object:
    proposals = Proposals(Settings(log_dirs=tuple(dirs)), ZkClient("127.0.0.1:1"))
    return proposals._log_dir_sizes(RESOURCE, spec, {A0: 0, A1: 1})  # type: ignore[arg-type]


def test_directories_covering_every_partition_give_the_leaders_sizes(tmp_path: Path) -> None:
    dirs = [broker_dir(tmp_path / "b0", 0, {A0: 5, A1: 9}), broker_dir(tmp_path / "b1", 1, {A1: 7})]
    assert sizes_with(dirs, COUNTS) == {A0: 5, A1: 7}


def test_a_partition_missing_leaves_sizes_out_of_a_count_plan_and_refuses_a_disk_plan(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dirs = [broker_dir(tmp_path / "b0", 0, {A0: 5})]
    with caplog.at_level(logging.WARNING):
        assert sizes_with(dirs, COUNTS) is None
    assert "planning default/r without partition sizes: the log directories miss 1 " in caplog.text
    # The disk goal gets every size found; the planning input then names what is missing.
    assert sizes_with(dirs, DISK) == {A0: 5}


def test_an_unreadable_directory_leaves_sizes_out_unless_the_plan_needs_them(
    tmp_path: Path,
) -> None:
    dirs = [broker_dir(tmp_path / "b0", 0, {A0: 5, A1: 1}), tmp_path / "gone"]
    assert sizes_with(dirs, COUNTS) is None
    with pytest.raises(SizesError, match=r"gone: no such directory$"):
        sizes_with(dirs, DISK)
