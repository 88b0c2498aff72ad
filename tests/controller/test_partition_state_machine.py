"""Kafka's PartitionStateMachineTest scenarios against the wired state machine on a real
ZooKeeper: broker 5, controller epoch 50, partition t-0."""

from __future__ import annotations

import pytest

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.kafka import election
from kafka_topic_operator.kafka.errors import IllegalArgumentException, StateChangeFailedException
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderRecoveryState
from kafka_topic_operator.kafka.states import PartitionState
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes

from .conftest import CONTROLLER_EPOCH, Harness

pytestmark = pytest.mark.zookeeper

P = PartitionState
BROKER = 5
TP = TopicPartition("t", 0)


@pytest.fixture
def h(harness: Harness) -> Harness:
    harness.add_brokers(BROKER)
    harness.assign(TP, BROKER)
    return harness


def leader_and_isr_to(h: Harness, broker: int) -> list[bc.LeaderAndIsrPartitionState]:
    return [
        s
        for r in h.requests(broker)
        if isinstance(r, bc.LeaderAndIsrRequest)
        for s in r.partition_states
    ]


def test_new_to_online_creates_the_state_and_sends_leader_and_isr_is_new(h: Harness) -> None:
    h.ctx.partition_states[TP] = P.NEW_PARTITION
    result = h.partitions.handle_state_changes([TP], P.ONLINE_PARTITION)
    assert h.ctx.partition_states[TP] is P.ONLINE_PARTITION
    written = h.read_state(TP)
    assert written is not None
    assert written.leader_and_isr == LeaderAndIsr(BROKER, (BROKER,))
    assert written.controller_epoch == CONTROLLER_EPOCH
    assert result == {TP: LeaderAndIsr(BROKER, (BROKER,))}
    (state,) = leader_and_isr_to(h, BROKER)
    assert (state.leader, state.isr, state.is_new, state.leader_epoch) == (5, (5,), True, 0)


def test_new_to_online_keeps_assignment_order_and_skips_dead_replicas(h: Harness) -> None:
    h.add_brokers(7, 9)
    h.assign(TP, 3, 9, 7)  # 3 is not alive
    h.ctx.partition_states[TP] = P.NEW_PARTITION
    h.partitions.handle_state_changes([TP], P.ONLINE_PARTITION)
    written = h.read_state(TP)
    assert written is not None and written.leader_and_isr == LeaderAndIsr(9, (9, 7))
    assert [s.leader for s in leader_and_isr_to(h, 7)] == [9]  # sent to the ISR


def test_new_to_online_with_an_existing_state_znode_stays_new(h: Harness) -> None:
    h.write_state(TP, LeaderAndIsr(BROKER, (BROKER,)))
    h.ctx.partition_states[TP] = P.NEW_PARTITION
    result = h.partitions.handle_state_changes([TP], P.ONLINE_PARTITION)
    assert h.ctx.partition_states[TP] is P.NEW_PARTITION
    assert not isinstance(result[TP], LeaderAndIsr)
    assert leader_and_isr_to(h, BROKER) == []


def test_new_to_online_with_no_live_replica_stays_new(h: Harness) -> None:
    h.assign(TP, 8)
    h.ctx.partition_states[TP] = P.NEW_PARTITION
    result = h.partitions.handle_state_changes([TP], P.ONLINE_PARTITION)
    assert h.ctx.partition_states[TP] is P.NEW_PARTITION
    error = result[TP]
    assert isinstance(error, StateChangeFailedException)
    assert error.message == (
        "Controller 5 epoch 50 encountered error during state change of partition t-0 from New "
        "to Online, assigned replicas are [8], live brokers are [5]. No assigned replica is alive."
    )
    assert h.read_state(TP) is None


def test_online_to_online_preferred_bumps_the_leader_epoch(h: Harness) -> None:
    h.cache_state(TP, LeaderAndIsr(BROKER, (BROKER,)))
    h.ctx.partition_states[TP] = P.ONLINE_PARTITION
    h.partitions.handle_state_changes([TP], P.ONLINE_PARTITION, election.PreferredReplicaElection())
    written = h.read_state(TP)
    assert written is not None
    assert written.leader_and_isr == LeaderAndIsr(BROKER, (BROKER,), 1, partition_epoch=1)
    (state,) = leader_and_isr_to(h, BROKER)
    assert (state.leader, state.leader_epoch, state.is_new) == (5, 1, False)


def test_online_to_online_controlled_shutdown_tells_the_shutting_down_broker(h: Harness) -> None:
    h.add_brokers(6)
    h.ctx.shutting_down.add(BROKER)
    h.assign(TP, BROKER, 6)
    h.cache_state(TP, LeaderAndIsr(BROKER, (BROKER, 6)))
    h.ctx.partition_states[TP] = P.ONLINE_PARTITION
    h.partitions.handle_state_changes(
        [TP], P.ONLINE_PARTITION, election.ControlledShutdownElection()
    )
    written = h.read_state(TP)
    assert written is not None
    assert (written.leader_and_isr.leader, written.leader_and_isr.isr) == (6, (6,))
    assert [s.leader for s in leader_and_isr_to(h, BROKER)] == [6]
    assert [s.leader for s in leader_and_isr_to(h, 6)] == [6]


def test_offline_to_online_elects_a_live_isr_member_without_reading_configs(h: Harness) -> None:
    asked: list[set[str]] = []
    h.partitions.topic_configs = lambda topics: asked.append(set(topics)) or {}  # type: ignore[assignment,func-returns-value]
    h.cache_state(TP, LeaderAndIsr(-1, (BROKER,)))
    h.ctx.partition_states[TP] = P.OFFLINE_PARTITION
    h.partitions.handle_state_changes([TP], P.ONLINE_PARTITION, election.OfflineElection())
    written = h.read_state(TP)
    assert written is not None
    assert (written.leader_and_isr.leader, written.leader_and_isr.leader_epoch) == (5, 1)
    assert asked == []  # getLogConfigs(Set.empty): no topic without a live ISR member
    assert h.ctx.partition_states[TP] is P.ONLINE_PARTITION


def test_offline_to_online_unclean_by_strategy_marks_the_leader_recovering(h: Harness) -> None:
    h.assign(TP, 6, BROKER)
    h.cache_state(TP, LeaderAndIsr(6, (6,)))
    h.ctx.partition_states[TP] = P.OFFLINE_PARTITION
    h.partitions.handle_state_changes(
        [TP], P.ONLINE_PARTITION, election.OfflineElection(allow_unclean=True)
    )
    written = h.read_state(TP)
    assert written is not None
    lai = written.leader_and_isr
    assert (lai.leader, lai.isr, lai.leader_epoch) == (5, (5,), 1)
    assert lai.leader_recovery_state is LeaderRecoveryState.RECOVERING
    assert [s.leader for s in leader_and_isr_to(h, BROKER)] == [5]


@pytest.mark.parametrize(
    ("config", "elected"), [({}, False), ({"unclean.leader.election.enable": "true"}, True)]
)
def test_offline_to_online_unclean_follows_the_topic_config(
    h: Harness, config: dict[str, str], elected: bool
) -> None:
    h.configs["t"] = config
    h.assign(TP, 6, BROKER)
    h.cache_state(TP, LeaderAndIsr(6, (6,)))
    h.ctx.partition_states[TP] = P.OFFLINE_PARTITION
    result = h.partitions.handle_state_changes([TP], P.ONLINE_PARTITION, election.OfflineElection())
    assert isinstance(result[TP], LeaderAndIsr) is elected
    assert h.ctx.partition_states[TP] is (P.ONLINE_PARTITION if elected else P.OFFLINE_PARTITION)
    if not elected:
        error = result[TP]
        assert isinstance(error, StateChangeFailedException)
        assert error.message == (
            "Failed to elect leader for partition t-0 under strategy "
            "OfflinePartitionLeaderElectionStrategy(false)"
        )


def test_offline_to_online_without_a_state_znode_stays_offline(h: Harness) -> None:
    h.ctx.partition_states[TP] = P.OFFLINE_PARTITION
    result = h.partitions.handle_state_changes([TP], P.ONLINE_PARTITION, election.OfflineElection())
    assert h.ctx.partition_states[TP] is P.OFFLINE_PARTITION
    error = result[TP]
    assert isinstance(error, StateChangeFailedException)
    assert (
        error.message
        == "LeaderAndIsr information doesn't exist for partition t-0 in OfflinePartition state"
    )


def test_offline_to_online_with_malformed_state_json_stays_offline(h: Harness) -> None:
    h.zk.create(znodes.topic_partition_state_path(TP), b"{not json", makepath=True)
    h.ctx.partition_states[TP] = P.OFFLINE_PARTITION
    h.partitions.handle_state_changes([TP], P.ONLINE_PARTITION, election.OfflineElection())
    assert h.ctx.partition_states[TP] is P.OFFLINE_PARTITION


def test_election_aborts_when_another_controller_wrote_the_state(h: Harness) -> None:
    h.write_state(TP, LeaderAndIsr(-1, (BROKER,)), epoch=CONTROLLER_EPOCH + 1)
    h.ctx.partition_states[TP] = P.OFFLINE_PARTITION
    result = h.partitions.handle_state_changes([TP], P.ONLINE_PARTITION, election.OfflineElection())
    error = result[TP]
    assert isinstance(error, StateChangeFailedException)
    assert "already written by another controller" in error.message


def test_election_retries_a_conflicting_write(h: Harness) -> None:
    h.add_brokers(6)
    h.assign(TP, BROKER, 6)
    h.cache_state(TP, LeaderAndIsr(6, (6,)))
    h.write_state(TP, LeaderAndIsr(6, (6, BROKER)))  # the leader expanded the ISR meanwhile
    h.ctx.partition_states[TP] = P.ONLINE_PARTITION
    h.partitions.handle_state_changes([TP], P.ONLINE_PARTITION, election.PreferredReplicaElection())
    written = h.read_state(TP)
    assert written is not None and written.leader_and_isr.leader == BROKER


def test_online_transition_needs_a_strategy(h: Harness) -> None:
    h.ctx.partition_states[TP] = P.OFFLINE_PARTITION
    result = h.partitions.handle_state_changes([TP], P.ONLINE_PARTITION)
    assert isinstance(result[TP], IllegalArgumentException)
    assert h.ctx.partition_states[TP] is P.OFFLINE_PARTITION


@pytest.mark.parametrize(
    ("start", "target"),
    [
        (None, P.NEW_PARTITION),
        (P.NEW_PARTITION, P.OFFLINE_PARTITION),
        (P.ONLINE_PARTITION, P.OFFLINE_PARTITION),
        (P.OFFLINE_PARTITION, P.NON_EXISTENT_PARTITION),
    ],
)
def test_marking_transitions(
    h: Harness, start: PartitionState | None, target: PartitionState
) -> None:
    if start is not None:
        h.ctx.partition_states[TP] = start
    h.partitions.handle_state_changes([TP], target)
    assert h.ctx.partition_states[TP] is target
    assert h.requests(BROKER) == []


@pytest.mark.parametrize(
    ("start", "target"),
    [
        (P.NON_EXISTENT_PARTITION, P.ONLINE_PARTITION),
        (P.NON_EXISTENT_PARTITION, P.OFFLINE_PARTITION),
        (P.NEW_PARTITION, P.NON_EXISTENT_PARTITION),
        (P.ONLINE_PARTITION, P.NON_EXISTENT_PARTITION),
        (P.ONLINE_PARTITION, P.NEW_PARTITION),
        (P.OFFLINE_PARTITION, P.NEW_PARTITION),
    ],
)
def test_invalid_transitions_leave_the_state(
    h: Harness, start: PartitionState, target: PartitionState, caplog: pytest.LogCaptureFixture
) -> None:
    h.ctx.partition_states[TP] = start
    h.partitions.handle_state_changes([TP], target, election.OfflineElection())
    assert h.ctx.partition_states[TP] is start
    assert f"Instead it is in {start.kafka_name} state" in caplog.text


def test_offline_partition_count(h: Harness) -> None:
    partitions = [TopicPartition("t", p) for p in range(4)]
    for tp in partitions:
        h.assign(tp, BROKER)
    h.partitions.handle_state_changes(partitions, P.NEW_PARTITION)
    h.partitions.handle_state_changes(partitions, P.OFFLINE_PARTITION)
    assert h.ctx.offline_partition_count() == 4
    h.partitions.handle_state_changes(partitions, P.ONLINE_PARTITION, election.OfflineElection())
    # Offline → Online elects: with no state znodes they stay Offline ...
    assert h.ctx.offline_partition_count() == 4
    # ... and a topic whose deletion started no longer counts.
    h.ctx.topics_with_deletion_started.add("t")
    assert h.ctx.offline_partition_count() == 0


def test_startup_classifies_partitions_and_brings_new_ones_online(h: Harness) -> None:
    led = TopicPartition("t", 1)
    orphaned = TopicPartition("t", 2)
    h.add_brokers(6)
    h.assign(led, BROKER)
    h.assign(orphaned, 6, BROKER)
    h.cache_state(led, LeaderAndIsr(BROKER, (BROKER,)))
    h.cache_state(orphaned, LeaderAndIsr(9, (9, BROKER)))  # 9 is dead
    h.partitions.startup()
    assert h.ctx.partition_states == {TP: P.ONLINE_PARTITION, led: P.ONLINE_PARTITION,
                                      orphaned: P.ONLINE_PARTITION}  # fmt: skip
    written = h.read_state(orphaned)
    assert written is not None and written.leader_and_isr.leader == BROKER


def test_election_reads_a_state_the_known_one_cannot_elect_from(h: Harness) -> None:
    # The context's copy has only the dead broker 6 in the ISR; the leader had added broker 5
    # since (Kafka reads the state before every election, so it elects 5).
    h.assign(TP, 6, BROKER)
    h.cache_state(TP, LeaderAndIsr(6, (6,)))
    h.write_state(TP, LeaderAndIsr(6, (6, BROKER)))
    h.ctx.partition_states[TP] = P.OFFLINE_PARTITION
    result = h.partitions.handle_state_changes([TP], P.ONLINE_PARTITION, election.OfflineElection())
    written = h.read_state(TP)
    assert written is not None
    assert (written.leader_and_isr.leader, written.leader_and_isr.isr) == (BROKER, (BROKER,))
    assert result[TP] == written.leader_and_isr
    assert h.ctx.partition_states[TP] is P.ONLINE_PARTITION


def test_election_of_a_known_state_whose_znode_is_gone_fails_as_kafka_does(h: Harness) -> None:
    h.cache_state(TP, LeaderAndIsr(-1, (BROKER,)))
    h.zk.delete(znodes.topic_partition_state_path(TP))
    h.ctx.partition_states[TP] = P.OFFLINE_PARTITION
    result = h.partitions.handle_state_changes([TP], P.ONLINE_PARTITION, election.OfflineElection())
    error = result[TP]
    assert isinstance(error, StateChangeFailedException)
    assert (
        error.message
        == "LeaderAndIsr information doesn't exist for partition t-0 in OfflinePartition state"
    )
    assert h.read_state(TP) is None
