"""The controller's partition-state writes: a stream of new states is written as it comes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kto_testing import eventually

from kafka_topic_operator.controller import events as ev
from kafka_topic_operator.controller.zk_reads import OPS_PER_MULTI
from kafka_topic_operator.controller.zk_writer import Update
from kafka_topic_operator.kafka import election
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import admin, znodes

from .conftest import Bare

pytestmark = pytest.mark.zookeeper

PARTITIONS = OPS_PER_MULTI * 2 + 1


def version(bare: Bare, tp: TopicPartition) -> int:
    node = bare.zk.get(znodes.topic_partition_state_path(tp))
    assert node is not None
    return node.version


def led_by_broker_0(bare: Bare) -> list[TopicPartition]:
    """Brokers 0 and 1, and PARTITIONS partitions on both, led by 0, as the controller made them."""
    for broker in (0, 1):
        bare.register(broker)
    bare.elect()
    admin.create_topic_with_assignment(bare.zk, "t", {p: [0, 1] for p in range(PARTITIONS)})
    bare.dispatch(ev.TopicChange())
    return [TopicPartition("t", p) for p in range(PARTITIONS)]


def test_a_stream_of_states_is_written_a_multi_op_at_a_time_as_it_is_computed(bare: Bare) -> None:
    partitions = led_by_broker_0(bare)
    before = {tp: bare.ctx.leadership[tp].leader_and_isr for tp in partitions}
    # A broker failure computes 30,000 of these: ZooKeeper writes the first ones meanwhile.
    written_while_computing = []

    def shrunk() -> Iterator[Update]:
        for i, tp in enumerate(partitions):
            if i == OPS_PER_MULTI:
                written_while_computing.append(
                    eventually(lambda: version(bare, partitions[0]) == 1, "the first multi-op")
                )
            yield tp, before[tp].new_leader_and_isr(0, (0,))

    writer = bare.controller.writer  # in the session the epoch was won in
    outcome = writer.update_leader_and_isr(shrunk(), bare.ctx.epoch)

    assert written_while_computing == [True]
    assert not outcome.bad_version and not outcome.failed
    assert outcome.updated == {tp: before[tp].new_leader_and_isr(0, (0,)).with_partition_epoch(1)
                               for tp in partitions}  # fmt: skip
    assert {version(bare, tp) for tp in partitions} == {1}
    assert writer.update_leader_and_isr(iter(()), bare.ctx.epoch).updated == {}


def test_new_leaders_are_written_a_multi_op_at_a_time_as_they_are_elected(
    bare: Bare, monkeypatch: pytest.MonkeyPatch
) -> None:
    partitions = led_by_broker_0(bare)
    assert {version(bare, tp) for tp in partitions} == {0}
    # Broker 0 leads them all: its failure elects broker 1 for each, and ZooKeeper writes the
    # first new leaders while the controller elects the next.
    elect = election.leader_for_offline
    elected: list[TopicPartition] = []
    written_while_electing = []

    def watched(tp: TopicPartition, *args: Any) -> election.ElectionResult:
        elected.append(tp)
        if len(elected) == OPS_PER_MULTI + 1:
            first = elected[0]
            written_while_electing.append(
                eventually(lambda: version(bare, first) == 1, "the first multi-op")
            )
        return elect(tp, *args)

    monkeypatch.setattr(election, "leader_for_offline", watched)
    bare.unregister(0)
    bare.dispatch(ev.BrokerChange())

    assert written_while_electing == [True]
    assert len(elected) == PARTITIONS
    for tp in partitions:
        leadership = bare.ctx.leadership[tp].leader_and_isr
        assert (leadership.leader, leadership.isr, leadership.partition_epoch) == (1, (1,), 1)
        assert version(bare, tp) == 1
