"""ZooKeeper's SetWatches request (opcode 101), which kazoo does not send.

ZooKeeper's Java client sends it after a reconnection to set every watch again in one request.
It is an ordinary request too: one SetWatches sets data watches on thousands of znodes where an
`exists` per znode costs a round trip through kazoo each (about ten times the whole multiRead of
the same znodes). Each watch is set relative to a zxid, and the server checks it at once:

- a data watch on a znode modified after that zxid, or gone, fires at once (NodeDataChanged,
  NodeDeleted); otherwise it waits for the next change, as getData's watch would;
- an exist watch on a znode that exists fires at once (NodeCreated); otherwise it waits for the
  creation, as `exists`'s watch on a missing znode would.

With the zxid last seen before reading, a change made after the read is never missed (one made
between that zxid and the read fires a watch that is spurious but harmless: the caller reads
again). Wire format (jute): `relativeZxid` (long), then the data, exist and child watch paths,
each an int count and that many strings; the response is the reply header alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar

from kazoo.protocol.serialization import int_struct, long_struct, write_string

SET_WATCHES = 101
# Paths per request at most this many bytes, as ZooKeeper's Java client splits them (a request
# must stay under the server's jute.maxbuffer).
MAX_REQUEST_BYTES = 128 * 1024


class SetWatches:
    """A request object kazoo's connection can send (it needs `type`, `serialize` and
    `deserialize`). Paths already carry the chroot. `watcher` is None so that kazoo registers
    nothing itself: the caller adds its callbacks to kazoo's watcher tables first."""

    type: ClassVar[int] = SET_WATCHES
    watcher: ClassVar[None] = None
    __slots__ = ("child", "data", "exist", "relative_zxid")

    def __init__(
        self,
        relative_zxid: int,
        data: Sequence[str] = (),
        exist: Sequence[str] = (),
        child: Sequence[str] = (),
    ) -> None:
        self.relative_zxid = relative_zxid
        self.data = data
        self.exist = exist
        self.child = child

    def serialize(self) -> bytearray:
        out = bytearray(long_struct.pack(self.relative_zxid))
        for paths in (self.data, self.exist, self.child):
            out += int_struct.pack(len(paths))
            for path in paths:
                out += write_string(path)
        return out

    @classmethod
    def deserialize(cls, buffer: bytes, offset: int) -> None:
        return None  # the reply header says it all


def set_watches_requests(
    relative_zxid: int, data: Sequence[str], exist: Sequence[str]
) -> Iterator[SetWatches]:
    """Requests of at most MAX_REQUEST_BYTES of paths each, data watches first."""
    chunk: dict[str, list[str]] = {"data": [], "exist": []}
    size = 0
    for kind, paths in (("data", data), ("exist", exist)):
        for path in paths:
            length = 4 + len(path.encode())
            if size + length > MAX_REQUEST_BYTES and size:
                yield SetWatches(relative_zxid, chunk["data"], chunk["exist"])
                chunk, size = {"data": [], "exist": []}, 0
            chunk[kind].append(path)
            size += length
    if size:
        yield SetWatches(relative_zxid, chunk["data"], chunk["exist"])
