"""Controller election, as KafkaZkClient.registerControllerAndIncrementControllerEpoch does it.

The winner creates the ephemeral `/controller` and bumps `/controller_epoch` in one multi-op that
names the epoch version it read, so two candidates can never both win the same epoch. The epoch
znode's new version is the fence every later controller write checks.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from kafka_topic_operator.kafka.errors import ControllerMovedException
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import (
    BadVersionError,
    Create,
    Fence,
    NodeExistsError,
    SetData,
    TransactionFailed,
    ZkClient,
)

INITIAL_CONTROLLER_EPOCH = 0
INITIAL_CONTROLLER_EPOCH_ZK_VERSION = 0


@dataclass(frozen=True, slots=True)
class ControllerEpoch:
    epoch: int
    zk_version: int

    @property
    def fence(self) -> Fence:
        return Fence(self.zk_version)


def read_controller_id(zk: ZkClient) -> int | None:
    node = zk.get(znodes.CONTROLLER_PATH)
    if node is None:
        return None
    try:
        return znodes.decode_controller(node.path, node.data).broker_id
    except znodes.ZNodeDataError:
        return None


def read_or_create_epoch(zk: ZkClient) -> ControllerEpoch:
    """`/controller_epoch`, created as 0 when absent (maybeCreateControllerEpochZNode)."""
    node = zk.get(znodes.CONTROLLER_EPOCH_PATH)
    if node is None:
        with contextlib.suppress(NodeExistsError):
            zk.create(
                znodes.CONTROLLER_EPOCH_PATH,
                znodes.encode_controller_epoch(INITIAL_CONTROLLER_EPOCH),
            )
        node = zk.get(znodes.CONTROLLER_EPOCH_PATH)
        if node is None:
            raise ControllerMovedException("/controller_epoch vanished while being created")
    return ControllerEpoch(znodes.decode_controller_epoch(node.path, node.data), node.version)


def try_become_controller(zk: ZkClient, broker_id: int) -> ControllerEpoch | None:
    """One election attempt: the new epoch if this session won, None if another controller is
    active. Retries by itself when another candidate bumped the epoch in between."""
    while True:
        current = read_or_create_epoch(zk)
        new_epoch = current.epoch + 1
        controller = znodes.encode_controller(broker_id, int(time.time() * 1000))
        try:
            zk.multi(
                [
                    Create(znodes.CONTROLLER_PATH, controller, ephemeral=True),
                    SetData(
                        znodes.CONTROLLER_EPOCH_PATH,
                        znodes.encode_controller_epoch(new_epoch),
                        current.zk_version,
                    ),
                ]
            )
        except TransactionFailed as failure:
            first = failure.first_error()
            if first and isinstance(first[1], NodeExistsError):
                if _controller_is_this_session(zk, broker_id):
                    # The multi went through before a connection loss and was retried.
                    return read_or_create_epoch(zk)
                return None
            if first and isinstance(first[1], BadVersionError):
                continue
            raise
        return ControllerEpoch(new_epoch, current.zk_version + 1)


def _controller_is_this_session(zk: ZkClient, broker_id: int) -> bool:
    node = zk.get(znodes.CONTROLLER_PATH)
    return (
        node is not None
        and node.ephemeral_owner == zk.session_id
        and read_controller_id(zk) == broker_id
    )


def resign(zk: ZkClient) -> None:
    """Deletes `/controller` if this session owns it (a deposed controller leaves it alone)."""
    node = zk.get(znodes.CONTROLLER_PATH)
    if node is not None and node.ephemeral_owner == zk.session_id:
        zk.delete(znodes.CONTROLLER_PATH, node.version)
