"""Reading and writing znode JSON as Kafka does (Jackson through Kafka's Json and JsonValue):
one encoder and decoder for every znode, typed access whose errors name the znode and the key,
and ZNodeDataError for anything Kafka could not read either. Used by the codecs of Kafka's
znodes (`znodes`) and of the project's broker channel."""

from __future__ import annotations

import json
from typing import Any, Final, TypeGuard

from pydantic_core import to_json

from kafka_topic_operator.kafka.java import INT_MAX, INT_MIN


class ZNodeDataError(ValueError):
    """A znode's data cannot be read: bad UTF-8 or JSON, a wrong type, a missing required key."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"Malformed data in znode {path}: {reason}")
        self.path = path
        self.reason = reason


def is_int32_array(value: object) -> TypeGuard[list[int]]:
    """A JSON array of 32-bit integers (booleans excluded), checked in C, not item by item."""
    return (
        type(value) is list
        and all(type(i) is int for i in value)
        and (not value or (min(value) >= INT_MIN and max(value) <= INT_MAX))
    )


# Jackson writes non-ASCII as UTF-8, not as \u escapes. One encoder for every call: building
# one per call (what json.dumps does with these options) costs as much as a small znode.
_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def encode_json(value: object) -> bytes:
    return _ENCODER.encode(value).encode()


def encode_plain_json(value: object) -> bytes:
    """`encode_json`'s bytes for JSON without floats (integers, strings, booleans, null, lists,
    objects), three times as fast: pydantic_core's encoder (what pydantic v2 is built on), for
    what the controller writes by the tens of thousands (partition states, broker requests). It
    would write a NaN where `encode_json` refuses one, hence no floats."""
    return to_json(value)


def _reject_constant(name: str) -> Any:
    # Jackson rejects NaN and Infinity by default; Python's json would accept them.
    raise ValueError(f"{name} is not valid JSON")


# One decoder for every znode: json.loads with an argument builds a new one per call.
_JSON = json.JSONDecoder(parse_constant=_reject_constant)


def json_text(path: str, data: bytes | None) -> str:
    if not data:
        raise ZNodeDataError(path, "no data (expected JSON)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ZNodeDataError(path, f"not UTF-8 ({e.reason} at byte {e.start})") from e
    # Jackson skips a UTF-8 byte order mark.
    return text.removeprefix("\ufeff")


def parse_json(path: str, data: bytes | None) -> object:
    text = json_text(path, data)
    try:
        return _JSON.decode(text)
    except (ValueError, RecursionError) as e:
        raise ZNodeDataError(path, f"not valid JSON ({e})") from e


def describe_json(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"string {value!r}"
    if isinstance(value, int | float):
        return f"number {value!r}"
    if isinstance(value, list):
        return "an array"
    return "an object"


class JsonReader:
    """Typed access to one JSON value, like Kafka's JsonValue.to[T]; errors name the key."""

    __slots__ = ("_key", "_parent", "path", "value")

    def __init__(
        self, path: str, value: object, parent: JsonReader | None = None, key: str | int = ""
    ) -> None:
        self.path = path
        self.value = value
        # Where this value sits is worked out only for an error message: topic znodes of
        # thousands of partitions are read on every failover.
        self._parent = parent
        self._key = key

    @property
    def where(self) -> str:
        return "" if self._parent is None else self._parent._child_where(self._key)

    def fail(self, reason: str) -> ZNodeDataError:
        return ZNodeDataError(self.path, f"{self.where}: {reason}" if self.where else reason)

    def _child_where(self, key: str | int) -> str:
        step = f"[{key}]" if isinstance(key, int) else repr(key)
        if not self.where:
            return step
        return f"{self.where}{step}" if isinstance(key, int) else f"{self.where}.{step}"

    def _expect(self, what: str) -> ZNodeDataError:
        return self.fail(f"expected {what}, got {describe_json(self.value)}")

    # -- scalars --

    def int32(self) -> int:
        v = self.value
        if type(v) is not int or not INT_MIN <= v <= INT_MAX:
            raise self._expect("a 32-bit integer")
        return v

    def string(self) -> str:
        if not isinstance(self.value, str):
            raise self._expect("a string")
        return self.value

    # -- containers --

    def obj(self) -> dict[str, object]:
        if not isinstance(self.value, dict):
            raise self._expect("a JSON object")
        return self.value

    def array(self) -> list[JsonReader]:
        if not isinstance(self.value, list):
            raise self._expect("a JSON array")
        return [JsonReader(self.path, item, self, i) for i, item in enumerate(self.value)]

    def int32_list(self) -> list[int]:
        v = self.value
        if is_int32_array(v):
            return list(v)  # the common case, without a reader per item
        return [item.int32() for item in self.array()]

    def items(self) -> list[tuple[str, JsonReader]]:
        return [(k, JsonReader(self.path, v, self, k)) for k, v in self.obj().items()]

    # -- keys of an object --

    def get(self, key: str) -> JsonReader | None:
        """The key's value if present (even when null), like JsonObject.get."""
        fields = self.obj()
        if key not in fields:
            return None
        return JsonReader(self.path, fields[key], self, key)

    def __getitem__(self, key: str) -> JsonReader:
        """A required key, like JsonObject.apply."""
        found = self.get(key)
        if found is None:
            what = f"{self.where}: " if self.where else ""
            raise ZNodeDataError(self.path, f"{what}missing required key {key!r}")
        return found

    def optional(self, key: str) -> JsonReader | None:
        """A key that may be missing or null (Kafka's `.get(k).flatMap(_.to[Option[T]])`)."""
        found = self.get(key)
        return None if found is None or found.value is None else found


def json_root(path: str, data: bytes | None) -> JsonReader:
    reader = JsonReader(path, parse_json(path, data))
    reader.obj()
    return reader
