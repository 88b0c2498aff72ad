"""Writing the controller's requests into brokers' queues, off the event thread.

Kafka's controller hands each batch to ControllerChannelManager, whose RequestSendThreads send
it while the event thread goes on with the next event. The sender does the same for the
ZooKeeper channel: it encodes a batch and writes it, in the order batches were handed over,
so a broker still sees its requests in the order the controller made them. What the event thread
must know comes back through callbacks (run on the sender's thread: they only enqueue events):
a request whose broker queue is gone, and a batch fenced off because the controller moved.

While the event thread processes an event, the batches it hands over are held and written once
the event is done: encoding requests on this thread would take the interpreter from the event
thread between its ZooKeeper writes (a broker failure's ISR shrinks waited behind the encoding
of the elections' LeaderAndIsr), and the request znodes would queue in ZooKeeper before them.
A broker receives its requests in the same order, an event's worth later at most.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.controller.zk_writer import write_pipelined
from kafka_topic_operator.kafka.errors import ControllerMovedException
from kafka_topic_operator.zk.client import Create, Fence, ZkClient

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Undelivered:
    """A request that found no queue at its broker (it never made one, or it was removed)."""

    broker: int
    request: bc.Request
    reason: object


def write_requests(
    zk: ZkClient, requests: Sequence[tuple[int, bc.Request]], fence: Fence
) -> list[Undelivered]:
    """Each request as a sequential znode in its broker's queue, fenced by the controller epoch
    (ControllerMovedException when it moved); returns the requests that found no queue."""
    if not requests:
        return []
    encoded = bc.encode_requests([request for _, request in requests])
    batches = [
        [Create(bc.request_prefix(broker), bc.pack(data), sequence=True)]
        for (broker, _), data in zip(requests, encoded, strict=True)
    ]
    return [
        Undelivered(broker, request, outcome)
        for (broker, request), outcome in zip(
            requests, write_pipelined(zk, batches, fence), strict=True
        )
        if not isinstance(outcome, list)
    ]


_Batch = tuple[list[tuple[int, bc.Request]], Fence]


class ChannelSender:
    def __init__(
        self,
        zk: ZkClient,
        undelivered: Callable[[Undelivered], None],
        fenced: Callable[[], None],
    ) -> None:
        self._zk = zk
        self._undelivered = undelivered
        self._fenced = fenced
        self._queue: queue.Queue[_Batch | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._held: list[_Batch] | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="controller-request-sender")
        self._thread.start()

    def submit(self, requests: Sequence[tuple[int, bc.Request]], fence: Fence) -> None:
        if not requests:
            return
        batch = (list(requests), fence)
        if self._held is not None:
            self._held.append(batch)
        else:
            self._queue.put(batch)

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """Batches submitted in the block are written, in order, once it ends (however it
        ends); a block inside another hands its batches over with the outer one. Only the
        thread that submits holds."""
        if self._held is not None:
            yield
            return
        self._held = []
        try:
            yield
        finally:
            held, self._held = self._held, None
            for batch in held:
                self._queue.put(batch)

    def flush(self) -> None:
        """Until every batch handed over so far is written (or refused); batches a hold still
        keeps are not handed over yet."""
        self._queue.join()

    def stop(self) -> None:
        """Writes what was handed over, then ends the thread."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                requests, fence = item
                try:
                    for lost in write_requests(self._zk, requests, fence):
                        self._undelivered(lost)
                except ControllerMovedException:
                    # A batch of an earlier epoch (this controller resigned since) or of one
                    # deposed now: the event thread finds out which.
                    self._fenced()
                except Exception:
                    log.exception("Error writing %d requests to brokers", len(requests))
            finally:
                self._queue.task_done()
