"""Partition sizes: the metrics file's format and each way it can be wrong, and brokers' log
directories laid out as Kafka (and the dev brokers) lay them out."""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

import pytest

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance import sizes as sizes_module
from kafka_topic_operator.rebalance.sizes import (
    SizesError,
    config_map_documents,
    decode_document,
    merge_log_dirs,
    parse_log_dirs_describe,
    parse_sizes,
    partition_sizes,
    read_log_dir,
    read_partition_sizes,
    read_sizes_document,
    sizes_from_documents,
)
from kto_dev.devbroker.log_dirs import LogDir

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


# What kafka-log-dirs.sh --describe prints: two lines of prose, then one line of JSON.
DESCRIBE = (
    "Querying brokers for log directories information\n"
    "Received log directory information from brokers 1,2\n"
    + json.dumps({"version": 1, "brokers": [
        {"broker": 1, "logDirs": [
            {"logDir": "/var/kafka/a", "error": None, "partitions": [
                {"partition": "a-0", "size": 900, "offsetLag": 0, "isFuture": False},
                {"partition": "b-c-0", "size": 70, "offsetLag": 0, "isFuture": False},
            ]},
            {"logDir": "/var/kafka/b", "error": None, "partitions": [
                # a-1 moving between this broker's log directories: the copy is skipped.
                {"partition": "a-1", "size": 10, "offsetLag": 5, "isFuture": True},
                {"partition": "a-1", "size": 400, "offsetLag": 0, "isFuture": False},
            ]},
            {"logDir": "/var/kafka/c", "error": "org.apache.kafka.common.errors."
             "KafkaStorageException", "partitions": []},
        ]},
        {"broker": 2, "logDirs": [
            {"logDir": "/var/kafka/a", "error": None, "partitions": [
                {"partition": "a-0", "size": 1000, "offsetLag": 0, "isFuture": False},
                {"partition": "a-1", "size": 390, "offsetLag": 10, "isFuture": False},
            ]},
        ]},
    ]})
    + "\n"
)  # fmt: skip


def test_kafka_log_dirs_describe_gives_each_brokers_replicas() -> None:
    assert parse_log_dirs_describe(DESCRIBE) == {
        1: {A0: 900, B0: 70, A1: 400},
        2: {A0: 1000, A1: 390},
    }


def test_either_document_gives_partition_sizes_the_log_dirs_by_their_leaders() -> None:
    # a-0 led by 1 (the follower on 2 holds more); a-1 by 2; b-c-0's leader was not read.
    leaders = {A0: 1, A1: 2, B0: 3}
    assert read_sizes_document(DESCRIBE, "sizes", leaders) == {A0: 900, A1: 390, B0: 70}
    metrics = '{"partitions": [{"topic": "a", "partition": 0, "sizeBytes": 5}]}'
    assert read_sizes_document(metrics, "sizes", leaders) == {A0: 5}
    with pytest.raises(SizesError, match=re.escape('sizes: expected one object {"partitions"')):
        read_sizes_document("[]", "sizes", leaders)


def describe(brokers: object) -> str:
    return json.dumps({"version": 1, "brokers": brokers})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Querying brokers for log directories information\n",
         "cm/sizes: no JSON line (kafka-log-dirs.sh --describe prints one)"),
        ('{"version": 1, "brokers": [', "cm/sizes: not JSON: Expecting value: line 1 column 28 "
                                        "(char 27)"),
        ('{"version": 1}', "cm/sizes: brokers missing"),
        (describe({}), "cm/sizes: brokers must be a list, not {}"),
        (describe([{"logDirs": []}]), "cm/sizes: brokers[0]: broker missing"),
        (describe([{"broker": "1", "logDirs": []}]),
         "cm/sizes: brokers[0]: broker must be a whole number, not '1'"),
        (describe([{"broker": -1, "logDirs": []}]),
         "cm/sizes: brokers[0]: broker must be a whole number >= 0, not -1"),
        (describe([{"broker": 1, "logDirs": [7]}]),
         "cm/sizes: brokers[0].logDirs[0]: expected an object"),
        (describe([{"broker": 1, "logDirs": [{"logDir": "/d", "error": None}]}]),
         "cm/sizes: brokers[0].logDirs[0]: partitions missing"),
        (describe([{"broker": 1, "logDirs": [{"logDir": "/d", "error": None, "partitions": [
            {"partition": "a", "size": 1}]}]}]),
         "cm/sizes: brokers[0].logDirs[0].partitions[0]: partition must read "
         "<topic>-<partition>, not 'a'"),
        (describe([{"broker": 1, "logDirs": [{"logDir": "/d", "error": None, "partitions": [
            {"partition": "a-x", "size": 1}]}]}]),
         "cm/sizes: brokers[0].logDirs[0].partitions[0]: partition must read "
         "<topic>-<partition>, not 'a-x'"),
        (describe([{"broker": 1, "logDirs": [{"logDir": "/d", "error": None, "partitions": [
            {"partition": "a-0", "size": 1.5}]}]}]),
         "cm/sizes: brokers[0].logDirs[0].partitions[0]: size must be a whole number, not 1.5"),
        (describe([{"broker": 1, "logDirs": [{"logDir": "/d", "error": None, "partitions": [
            {"partition": "a-0", "size": -1}]}]}]),
         "cm/sizes: brokers[0].logDirs[0].partitions[0]: size must be a whole number >= 0, "
         "not -1"),
        (describe([{"broker": 1, "logDirs": [
            {"logDir": "/d", "error": None, "partitions": [{"partition": "a-0", "size": 1}]},
            {"logDir": "/e", "error": None, "partitions": [{"partition": "a-0", "size": 1}]},
        ]}]),
         "/e: a-0 of broker 1 is also in /d: a replica lives in one log directory"),
    ],
)  # fmt: skip
def test_bad_log_dirs_output_is_refused_naming_the_entry(text: str, message: str) -> None:
    with pytest.raises(SizesError) as error:
        parse_log_dirs_describe(text, "cm/sizes")
    assert str(error.value) == message


def test_a_config_maps_keys_are_merged_log_dirs_by_replica_metrics_winning() -> None:
    leaders = {A0: 2, A1: 1, B0: 1}
    one = describe(
        [
            {
                "broker": 1,
                "logDirs": [
                    {
                        "logDir": "/d",
                        "error": None,
                        "partitions": [
                            {"partition": "a-0", "size": 10},
                            {"partition": "a-1", "size": 20},
                        ],
                    }
                ],
            }
        ]
    )
    two = describe(
        [
            {
                "broker": 2,
                "logDirs": [
                    {
                        "logDir": "/d",
                        "error": None,
                        "partitions": [{"partition": "a-0", "size": 11}],
                    }
                ],
            }
        ]
    )
    metrics = '{"partitions": [{"topic": "a", "partition": 1, "sizeBytes": 99}, ' \
              '{"topic": "b-c", "partition": 0, "sizeBytes": 5}]}'  # fmt: skip
    # a-0's leader 2 is described under another key than its follower 1: merged by replica.
    documents = {"brokers-1": one, "brokers-2": two, "extra.json": metrics}
    assert sizes_from_documents(documents, leaders) == {A0: 11, A1: 99, B0: 5}
    with pytest.raises(SizesError) as error:
        sizes_from_documents({"x": metrics, "y": metrics}, leaders)
    assert str(error.value) == "y: a-1 is also in x"
    with pytest.raises(SizesError) as error:
        sizes_from_documents({"x": one, "y": one}, leaders)
    assert (
        str(error.value) == "y: a-0 of broker 1 is also in x: a replica lives in one log directory"
    )


def test_a_document_in_bytes_is_gzip_or_utf8_text(monkeypatch: pytest.MonkeyPatch) -> None:
    text = '{"partitions": [{"topic": "a", "partition": 0, "sizeBytes": 5}]}'
    assert decode_document(gzip.compress(text.encode()), "k") == text
    assert decode_document(text.encode(), "k") == text
    with pytest.raises(SizesError, match=r"^k: not a valid gzip stream: "):
        decode_document(b"\x1f\x8b" + b"garbage", "k")
    with pytest.raises(SizesError, match=r"^k: neither gzip nor UTF-8 text$"):
        decode_document(b"\xff\xfe", "k")
    monkeypatch.setattr(sizes_module, "MAX_INFLATED", 1024)
    with pytest.raises(SizesError, match=r"^k: inflates to more than 0 MiB$"):
        decode_document(gzip.compress(b" " * 4096), "k")
    assert decode_document(gzip.compress(b" " * 1024), "k") == " " * 1024


def test_kto_plan_reads_either_document_with_sizes_the_file_winning(tmp_path: Path) -> None:
    from kafka_topic_operator.cli.plan import read_sizes

    dirs = [log_dir(tmp_path / "d1", 1, {A0: [100], B0: [7]})]
    described = tmp_path / "log-dirs.txt"
    described.write_text(DESCRIBE)
    # --sizes with kafka-log-dirs.sh's output beside --log-dirs: the file's a-0 (broker 1 leads).
    leaders = {A0: 1, A1: 2, B0: 1}
    assert read_sizes(described, dirs, leaders) == {A0: 900, A1: 390, B0: 70}
    assert read_sizes(None, dirs, leaders) == {A0: 100, B0: 7}
    assert read_sizes(None, None, leaders) is None
    with pytest.raises(SizesError, match=r"missing\.txt: No such file or directory$"):
        read_sizes(tmp_path / "missing.txt", None, leaders)


def test_a_config_maps_documents_are_its_keys_text_or_bytes() -> None:
    text = '{"partitions": []}'
    zipped = base64.b64encode(gzip.compress(text.encode())).decode()
    both = config_map_documents("ns/s", {"a.json": text}, {"b.json.gz": zipped}, None)
    assert both == {"ConfigMap ns/s key a.json": text, "ConfigMap ns/s key b.json.gz": text}
    assert config_map_documents("ns/s", {"a.json": text}, {"b.json.gz": zipped}, "b.json.gz") == {
        "ConfigMap ns/s key b.json.gz": text
    }
    with pytest.raises(SizesError) as error:
        config_map_documents("ns/s", {"a.json": text}, None, "sizes.json")
    assert str(error.value) == "ConfigMap ns/s has no key sizes.json (its keys: a.json)"
    with pytest.raises(SizesError) as error:
        config_map_documents("ns/s", None, None, None)
    assert str(error.value) == "ConfigMap ns/s holds no data"
    with pytest.raises(SizesError) as error:
        config_map_documents("ns/s", {}, {}, "k")
    assert str(error.value) == "ConfigMap ns/s has no key k (its keys: none)"
