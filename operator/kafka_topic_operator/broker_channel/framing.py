"""How a request, response or controlled shutdown znode holds its JSON: the version every one
names, zlib when large, and the size ZooKeeper accepts."""

from __future__ import annotations

import zlib
from typing import Final

from kafka_topic_operator.zk.json_codec import JsonReader, ZNodeDataError, json_root

CHANNEL_VERSION: Final = 1
"""The only version of the request, response and controlled shutdown JSON written and read."""

ZNODE_MAX_BYTES: Final = 0xFFFFF
"""ZooKeeper's default `jute.maxbuffer`: the largest znode, and the largest multi-op, it accepts.
A LeaderAndIsr partition state takes about 200 bytes, so split batches of thousands."""

# A request for thousands of partitions is megabytes of JSON (each partition state goes to each
# replica's broker, and UpdateMetadata to every broker) and compresses about 40 times: written
# as is, ZooKeeper's log and the next requests of the controller's session wait for it. So data
# larger than this is a zlib stream of the JSON; a reader tells them apart by the first byte
# (JSON starts with `{`, a zlib stream with 0x78, `x`).
COMPRESS_ABOVE: Final = 4096
_ZLIB_FIRST_BYTE: Final = b"x"
# What one znode may inflate to: a request's JSON is cut well below this, and more is a bomb.
MAX_INFLATED_BYTES: Final = 64 << 20


def pack(data: bytes) -> bytes:
    """A request or response as its znode holds it: the JSON, zlib-compressed when large."""
    return zlib.compress(data, 1) if len(data) > COMPRESS_ABOVE else data


def unpack(path: str, data: bytes | None) -> bytes | None:
    """The JSON of a znode written by `pack` (or JSON as is)."""
    if not data or data[:1] != _ZLIB_FIRST_BYTE:
        return data
    inflater = zlib.decompressobj()
    try:
        text = inflater.decompress(data, MAX_INFLATED_BYTES)
    except zlib.error as e:
        raise ZNodeDataError(path, f"not JSON and not a zlib stream ({e})") from None
    if inflater.unconsumed_tail:
        raise ZNodeDataError(path, f"inflates to more than {MAX_INFLATED_BYTES} bytes")
    if not inflater.eof:
        raise ZNodeDataError(path, "a zlib stream cut short")
    return text


def read_root(path: str, data: bytes | None) -> JsonReader:
    """The JSON of a channel znode, inflated if `pack` compressed it."""
    return json_root(path, unpack(path, data))


def read_version(root: JsonReader) -> int:
    """The `version` field, refused unless it is the one this side reads."""
    version = root["version"].int32()
    if version != CHANNEL_VERSION:
        raise root["version"].fail(
            f"unsupported version {version} (this side reads version {CHANNEL_VERSION})"
        )
    return version
