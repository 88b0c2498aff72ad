"""Partition sizes: the metrics file's format and each way it can be wrong, and brokers' log
directories laid out as Kafka (and the dev brokers) lay them out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_topic_operator.devbroker.log_dirs import LogDir
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.sizes import (
    SizesError,
    merge_log_dirs,
    parse_sizes,
    partition_sizes,
    read_log_dir,
    read_partition_sizes,
)

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b-c", 0)


def test_the_metrics_file_gives_bytes_per_partition() -> None:
    text = json.dumps({"partitions": [
        {"topic": "a", "partition": 0, "sizeBytes": 1073741824},
        {"topic": "a", "partition": 1, "sizeBytes": 0},
        {"topic": "b-c", "partition": 0, "sizeBytes": 2**62},
    ]})  # fmt: skip
    assert parse_sizes(text) == {A0: 2**30, A1: 0, B0: 2**62}
    assert parse_sizes('{"partitions": []}') == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "sizes.json: not JSON: Expecting property name enclosed in double quotes: line 1 "
              "column 2 (char 1)"),
        ("[]", 'sizes.json: expected one object {"partitions": [...]}'),
        ('{"partitions": [], "version": 1}', 'sizes.json: expected one object {"partitions": '
                                             '[...]}'),
        ('{"partitions": {}}', "sizes.json: partitions: expected a list"),
        ('{"partitions": [7]}',
         "sizes.json: partitions[0]: expected an object with topic, partition, sizeBytes"),
        ('{"partitions": [{"topic": "a", "partition": 0}]}',
         "sizes.json: partitions[0]: sizeBytes missing"),
        ('{"partitions": [{"topic": "a", "partition": 0, "size": 1}]}',
         "sizes.json: partitions[0]: sizeBytes missing"),
        ('{"partitions": [{"topic": "a", "partition": 0, "sizeBytes": 1, "leader": 2}]}',
         "sizes.json: partitions[0]: unknown field leader"),
        ('{"partitions": [{"topic": "", "partition": 0, "sizeBytes": 1}]}',
         "sizes.json: partitions[0]: topic must be a non-empty string, not ''"),
        ('{"partitions": [{"topic": 3, "partition": 0, "sizeBytes": 1}]}',
         "sizes.json: partitions[0]: topic must be a non-empty string, not 3"),
        ('{"partitions": [{"topic": "a", "partition": -1, "sizeBytes": 1}]}',
         "sizes.json: partitions[0]: partition must be a whole number >= 0, not -1"),
        ('{"partitions": [{"topic": "a", "partition": "0", "sizeBytes": 1}]}',
         "sizes.json: partitions[0]: partition must be a whole number >= 0, not '0'"),
        ('{"partitions": [{"topic": "a", "partition": 0, "sizeBytes": 1.5}]}',
         "sizes.json: partitions[0]: sizeBytes must be a whole number >= 0, not 1.5"),
        ('{"partitions": [{"topic": "a", "partition": 0, "sizeBytes": true}]}',
         "sizes.json: partitions[0]: sizeBytes must be a whole number >= 0, not True"),
        ('{"partitions": [{"topic": "a", "partition": 0, "sizeBytes": -5}]}',
         "sizes.json: partitions[0]: sizeBytes must be a whole number >= 0, not -5"),
        ('{"partitions": [{"topic": "a", "partition": 0, "sizeBytes": null}]}',
         "sizes.json: partitions[0]: sizeBytes must be a whole number >= 0, not None"),
        ('{"partitions": [{"topic": "a", "partition": 0, "sizeBytes": 1}, '
         '{"topic": "b", "partition": 0, "sizeBytes": 1}, '
         '{"topic": "a", "partition": 0, "sizeBytes": 2}]}',
         "sizes.json: partitions[2]: a-0 is listed twice (also partitions[0])"),
    ],
)  # fmt: skip
def test_a_bad_metrics_file_is_refused_naming_the_entry(text: str, message: str) -> None:
    with pytest.raises(SizesError) as error:
        parse_sizes(text, "sizes.json")
    assert str(error.value) == message


def log_dir(path: Path, broker: int, segments: dict[TopicPartition, list[int]]) -> Path:
    """A broker's log directory with each partition's segments of the given sizes."""
    directory = LogDir(path)
    directory.open(broker, "cluster")
    for tp, sizes in segments.items():
        directory.create_log(tp, None)
        for i, size in enumerate(sizes):
            segment = directory.partition_dir(tp) / f"{i * 1000:020d}.log"
            segment.write_bytes(b"x" * size)
        # Indexes are not data a follower copies: they do not count.
        (directory.partition_dir(tp) / "00000000000000000000.index").write_bytes(b"i" * 99)
    return path


def test_a_replicas_size_is_the_bytes_of_its_log_segments(tmp_path: Path) -> None:
    path = log_dir(tmp_path / "d1", 1, {A0: [100, 50], B0: [7]})
    (path / "a-1.0123456789abcdef0123456789abcdef-delete").mkdir()  # being deleted: not a log
    (path / "notes.log").write_text("not a partition")
    assert read_log_dir(path) == (1, {A0: 150, B0: 7})


def test_a_directory_that_is_not_a_brokers_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SizesError, match=r"missing: no such directory$"):
        read_log_dir(tmp_path / "missing")
    (tmp_path / "a-0").mkdir()
    with pytest.raises(SizesError) as error:
        read_log_dir(tmp_path)
    assert str(error.value) == (
        f"{tmp_path}: not a broker's log directory (no broker.id in meta.properties)"
    )


def test_a_partitions_size_is_its_leaders_replicas(tmp_path: Path) -> None:
    dirs = [
        log_dir(tmp_path / "d0", 0, {A0: [100], A1: [40]}),
        log_dir(tmp_path / "d1", 1, {A0: [90], A1: [30]}),
        log_dir(tmp_path / "d2", 2, {B0: [5]}),
    ]
    # a-0 led by broker 1 (its follower on 0 has more: the leader's is the partition's); a-1's
    # leader 3 was not read: the largest replica read; b-c-0 has no leader: its only replica.
    leaders = {A0: 1, A1: 3, B0: -1}
    assert read_partition_sizes(dirs, leaders) == {A0: 90, A1: 40, B0: 5}


def test_a_broker_may_have_several_log_directories_each_replica_in_one(tmp_path: Path) -> None:
    first = (tmp_path / "d0", 0, {A0: 1})
    second = (tmp_path / "d0b", 0, {A1: 2})
    assert merge_log_dirs([first, second]) == {0: {A0: 1, A1: 2}}
    with pytest.raises(SizesError) as error:
        merge_log_dirs([first, (tmp_path / "d0c", 0, {A0: 3})])
    assert str(error.value) == (
        f"{tmp_path / 'd0c'}: a-0 of broker 0 is also in {tmp_path / 'd0'}: a replica lives in "
        "one log directory"
    )
    assert partition_sizes({}, {A0: 0}) == {}
