"""Which resources the drift timer runs for (its `when` filter)."""

from __future__ import annotations

import kopf
import pytest

from kafka_topic_operator.clusters.zookeeper_mode import ZooKeeperModeCluster
from kafka_topic_operator.k8s.handlers import Runtime, unsettled
from kafka_topic_operator.zk.client import ZkClient

# What `kto run --selector team=a` hands kopf (the client never connects here).
MEMO = kopf.Memo(
    runtime=Runtime(cluster=ZooKeeperModeCluster(ZkClient("127.0.0.1:1")), selector={"team": "a"})
)
SELECTED = {"team": "a"}


def status(reason: str | None) -> dict[str, object]:
    if reason is None:
        return {}
    return {"conditions": [{"type": "Ready", "status": "False", "reason": reason}]}


@pytest.mark.parametrize(
    ("reason", "timed"),
    [
        (None, False),  # not reconciled yet: its create handler runs
        ("Created", False),  # followed: the status follower watches its znodes
        ("PartitionsOffline", False),
        # A Reconciling status the timer itself wrote (a reassignment applied after a restart)
        # has no handler retrying it: its timer must go on, or the resource stays Reconciling.
        ("Reconciling", True),
        ("ReassignmentInProgress", True),
        ("BrokersUnavailable", True),
        ("Conflict", True),
    ],
)
def test_the_drift_timer_runs_for_every_unsettled_resource(reason: str | None, timed: bool) -> None:
    assert unsettled(SELECTED, status(reason), MEMO) is timed


def test_no_timer_for_resources_of_other_selectors() -> None:
    assert unsettled({"team": "b"}, status("Reconciling"), MEMO) is False
    assert unsettled({}, status("Reconciling"), MEMO) is False
