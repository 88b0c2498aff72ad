"""More controller flows end to end: partition expansion, reassignment, preferred and automatic
leader election, controlled shutdown, standby failover, delete.topic.enable=false and znodes
written badly by someone else."""

from __future__ import annotations

import socket

import pytest
from kto_testing import eventually

from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import admin, znodes

from .conftest import Cluster, assignment

pytestmark = pytest.mark.zookeeper

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)


def test_added_partitions_go_online(cluster: Cluster) -> None:
    cluster.start_broker(0)
    cluster.start_broker(1)
    cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1]})
    cluster.wait_online("t", 1)
    admin.add_partitions(cluster.zk, "t", {1: [1, 0]})
    assert cluster.wait_state(T1, lambda lai: lai.leader >= 0) == LeaderAndIsr(1, (1, 0))


def test_partitions_added_while_deleting_are_refused_and_the_assignment_restored(
    cluster: Cluster,
) -> None:
    cluster.start_broker(0)
    controller = cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1]})  # 1 never comes
    cluster.wait_online("t", 1)
    admin.delete_topic(cluster.zk, "t")
    eventually(lambda: "t" in controller.ctx.topics_ineligible_for_deletion, "deletion halted")
    admin.add_partitions(cluster.zk, "t", {1: [0]})
    eventually(lambda: assignment(cluster, "t") == {0: (0, 1)}, "the assignment restored")
    assert cluster.state(T1) is None
    assert T1 not in controller.ctx.partition_states


def test_reassignment_moves_the_partition_and_ends_with_leader_epoch_3(cluster: Cluster) -> None:
    # ControllerIntegrationTest.testPartitionReassignment: [c] -> [o] ends leader o, epoch 3.
    cluster.start_broker(0)
    cluster.start_broker(1)
    controller = cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0]})
    cluster.wait_online("t", 1)
    # Failover done first: a reassignment written while it still runs is seen twice (by its
    # own read and by the watch), which costs an extra leader epoch, in Kafka too.
    cluster.settle(controller)
    admin.reassign_partitions(cluster.zk, {T0: [1]})
    cluster.wait_gone(znodes.REASSIGN_PARTITIONS_PATH)
    lai = cluster.wait_state(T0, lambda lai: lai.leader == 1)
    assert (lai.leader, lai.isr, lai.leader_epoch) == (1, (1,), 3)
    node = cluster.zk.get(znodes.topic_path("t"))
    assert node is not None
    decoded = znodes.decode_topic(node.path, node.data).partitions[0]
    assert (decoded.replicas, decoded.adding_replicas, decoded.removing_replicas) == ((1,), (), ())
    eventually(lambda: not cluster.has_log(0, T0) and cluster.has_log(1, T0), "the move on disk")
    cluster.settle(controller)
    assert not controller.ctx.partitions_being_reassigned


def test_back_to_back_reassignments_are_each_carried_out(cluster: Cluster) -> None:
    # Each request is written the moment the controller deletes the previous one, as tools
    # that batch do: the watch may already be spent on the controller's own rewrite of the
    # znode, so only Kafka's explicit re-check after its deletion sees the new request.
    for b in (0, 1, 2):
        cluster.start_broker(b)
    controller = cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {p: [0, 1] for p in range(6)})
    cluster.wait_online("t", 6)
    cluster.settle(controller)
    for first in range(0, 6, 2):
        targets = {TopicPartition("t", p): [2, 0] for p in (first, first + 1)}
        admin.reassign_partitions(cluster.zk, targets)
        cluster.wait_gone(znodes.REASSIGN_PARTITIONS_PATH)
    assert assignment(cluster, "t") == {p: (2, 0) for p in range(6)}


def test_a_reassignment_waits_for_its_target_broker(cluster: Cluster) -> None:
    cluster.start_broker(0)
    controller = cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0]})
    cluster.wait_online("t", 1)
    admin.reassign_partitions(cluster.zk, {T0: [0, 2]})  # broker 2 is not there yet
    eventually(lambda: assignment(cluster, "t") == {0: (0, 2)}, "the union recorded")
    node = cluster.zk.get(znodes.topic_path("t"))
    assert node is not None
    assert znodes.decode_topic(node.path, node.data).partitions[0].adding_replicas == (2,)
    assert T0 in controller.ctx.partitions_being_reassigned
    cluster.start_broker(2)
    cluster.wait_gone(znodes.REASSIGN_PARTITIONS_PATH)
    assert cluster.wait_state(T0, lambda lai: lai.isr == (0, 2)).leader == 0
    node = cluster.zk.get(znodes.topic_path("t"))
    assert node is not None
    assert znodes.decode_topic(node.path, node.data).partitions[0].adding_replicas == ()


def test_deleting_a_topic_under_reassignment_leaves_no_reassignment_behind(
    cluster: Cluster,
) -> None:
    cluster.start_broker(0)
    controller = cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0]})
    cluster.wait_online("t", 1)
    admin.reassign_partitions(cluster.zk, {T0: [0, 2]})
    eventually(lambda: T0 in controller.ctx.partitions_being_reassigned, "the move started")
    admin.delete_topic(cluster.zk, "t")
    # Replica 2 is on no live broker: halted, nothing half-deleted.
    eventually(lambda: "t" in controller.ctx.topics_ineligible_for_deletion, "deletion halted")
    assert cluster.zk.exists(znodes.topic_path("t"))
    cluster.start_broker(2)
    cluster.wait_gone(znodes.topic_path("t"))
    cluster.wait_gone(znodes.REASSIGN_PARTITIONS_PATH)


def test_invalid_reassignment_entries_leave_the_znode(cluster: Cluster) -> None:
    cluster.start_broker(0)
    cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0]})
    cluster.wait_online("t", 1)
    admin.reassign_partitions(
        cluster.zk, {T0: [], TopicPartition("missing", 0): [0]}, validate=False
    )
    cluster.wait_gone(znodes.REASSIGN_PARTITIONS_PATH)
    assert assignment(cluster, "t") == {0: (0,)}


def test_preferred_replica_election_on_request(cluster: Cluster) -> None:
    cluster.start_broker(0)
    cluster.start_broker(1)
    cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1]})
    cluster.wait_state(T0, lambda lai: lai.isr == (0, 1))
    cluster.stop_broker(0)
    cluster.wait_state(T0, lambda lai: lai.leader == 1)
    cluster.start_broker(0)
    cluster.wait_state(T0, lambda lai: 0 in lai.isr)
    admin.elect_preferred_leaders(cluster.zk, [T0])
    assert cluster.wait_state(T0, lambda lai: lai.leader == 0).isr == (1, 0)
    cluster.wait_gone(znodes.PREFERRED_REPLICA_ELECTION_PATH)


def test_automatic_preferred_leader_election(cluster: Cluster) -> None:
    cluster.start_broker(0)
    cluster.start_broker(1)
    cluster.start_controller(
        auto_leader_rebalance_enable=True,
        leader_imbalance_check_interval=0.5,
        first_auto_rebalance_delay=0.5,
    )
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1]})
    cluster.wait_state(T0, lambda lai: lai.isr == (0, 1))
    cluster.stop_broker(0)
    cluster.wait_state(T0, lambda lai: lai.leader == 1)
    cluster.start_broker(0)
    # Broker 0 leads none of its 1 preferred partitions: 100 % > 10 %, so it gets it back.
    cluster.wait_state(T0, lambda lai: lai.leader == 0)


def test_controlled_shutdown_moves_leaderships_first(cluster: Cluster) -> None:
    # ControllerIntegrationTest.testControlledShutdown facts for a partition on 0,1,2.
    for broker in (0, 1, 2):
        cluster.start_broker(broker)
    cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1, 2], 1: [2, 0, 1]})
    cluster.wait_state(T0, lambda lai: lai.isr == (0, 1, 2))
    cluster.wait_state(T1, lambda lai: lai.isr == (2, 0, 1))
    assert cluster.stop_broker(2, controlled=True)
    lai = cluster.wait_state(T0, lambda lai: lai.isr == (0, 1))
    assert lai.leader == 0
    assert cluster.wait_state(T1, lambda lai: 2 not in lai.isr).leader == 0
    assert cluster.stop_broker(1, controlled=True)
    assert cluster.wait_state(T0, lambda lai: lai.isr == (0,)).leader == 0


def test_controlled_shutdown_of_the_last_replica_leaves_its_leadership(cluster: Cluster) -> None:
    cluster.start_broker(0)
    cluster.start_broker(1)
    cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1]})
    cluster.wait_state(T0, lambda lai: lai.isr == (0, 1))
    cluster.stop_broker(1, controlled=True)
    cluster.wait_state(T0, lambda lai: lai.isr == (0,))
    # Nobody to move the leadership to: the controller answers with the partition remaining.
    assert not cluster.stop_broker(0, controlled=True)


def test_a_standby_takes_over_with_a_higher_epoch(cluster: Cluster) -> None:
    cluster.start_broker(0)
    first = cluster.start_controller(100)
    assert cluster.wait_controller() == 1
    second = cluster.start_controller(101)
    cluster.settle(second)
    assert not second.is_active and second.active_controller_id == 100
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0]})
    cluster.wait_online("t", 1)
    first.stop()
    del cluster.controllers[100]
    eventually(lambda: second.is_active, "the standby to take over")
    assert cluster.wait_controller() == 2
    admin.create_topic_with_assignment(cluster.zk, "u", {0: [0]})
    cluster.wait_online("u", 1)
    state = cluster.state(TopicPartition("u", 0))
    assert state is not None and state.controller_epoch == 2


def test_delete_topic_disabled_removes_the_markers_and_keeps_the_topic(cluster: Cluster) -> None:
    cluster.start_broker(0)
    cluster.start_controller(delete_topic_enable=False)
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0]})
    cluster.wait_online("t", 1)
    # The leader is in ZooKeeper before the broker has acted on LeaderAndIsr: wait for its log.
    eventually(lambda: cluster.has_log(0, T0), "broker 0 hosting t-0")
    admin.delete_topic(cluster.zk, "t")
    cluster.wait_gone(znodes.delete_topic_path("t"))
    assert cluster.zk.exists(znodes.topic_path("t"))
    assert cluster.has_log(0, T0)


def test_a_marker_for_a_missing_topic_is_removed(cluster: Cluster) -> None:
    cluster.start_controller()
    cluster.wait_controller()
    cluster.zk.create(znodes.delete_topic_path("ghost"), makepath=True)
    cluster.wait_gone(znodes.delete_topic_path("ghost"))


def test_malformed_znodes_are_logged_and_skipped(
    cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    cluster.start_broker(0)
    cluster.zk.create(
        znodes.topic_path("bad"), b'{"version":1,"partitions":{"0":"x"}}', makepath=True
    )
    cluster.zk.create(znodes.broker_path(7), b"not json", makepath=True)
    controller = cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "good", {0: [0]})
    cluster.wait_online("good", 1)
    cluster.zk.create(znodes.REASSIGN_PARTITIONS_PATH, b"[1,2", makepath=True)
    cluster.zk.create(znodes.isr_change_path(), b"{}", sequence=True, makepath=True)
    admin.create_topic_with_assignment(cluster.zk, "after", {0: [0]})
    cluster.wait_online("after", 1)
    cluster.settle(controller)
    assert controller.is_active
    assert "/brokers/topics/bad" in caplog.text
    assert "/brokers/ids/7" in caplog.text
    assert "bad" not in controller.ctx.assignments


def test_watches_on_single_znodes_survive_a_dropped_connection(cluster: Cluster) -> None:
    """The connection drops and comes back within the session (kazoo then calls each watch once
    without a path and forgets it): partitions added afterwards still go online (the topic
    znode's watch is set again), and a topic deleted afterwards is still deleted."""
    cluster.start_broker(0)
    cluster.start_broker(1)
    controller = cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1]})
    admin.create_topic_with_assignment(cluster.zk, "gone", {0: [0, 1]})
    cluster.wait_online("t", 1)
    cluster.wait_online("gone", 1)
    cluster.settle(controller)  # the topic ids written and their own watch events handled
    session = controller.zk.session_id
    states: list[str] = []
    controller.zk.add_state_listener(states.append)
    controller.zk.raw._connection._socket.shutdown(socket.SHUT_RDWR)  # the network drops
    eventually(lambda: states[-2:] == ["SUSPENDED", "CONNECTED"], "the connection to come back")
    assert controller.zk.session_id == session  # the same session: ephemeral znodes kept
    cluster.settle(controller)
    admin.add_partitions(cluster.zk, "t", {1: [1, 0]})
    assert cluster.wait_state(T1, lambda lai: lai.leader >= 0) == LeaderAndIsr(1, (1, 0))
    admin.delete_topic(cluster.zk, "gone")
    cluster.wait_gone(znodes.topic_path("gone"))
