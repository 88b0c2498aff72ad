"""Readers of the channel's JSON fields beyond what `JsonReader` offers: 64-bit numbers,
booleans, partitions, optional arrays, Kafka error names and topic ids."""

from __future__ import annotations

import re

from kafka_topic_operator.kafka.errors import IllegalArgumentException
from kafka_topic_operator.kafka.ids import Uuid
from kafka_topic_operator.kafka.java import LONG_MAX, LONG_MIN
from kafka_topic_operator.zk.json_codec import JsonReader, describe_json

_ERROR_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def read_int64(reader: JsonReader) -> int:
    value = reader.value
    if type(value) is not int or not LONG_MIN <= value <= LONG_MAX:
        raise reader.fail(f"expected a 64-bit integer, got {describe_json(value)}")
    return value


def read_boolean(reader: JsonReader) -> bool:
    if not isinstance(reader.value, bool):
        raise reader.fail(f"expected a boolean, got {describe_json(reader.value)}")
    return reader.value


def read_partition(reader: JsonReader) -> int:
    value = reader.int32()
    if value < 0:
        raise reader.fail(f"partition {value} is negative")
    return value


def read_array(reader: JsonReader | None) -> list[JsonReader]:
    """An optional array: missing or null reads as empty."""
    return reader.array() if reader is not None else []


def read_ints(reader: JsonReader | None) -> tuple[int, ...]:
    return tuple(reader.int32_list()) if reader is not None else ()


def read_error_name(reader: JsonReader) -> str:
    name = reader.string()
    if not _ERROR_NAME.fullmatch(name):
        raise reader.fail(f"{name!r} is not a Kafka error name")
    return name


def read_nullable_string(reader: JsonReader | None) -> str | None:
    return None if reader is None or reader.value is None else reader.string()


def read_topic_ids(reader: JsonReader | None) -> dict[str, str]:
    if reader is None or reader.value is None:
        return {}
    out: dict[str, str] = {}
    for topic, value in reader.items():
        try:
            out[topic] = str(Uuid.from_string(value.string()))
        except IllegalArgumentException as e:
            raise value.fail(str(e)) from e
    return out
