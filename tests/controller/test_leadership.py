"""Controller election on a real ZooKeeper: one winner per epoch, fencing of the loser."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from kto_testing import eventually, expire_session

from kafka_topic_operator.controller.leadership import (
    read_controller_id,
    resign,
    try_become_controller,
)
from kafka_topic_operator.kafka.errors import ControllerMovedException
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import Create, ZkClient

from .conftest import Cluster

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


def test_a_session_expiry_elects_once_with_one_new_epoch_as_kafka_does(
    cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    """The expired session's /controller goes and the new session re-elects: both ask for an
    election, and only one may happen (Kafka's elect() stops when any controller is active)."""
    controller = cluster.start_controller(100)
    assert cluster.wait_controller() == 1
    cluster.settle(controller)
    caplog.set_level(logging.INFO, logger="kafka_topic_operator.controller.kafka_controller")
    expire_session(controller.zk)  # returns once the client holds a new session
    eventually(lambda: controller.is_active, "the controller elected again")
    cluster.settle(controller)
    node = cluster.zk.get(znodes.CONTROLLER_EPOCH_PATH)
    assert node is not None
    # Kafka: the epoch znode is created at 0 (version 0) and each election sets it with the
    # version read, so epoch and version climb together: 2 and 2.
    assert (znodes.decode_controller_epoch(node.path, node.data), node.version) == (2, 2)
    assert controller.epoch is not None and controller.epoch.zk_version == node.version
    elected = [r.getMessage() for r in caplog.records if "successfully elected" in r.getMessage()]
    assert elected == [
        "100 successfully elected as the controller. Epoch incremented to 2 and epoch zk "
        "version is now 2"
    ]
