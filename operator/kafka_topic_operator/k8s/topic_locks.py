"""Per-topic locks between the status follower's reconcile of drift and the delete handler.

The follower reads a resource and, for drift (its topic deleted by hand, a config edited),
hands it to the batcher, which may create the topic again. A deletion requested between that
read and that write would be undone: the topic deleted, then created again from the resource
as read before its deletion. So the follower holds the topic's lock from its read to the end of
the write, and the delete handler waits for that lock before it looks at the topic: a reconcile
of drift that read the resource before its deletionTimestamp has written by then (the deletion
then removes what it wrote), and any later one reads the deletionTimestamp and leaves it alone.
The drift timer holds it too: kopf runs a timer beside the delete handler, with the live body,
whose deletionTimestamp the timer sees once it holds the lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import zlib
from collections.abc import AsyncIterator


class TopicLocks:
    """A fixed number of locks, topics sharing one by hash: no lock per topic to forget, and
    as each party takes one lock at a time, a shared one costs a wait, never a deadlock."""

    def __init__(self, stripes: int = 64) -> None:
        self._locks = tuple(threading.Lock() for _ in range(stripes))

    def __call__(self, topic: str) -> threading.Lock:
        return self._locks[zlib.crc32(topic.encode()) % len(self._locks)]

    @contextlib.asynccontextmanager
    async def held(self, topic: str) -> AsyncIterator[None]:
        """`topic`'s lock for a coroutine, waited for on kopf's loop (tried, then tried again a
        moment later), not in a thread of the loop's executor: a thread blocked there on it
        could be the very one the lock's holder waits for."""
        lock = self(topic)
        pause = FIRST_PAUSE
        while not lock.acquire(blocking=False):
            await asyncio.sleep(pause)
            pause = min(pause * 2, LONGEST_PAUSE)
        try:
            yield
        finally:
            lock.release()


# Holders keep a lock for a write (milliseconds to a second): a waiter looks again soon.
FIRST_PAUSE, LONGEST_PAUSE = 0.001, 0.05
