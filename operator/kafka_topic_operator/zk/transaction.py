"""ZooKeeper's multi request (opcode 14) serialized in one pass.

kazoo's Transaction serializes each operation through a request object of its own and packs the
ACLs again for every create; a controller writes tens of thousands of znodes a second in these
requests, and that packing cost more than ZooKeeper spent applying them. The bytes are the same
(jute records: `MultiHeader(type, done=false, err=-1)` then the operation's request, closed by
`MultiHeader(-1, true, -1)`), and the response is read into what kazoo's Transaction gives.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from kazoo.exceptions import EXCEPTIONS
from kazoo.protocol.serialization import ZnodeStat, stat_struct

# ZooKeeper's OpCode values and jute's big-endian int and MultiHeader(int type, bool done,
# int err), as kazoo packs them.
MULTI, CREATE, DELETE, SET_DATA, CHECK = 14, 1, 2, 5, 13
_int = struct.Struct("!i")
_header = struct.Struct("!iBi")

CREATE_HEADER = _header.pack(CREATE, False, -1)
DELETE_HEADER = _header.pack(DELETE, False, -1)
SET_DATA_HEADER = _header.pack(SET_DATA, False, -1)
CHECK_HEADER = _header.pack(CHECK, False, -1)
_END = _header.pack(-1, True, -1)
_NULL = _int.pack(-1)

pack_int = _int.pack


def string(text: str) -> bytes:
    """jute's ustring: an empty string is written as null, as kazoo does."""
    if not text:
        return _NULL
    encoded = text.encode()
    return _int.pack(len(encoded)) + encoded


def buffer(data: bytes | None) -> bytes:
    if data is None:
        return _NULL
    return _int.pack(len(data)) + data


def acl_list(acls: Iterable[Any]) -> bytes:
    """A vector of kazoo ACLs (perms, id.scheme, id.id), packed once per request."""
    acls = list(acls)
    return _int.pack(len(acls)) + b"".join(
        _int.pack(a.perms) + string(a.id.scheme) + string(a.id.id) for a in acls
    )


class Multi:
    """A request kazoo's connection sends as it sends a Transaction (`type` 14 is what makes it
    strip the chroot from created paths in the answer)."""

    type: ClassVar[int] = MULTI
    __slots__ = ("parts",)

    def __init__(self, parts: Sequence[bytes]) -> None:
        self.parts = parts  # the operations' headers and records, in order

    def serialize(self) -> bytes:
        return b"".join(self.parts) + _END

    @staticmethod
    def deserialize(data: bytes, offset: int) -> list[object]:
        """The results as kazoo's Transaction.deserialize gives them (a created path, True,
        a ZnodeStat, or an exception instance per operation), in one loop over the bytes."""
        results: list[object] = []
        response: object = None
        kind, done = None, False
        while not done:
            if kind == CREATE:
                (length,) = _int.unpack_from(data, offset)
                offset += 4
                response = None if length < 0 else data[offset : offset + length].decode()
                offset += max(length, 0)
            elif kind in (DELETE, CHECK):
                response = True
            elif kind == SET_DATA:
                response = ZnodeStat._make(stat_struct.unpack_from(data, offset))
                offset += stat_struct.size
            elif kind == -1:
                (error,) = _int.unpack_from(data, offset)
                offset += 4
                response = EXCEPTIONS[error]()
            if response:
                results.append(response)
            kind, flag, _ = _header.unpack_from(data, offset)
            offset += _header.size
            done = flag == 1
        return results

    def __repr__(self) -> str:  # kazoo logs requests at debug level
        return f"Multi({len(self.parts)} parts)"
