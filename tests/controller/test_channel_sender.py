"""The request sender: batches written off the event thread, in order, with what went wrong
reported back (a missing broker queue, a fenced batch)."""

from __future__ import annotations

import threading

import pytest

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.controller.channel_sender import ChannelSender, Undelivered
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import Fence, ZkClient

pytestmark = pytest.mark.zookeeper


def stop_replica(correlation_id: int) -> bc.StopReplicaRequest:
    return bc.StopReplicaRequest(
        5, 50, 100, (bc.StopReplicaPartitionState("t", 0, -1, True),),
        correlation_id=correlation_id,
    )  # fmt: skip


def queued(zk: ZkClient, broker: int) -> list[int]:
    """Correlation ids of the requests in a broker's queue, in queue order."""
    path = bc.requests_path(broker)
    nodes = zk.get_many(f"{path}/{name}" for name in sorted(zk.children(path) or []))
    return [bc.decode_request(n.path, n.data).correlation_id for n in nodes if n is not None]


class Recorder:
    def __init__(self) -> None:
        self.undelivered: list[Undelivered] = []
        self.fenced = 0
        self.thread_names: set[str] = set()

    def on_undelivered(self, lost: Undelivered) -> None:
        self.thread_names.add(threading.current_thread().name)
        self.undelivered.append(lost)

    def on_fenced(self) -> None:
        self.thread_names.add(threading.current_thread().name)
        self.fenced += 1


@pytest.fixture
def epoch(zk: ZkClient) -> Fence:
    zk.create(znodes.CONTROLLER_EPOCH_PATH, znodes.encode_controller_epoch(50))
    for broker in (1, 2):
        zk.ensure_path(bc.requests_path(broker))
    return Fence(0)


def test_batches_are_written_in_the_order_handed_over(zk: ZkClient, epoch: Fence) -> None:
    recorder = Recorder()
    sender = ChannelSender(zk, recorder.on_undelivered, recorder.on_fenced)
    sender.start()
    try:
        for first in range(0, 60, 3):
            sender.submit([(1, stop_replica(first)), (2, stop_replica(first + 1)),
                           (1, stop_replica(first + 2))], epoch)  # fmt: skip
        sender.flush()
        assert queued(zk, 1) == [i for i in range(60) if i % 3 != 1]
        assert queued(zk, 2) == list(range(1, 60, 3))
        assert recorder.undelivered == [] and recorder.fenced == 0
    finally:
        sender.stop()


def test_a_missing_queue_is_reported_and_the_rest_delivered(zk: ZkClient, epoch: Fence) -> None:
    recorder = Recorder()
    sender = ChannelSender(zk, recorder.on_undelivered, recorder.on_fenced)
    sender.start()
    try:
        sender.submit([(1, stop_replica(1)), (3, stop_replica(2)), (2, stop_replica(3))], epoch)
        sender.flush()
    finally:
        sender.stop()
    assert [(u.broker, u.request.correlation_id) for u in recorder.undelivered] == [(3, 2)]
    assert (queued(zk, 1), queued(zk, 2)) == ([1], [3])
    assert recorder.thread_names == {"controller-request-sender"}


def test_a_fenced_batch_writes_nothing_and_is_reported(zk: ZkClient, epoch: Fence) -> None:
    zk.set(znodes.CONTROLLER_EPOCH_PATH, znodes.encode_controller_epoch(51))  # another controller
    recorder = Recorder()
    sender = ChannelSender(zk, recorder.on_undelivered, recorder.on_fenced)
    sender.start()
    try:
        sender.submit([(1, stop_replica(1))], epoch)
        sender.submit([(2, stop_replica(2))], Fence(1))  # the new epoch's batch goes through
        sender.flush()
    finally:
        sender.stop()
    assert recorder.fenced == 1
    assert (queued(zk, 1), queued(zk, 2)) == ([], [2])


def test_stop_writes_what_was_handed_over(zk: ZkClient, epoch: Fence) -> None:
    recorder = Recorder()
    sender = ChannelSender(zk, recorder.on_undelivered, recorder.on_fenced)
    sender.start()
    for i in range(20):
        sender.submit([(1, stop_replica(i))], epoch)
    sender.stop()
    assert queued(zk, 1) == list(range(20))


def test_batches_handed_over_in_a_hold_are_written_when_it_ends(zk: ZkClient, epoch: Fence) -> None:
    recorder = Recorder()
    sender = ChannelSender(zk, recorder.on_undelivered, recorder.on_fenced)
    sender.start()
    try:
        sender.submit([(1, stop_replica(0))], epoch)
        with sender.holding():
            sender.submit([(1, stop_replica(1)), (2, stop_replica(2))], epoch)
            with sender.holding():
                sender.submit([(1, stop_replica(3))], epoch)
            sender.flush()
            assert (queued(zk, 1), queued(zk, 2)) == ([0], [])
        sender.flush()
        assert (queued(zk, 1), queued(zk, 2)) == ([0, 1, 3], [2])
        with pytest.raises(RuntimeError), sender.holding():  # an event that failed midway
            sender.submit([(2, stop_replica(4))], epoch)
            raise RuntimeError("the event failed after it had made requests")
        sender.flush()
        assert queued(zk, 2) == [2, 4]
    finally:
        sender.stop()


def test_an_events_requests_are_written_after_it(zk: ZkClient, epoch: Fence) -> None:
    """The controller holds the requests an event makes until the event is processed: its
    ZooKeeper writes are not slowed by encoding and writing them."""
    from kafka_topic_operator.controller import events as ev
    from kafka_topic_operator.controller.kafka_controller import ControllerConfig, KafkaController

    controller = KafkaController(ControllerConfig(zookeeper="unused", broker_id=5), zk)
    seen: list[list[int]] = []

    def dispatch(event: ev.ControllerEvent, coalesced: object = ()) -> None:
        controller.sender.submit([(1, stop_replica(1))], epoch)
        controller.sender.flush()
        seen.append(queued(zk, 1))

    controller._dispatch = dispatch  # type: ignore[method-assign]
    controller.sender.start()
    try:
        controller._process(ev.TopicChange())
        controller.sender.flush()
    finally:
        controller.sender.stop()
    assert (seen, queued(zk, 1)) == ([[]], [1])


def test_the_controller_hears_of_undelivered_and_fenced_requests(zk: ZkClient) -> None:
    """The sender's reports reach the event thread as events: an undelivered StopReplica is no
    longer awaited, and a fenced batch makes the controller check who the controller is."""
    from kafka_topic_operator.controller import events as ev
    from kafka_topic_operator.controller.kafka_controller import ControllerConfig, KafkaController
    from kafka_topic_operator.controller.request_batch import PendingStopReplica
    from kafka_topic_operator.kafka.topic_partition import TopicPartition

    controller = KafkaController(ControllerConfig(zookeeper="unused", broker_id=5), zk)
    request = stop_replica(7)
    controller.batch.pending_stop_replica[7] = PendingStopReplica(
        3, frozenset({TopicPartition("t", 0)})
    )
    controller.sender._undelivered(Undelivered(3, request, "no queue"))
    controller.sender._fenced()
    queued_events = [controller.events.queue.get_nowait() for _ in range(2)]
    assert queued_events == [ev.RequestUndelivered(Undelivered(3, request, "no queue")),
                             ev.ControllerChange()]  # fmt: skip
    controller._dispatch(queued_events[0])
    assert controller.batch.pending_stop_replica == {}
