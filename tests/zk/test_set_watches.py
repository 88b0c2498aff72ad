"""SetWatches requests: the jute layout and the split that keeps each under the size limit."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from kafka_topic_operator.zk.set_watches import (
    MAX_REQUEST_BYTES,
    SetWatches,
    set_watches_requests,
)


def _strings(buffer: bytes, offset: int) -> tuple[list[str], int]:
    (count,) = struct.unpack_from(">i", buffer, offset)
    offset += 4
    out = []
    for _ in range(count):
        (length,) = struct.unpack_from(">i", buffer, offset)
        out.append(buffer[offset + 4 : offset + 4 + length].decode())
        offset += 4 + length
    return out, offset


def test_jute_layout() -> None:
    data = bytes(SetWatches(0x0102030405060708, ["/a"], ["/bc"]).serialize())
    assert data == (
        bytes.fromhex("0102030405060708")
        + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x02/a"
        + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x03/bc"
        + b"\x00\x00\x00\x00"
    )  # fmt: skip


paths = st.lists(st.text(st.characters(codec="utf-8"), min_size=1, max_size=3_000), max_size=120)


@given(paths, paths, st.integers(0, 2**63 - 1))
def test_split_keeps_every_path_once_in_order_and_each_request_small(
    data: list[str], exist: list[str], zxid: int
) -> None:
    requests = list(set_watches_requests(zxid, data, exist))
    seen_data: list[str] = []
    seen_exist: list[str] = []
    for request in requests:
        buffer = bytes(request.serialize())
        assert struct.unpack_from(">q", buffer)[0] == zxid
        got_data, offset = _strings(buffer, 8)
        got_exist, offset = _strings(buffer, offset)
        got_child, offset = _strings(buffer, offset)
        assert offset == len(buffer) and got_child == []
        # A request exceeds the limit only when a single path does.
        assert len(buffer) - 20 <= MAX_REQUEST_BYTES or len(got_data) + len(got_exist) == 1
        seen_data += got_data
        seen_exist += got_exist
    assert (seen_data, seen_exist) == (data, exist)
    assert (requests == []) == (data == [] and exist == [])
