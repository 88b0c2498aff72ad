"""What the brokers' metadata shows of a topic (pure), the Ready condition it gives, and the
asking of brokers that cannot answer: a listener with nothing behind it, none in plaintext.
(On real brokers: tests/kafka_e2e/test_ready_on_brokers.py.)"""

from __future__ import annotations

import pytest

from kafka_topic_operator.broker_channel import decode_metadata_leaders, encode_metadata_leaders
from kafka_topic_operator.kafka.brokers import BrokerInfo, EndPoint, SecurityProtocol
from kafka_topic_operator.kafka_admin.brokers_metadata import (
    Answer,
    BrokersMetadata,
    plaintext_address,
    shown,
    unasked_message,
)
from kafka_topic_operator.topics.status import Condition, Shown, as_brokers_show
from kafka_topic_operator.zk.json_codec import ZNodeDataError
from kto_dev.ports import free_port

READY = Condition("True", "Created", "The topic is as declared")


def broker(broker_id: int, protocol: SecurityProtocol, port: int = 9092) -> BrokerInfo:
    return BrokerInfo(broker_id, (EndPoint(protocol.value, "127.0.0.1", port, protocol),))


def test_every_partition_led_on_every_broker_asked_is_shown() -> None:
    answers = {0: {"t": {0: 1, 1: 0}}, 1: {"t": {0: 1, 1: 0}}}
    assert shown("t", 2, answers, None) == Shown()


def test_a_broker_without_the_topic_or_a_leader_is_waited_for() -> None:
    assert shown("t", 2, {0: {"t": {0: 1, 1: 0}}, 1: {}}, None) == Shown(
        "broker 1's metadata does not have topic 't' yet"
    )
    assert shown("t", 3, {0: {"t": {0: 1, 1: -1}}}, None) == Shown(
        "broker 0's metadata shows 1 of 3 partitions led"
    )
    assert shown("t", 1, {2: {"t": "LEADER_NOT_AVAILABLE"}}, "broker 0: gone") == Shown(
        "broker 2's metadata gives error LEADER_NOT_AVAILABLE for topic 't'", "broker 0: gone"
    )


def test_with_no_broker_asked_nothing_is_claimed() -> None:
    assert shown("t", 1, {}, None) == Shown(None, "no broker was asked")
    assert shown("t", 1, {}, "broker 0: no PLAINTEXT listener") == Shown(
        None, "broker 0: no PLAINTEXT listener"
    )


def test_brokers_not_asked_are_said_together_by_reason() -> None:
    away = {2: "no PLAINTEXT listener", 0: "no Kafka listener (dev broker)",
            1: "no Kafka listener (dev broker)"}  # fmt: skip
    assert unasked_message(away) == (
        "brokers 0, 1: no Kafka listener (dev broker); broker 2: no PLAINTEXT listener"
    )
    assert unasked_message({}) is None


def test_only_a_plaintext_listener_is_asked() -> None:
    assert plaintext_address(broker(0, SecurityProtocol.PLAINTEXT, 9093)) == "127.0.0.1:9093"
    assert plaintext_address(broker(0, SecurityProtocol.SASL_SSL)) is None
    v6 = BrokerInfo(1, (EndPoint("PLAINTEXT", "::1", 9092, SecurityProtocol.PLAINTEXT),))
    assert plaintext_address(v6) == "[::1]:9092"


def test_the_ready_condition_waits_or_says_what_was_not_checked() -> None:
    assert as_brokers_show(READY, Shown()) == READY
    assert as_brokers_show(READY, Shown("broker 1's metadata shows 1 of 3 partitions led")) == (
        Condition("False", "Reconciling",
                  "Waiting for the brokers' metadata: broker 1's metadata shows 1 of 3 "
                  "partitions led")
    )  # fmt: skip
    assert as_brokers_show(READY, Shown(None, "brokers 0, 1: no PLAINTEXT listener")) == (
        Condition("True", "Created", "The topic is as declared (the brokers' metadata not "
                  "checked: brokers 0, 1: no PLAINTEXT listener)")
    )  # fmt: skip


def test_brokers_that_cannot_be_asked_are_said_and_none_is_waited_for() -> None:
    def published(broker: int) -> Answer | None:
        if broker == 2:
            raise ZNodeDataError("/kto/brokers/2/metadata", "not JSON")
        return None  # a Kafka broker: asked on its listener

    checker = BrokersMetadata(published, timeout=1.0)
    try:
        nothing_there = broker(0, SecurityProtocol.PLAINTEXT, free_port())
        brokers = {0: nothing_there, 1: broker(1, SecurityProtocol.SSL),
                   2: broker(2, SecurityProtocol.PLAINTEXT)}  # fmt: skip
        result = checker.confirm("t", 1, brokers).result(30)
    finally:
        checker.close()
    assert result.waiting is None
    assert result.unchecked is not None
    assert result.unchecked.startswith(f"broker 0: 127.0.0.1:{nothing_there.endpoints[0].port} "
                                       "does not answer (")  # fmt: skip
    said = "; broker 1: no PLAINTEXT listener; broker 2: its published metadata is unreadable ("
    assert said in result.unchecked


def test_a_broker_that_publishes_its_metadata_is_read_not_asked() -> None:
    shows: dict[int, Answer] = {0: {"t": {0: 0, 1: -1}}, 1: {"t": {0: 0, 1: 1}}}
    checker = BrokersMetadata(lambda b: shows[b], timeout=1.0)
    try:
        # No listener answers there: only what the brokers published is read.
        brokers = {b: broker(b, SecurityProtocol.PLAINTEXT, free_port()) for b in shows}
        assert checker.confirm("t", 2, brokers, patience=0).result(30) == Shown(
            "broker 0's metadata shows 1 of 2 partitions led"
        )
        # Asked again, within its patience, until the broker shows it.
        later = checker.confirm("t", 2, brokers, patience=60)
        shows[0] = {"t": {0: 0, 1: 1}}
        assert later.result(30) == Shown()
    finally:
        checker.close()


def test_published_leaders_read_back_as_written_and_bad_ones_are_refused() -> None:
    leaders = {"orders": {0: 1, 1: -1}, "audit": {0: 2}}
    written = encode_metadata_leaders(leaders)
    assert decode_metadata_leaders("/kto/brokers/0/metadata", written) == leaders
    big = {f"t{i}": dict.fromkeys(range(12), 1) for i in range(1000)}
    assert len(encode_metadata_leaders(big)) < 20_000  # compressed, as channel znodes are
    with pytest.raises(ZNodeDataError, match="not a partition number"):
        decode_metadata_leaders("/m", b'{"version":1,"partitions":{"t":{"x":1}}}')
    with pytest.raises(ZNodeDataError, match="unsupported version 2"):
        decode_metadata_leaders("/m", b'{"version":2,"partitions":{}}')


def test_a_stopped_checker_answers_at_once() -> None:
    checker = BrokersMetadata()
    checker.close()
    assert checker.confirm("t", 1, {}).result(1) == Shown(None, "the operator is stopping")
