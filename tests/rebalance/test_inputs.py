"""What a KafkaRebalance plans over: goals the planner cannot carry out yet are refused."""

from __future__ import annotations

import pytest

from kafka_topic_operator.rebalance.inputs import planning_input
from kafka_topic_operator.rebalance.job import PlanningError
from kafka_topic_operator.rebalance.spec import rebalance_spec
from kafka_topic_operator.snapshot import ClusterSnapshot
from kafka_topic_operator.zk import znodes


def cluster() -> ClusterSnapshot:
    endpoint = znodes.EndPoint("PLAINTEXT", "localhost", 9092, znodes.SecurityProtocol.PLAINTEXT)
    return ClusterSnapshot(brokers={b: znodes.BrokerInfo(b, (endpoint,)) for b in (0, 1)},
                           topics={})  # fmt: skip


def test_the_default_goals_are_planned() -> None:
    assert planning_input(cluster(), rebalance_spec({})).brokers == (0, 1)


@pytest.mark.parametrize("goal", ["TopicReplicaDistribution", "DiskUsageDistribution"])
def test_a_goal_the_planner_does_not_carry_out_is_refused_not_ignored(goal: str) -> None:
    spec = rebalance_spec({"goals": ["RackAware", goal, "ReplicaDistribution"]})
    with pytest.raises(PlanningError, match=f"goal {goal} is not carried out by the planner yet"):
        planning_input(cluster(), spec)
