"""The controller's event queue and the one thread that processes it (ControllerEventManager).

Watch callbacks, timers and the request sender only put events here; the thread takes them one
at a time, in order. Consecutive PartitionModifications events are processed as one (a burst
of topic znode changes costs one pipelined read), and while the queue is empty the thread waits
for the timer of the next automatic preferred leader election.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence

from kafka_topic_operator.controller import events as ev
from kafka_topic_operator.process.gc_tuning import collections_deferred


class ControllerEventManager:
    def __init__(
        self,
        process: Callable[[ev.ControllerEvent, Sequence[str]], None],
        before_idle: Callable[[], None],
    ) -> None:
        """`process(event, coalesced)` handles an event, `coalesced` naming the topics of the
        PartitionModifications events merged into it; `before_idle` runs when the queue is
        empty, before the manager says it is idle."""
        self._process = process
        self._before_idle = before_idle
        self.queue: queue.Queue[ev.ControllerEvent] = queue.Queue()
        self._thread: threading.Thread | None = None
        # When AutoPreferredReplicaLeaderElection is due (time.monotonic()), if scheduled.
        self.next_auto_rebalance: float | None = None
        self.idle = threading.Event()
        self.events_processed = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="controller-event-thread")
        self._thread.start()

    def stop(self) -> None:
        """Processes what was queued before, then ends the thread."""
        self.put(ev.ShutdownEventThread())
        if self._thread is not None:
            self._thread.join()

    def put(self, event: ev.ControllerEvent) -> None:
        self.idle.clear()
        self.queue.put(event)

    def clear_and_put(self, event: ev.ControllerEvent) -> None:
        """Drops what is queued (a shutdown request excepted), then queues `event`."""
        with self.queue.mutex:
            kept = [e for e in self.queue.queue if isinstance(e, ev.ShutdownEventThread)]
            self.queue.queue.clear()
            self.queue.queue.extend(kept)
        self.put(event)

    def _run(self) -> None:
        held: ev.ControllerEvent | None = None  # taken from the queue while coalescing
        while True:
            if held is not None:
                event, held = held, None
            else:
                timeout = None
                if self.next_auto_rebalance is not None:
                    timeout = max(0.0, self.next_auto_rebalance - time.monotonic())
                try:
                    event = self.queue.get(timeout=timeout)
                except queue.Empty:
                    self.next_auto_rebalance = None
                    event = ev.AutoPreferredReplicaLeaderElection()
            if isinstance(event, ev.ShutdownEventThread):
                return
            coalesced: list[str] = []
            if isinstance(event, ev.PartitionModifications):
                coalesced, held = self._following_partition_modifications()
            with collections_deferred():
                self._process(event, coalesced)
            self.events_processed += 1 + len(coalesced)
            if held is None and self.queue.empty():
                # Idle means the requests made are written too (nothing else to do meanwhile).
                self._before_idle()
                if self.queue.empty():
                    self.idle.set()

    def _following_partition_modifications(self) -> tuple[list[str], ev.ControllerEvent | None]:
        """The topics of the PartitionModifications events queued right behind one, and the
        first other event (to be processed next, so the order of events is kept)."""
        topics: list[str] = []
        while True:
            try:
                event = self.queue.get_nowait()
            except queue.Empty:
                return topics, None
            if not isinstance(event, ev.PartitionModifications):
                return topics, event
            topics.append(event.topic)
