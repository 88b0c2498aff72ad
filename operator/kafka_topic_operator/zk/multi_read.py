"""ZooKeeper's multiRead request (opcode 22, ZooKeeper 3.6+), which kazoo does not offer.

One request carries many getData and getChildren operations and one response answers them all,
each with its own result or error; it is not atomic and sets no watches. Reading 100,000
partition state znodes costs one round trip per batch instead of one Python-level request object
per znode, which is what bounds kazoo's asynchronous gets.

Wire format (ZooKeeper's jute records): the request is a sequence of
`MultiHeader(type=4 getData or 8 getChildren, done=false, err=-1) + GetDataRequest(path,
watch=false)` (GetChildrenRequest has the same fields) closed by `MultiHeader(-1, true, -1)`; the
response is a sequence of `MultiHeader(type, done, err)` followed by a `GetDataResponse(data,
stat)` for type 4, a `GetChildrenResponse(children)` for type 8 or an `ErrorResult(err)` for type
-1, closed the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

from kazoo.exceptions import EXCEPTIONS
from kazoo.protocol.serialization import (
    GetChildren,
    GetData,
    MultiHeader,
    ZnodeStat,
    int_struct,
    multiheader_struct,
    read_buffer,
    read_string,
    stat_struct,
    write_string,
)

MULTI_READ = 22
GET_DATA = GetData.type
GET_CHILDREN = GetChildren.type
ERROR = -1


class ReadResult(NamedTuple):
    data: bytes | None  # None with an error or for getChildren
    stat: Any  # kazoo's ZnodeStat, or None with an error or for getChildren
    error: Exception | None
    children: list[str] | None = None  # getChildren's answer


class MultiRead:
    """A request object kazoo's connection can send: it only needs `type`, `serialize` and
    `deserialize`."""

    type: ClassVar[int] = MULTI_READ
    __slots__ = ("reads",)

    def __init__(self, reads: Sequence[tuple[int, str]]) -> None:
        self.reads = reads  # (GET_DATA or GET_CHILDREN, path already carrying the chroot)

    def serialize(self) -> bytearray:
        out = bytearray()
        for operation, path in self.reads:
            out += multiheader_struct.pack(operation, False, -1)
            out += write_string(path)
            out.append(0)  # no watch: multiRead cannot set one
        out += multiheader_struct.pack(-1, True, -1)
        return out

    @classmethod
    def deserialize(cls, buffer: bytes, offset: int) -> list[ReadResult]:
        results: list[ReadResult] = []
        header, offset = MultiHeader.deserialize(buffer, offset)
        while not header.done:
            if header.type == GET_DATA:
                data, offset = read_buffer(buffer, offset)
                stat = ZnodeStat._make(stat_struct.unpack_from(buffer, offset))
                offset += stat_struct.size
                results.append(ReadResult(data or b"", stat, None))
            elif header.type == GET_CHILDREN:
                count = int_struct.unpack_from(buffer, offset)[0]
                offset += int_struct.size
                children = []
                for _ in range(max(count, 0)):
                    child, offset = read_string(buffer, offset)
                    children.append(child)
                results.append(ReadResult(None, None, None, children))
            elif header.type == ERROR:
                code = int_struct.unpack_from(buffer, offset)[0]
                offset += int_struct.size
                results.append(ReadResult(None, None, EXCEPTIONS[code]()))
            else:
                raise ValueError(f"unexpected operation type {header.type} in a multiRead reply")
            header, offset = MultiHeader.deserialize(buffer, offset)
        return results
