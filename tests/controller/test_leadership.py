"""Controller election on a real ZooKeeper: one winner per epoch, fencing of the loser."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafka_topic_operator.controller.leadership import (
    read_controller_id,
    resign,
    try_become_controller,
)
from kafka_topic_operator.kafka.errors import ControllerMovedException
from kafka_topic_operator.zk.client import Create, ZkClient

pytestmark = pytest.mark.zookeeper


@pytest.fixture
def sessions(zk_chroot: str) -> Iterator[tuple[ZkClient, ZkClient]]:
    a, b = ZkClient(zk_chroot), ZkClient(zk_chroot)
    a.start()
    b.start()
    yield a, b
    a.stop()
    b.stop()


def test_first_controller_epoch_is_one_and_a_second_candidate_waits(
    sessions: tuple[ZkClient, ZkClient],
) -> None:
    a, b = sessions
    won = try_become_controller(a, 1)
    assert won is not None and won.epoch == 1  # InitialControllerEpoch (0) + 1
    assert try_become_controller(b, 2) is None
    assert read_controller_id(b) == 1


def test_controller_move_increments_the_epoch_and_fences_the_old_one(
    sessions: tuple[ZkClient, ZkClient],
) -> None:
    a, b = sessions
    old = try_become_controller(a, 1)
    assert old is not None
    resign(a)
    new = try_become_controller(b, 2)
    assert new is not None and new.epoch == old.epoch + 1
    with pytest.raises(ControllerMovedException):
        a.multi([Create("/late-write", b"")], fence=old.fence)
    b.multi([Create("/fresh-write", b"")], fence=new.fence)
    assert b.exists("/fresh-write") and not b.exists("/late-write")


def test_resign_leaves_another_sessions_controller_alone(
    sessions: tuple[ZkClient, ZkClient],
) -> None:
    a, b = sessions
    won = try_become_controller(a, 1)
    assert won is not None
    resign(b)
    assert read_controller_id(b) == 1
