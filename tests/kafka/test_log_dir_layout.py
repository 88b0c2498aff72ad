"""Kafka's log-directory names and files, as LogManager and PartitionMetadataFile write them."""

from __future__ import annotations

import pytest

from kafka_topic_operator.kafka.log_dir_layout import (
    decode_partition_metadata,
    encode_partition_metadata,
    parse_meta_properties,
    parse_partition_dir_name,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition


@pytest.mark.parametrize(
    ("name", "partition"),
    [
        ("t-0", TopicPartition("t", 0)),
        ("my-topic-12", TopicPartition("my-topic", 12)),
        ("a.b_c-3", TopicPartition("a.b_c", 3)),
        ("t-0.0123456789abcdef0123456789abcdef-delete", None),
        ("t-0.0123456789abcdef0123456789abcdef-future", None),
        (".kto-broker-state.json", None),
        ("meta.properties", None),
        ("t-", None),
        ("-1", None),
        ("t-x", None),
    ],
)
def test_partition_directory_names(name: str, partition: TopicPartition | None) -> None:
    assert parse_partition_dir_name(name) == partition


def test_partition_metadata_is_kafkas_two_lines() -> None:
    assert encode_partition_metadata("q1s3mTg9RqSd3Y1y6G3l1w") == (
        "version: 0\ntopic_id: q1s3mTg9RqSd3Y1y6G3l1w"
    )
    assert decode_partition_metadata("version: 0\ntopic_id:   abc\n") == "abc"
    assert decode_partition_metadata("") is None
    assert decode_partition_metadata("version: 1\ntopic_id: abc") is None


def test_meta_properties_reads_javas_simple_properties() -> None:
    text = "#\n! a comment\nversion=0\n broker.id = 3 \n\ncluster.id=abc=def\n"
    assert parse_meta_properties(text) == {
        "version": "0",
        "broker.id": "3",
        "cluster.id": "abc=def",
    }
