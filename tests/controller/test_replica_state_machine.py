"""Kafka's ReplicaStateMachineTest scenarios, run against the wired state machine on a real
ZooKeeper: broker 5, controller epoch 50, partition t-0. Requests are read back from the
brokers' queues."""

from __future__ import annotations

import pytest

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr
from kafka_topic_operator.kafka.states import PartitionAndReplica, ReplicaState
from kafka_topic_operator.kafka.topic_partition import TopicPartition

from .conftest import CONTROLLER_EPOCH, Harness

pytestmark = pytest.mark.zookeeper

R = ReplicaState
BROKER = 5
TP = TopicPartition("t", 0)
REPLICA = PartitionAndReplica(TP, BROKER)


@pytest.fixture
def h(harness: Harness) -> Harness:
    harness.add_brokers(BROKER)
    harness.assign(TP, BROKER)
    return harness


def move(h: Harness, start: ReplicaState | None, target: ReplicaState) -> None:
    if start is not None:
        h.ctx.replica_states[REPLICA] = start
    h.replicas.handle_state_changes([REPLICA], target)


def test_non_existent_to_new_without_leader_only_marks(h: Harness) -> None:
    move(h, None, R.NEW_REPLICA)
    assert h.ctx.replica_states[REPLICA] is R.NEW_REPLICA
    assert h.requests(BROKER) == []


def test_new_to_new_is_invalid(h: Harness) -> None:
    move(h, R.NEW_REPLICA, R.NEW_REPLICA)
    assert h.ctx.replica_states[REPLICA] is R.NEW_REPLICA


def test_non_existent_to_new_when_the_replica_leads_fails(h: Harness) -> None:
    h.cache_state(TP, LeaderAndIsr(BROKER, (BROKER,)))
    move(h, None, R.NEW_REPLICA)
    # StateChangeFailedException: logged; the state does not change.
    assert h.ctx.replica_states[REPLICA] is R.NON_EXISTENT_REPLICA
    assert h.requests(BROKER) == []


def test_non_existent_to_new_with_another_leader_sends_leader_and_isr_is_new(h: Harness) -> None:
    h.add_brokers(6)
    h.assign(TP, 6, BROKER)
    h.cache_state(TP, LeaderAndIsr(6, (6,)))
    move(h, None, R.NEW_REPLICA)
    assert h.ctx.replica_states[REPLICA] is R.NEW_REPLICA
    lai, um = h.requests(BROKER)
    assert isinstance(lai, bc.LeaderAndIsrRequest)
    (state,) = lai.partition_states
    assert (state.leader, state.isr, state.is_new, state.replicas) == (6, (6,), True, (6, 5))
    assert isinstance(um, bc.UpdateMetadataRequest)
    assert [s.topic_partition for s in um.partition_states] == [TP]


def test_new_to_online(h: Harness) -> None:
    move(h, R.NEW_REPLICA, R.ONLINE_REPLICA)
    assert h.ctx.replica_states[REPLICA] is R.ONLINE_REPLICA
    assert h.requests(BROKER) == []


def test_new_to_online_adds_a_replica_missing_from_the_assignment(h: Harness) -> None:
    h.assign(TP, 6)
    move(h, R.NEW_REPLICA, R.ONLINE_REPLICA)
    assert h.ctx.replicas(TP) == (6, BROKER)


def test_new_to_offline_without_leader_stops_the_replica_and_updates_metadata(h: Harness) -> None:
    move(h, R.NEW_REPLICA, R.OFFLINE_REPLICA)
    assert h.ctx.replica_states[REPLICA] is R.OFFLINE_REPLICA
    um, stop = h.requests(BROKER)
    assert isinstance(um, bc.UpdateMetadataRequest) and um.partition_states == ()
    assert isinstance(stop, bc.StopReplicaRequest)
    assert stop.partition_states == (bc.StopReplicaPartitionState("t", 0, -1, False),)


def test_a_dead_brokers_replica_goes_offline_without_a_stop_replica_and_it_is_said(
    h: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    # Broker 5 died (the broker failure callback runs after it left the live brokers); its
    # replica of t-0 and of t-1 go offline: nothing is queued for it, one line says so.
    h.add_brokers(6)
    other = PartitionAndReplica(TopicPartition("t", 1), BROKER)
    h.assign(other.topic_partition, BROKER)
    h.ctx.live_brokers.pop(BROKER)
    for replica in (REPLICA, other):
        h.ctx.replica_states[replica] = R.NEW_REPLICA
    with caplog.at_level("INFO"):
        h.replicas.handle_state_changes([REPLICA, other], R.OFFLINE_REPLICA)
    assert h.ctx.replica_states[REPLICA] is h.ctx.replica_states[other] is R.OFFLINE_REPLICA
    assert h.requests(BROKER) == []
    said = [r.getMessage() for r in caplog.records if "StopReplica" in r.getMessage()]
    assert said == [f"Not sending StopReplica request to broker {BROKER}, since it is offline."]
    (um,) = h.requests(6)
    assert isinstance(um, bc.UpdateMetadataRequest)


def test_online_to_online_sends_leader_and_isr(h: Harness) -> None:
    h.cache_state(TP, LeaderAndIsr(BROKER, (BROKER,)))
    move(h, R.ONLINE_REPLICA, R.ONLINE_REPLICA)
    lai, _um = h.requests(BROKER)
    assert isinstance(lai, bc.LeaderAndIsrRequest)
    (state,) = lai.partition_states
    assert (state.leader, state.isr, state.is_new) == (BROKER, (BROKER,), False)
    assert state.controller_epoch == CONTROLLER_EPOCH


def test_online_to_offline_shrinks_the_isr_and_tells_the_others(h: Harness) -> None:
    h.add_brokers(6)
    h.assign(TP, BROKER, 6)
    h.cache_state(TP, LeaderAndIsr(BROKER, (BROKER, 6)))
    move(h, R.ONLINE_REPLICA, R.OFFLINE_REPLICA)
    assert h.ctx.replica_states[REPLICA] is R.OFFLINE_REPLICA
    written = h.read_state(TP)
    assert written is not None
    assert written.leader_and_isr == LeaderAndIsr(-1, (6,), leader_epoch=1, partition_epoch=1)
    assert h.ctx.leadership[TP] == written  # the cache holds zkVersion + 1
    to_six = h.requests(6)
    assert isinstance(to_six[0], bc.LeaderAndIsrRequest)
    (state,) = to_six[0].partition_states
    assert (state.leader, state.leader_epoch, state.isr) == (-1, 1, (6,))
    to_five = h.requests(BROKER)
    stops = [r for r in to_five if isinstance(r, bc.StopReplicaRequest)]
    # Added before the ISR shrink, so it carries the leader epoch of then.
    assert [s.partition_states for s in stops] == [
        (bc.StopReplicaPartitionState("t", 0, 0, False),)
    ]
    assert not any(isinstance(r, bc.LeaderAndIsrRequest) for r in to_five)


def test_offline_never_removes_the_last_isr_member(h: Harness) -> None:
    h.cache_state(TP, LeaderAndIsr(BROKER, (BROKER,)))
    move(h, R.ONLINE_REPLICA, R.OFFLINE_REPLICA)
    written = h.read_state(TP)
    assert written is not None
    assert (written.leader_and_isr.leader, written.leader_and_isr.isr) == (-1, (BROKER,))
    assert written.leader_and_isr.leader_epoch == 1


def test_offline_of_a_replica_outside_the_isr_writes_nothing(h: Harness) -> None:
    h.add_brokers(6)
    h.assign(TP, 6, BROKER)
    h.cache_state(TP, LeaderAndIsr(6, (6,)))
    move(h, R.ONLINE_REPLICA, R.OFFLINE_REPLICA)
    written = h.read_state(TP)
    assert written is not None and written.leader_and_isr.partition_epoch == 0
    assert h.ctx.replica_states[REPLICA] is R.OFFLINE_REPLICA


def test_offline_retries_a_conflicting_isr_write(h: Harness) -> None:
    h.add_brokers(6, 7)
    h.assign(TP, BROKER, 6, 7)
    h.cache_state(TP, LeaderAndIsr(6, (6, BROKER)))
    # Someone (the leader) expanded the ISR after the controller cached it.
    h.write_state(TP, LeaderAndIsr(6, (6, BROKER, 7)))
    move(h, R.ONLINE_REPLICA, R.OFFLINE_REPLICA)
    written = h.read_state(TP)
    assert written is not None
    assert (written.leader_and_isr.leader, written.leader_and_isr.isr) == (6, (6, 7))


def test_offline_reads_a_state_known_without_the_replica_in_its_isr(h: Harness) -> None:
    # The context's copy shows the ISR without the broker, but the leader had added it since:
    # Kafka reads the state and removes it, so the copy cannot be trusted to skip the write.
    h.add_brokers(6)
    h.assign(TP, BROKER, 6)
    h.cache_state(TP, LeaderAndIsr(6, (6,)))
    h.write_state(TP, LeaderAndIsr(6, (6, BROKER)))
    move(h, R.ONLINE_REPLICA, R.OFFLINE_REPLICA)
    written = h.read_state(TP)
    assert written is not None
    assert (written.leader_and_isr.leader, written.leader_and_isr.isr) == (6, (6,))
    assert h.ctx.leadership[TP] == written


def test_offline_with_a_missing_state_znode_of_a_deleting_topic_is_skipped(h: Harness) -> None:
    h.ctx.leadership[TP] = h.ctx.leadership.get(TP) or _cached(LeaderAndIsr(BROKER, (BROKER,)))
    h.ctx.topics_to_be_deleted.add("t")
    move(h, R.ONLINE_REPLICA, R.OFFLINE_REPLICA)
    assert h.ctx.replica_states[REPLICA] is R.ONLINE_REPLICA


def test_offline_aborts_when_another_controller_wrote_the_state(h: Harness) -> None:
    # This controller knows the state as it last read it; another one wrote over it since.
    h.cache_state(TP, LeaderAndIsr(BROKER, (BROKER,)))
    h.write_state(TP, LeaderAndIsr(BROKER, (BROKER,)), epoch=CONTROLLER_EPOCH + 1)
    move(h, R.ONLINE_REPLICA, R.OFFLINE_REPLICA)
    assert h.ctx.replica_states[REPLICA] is R.ONLINE_REPLICA
    written = h.read_state(TP)
    assert written is not None and written.controller_epoch == CONTROLLER_EPOCH + 1


def _cached(lai: LeaderAndIsr):  # type: ignore[no-untyped-def]
    from kafka_topic_operator.kafka.leader_and_isr import LeaderIsrAndControllerEpoch

    return LeaderIsrAndControllerEpoch(lai, CONTROLLER_EPOCH)


def test_offline_to_online_sends_leader_and_isr(h: Harness) -> None:
    h.cache_state(TP, LeaderAndIsr(BROKER, (BROKER,)))
    move(h, R.OFFLINE_REPLICA, R.ONLINE_REPLICA)
    assert h.ctx.replica_states[REPLICA] is R.ONLINE_REPLICA
    assert isinstance(h.requests(BROKER)[0], bc.LeaderAndIsrRequest)


def test_offline_to_deletion_started_sends_stop_replica_with_delete(h: Harness) -> None:
    move(h, R.OFFLINE_REPLICA, R.REPLICA_DELETION_STARTED)
    assert h.ctx.replica_states[REPLICA] is R.REPLICA_DELETION_STARTED
    (stop,) = h.requests(BROKER)
    assert isinstance(stop, bc.StopReplicaRequest)
    assert stop.partition_states == (bc.StopReplicaPartitionState("t", 0, -1, True),)
    assert h.batch.pending_stop_replica[stop.correlation_id].deletes == {TP}


def test_deletion_started_of_a_deleting_topic_uses_epoch_during_delete(h: Harness) -> None:
    h.ctx.topics_to_be_deleted.add("t")
    move(h, R.OFFLINE_REPLICA, R.REPLICA_DELETION_STARTED)
    (stop,) = h.requests(BROKER)
    assert isinstance(stop, bc.StopReplicaRequest)
    assert stop.partition_states[0].leader_epoch == -2


@pytest.mark.parametrize(
    ("start", "target"),
    [
        (R.OFFLINE_REPLICA, R.REPLICA_DELETION_INELIGIBLE),
        (R.REPLICA_DELETION_STARTED, R.REPLICA_DELETION_INELIGIBLE),
        (R.REPLICA_DELETION_STARTED, R.REPLICA_DELETION_SUCCESSFUL),
    ],
)
def test_marking_transitions_send_nothing(
    h: Harness, start: ReplicaState, target: ReplicaState
) -> None:
    move(h, start, target)
    assert h.ctx.replica_states[REPLICA] is target
    assert h.requests(BROKER) == []


def test_successful_to_non_existent_removes_the_replica_and_its_state(h: Harness) -> None:
    move(h, R.REPLICA_DELETION_SUCCESSFUL, R.NON_EXISTENT_REPLICA)
    assert h.ctx.replicas(TP) == ()
    assert REPLICA not in h.ctx.replica_states


def test_ineligible_to_online_sends_leader_and_isr(h: Harness) -> None:
    h.cache_state(TP, LeaderAndIsr(BROKER, (BROKER,)))
    move(h, R.REPLICA_DELETION_INELIGIBLE, R.ONLINE_REPLICA)
    assert h.ctx.replica_states[REPLICA] is R.ONLINE_REPLICA
    assert isinstance(h.requests(BROKER)[0], bc.LeaderAndIsrRequest)


INVALID = [
    (R.NON_EXISTENT_REPLICA, t)
    for t in (R.ONLINE_REPLICA, R.OFFLINE_REPLICA, R.REPLICA_DELETION_STARTED,
              R.REPLICA_DELETION_INELIGIBLE, R.REPLICA_DELETION_SUCCESSFUL)
] + [
    (R.NEW_REPLICA, t)
    for t in (R.NON_EXISTENT_REPLICA, R.REPLICA_DELETION_STARTED, R.REPLICA_DELETION_INELIGIBLE,
              R.REPLICA_DELETION_SUCCESSFUL)
] + [
    (R.ONLINE_REPLICA, t)
    for t in (R.NON_EXISTENT_REPLICA, R.NEW_REPLICA, R.REPLICA_DELETION_STARTED,
              R.REPLICA_DELETION_INELIGIBLE, R.REPLICA_DELETION_SUCCESSFUL)
] + [
    (R.OFFLINE_REPLICA, t)
    for t in (R.NON_EXISTENT_REPLICA, R.NEW_REPLICA, R.REPLICA_DELETION_SUCCESSFUL)
] + [
    (R.REPLICA_DELETION_STARTED, t)
    for t in (R.NON_EXISTENT_REPLICA, R.NEW_REPLICA, R.ONLINE_REPLICA, R.OFFLINE_REPLICA)
] + [
    (R.REPLICA_DELETION_SUCCESSFUL, t)
    for t in (R.NEW_REPLICA, R.ONLINE_REPLICA, R.OFFLINE_REPLICA, R.REPLICA_DELETION_STARTED,
              R.REPLICA_DELETION_INELIGIBLE)
] + [
    (R.REPLICA_DELETION_INELIGIBLE, t)
    for t in (R.NON_EXISTENT_REPLICA, R.NEW_REPLICA, R.REPLICA_DELETION_STARTED,
              R.REPLICA_DELETION_SUCCESSFUL)
]  # fmt: skip


@pytest.mark.parametrize(("start", "target"), INVALID)
def test_invalid_transitions_leave_the_state_and_send_nothing(
    h: Harness, start: ReplicaState, target: ReplicaState, caplog: pytest.LogCaptureFixture
) -> None:
    h.cache_state(TP, LeaderAndIsr(6, (6,)))
    move(h, start, target)
    assert h.ctx.replica_states.get(REPLICA, R.NON_EXISTENT_REPLICA) is start
    assert h.requests(BROKER) == []
    assert (
        "should be in the" in caplog.text
        and f"Instead it is in {start.kafka_name} state" in caplog.text
    )


def test_startup_drives_offline_replicas_to_offline(h: Harness) -> None:
    h.add_brokers(6)
    del h.ctx.live_brokers[6]
    h.assign(TP, BROKER, 6)
    h.cache_state(TP, LeaderAndIsr(BROKER, (BROKER, 6)))
    h.replicas.startup()
    assert h.ctx.replica_states[REPLICA] is R.ONLINE_REPLICA
    assert h.ctx.replica_states[PartitionAndReplica(TP, 6)] is R.OFFLINE_REPLICA
    written = h.read_state(TP)
    assert written is not None and written.leader_and_isr.isr == (BROKER,)
