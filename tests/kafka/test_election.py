"""Leader election against PartitionLeaderElectionAlgorithmsTest and PartitionStateMachineTest's
election rows (reference §4)."""

from __future__ import annotations

import pytest

from kafka_topic_operator.kafka.election import (
    OfflineElection,
    ReassignElection,
    controlled_shutdown_partition_leader_election,
    is_unclean_election,
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred_replica,
    leader_for_reassign,
    offline_partition_leader_election,
    preferred_replica_partition_leader_election,
    reassign_partition_leader_election,
    strategy_name,
    unclean_election_allowed,
)
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderRecoveryState
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.topic_partition import TopicPartition

TP = TopicPartition("t", 0)


@pytest.mark.parametrize(
    ("isr", "live", "unclean", "expected", "meter"),
    [([2, 4], {4}, False, 4, False), ([2], {4}, False, None, False), ([2], {4}, True, 4, True)],
)
def test_offline_election(
    isr: list[int], live: set[int], unclean: bool, expected: int | None, meter: bool
) -> None:
    leader = offline_partition_leader_election([2, 4], isr, live, unclean)
    assert leader == expected
    assert is_unclean_election([2, 4], isr, live, leader) is meter


@pytest.mark.parametrize(
    ("isr", "live", "expected"), [([2, 4], {4}, 4), ([2], set(), None), ([], {2}, None)]
)
def test_reassign_election(isr: list[int], live: set[int], expected: int | None) -> None:
    assert reassign_partition_leader_election([2, 4], isr, live) == expected


@pytest.mark.parametrize(
    ("isr", "live", "expected"),
    [([2, 4], {2, 4}, 2), ([2], set(), None), ([4], {2, 4}, None), ([], set(), None)],
)
def test_preferred_election(isr: list[int], live: set[int], expected: int | None) -> None:
    assert preferred_replica_partition_leader_election([2, 4], isr, live) == expected


@pytest.mark.parametrize(
    ("isr", "shutting_down", "expected"),
    [([2, 4], {2}, 4), ([2], {2}, None), ([2, 4], {2, 4}, None)],
)
def test_controlled_shutdown_election(
    isr: list[int], shutting_down: set[int], expected: int | None
) -> None:
    assert controlled_shutdown_partition_leader_election([2, 4], isr, {2, 4}, shutting_down) == (
        expected
    )


def test_preferred_wrapper_keeps_isr_and_tells_the_assignment() -> None:
    result = leader_for_preferred_replica(TP, [5], LeaderAndIsr(5, (5,)), {5})
    assert result.leader_and_isr == LeaderAndIsr(5, (5,), 1)
    assert result.live_replicas == (5,)


def test_controlled_shutdown_wrapper_drops_the_broker_and_tells_it_too() -> None:
    result = leader_for_controlled_shutdown(TP, [5, 6], LeaderAndIsr(5, (5, 6)), {5, 6}, {5})
    assert result.leader_and_isr == LeaderAndIsr(6, (6,), 1)
    assert result.live_replicas == (5, 6)


def test_offline_clean_wrapper() -> None:
    result = leader_for_offline(TP, [5], LeaderAndIsr(-1, (5,)), {5}, unclean=False)
    assert result.leader_and_isr == LeaderAndIsr(5, (5,), 1)
    assert result.live_replicas == (5,)


def test_offline_unclean_wrapper_both_ways() -> None:
    current = LeaderAndIsr(6, (6,))
    old = leader_for_offline(TP, [6, 5], current, {5}, unclean=True, recovering_on_unclean=False)
    assert old.leader_and_isr == LeaderAndIsr(5, (5,), 1)
    new = leader_for_offline(TP, [6, 5], current, {5}, unclean=True)
    assert new.leader_and_isr == LeaderAndIsr(5, (5,), 1, LeaderRecoveryState.RECOVERING)
    assert leader_for_offline(TP, [6, 5], current, {5}, unclean=False).leader_and_isr is None


def test_offline_wrapper_filters_isr_to_live_replicas() -> None:
    result = leader_for_offline(TP, [1, 2, 3], LeaderAndIsr(1, (1, 2, 3), 4), {2, 3}, False)
    assert result.leader_and_isr == LeaderAndIsr(2, (2, 3), 5)
    assert result.live_replicas == (2, 3)


def test_reassign_wrapper_targets_and_keeps_isr() -> None:
    moving = ReplicaAssignment.of([1]).reassign_to([2])
    result = leader_for_reassign(TP, moving, LeaderAndIsr(1, (1, 2), 2), {1, 2})
    assert result.leader_and_isr == LeaderAndIsr(2, (1, 2), 3)
    assert result.live_replicas == (2,)


def test_unclean_decision() -> None:
    assert not unclean_election_allowed(True, True, "true")
    assert unclean_election_allowed(False, True, None)
    assert unclean_election_allowed(False, False, "TRUE")
    assert not unclean_election_allowed(False, False, "false", default=True)
    assert unclean_election_allowed(False, False, None, default=True)
    assert not unclean_election_allowed(False, False, None)


def test_strategy_names() -> None:
    assert strategy_name(OfflineElection(False)) == "OfflinePartitionLeaderElectionStrategy(false)"
    assert strategy_name(ReassignElection()) == "ReassignPartitionLeaderElectionStrategy"
