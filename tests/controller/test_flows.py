"""The controller's flows end to end, in one process: a real ZooKeeper, the controller and dev
brokers; topics written the way kafka-topics --zookeeper writes them."""

from __future__ import annotations

import pytest
from kto_testing import eventually

from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr
from kafka_topic_operator.kafka.states import PartitionAndReplica, PartitionState, ReplicaState
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import admin, znodes

from .conftest import Cluster

pytestmark = pytest.mark.zookeeper

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)


def three_brokers(cluster: Cluster) -> None:
    for broker in (0, 1, 2):
        cluster.start_broker(broker)


def topic_id(cluster: Cluster, topic: str) -> str | None:
    node = cluster.zk.get(znodes.topic_path(topic))
    assert node is not None
    return znodes.decode_topic(node.path, node.data).topic_id


def test_a_new_topic_goes_online_with_leader_first_live_replica_and_gets_an_id(
    cluster: Cluster,
) -> None:
    three_brokers(cluster)
    controller = cluster.start_controller()
    assert cluster.wait_controller() == 1  # InitialControllerEpoch (0) + 1
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1, 2], 1: [1, 2, 0]})
    cluster.wait_online("t", 2)
    assert cluster.wait_state(T0, lambda lai: lai.leader == 0) == LeaderAndIsr(0, (0, 1, 2))
    assert cluster.wait_state(T1, lambda lai: lai.leader == 1) == LeaderAndIsr(1, (1, 2, 0))
    state = cluster.state(T0)
    assert state is not None and state.controller_epoch == 1
    assert topic_id(cluster, "t") is not None
    cluster.settle(controller)
    assert controller.ctx.partition_states == {T0: PartitionState.ONLINE_PARTITION,
                                               T1: PartitionState.ONLINE_PARTITION}  # fmt: skip
    assert set(controller.ctx.replica_states.values()) == {ReplicaState.ONLINE_REPLICA}
    eventually(
        lambda: all(cluster.has_log(b, tp) for b in (0, 1, 2) for tp in (T0, T1)),
        "every replica's log directory",
    )


def test_a_dead_first_replica_is_skipped(cluster: Cluster) -> None:
    cluster.start_broker(1)
    cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1]})
    assert cluster.wait_state(T0, lambda lai: lai.leader >= 0) == LeaderAndIsr(1, (1,))


def test_a_topic_with_its_own_id_keeps_it(cluster: Cluster) -> None:
    cluster.start_broker(0)
    cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0]}, topic_id="q1s3mTg9RqSd3Y1y6G3l1w")
    cluster.wait_online("t", 1)
    assert topic_id(cluster, "t") == "q1s3mTg9RqSd3Y1y6G3l1w"


def test_broker_failure_elects_new_leaders_shrinks_isrs_and_offlines_orphans(
    cluster: Cluster,
) -> None:
    three_brokers(cluster)
    cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1, 2], 1: [0]})
    cluster.wait_online("t", 2)
    cluster.stop_broker(0)
    assert cluster.wait_state(T0, lambda lai: lai.leader == 1) == LeaderAndIsr(
        1, (1, 2), leader_epoch=1, partition_epoch=1
    )
    # The whole ISR (one replica) went: leader -1, epoch 1, the ISR keeps the dead broker.
    assert cluster.wait_state(T1, lambda lai: lai.leader == -1) == LeaderAndIsr(
        -1, (0,), leader_epoch=1, partition_epoch=1
    )


def test_a_returning_broker_rejoins_the_isr_and_an_orphan_comes_back(cluster: Cluster) -> None:
    three_brokers(cluster)
    controller = cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1, 2], 1: [0]})
    cluster.wait_online("t", 2)
    cluster.stop_broker(0)
    cluster.wait_state(T1, lambda lai: lai.leader == -1)
    cluster.start_broker(0)
    # The leader (1) adds 0 back once it holds the partition again.
    assert cluster.wait_state(T0, lambda lai: lai.isr == (1, 2, 0)).leader == 1
    assert cluster.wait_state(T1, lambda lai: lai.leader == 0).isr == (0,)
    cluster.settle(controller)
    assert controller.ctx.replica_states[PartitionAndReplica(T0, 0)] is ReplicaState.ONLINE_REPLICA


def test_unclean_election_when_the_topic_allows_it(cluster: Cluster) -> None:
    cluster.start_broker(0)
    cluster.start_broker(1)
    cluster.start_controller()
    admin.create_topic_with_assignment(
        cluster.zk, "t", {0: [0, 1]}, {"unclean.leader.election.enable": "true"}
    )
    cluster.wait_state(T0, lambda lai: lai.isr == (0, 1))
    cluster.stop_broker(1)
    cluster.wait_state(T0, lambda lai: lai.isr == (0,))
    cluster.stop_broker(0)
    cluster.wait_state(T0, lambda lai: lai.leader == -1)
    cluster.start_broker(1)  # out of the ISR, but the topic allows unclean election
    lai = cluster.wait_state(T0, lambda lai: lai.leader == 1)
    assert lai.isr == (1,)


def test_delete_topic_removes_every_znode_and_directory(cluster: Cluster) -> None:
    three_brokers(cluster)
    controller = cluster.start_controller()
    admin.create_topic_with_assignment(
        cluster.zk, "t", {0: [0, 1, 2], 1: [1, 2, 0]}, {"retention.ms": "1000"}
    )
    cluster.wait_online("t", 2)
    admin.delete_topic(cluster.zk, "t")
    for path in (
        znodes.topic_path("t"),
        znodes.topic_config_path("t"),
        znodes.delete_topic_path("t"),
    ):
        cluster.wait_gone(path)
    assert not any(cluster.has_log(b, tp) for b in (0, 1, 2) for tp in (T0, T1))
    cluster.settle(controller)
    assert "t" not in controller.ctx.assignments
    assert not controller.ctx.topics_to_be_deleted


def test_a_deletion_cut_short_after_the_topic_znodes_is_finished_by_the_next_controller(
    cluster: Cluster,
) -> None:
    """A controller killed between deleting a topic's znodes and its config leaves the config and
    the marker; its successor queues the marker and, the topic having no replicas left, completes
    the deletion at once (Kafka's vacuous completeDeleteTopic): nothing is left behind."""
    three_brokers(cluster)
    cluster.zk.create(znodes.topic_config_path("t"), znodes.encode_config({"retention.ms": "1"}),
                      makepath=True)  # fmt: skip
    cluster.zk.create(znodes.delete_topic_path("t"), znodes.DELETE_TOPIC_MARKER_DATA,
                      makepath=True)  # fmt: skip
    controller = cluster.start_controller()
    cluster.wait_gone(znodes.topic_config_path("t"))
    cluster.wait_gone(znodes.delete_topic_path("t"))
    cluster.settle(controller)
    assert not controller.ctx.topics_to_be_deleted


def test_deletion_waits_for_a_dead_broker_and_completes_when_it_returns(cluster: Cluster) -> None:
    three_brokers(cluster)
    controller = cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1, 2]})
    cluster.wait_online("t", 1)
    eventually(lambda: cluster.has_log(2, T0), "broker 2 hosting t-0")
    cluster.stop_broker(2)
    cluster.wait_state(T0, lambda lai: 2 not in lai.isr)
    admin.delete_topic(cluster.zk, "t")
    eventually(
        lambda: not cluster.has_log(0, T0) and not cluster.has_log(1, T0), "live replicas deleted"
    )
    cluster.settle(controller)
    # Halted, not half-deleted: the znodes stay, the topic is queued and ineligible.
    assert cluster.zk.exists(znodes.topic_path("t"))
    assert cluster.zk.exists(znodes.delete_topic_path("t"))
    assert controller.ctx.topics_to_be_deleted == {"t"}
    assert controller.ctx.topics_ineligible_for_deletion == {"t"}
    # Ineligible while the others were deleted, then moved back to Offline for a retry
    # (resumeDeletions), where it waits for its broker.
    dead = PartitionAndReplica(T0, 2)
    eventually(
        lambda: controller.ctx.replica_states.get(dead) is ReplicaState.OFFLINE_REPLICA,
        "the dead replica back in OfflineReplica",
    )
    assert cluster.has_log(2, T0)
    cluster.start_broker(2)
    cluster.wait_gone(znodes.topic_path("t"))
    cluster.wait_gone(znodes.delete_topic_path("t"))
    eventually(lambda: not cluster.has_log(2, T0), "the returning replica deleted")


def test_a_failed_stop_replica_makes_the_replica_ineligible_and_is_retried(
    cluster: Cluster,
) -> None:
    three_brokers(cluster)
    controller = cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1, 2]})
    cluster.wait_online("t", 1)
    eventually(lambda: all(cluster.has_log(b, T0) for b in (0, 1, 2)), "t-0 on every broker")
    cluster.log_dirs[1].failing = True
    admin.delete_topic(cluster.zk, "t")
    eventually(lambda: "t" in controller.ctx.topics_ineligible_for_deletion, "the deletion halted")
    eventually(lambda: not cluster.has_log(0, T0) and not cluster.has_log(2, T0), "others deleted")
    assert cluster.zk.exists(znodes.topic_path("t"))
    assert cluster.has_log(1, T0)
    # The disk is fixed and the broker restarts: its startup resumes the deletion.
    cluster.log_dirs[1].failing = False
    cluster.stop_broker(1)
    cluster.start_broker(1)
    cluster.wait_gone(znodes.topic_path("t"))
    assert not cluster.has_log(1, T0)
