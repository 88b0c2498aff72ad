"""The twin's kill does to ZooKeeper what Kafka's kill -9 of a broker does."""

from __future__ import annotations

from pathlib import Path

import pytest
from kto_testing import Waiter

from kafka_topic_operator.zk import znodes

from .backends import TwinBackend

pytestmark = pytest.mark.zookeeper


def test_killing_the_controllers_broker_ends_both_of_its_znodes_in_one_transaction(
    zk_chroot: str, tmp_path: Path
) -> None:
    """In Kafka the broker and its controller share one session, whose end deletes the broker's
    registration and `/controller` at once: no controller elected in between sees the dead
    broker alive (which changes how many leader epochs its failover takes)."""
    twin = TwinBackend(zk_chroot, tmp_path)
    try:
        twin.start_broker(0)
        Waiter(twin.zk).exists(znodes.CONTROLLER_PATH, timeout=30.0)
        twin.kill_broker(0)
        raw = twin.zk.raw
        assert raw.exists(znodes.CONTROLLER_PATH) is None
        assert raw.get_children(znodes.BROKER_IDS_PATH) == []
        # pzxid: the transaction that last added or removed a child of the znode.
        assert raw.exists("/").pzxid == raw.exists(znodes.BROKER_IDS_PATH).pzxid
    finally:
        twin.close()
