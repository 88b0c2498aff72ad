"""State tables and transition planning against ReplicaStateMachineTest and
PartitionStateMachineTest (reference §3)."""

from __future__ import annotations

import pytest

from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr
from kafka_topic_operator.kafka.states import (
    PartitionAndReplica,
    PartitionState,
    ReplicaState,
    initial_leader_and_isr,
    plan_partition_transitions,
    plan_replica_transitions,
    remove_replica_from_isr,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition

R = ReplicaState
P = PartitionState
TP = TopicPartition("t", 0)
REPLICA = PartitionAndReplica(TP, 5)

VALID_REPLICA = {  # every valid pair of ReplicaStateMachineTest, plus the table's others
    (R.NON_EXISTENT_REPLICA, R.NEW_REPLICA), (R.NEW_REPLICA, R.ONLINE_REPLICA),
    (R.NEW_REPLICA, R.OFFLINE_REPLICA), (R.ONLINE_REPLICA, R.ONLINE_REPLICA),
    (R.ONLINE_REPLICA, R.OFFLINE_REPLICA), (R.OFFLINE_REPLICA, R.ONLINE_REPLICA),
    (R.OFFLINE_REPLICA, R.OFFLINE_REPLICA),
    (R.OFFLINE_REPLICA, R.REPLICA_DELETION_STARTED),
    (R.OFFLINE_REPLICA, R.REPLICA_DELETION_INELIGIBLE),
    (R.REPLICA_DELETION_STARTED, R.REPLICA_DELETION_INELIGIBLE),
    (R.REPLICA_DELETION_STARTED, R.REPLICA_DELETION_SUCCESSFUL),
    (R.REPLICA_DELETION_SUCCESSFUL, R.NON_EXISTENT_REPLICA),
    (R.REPLICA_DELETION_INELIGIBLE, R.ONLINE_REPLICA),
    (R.REPLICA_DELETION_INELIGIBLE, R.OFFLINE_REPLICA),
}  # fmt: skip

INVALID_REPLICA_FROM_TEST = {
    R.NON_EXISTENT_REPLICA: [R.ONLINE_REPLICA, R.OFFLINE_REPLICA, R.REPLICA_DELETION_STARTED,
                             R.REPLICA_DELETION_INELIGIBLE, R.REPLICA_DELETION_SUCCESSFUL],
    R.NEW_REPLICA: [R.NON_EXISTENT_REPLICA, R.REPLICA_DELETION_STARTED,
                    R.REPLICA_DELETION_INELIGIBLE, R.REPLICA_DELETION_SUCCESSFUL],
    R.ONLINE_REPLICA: [R.NON_EXISTENT_REPLICA, R.NEW_REPLICA, R.REPLICA_DELETION_STARTED,
                       R.REPLICA_DELETION_INELIGIBLE, R.REPLICA_DELETION_SUCCESSFUL],
    R.OFFLINE_REPLICA: [R.NON_EXISTENT_REPLICA, R.NEW_REPLICA, R.REPLICA_DELETION_SUCCESSFUL],
    R.REPLICA_DELETION_STARTED: [R.NON_EXISTENT_REPLICA, R.NEW_REPLICA, R.ONLINE_REPLICA,
                                 R.OFFLINE_REPLICA],
    R.REPLICA_DELETION_SUCCESSFUL: [R.NEW_REPLICA, R.ONLINE_REPLICA, R.OFFLINE_REPLICA,
                                    R.REPLICA_DELETION_STARTED, R.REPLICA_DELETION_INELIGIBLE],
    R.REPLICA_DELETION_INELIGIBLE: [R.NON_EXISTENT_REPLICA, R.NEW_REPLICA,
                                    R.REPLICA_DELETION_STARTED, R.REPLICA_DELETION_SUCCESSFUL],
}  # fmt: skip


def test_state_bytes() -> None:
    assert [s.value for s in ReplicaState] == [1, 2, 3, 4, 5, 6, 7]
    assert [s.value for s in PartitionState] == [0, 1, 2, 3]


@pytest.mark.parametrize("current", list(ReplicaState))
@pytest.mark.parametrize("target", list(ReplicaState))
def test_replica_matrix(current: ReplicaState, target: ReplicaState) -> None:
    plan = plan_replica_transitions({REPLICA: current}, [REPLICA], target)
    assert bool(plan.valid) == ((current, target) in VALID_REPLICA)
    assert bool(plan.invalid) != bool(plan.valid)


@pytest.mark.parametrize(
    ("current", "target"), [(c, t) for c, ts in INVALID_REPLICA_FROM_TEST.items() for t in ts]
)
def test_replica_state_machine_test_invalid_rows(
    current: ReplicaState, target: ReplicaState
) -> None:
    plan = plan_replica_transitions({REPLICA: current}, [REPLICA], target)
    assert plan.valid == () and plan.invalid[0].current is current


def test_unknown_replica_is_non_existent_and_message_is_kafkas() -> None:
    plan = plan_replica_transitions({}, [REPLICA], R.ONLINE_REPLICA)
    assert plan.invalid[0].message == (
        "Replica [Topic=t,Partition=0,Replica=5] should be in the NewReplica,OnlineReplica,"
        "OfflineReplica,ReplicaDeletionIneligible states before moving to OnlineReplica state. "
        "Instead it is in NonExistentReplica state"
    )
    assert plan_replica_transitions({}, [REPLICA], R.NEW_REPLICA).valid == (REPLICA,)


VALID_PARTITION = {
    (P.NON_EXISTENT_PARTITION, P.NEW_PARTITION), (P.NEW_PARTITION, P.ONLINE_PARTITION),
    (P.NEW_PARTITION, P.OFFLINE_PARTITION), (P.ONLINE_PARTITION, P.ONLINE_PARTITION),
    (P.ONLINE_PARTITION, P.OFFLINE_PARTITION), (P.OFFLINE_PARTITION, P.ONLINE_PARTITION),
    (P.OFFLINE_PARTITION, P.OFFLINE_PARTITION), (P.OFFLINE_PARTITION, P.NON_EXISTENT_PARTITION),
}  # fmt: skip


@pytest.mark.parametrize("current", list(PartitionState))
@pytest.mark.parametrize("target", list(PartitionState))
def test_partition_matrix(current: PartitionState, target: PartitionState) -> None:
    plan = plan_partition_transitions({TP: current}, [TP], target)
    assert bool(plan.valid) == ((current, target) in VALID_PARTITION)


def test_partition_state_machine_test_invalid_rows_and_message() -> None:
    for current, target in [
        (P.NON_EXISTENT_PARTITION, P.ONLINE_PARTITION),
        (P.NON_EXISTENT_PARTITION, P.OFFLINE_PARTITION),
        (P.NEW_PARTITION, P.NON_EXISTENT_PARTITION),
        (P.ONLINE_PARTITION, P.NON_EXISTENT_PARTITION),
        (P.ONLINE_PARTITION, P.NEW_PARTITION), (P.OFFLINE_PARTITION, P.NEW_PARTITION),
    ]:  # fmt: skip
        assert plan_partition_transitions({TP: current}, [TP], target).valid == ()
    plan = plan_partition_transitions({}, [TP], P.ONLINE_PARTITION)
    assert plan.invalid[0].message == (
        "Partition t-0 should be in one of NewPartition,OnlinePartition,OfflinePartition states "
        "before moving to OnlinePartition state. Instead it is in NonExistentPartition state"
    )


def test_plan_splits_a_batch_keeping_order() -> None:
    a, b, c = (PartitionAndReplica(TP, i) for i in (1, 2, 3))
    states = {a: R.OFFLINE_REPLICA, b: R.ONLINE_REPLICA, c: R.OFFLINE_REPLICA}
    plan = plan_replica_transitions(states, [a, b, c], R.REPLICA_DELETION_STARTED)
    assert plan.valid == (a, c)
    assert [i.key for i in plan.invalid] == [b]


def test_initial_leader_and_isr_keeps_assignment_order() -> None:
    assert initial_leader_and_isr([5], [5]) == LeaderAndIsr(5, (5,))
    state = initial_leader_and_isr([3, 1, 2], {1, 2})
    assert state == LeaderAndIsr(1, (1, 2), leader_epoch=0, partition_epoch=0)
    assert initial_leader_and_isr([3], {1}) is None


def test_online_to_offline_isr_shrink_vector() -> None:
    # ReplicaStateMachineTest: replicas [5,6], leader 5, isr [5,6]; replica 5 goes offline.
    assert remove_replica_from_isr(LeaderAndIsr(5, (5, 6)), 5) == LeaderAndIsr(-1, (6,), 1)


def test_last_isr_member_is_never_removed() -> None:
    # ControllerIntegrationTest: the whole (single) ISR goes offline → leader -1, epoch 1.
    assert remove_replica_from_isr(LeaderAndIsr(3, (3,)), 3) == LeaderAndIsr(-1, (3,), 1)


def test_replica_outside_isr_is_not_written() -> None:
    assert remove_replica_from_isr(LeaderAndIsr(5, (5,)), 6) is None
    follower_gone = remove_replica_from_isr(LeaderAndIsr(5, (5, 6), 4, partition_epoch=9), 6)
    assert follower_gone == LeaderAndIsr(5, (5,), 5, partition_epoch=9)
