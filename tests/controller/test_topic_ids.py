"""The ids our controller gives topics created without one are Kafka's: `Uuid.randomUuid()`
(KafkaZkClient.setTopicIds), which never returns an id that prints with a leading '-'."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from kafka_topic_operator.zk import admin, znodes

from .conftest import Cluster

pytestmark = pytest.mark.zookeeper

DASH = b"\xf8" + bytes(15)  # prints as "-AAAAAAAQACAAAAAAAAAAA"


def test_the_controller_never_gives_a_topic_an_id_starting_with_a_dash(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster.start_broker(0)
    cluster.start_controller()
    system: Callable[[int], bytes] = os.urandom
    drawn: list[bytes] = []

    def dash_first(n: int) -> bytes:
        # The first 16-byte draw would print with a leading '-' (1 id in 64 does).
        data = DASH if n == 16 and not drawn else system(n)
        if n == 16:
            drawn.append(data)
        return data

    monkeypatch.setattr(os, "urandom", dash_first)
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0]})
    cluster.wait_online("t", 1)
    monkeypatch.undo()
    node = cluster.zk.get(znodes.topic_path("t"))
    assert node is not None
    topic_id = znodes.decode_topic(node.path, node.data).topic_id
    assert drawn[0] == DASH and len(drawn) >= 2
    assert topic_id is not None and not topic_id.startswith("-")
