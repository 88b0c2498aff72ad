"""How the long-running `kto` commands wait for SIGTERM or SIGINT (Kubernetes stops a pod with
SIGTERM; a person at a terminal presses Ctrl-C)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType


@contextlib.contextmanager
def termination_requested(
    again: Callable[[], None] | None = None,
) -> Iterator[threading.Event]:
    """An event set by the first SIGTERM or SIGINT while the block runs; `again` is called on
    each later one (a second Ctrl-C cuts a controlled shutdown short). Outside the main thread
    (tests) no handler is installed and only the caller sets the event."""
    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        if stop.is_set() and again is not None:
            again()
        stop.set()

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, on_signal)
    try:
        yield stop
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
