"""The controller's watches: which ZooKeeper events become controller events."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kafka_topic_operator.controller import events as ev
from kafka_topic_operator.controller.event_manager import ControllerEventManager
from kafka_topic_operator.controller.watches import ControllerWatches
from kafka_topic_operator.zk import znodes


def _queued(kind: str | None, path: str | None) -> list[ev.ControllerEvent]:
    manager = ControllerEventManager(lambda _event, _coalesced: None, lambda: None)
    watches = ControllerWatches(manager, lambda: 1)
    watches.on_reassign_znode(SimpleNamespace(type=kind, path=path))
    return list(manager.queue.queue)


REQUEST = znodes.REASSIGN_PARTITIONS_PATH


@pytest.mark.parametrize("kind", ["CHANGED", "DELETED"])
def test_a_change_or_deletion_of_the_reassignment_request_only_spends_its_watch(
    kind: str,
) -> None:
    """PartitionReassignmentHandler overrides handleCreation alone: nothing to do, and the
    watch is not set again (the controller's next read of the znode sets it)."""
    assert _queued(kind, REQUEST) == []


def test_the_reassignment_requests_creation_starts_reassignments() -> None:
    assert _queued("CREATED", REQUEST) == [ev.ZkPartitionReassignment(created=True)]


def test_a_watch_kazoo_dropped_with_the_connection_is_only_set_again() -> None:
    # Kafka's ZooKeeper client keeps its watches over a reconnection; kazoo does not.
    assert _queued("NONE", None) == [ev.ZkPartitionReassignment(created=False)]
