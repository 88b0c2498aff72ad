"""An admin request Kafka 3.9's controller takes and never finishes, written behind the
operator's back: the affected KafkaTopic's status names it, why, and what clears it, and once
it is cleared the operator puts the topic back as declared."""

from __future__ import annotations

from typing import Any

import pytest
from kafka_client import describe_topic
from kto_testing import eventually

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import admin, znodes

from .conftest import Operator

pytestmark = [pytest.mark.kafka, pytest.mark.e2e]


def test_a_reassignment_kafka_never_finishes_shows_in_status_until_cleared(
    zk_operator: Operator,
) -> None:
    operator, name = zk_operator, "e2e-stuck-request"
    operator.apply(name, partitions=1, replicaAssignment=[[1, 2]])
    operator.ready(name)
    zk = operator.zookeeper
    # As an older tool writes it: a duplicated broker, which Kafka's ZooKeeper path takes.
    admin.reassign_partitions(zk, {TopicPartition(name, 0): [2, 2]}, validate=False)
    try:

        def stuck() -> dict[str, Any] | None:
            status = (operator.get(name) or {}).get("status") or {}
            return status if status.get("stuckAdminRequests") else None

        status = eventually(stuck, f"{name}'s status to name the stuck request", timeout=60)
        [request] = status["stuckAdminRequests"]
        assert request["path"] == znodes.REASSIGN_PARTITIONS_PATH
        assert request["partitions"] == [f"{name}-0"]
        assert f"{name}-0 to [2, 2]: the replica list has duplicate brokers" in request["reason"]
        assert request["clears"].startswith(f"delete {znodes.REASSIGN_PARTITIONS_PATH}")
        ready, reason, message = operator.condition(name) or ("", "", "")
        assert (ready, reason) == ("False", "ReassignmentInProgress"), message
        assert "will not be processed" in message
        # Still so a while later: the request stays, as Kafka leaves it.
        assert zk.exists(znodes.REASSIGN_PARTITIONS_PATH)
    finally:
        zk.delete(znodes.REASSIGN_PARTITIONS_PATH)
        zk.delete(znodes.CONTROLLER_PATH)

    obj = operator.ready(name, timeout=90)
    assert "stuckAdminRequests" not in obj["status"]
    partitions = eventually(lambda: describe_topic(operator.cluster, name), f"{name} described")
    assert list(partitions[1][0].replicas) == [1, 2]
    operator.delete(name)  # the session's cluster is shared: leave nothing behind
    operator.gone(name)
