"""The broker's request rules without ZooKeeper: broker, controller and leader epoch fencing as in
KafkaApis and ReplicaManager, the log layout they leave, and the ISR expansions a leader owes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_topic_operator.broker_channel import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LiveBroker,
    PartitionError,
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)
from kafka_topic_operator.kafka.leader_and_isr import LeaderRecoveryState
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kto_dev.devbroker import log_dirs
from kto_dev.devbroker.log_dirs import LogDir
from kto_dev.devbroker.replica_manager import ReplicaManager, Role

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)
TOPIC_ID = "q1s3mTg9RqSd3Y1y6G3l1w"
OTHER_ID = "AAAAAAAAAAAAAAAAAAAAAQ"


class FailingLogDir(LogDir):
    """A disk that cannot delete a partition's directory."""

    def delete_log(self, partition: TopicPartition) -> bool:
        raise OSError(f"Input/output error: {self.partition_dir(partition)}")


class UnflushableLogDir(LogDir):
    """A disk whose flush fails after the partitions' files were written."""

    def flush(self) -> None:
        raise OSError("Input/output error")


@pytest.fixture
def rm(tmp_path: Path) -> ReplicaManager:
    manager = ReplicaManager(1, LogDir(tmp_path))
    manager.broker_epoch = 100
    return manager


def lai_state(
    tp: TopicPartition = T0,
    leader: int = 1,
    leader_epoch: int = 0,
    replicas: tuple[int, ...] = (1, 2),
    isr: tuple[int, ...] = (1,),
    partition_epoch: int = 0,
    controller_epoch: int = 1,
) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState(
        tp.topic,
        tp.partition,
        controller_epoch,
        leader,
        leader_epoch,
        isr,
        partition_epoch,
        replicas,
    )


def leader_and_isr(
    *states: LeaderAndIsrPartitionState,
    controller_epoch: int = 1,
    broker_epoch: int = 100,
    topic_ids: dict[str, str] | None = None,
    correlation_id: int = 1,
) -> LeaderAndIsrRequest:
    return LeaderAndIsrRequest(
        0,
        controller_epoch,
        broker_epoch,
        states,
        {"t": TOPIC_ID} if topic_ids is None else topic_ids,
        correlation_id=correlation_id,
    )


def stop(
    *states: StopReplicaPartitionState, controller_epoch: int = 1, broker_epoch: int = -1
) -> StopReplicaRequest:
    return StopReplicaRequest(0, controller_epoch, broker_epoch, states, correlation_id=2)


def errors(response: object) -> dict[TopicPartition, str]:
    assert hasattr(response, "errors_by_partition")
    result: dict[TopicPartition, str] = response.errors_by_partition()
    return result


def test_becoming_leader_and_follower_creates_the_log_layout(rm: ReplicaManager) -> None:
    response = rm.handle(
        leader_and_isr(lai_state(T0, leader=1), lai_state(T1, leader=2, replicas=(2, 1)))
    )
    assert response.error == "NONE"
    assert errors(response) == {T0: "NONE", T1: "NONE"}
    assert rm.partitions[T0].role is Role.LEADER
    assert rm.partitions[T1].role is Role.FOLLOWER
    for tp in (T0, T1):
        directory = rm.log_dir.partition_dir(tp)
        assert sorted(p.name for p in directory.iterdir()) == [
            "00000000000000000000.index",
            "00000000000000000000.log",
            "00000000000000000000.timeindex",
            "partition.metadata",
        ]
        assert (directory / "00000000000000000000.log").stat().st_size == 0
        assert (directory / "partition.metadata").read_text() == f"version: 0\ntopic_id: {TOPIC_ID}"


def test_no_topic_id_writes_no_partition_metadata(rm: ReplicaManager) -> None:
    rm.handle(leader_and_isr(lai_state(), topic_ids={"t": "AAAAAAAAAAAAAAAAAAAAAA"}))
    assert rm.log_dir.has_log(T0)
    assert not (rm.log_dir.partition_dir(T0) / "partition.metadata").exists()
    assert rm.partitions[T0].topic_id is None


def test_only_a_newer_leader_epoch_is_applied(rm: ReplicaManager) -> None:
    rm.handle(leader_and_isr(lai_state(leader_epoch=3)))
    older = rm.handle(leader_and_isr(lai_state(leader=2, leader_epoch=2)))
    same = rm.handle(leader_and_isr(lai_state(leader=2, leader_epoch=3)))
    assert errors(older) == {T0: "STALE_CONTROLLER_EPOCH"}
    assert errors(same) == {T0: "STALE_CONTROLLER_EPOCH"}
    assert rm.partitions[T0].role is Role.LEADER
    newer = rm.handle(leader_and_isr(lai_state(leader=2, leader_epoch=4, partition_epoch=5)))
    assert errors(newer) == {T0: "NONE"}
    hosted = rm.partitions[T0]
    assert (hosted.role, hosted.leader, hosted.leader_epoch, hosted.partition_epoch) == (
        Role.FOLLOWER,
        2,
        4,
        5,
    )


def test_a_partition_not_assigned_here_is_unknown(rm: ReplicaManager) -> None:
    response = rm.handle(leader_and_isr(lai_state(leader=2, replicas=(2, 3))))
    assert errors(response) == {T0: "UNKNOWN_TOPIC_OR_PARTITION"}
    assert not rm.log_dir.has_log(T0) and T0 not in rm.partitions


def test_a_different_topic_id_is_inconsistent(rm: ReplicaManager) -> None:
    rm.handle(leader_and_isr(lai_state()))
    response = rm.handle(leader_and_isr(lai_state(leader_epoch=1), topic_ids={"t": OTHER_ID}))
    assert errors(response) == {T0: "INCONSISTENT_TOPIC_ID"}
    assert rm.partitions[T0].leader_epoch == 0


def test_a_topic_id_on_disk_counts_after_a_restart(tmp_path: Path) -> None:
    first = ReplicaManager(1, LogDir(tmp_path))
    first.handle(leader_and_isr(lai_state(), broker_epoch=-1))
    restarted = ReplicaManager(1, LogDir(tmp_path))
    response = restarted.handle(leader_and_isr(lai_state(), topic_ids={"t": OTHER_ID}))
    assert errors(response) == {T0: "INCONSISTENT_TOPIC_ID"}


def test_a_topic_id_arrives_without_a_new_leader_epoch(rm: ReplicaManager) -> None:
    rm.handle(leader_and_isr(lai_state(), topic_ids={}))
    response = rm.handle(leader_and_isr(lai_state()))
    assert errors(response) == {T0: "NONE"}
    assert rm.partitions[T0].topic_id == TOPIC_ID
    assert rm.log_dir.topic_id(T0) == TOPIC_ID


def test_stale_controller_epoch_is_rejected_for_every_request_type(rm: ReplicaManager) -> None:
    rm.handle(leader_and_isr(lai_state(), controller_epoch=5))
    assert rm.controller_epoch == 5

    lai = rm.handle(leader_and_isr(lai_state(T1), controller_epoch=4))
    assert lai.error == "STALE_CONTROLLER_EPOCH"
    assert errors(lai) == {T1: "STALE_CONTROLLER_EPOCH"}
    assert not rm.log_dir.has_log(T1)

    sr = rm.handle(stop(StopReplicaPartitionState("t", 0, -2, True), controller_epoch=4))
    assert sr == StopReplicaResponse("STALE_CONTROLLER_EPOCH", (), correlation_id=2)
    assert rm.log_dir.has_log(T0)

    um = rm.handle(UpdateMetadataRequest(0, 4, -1, (), correlation_id=3))
    assert um.error == "STALE_CONTROLLER_EPOCH"
    assert rm.controller_epoch == 5


def test_a_newer_controller_epoch_becomes_the_latest_known(rm: ReplicaManager) -> None:
    rm.handle(leader_and_isr(lai_state(), controller_epoch=2))
    rm.handle(UpdateMetadataRequest(0, 3, -1, (), correlation_id=3))
    assert rm.controller_epoch == 3
    assert rm.handle(leader_and_isr(lai_state(T1), controller_epoch=2)).error == (
        "STALE_CONTROLLER_EPOCH"
    )


def test_only_an_older_broker_epoch_is_stale(rm: ReplicaManager) -> None:
    stale = rm.handle(leader_and_isr(lai_state(), broker_epoch=99))
    assert stale.error == "STALE_BROKER_EPOCH"
    assert errors(stale) == {T0: "STALE_BROKER_EPOCH"}
    assert not rm.log_dir.has_log(T0)
    # KafkaApis.isBrokerEpochStale: unknown (-1) and newer epochs are accepted.
    assert rm.handle(leader_and_isr(lai_state(), broker_epoch=-1)).error == "NONE"
    assert rm.handle(leader_and_isr(lai_state(T1), broker_epoch=101)).error == "NONE"
    sr = rm.handle(stop(StopReplicaPartitionState("t", 0, -2, True), broker_epoch=5))
    assert (sr.error, errors(sr)) == ("STALE_BROKER_EPOCH", {T0: "STALE_BROKER_EPOCH"})
    um = rm.handle(UpdateMetadataRequest(0, 1, 5, (), correlation_id=3))
    assert um.error == "STALE_BROKER_EPOCH"


def test_stop_replica_with_delete_removes_the_log(rm: ReplicaManager) -> None:
    rm.handle(leader_and_isr(lai_state(T0), lai_state(T1)))
    response = rm.handle(stop(StopReplicaPartitionState("t", 0, -2, True)))
    assert response == StopReplicaResponse(
        "NONE", (PartitionError("t", 0, "NONE"),), correlation_id=2
    )
    assert not rm.log_dir.has_log(T0) and T0 not in rm.partitions
    assert rm.log_dir.logs() == [T1]
    assert [p.name for p in rm.log_dir.path.iterdir() if p.name.endswith("-delete")] == []


def test_stop_replica_without_delete_only_stops_replicating(rm: ReplicaManager) -> None:
    rm.handle(leader_and_isr(lai_state(leader_epoch=2)))
    response = rm.handle(stop(StopReplicaPartitionState("t", 0, 3, False)))
    assert errors(response) == {T0: "NONE"}
    assert rm.partitions[T0].role is Role.STOPPED and rm.log_dir.has_log(T0)
    assert rm.isr_expansions([1, 2], {2: {T0: 2}}) == []


def test_stop_replica_checks_the_leader_epoch_unless_deleting(rm: ReplicaManager) -> None:
    rm.handle(leader_and_isr(lai_state(leader_epoch=2)))
    older = rm.handle(stop(StopReplicaPartitionState("t", 0, 1, True)))
    assert errors(older) == {T0: "FENCED_LEADER_EPOCH"}
    assert rm.log_dir.has_log(T0)
    # NoEpoch (-1) skips the check like EpochDuringDelete (-2).
    assert errors(rm.handle(stop(StopReplicaPartitionState("t", 0, -1, True)))) == {T0: "NONE"}
    assert not rm.log_dir.has_log(T0)


def test_stop_replica_with_the_current_leader_epoch_stops_the_replica(
    rm: ReplicaManager,
) -> None:
    # Kafka 3.9 ReplicaManager.stopReplicas: requestLeaderEpoch >= currentLeaderEpoch stops it
    # (controlled shutdown sends a follower StopReplica with the epoch it already has).
    rm.handle(leader_and_isr(lai_state(leader_epoch=2)))
    assert errors(rm.handle(stop(StopReplicaPartitionState("t", 0, 2, False)))) == {T0: "NONE"}
    assert rm.partitions[T0].role is Role.STOPPED
    assert errors(rm.handle(stop(StopReplicaPartitionState("t", 0, 2, True)))) == {T0: "NONE"}
    assert not rm.log_dir.has_log(T0)


def test_stop_replica_deletes_a_log_the_broker_does_not_host(rm: ReplicaManager) -> None:
    rm.log_dir.create_log(T0, None)  # left over from before a restart
    assert errors(rm.handle(stop(StopReplicaPartitionState("t", 0, 7, True)))) == {T0: "NONE"}
    assert not rm.log_dir.has_log(T0)


def test_a_log_that_cannot_be_deleted_is_a_storage_error(tmp_path: Path) -> None:
    rm = ReplicaManager(1, FailingLogDir(tmp_path))
    rm.handle(leader_and_isr(lai_state(T0), lai_state(T1)))
    response = rm.handle(
        stop(
            StopReplicaPartitionState("t", 0, -2, True), StopReplicaPartitionState("t", 1, 5, False)
        )
    )
    assert response.error == "NONE"
    assert errors(response) == {T0: "KAFKA_STORAGE_ERROR", T1: "NONE"}


def test_a_log_that_cannot_be_created_is_a_storage_error(tmp_path: Path) -> None:
    (tmp_path / "t-0").write_text("a file where the directory should be")
    rm = ReplicaManager(1, LogDir(tmp_path))
    response = rm.handle(leader_and_isr(lai_state(T0), lai_state(T1)))
    assert errors(response) == {T0: "KAFKA_STORAGE_ERROR", T1: "NONE"}
    assert T0 not in rm.partitions


def test_a_failed_flush_makes_the_new_partitions_storage_errors(tmp_path: Path) -> None:
    rm = ReplicaManager(1, UnflushableLogDir(tmp_path))
    response = rm.handle(leader_and_isr(lai_state(T0), lai_state(T1)))
    assert errors(response) == {T0: "KAFKA_STORAGE_ERROR", T1: "KAFKA_STORAGE_ERROR"}


def test_one_flush_makes_a_requests_partition_metadata_durable(
    rm: ReplicaManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed: list[Path] = []
    monkeypatch.setattr(log_dirs, "_sync_file_system", flushed.append)
    rm.handle(leader_and_isr(lai_state(T0), lai_state(T1)))
    assert flushed == [rm.log_dir.path]  # one file-system flush, before the answer
    assert rm.log_dir.topic_id(T1) == TOPIC_ID
    rm.handle(leader_and_isr(lai_state(T0), lai_state(T1)))
    assert flushed == [rm.log_dir.path]  # nothing written, nothing to flush


def test_update_metadata_replaces_brokers_and_drops_deleted_partitions(rm: ReplicaManager) -> None:
    live = (LiveBroker(1, ()), LiveBroker(2, ()))
    rm.handle(
        UpdateMetadataRequest(
            7,
            1,
            -1,
            (
                UpdateMetadataPartitionState("t", 0, 1, 1, 0, (1, 2), 0, (1, 2)),
                UpdateMetadataPartitionState("t", 1, 1, 2, 0, (2,), 0, (2, 1)),
            ),
            live,
            {"t": TOPIC_ID},
            correlation_id=3,
        )
    )
    assert rm.metadata.controller_id == 7
    assert sorted(rm.metadata.live_brokers) == [1, 2]
    assert sorted(rm.metadata.partitions) == [T0, T1]
    rm.handle(
        UpdateMetadataRequest(
            7,
            1,
            -1,
            (
                UpdateMetadataPartitionState("t", 0, 1, -2, 0, (1, 2), 0, (1, 2)),
                UpdateMetadataPartitionState("t", 1, 1, 1, 1, (1,), 1, (2, 1)),  # known: updated
            ),
            (LiveBroker(1, ()),),
            correlation_id=4,
        )
    )
    assert sorted(rm.metadata.live_brokers) == [1]
    assert sorted(rm.metadata.partitions) == [T1]
    assert rm.metadata.topic_ids == {"t": TOPIC_ID}
    rm.handle(
        UpdateMetadataRequest(
            7,
            1,
            -1,
            (UpdateMetadataPartitionState("t", 1, 1, -2, 0, (2,), 0, (2, 1)),),
            live,
            correlation_id=5,
        )
    )
    assert rm.metadata.partitions == {}
    assert rm.metadata.topic_ids == {}  # gone with the topic's last partition
    assert rm.metadata.to_json()["topics"] == 0


def test_a_leader_owes_isr_expansions_for_live_assigned_replicas_following_it(
    rm: ReplicaManager,
) -> None:
    rm.handle(
        leader_and_isr(
            LeaderAndIsrPartitionState(
                "t", 0, 3, 1, 4, (1,), 9, (1, 2, 3), leader_recovery_state=LeaderRecoveryState(1)
            ),
            lai_state(T1, leader=2, replicas=(2, 1), isr=(2,)),
            controller_epoch=5,
        )
    )
    following = {2: {T0: 4}, 3: {T0: 4}, 4: {T0: 4}}
    assert rm.isr_expansions([1], following) == []
    # Broker 2 is alive but follows nothing yet, or at an older leader epoch: not in sync.
    assert rm.isr_expansions([1, 2], {}) == []
    assert rm.isr_expansions([1, 2], {2: {T0: 3}}) == []
    (expansion,) = rm.isr_expansions([1, 3, 4], following)
    assert expansion.topic_partition == T0 and expansion.added == (3,)
    lai = expansion.state.leader_and_isr
    # Partition.expandIsr: the same leader and leader epoch, RECOVERED, the known zkVersion.
    assert (lai.leader, lai.isr, lai.leader_epoch, lai.partition_epoch) == (1, (1, 3), 4, 9)
    assert lai.leader_recovery_state is LeaderRecoveryState.RECOVERED
    # Written with the current controller's epoch, as its AlterPartition write is, not the
    # epoch of the controller that made the partition's state.
    assert expansion.state.controller_epoch == 5
    rm.isr_updated(T0, (1, 3), 10)
    assert rm.isr_expansions([1, 3], following) == []
    assert rm.partitions[T0].partition_epoch == 10


def test_what_a_broker_follows_is_listed_by_leader(rm: ReplicaManager) -> None:
    rm.handle(
        leader_and_isr(
            lai_state(T0, leader=2, leader_epoch=7, replicas=(2, 1), isr=(2, 1)),
            lai_state(T1, leader=1, replicas=(1, 2)),
            lai_state(TopicPartition("u", 3), leader=2, leader_epoch=1, replicas=(1, 2)),
            topic_ids={"t": TOPIC_ID, "u": TOPIC_ID},
        )
    )
    assert rm.following() == {2: {"t": {0: 7}, "u": {3: 1}}}
