"""LeaderAndIsr helpers (kafka/api/LeaderAndIsr.scala): epochs move, partition epochs do not."""

from __future__ import annotations

from kafka_topic_operator.kafka.leader_and_isr import (
    LEADER_DURING_DELETE,
    LeaderAndIsr,
    LeaderRecoveryState,
)


def test_initial_state_starts_at_epoch_zero() -> None:
    state = LeaderAndIsr.initial(5, [5, 6])
    assert (state.leader, state.isr, state.leader_epoch, state.partition_epoch) == (5, (5, 6), 0, 0)
    assert state.leader_recovery_state is LeaderRecoveryState.RECOVERED


def test_new_leader_keeps_isr_and_partition_epoch() -> None:
    state = LeaderAndIsr(leader=5, isr=(5, 6), leader_epoch=3, partition_epoch=7)
    moved = state.new_leader(6)
    assert (moved.leader, moved.isr, moved.leader_epoch, moved.partition_epoch) == (6, (5, 6), 4, 7)


def test_new_leader_and_isr_replaces_isr() -> None:
    moved = LeaderAndIsr(leader=5, isr=(5, 6)).new_leader_and_isr(-1, [6])
    assert (moved.leader, moved.isr, moved.leader_epoch) == (-1, (6,), 1)
    assert not moved.has_leader


def test_recovering_variant_marks_recovery_and_later_changes_keep_it() -> None:
    # Kafka 3.9 LeaderAndIsr.scala: newLeader and newLeaderAndIsr keep leaderRecoveryState.
    recovering = LeaderAndIsr(leader=6, isr=(6,)).new_recovering_leader_and_isr(5, [5])
    assert recovering.leader_recovery_state is LeaderRecoveryState.RECOVERING
    assert recovering.new_leader(5).leader_recovery_state is LeaderRecoveryState.RECOVERING
    shrunk = recovering.new_leader_and_isr(-1, [5])
    assert shrunk.leader_recovery_state is LeaderRecoveryState.RECOVERING


def test_during_delete_uses_the_delete_sentinel() -> None:
    assert LeaderAndIsr.during_delete([1, 2]) == LeaderAndIsr(LEADER_DURING_DELETE, (1, 2))
