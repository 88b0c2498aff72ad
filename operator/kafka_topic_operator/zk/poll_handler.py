"""kazoo's threading handler with a cheaper `select`.

kazoo's I/O thread calls `handler.select` before every socket read and write (several times per
request). The stock handler builds and closes an epoll selector on each call: five system calls
and a few Python objects where one `poll` does, which made it about a tenth of the controller's
CPU while creating topics. `select.poll` has no file-descriptor limit either (why kazoo left
`select.select`), and a poll object is plain memory until polled.
"""

from __future__ import annotations

import errno
import math
import select
from collections.abc import Sequence
from typing import Any

from kazoo.handlers.threading import SequentialThreadingHandler
from kazoo.handlers.utils import fileobj_to_fd

_READ = select.POLLIN | select.POLLPRI
_WRITE = select.POLLOUT
# An error or hang-up makes a descriptor ready both ways, as select() reports it: the read or
# write that follows raises the socket error kazoo handles.
_EITHER = select.POLLERR | select.POLLHUP


def poll_select(
    rlist: Sequence[Any], wlist: Sequence[Any], xlist: Sequence[Any], timeout: float | None = None
) -> tuple[list[Any], list[Any], list[Any]]:
    """`select.select`'s contract (kazoo's `selector_select`) on one poll call."""
    if timeout is not None:
        if not isinstance(timeout, int | float):
            raise TypeError("timeout must be a number")
        if timeout < 0:
            raise ValueError("timeout must be non-negative")
    masks: dict[int, int] = {}
    for fileobj in rlist:
        fd = fileobj_to_fd(fileobj)
        masks[fd] = masks.get(fd, 0) | _READ
    for fileobj in wlist:
        fd = fileobj_to_fd(fileobj)
        masks[fd] = masks.get(fd, 0) | _WRITE
    poller = select.poll()
    for fd, mask in masks.items():
        poller.register(fd, mask)
    # poll takes milliseconds; round up so a short timeout does not become a busy loop.
    ready = dict(poller.poll(None if timeout is None else math.ceil(timeout * 1000)))
    readable: list[Any] = []
    writable: list[Any] = []
    if any(events & select.POLLNVAL for events in ready.values()):
        raise OSError(errno.EBADF, "Bad file descriptor")
    for fileobj in rlist:
        if ready.get(fileobj_to_fd(fileobj), 0) & (_READ | _EITHER):
            readable.append(fileobj)
    for fileobj in wlist:
        if ready.get(fileobj_to_fd(fileobj), 0) & (_WRITE | _EITHER):
            writable.append(fileobj)
    return readable, writable, []


class PollThreadingHandler(SequentialThreadingHandler):  # type: ignore[misc]
    """SequentialThreadingHandler whose `select` is one poll call."""

    def select(self, *args: Any, **kwargs: Any) -> tuple[list[Any], list[Any], list[Any]]:
        return poll_select(*args, **kwargs)
