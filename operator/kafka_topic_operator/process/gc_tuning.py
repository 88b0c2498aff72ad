"""Garbage-collector settings for the long-running `kto` commands.

The controller and the dev brokers hold an object per partition and replica, kopf one per
resource: with CPython's default thresholds (a young collection every 700 allocations, full ones
as the heap grows) collections take a quarter of the time of a bulk creation of 1,000 topics.
What exists at startup is frozen out of every collection, and young collections run less often;
the heap holds few reference cycles, so little waits longer to be freed.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000


def tune_garbage_collector() -> None:
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
