"""The controller held to Kafka 3.9's ZooKeeper-mode controller where an earlier review found it
differed; each test names the Kafka source it follows."""

from __future__ import annotations

import json

import pytest
from kto_testing import eventually

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.controller import config_changes
from kafka_topic_operator.controller import events as ev
from kafka_topic_operator.controller.kafka_controller import KafkaController
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.states import PartitionAndReplica, ReplicaState
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import admin, znodes

from .conftest import Bare, Cluster, assignment

pytestmark = pytest.mark.zookeeper

T0 = TopicPartition("t", 0)


# ---- /config/changes: a topic's unclean.leader.election.enable turned on ---------------------
# ConfigHandler.scala (TopicConfigHandler.processConfigChanges) calls
# KafkaController.enableTopicUncleanLeaderElection, whose event runs
# triggerOnlinePartitionStateChange(topic).


def test_enabling_unclean_election_on_a_topic_elects_its_offline_partitions(
    cluster: Cluster,
) -> None:
    cluster.start_broker(0)
    cluster.start_broker(1)
    controller = cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1]})
    cluster.wait_state(T0, lambda lai: lai.isr == (0, 1))
    cluster.stop_broker(1)
    cluster.wait_state(T0, lambda lai: lai.isr == (0,))
    cluster.stop_broker(0)
    cluster.wait_state(T0, lambda lai: lai.leader == -1)
    cluster.start_broker(1)  # out of the ISR: no clean leader
    cluster.waiter.exists(znodes.broker_path(1))
    # Idle is not enough: the controller may go idle before the broker change reaches it.
    eventually(lambda: 1 in controller.ctx.live_brokers, "the controller to see broker 1", 20)
    cluster.settle(controller)
    state = cluster.state(T0)
    assert state is not None and state.leader_and_isr.leader == -1
    admin.change_topic_config(cluster.zk, "t", {"unclean.leader.election.enable": "TRUE"})
    lai = cluster.wait_state(T0, lambda lai: lai.leader == 1, "the unclean election")
    assert lai.isr == (1,)


def _broker_back_outside_the_isr(bare: Bare) -> LeaderAndIsr:
    """t-0 on brokers 0, 1: 1 dies, then 0 (the last in the ISR), then 1 comes back; t-0's
    leadership after that."""
    bare.register(0)
    bare.register(1)
    bare.elect()
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0, 1]})
    bare.dispatch(ev.TopicChange())
    bare.unregister(1)
    bare.dispatch(ev.BrokerChange())
    bare.unregister(0)
    bare.dispatch(ev.BrokerChange())
    bare.register(1)
    bare.dispatch(ev.BrokerChange())
    return bare.ctx.leadership[T0].leader_and_isr


def _offline_partition_with_live_replica_outside_the_isr(bare: Bare) -> None:
    assert _broker_back_outside_the_isr(bare).leader == -1


def test_each_config_change_notification_is_processed_once(bare: Bare) -> None:
    _offline_partition_with_live_replica_outside_the_isr(bare)
    admin.change_topic_config(bare.zk, "t", {"unclean.leader.election.enable": "false"})
    bare.dispatch(ev.ConfigChanges())
    assert bare.ctx.leadership[T0].leader_and_isr.leader == -1
    # The config turns true with no new notification: nothing happens (Kafka reads the config
    # only for a notification it has not processed yet).
    bare.zk.set(
        znodes.topic_config_path("t"),
        znodes.encode_config({"unclean.leader.election.enable": "true"}),
    )
    bare.dispatch(ev.ConfigChanges())
    assert bare.ctx.leadership[T0].leader_and_isr.leader == -1
    # A notification for another entity type is read but changes nothing here.
    bare.zk.create(
        znodes.config_change_path(), znodes.encode_config_change("brokers/<default>"),
        sequence=True,
    )  # fmt: skip
    bare.dispatch(ev.ConfigChanges())
    assert bare.ctx.leadership[T0].leader_and_isr.leader == -1
    admin.change_topic_config(bare.zk, "t", {"unclean.leader.election.enable": "true"})
    bare.dispatch(ev.ConfigChanges())
    assert bare.ctx.leadership[T0].leader_and_isr.leader == 1
    # Notifications stay for other brokers (purged after 15 minutes).
    assert len(bare.zk.children(znodes.CONFIG_CHANGES_PATH) or []) == 3


def test_expired_config_change_notifications_are_purged(
    bare: Bare, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare.register(0)
    bare.elect()
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0]})
    admin.change_topic_config(bare.zk, "t", {"retention.ms": "1"})
    bare.dispatch(ev.ConfigChanges())
    assert bare.zk.children(znodes.CONFIG_CHANGES_PATH)
    monkeypatch.setattr(config_changes, "CONFIG_CHANGE_EXPIRATION_MS", -1)
    bare.dispatch(ev.ConfigChanges())
    assert bare.zk.children(znodes.CONFIG_CHANGES_PATH) == []


# ---- the extra UpdateMetadata of onReplicasBecomeOffline --------------------------------------
# KafkaController.scala onReplicasBecomeOffline: sent only when no replica went offline outside
# deleted topics and no election succeeded.


def _update_metadata(requests: list[bc.Request]) -> list[bc.UpdateMetadataRequest]:
    return [r for r in requests if isinstance(r, bc.UpdateMetadataRequest)]


def test_a_broker_with_no_replicas_dying_is_told_even_with_an_offline_partition(
    bare: Bare,
) -> None:
    for broker in (0, 1, 2):
        bare.register(broker)
    bare.elect()
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0]})
    bare.dispatch(ev.TopicChange())
    bare.unregister(0)
    bare.dispatch(ev.BrokerChange())
    assert bare.ctx.leadership[T0].leader_and_isr.leader == -1
    bare.requests(2)
    bare.unregister(1)  # hosts nothing
    bare.dispatch(ev.BrokerChange())
    sent = _update_metadata(bare.requests(2))
    assert [([b.id for b in r.live_brokers], r.partition_states) for r in sent] == [([2], ())]


def test_a_follower_dying_sends_no_extra_update_metadata(bare: Bare) -> None:
    bare.register(0)
    bare.register(1)
    bare.elect()
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0, 1]})
    bare.dispatch(ev.TopicChange())
    bare.requests(0)
    bare.unregister(1)
    bare.dispatch(ev.BrokerChange())
    sent = _update_metadata(bare.requests(0))
    assert [[s.isr for s in r.partition_states] for r in sent] == [[(0,)]]


# ---- automatic preferred leader election during a reassignment --------------------------------
# KafkaController.scala checkAndTriggerAutoLeaderRebalance: since KAFKA-10149 (3.4) no partition
# is left out because a reassignment is in progress, not even the reassigned ones.


def _leader_writes_isr(bare: Bare, tp: TopicPartition, isr: tuple[int, ...]) -> None:
    """What a leader does: the state znode's ISR rewritten, then an ISR change notification."""
    path = znodes.topic_partition_state_path(tp)
    node = bare.zk.get(path)
    assert node is not None
    state = znodes.decode_partition_state(node.path, node.data, node.version)
    lai = state.leader_and_isr
    new = LeaderAndIsr(lai.leader, isr, lai.leader_epoch, lai.leader_recovery_state, 0)
    bare.zk.set(path, znodes.encode_partition_state(state._replace(leader_and_isr=new)))
    bare.zk.create(znodes.isr_change_path(), znodes.encode_isr_change([tp]), sequence=True)
    bare.dispatch(ev.IsrChangeNotification())


def test_automatic_preferred_election_goes_on_during_a_reassignment(bare: Bare) -> None:
    bare.register(0)
    bare.register(1)
    bare.elect()
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0, 1], 1: [1, 0]})
    bare.dispatch(ev.TopicChange())
    bare.unregister(0)
    bare.dispatch(ev.BrokerChange())
    bare.register(0)
    bare.dispatch(ev.BrokerChange())
    _leader_writes_isr(bare, T0, (1, 0))
    assert bare.ctx.leadership[T0].leader_and_isr.leader == 1
    t1 = TopicPartition("t", 1)
    admin.reassign_partitions(bare.zk, {t1: [1, 2]})  # broker 2 never comes
    bare.dispatch(ev.ZkPartitionReassignment())
    assert bare.ctx.partitions_being_reassigned == {t1}
    bare.dispatch(ev.AutoPreferredReplicaLeaderElection())
    assert bare.ctx.leadership[T0].leader_and_isr.leader == 0


# ---- log directory failures ---------------------------------------------------------------------
# KafkaController.scala processLogDirEventNotification / onBrokerLogDirFailure (LeaderAndIsr to
# every replica of the broker), processLeaderAndIsrResponseReceived (KAFKA_STORAGE_ERROR marks
# the replica offline: onReplicasBecomeOffline), ControllerContext.isReplicaOnline.


def test_a_log_dir_failure_moves_leadership_off_the_replicas_in_it(bare: Bare) -> None:
    bare.register(0)
    bare.register(1)
    bare.elect()
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0, 1], 1: [1, 0]})
    bare.dispatch(ev.TopicChange())
    bare.requests(0)
    bare.requests(1)
    bare.zk.create(znodes.log_dir_event_path(), znodes.encode_log_dir_event(0), sequence=True)
    bare.dispatch(ev.LogDirEventNotification())
    assert bare.zk.children(znodes.LOG_DIR_EVENT_NOTIFICATION_PATH) == []
    asked = [r for r in bare.requests(0) if isinstance(r, bc.LeaderAndIsrRequest)]
    assert len(asked) == 1
    assert sorted(s.topic_partition for s in asked[0].partition_states) == [
        T0,
        TopicPartition("t", 1),
    ]
    bare.answer(
        0,
        bc.LeaderAndIsrResponse(
            bc.Errors.NONE,
            (
                bc.PartitionError("t", 0, bc.Errors.KAFKA_STORAGE_ERROR),
                bc.PartitionError("t", 1, bc.Errors.NONE),
            ),
            correlation_id=asked[0].correlation_id,
        ),
    )
    lai = bare.ctx.leadership[T0].leader_and_isr
    assert (lai.leader, lai.isr) == (1, (1,))
    metadata = [r for r in bare.requests(1) if isinstance(r, bc.UpdateMetadataRequest)]
    offline = {s.topic_partition: s.offline_replicas for r in metadata for s in r.partition_states}
    assert offline[T0] == (0,)
    # The replica in the failed dir cannot lead, even as the preferred replica.
    admin.elect_preferred_leaders(bare.zk, [T0])
    bare.dispatch(ev.ReplicaLeaderElection())
    assert bare.ctx.leadership[T0].leader_and_isr.leader == 1
    # A broker that re-registers starts with every dir online again.
    bare.unregister(0)
    bare.dispatch(ev.BrokerChange())
    bare.register(0)
    bare.dispatch(ev.BrokerChange())
    assert bare.ctx.is_replica_online(0, T0)


def test_a_replica_in_a_failed_log_dir_makes_its_topic_ineligible_for_deletion(
    bare: Bare,
) -> None:
    # TopicDeletionManager.onPartitionDeletion: replicas that are not online by
    # isReplicaOnline (a failed dir of a live broker included) are not asked to delete.
    bare.register(0)
    bare.register(1)
    bare.elect()
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0, 1]})
    bare.dispatch(ev.TopicChange())
    bare.zk.create(znodes.log_dir_event_path(), znodes.encode_log_dir_event(0), sequence=True)
    bare.dispatch(ev.LogDirEventNotification())
    asked = [r for r in bare.requests(0) if isinstance(r, bc.LeaderAndIsrRequest)][-1]
    bare.answer(
        0,
        bc.LeaderAndIsrResponse(
            bc.Errors.NONE,
            (bc.PartitionError("t", 0, bc.Errors.KAFKA_STORAGE_ERROR),),
            correlation_id=asked.correlation_id,
        ),
    )
    bare.requests(0)
    admin.delete_topic(bare.zk, "t")
    bare.dispatch(ev.TopicDeletion())
    assert "t" in bare.ctx.topics_ineligible_for_deletion
    assert (
        bare.ctx.replica_states[PartitionAndReplica(T0, 0)]
        is ReplicaState.REPLICA_DELETION_INELIGIBLE
    )
    stops = [r for r in bare.requests(0) if isinstance(r, bc.StopReplicaRequest)]
    assert not any(p.delete_partition for r in stops for p in r.partition_states), stops
    assert any(isinstance(r, bc.StopReplicaRequest) for r in bare.requests(1))


def test_failover_deletes_pending_isr_change_and_log_dir_notifications(bare: Bare) -> None:
    # KafkaController.onControllerFailover: deleteLogDirEventNotifications and
    # deleteIsrChangeNotifications before the context is read.
    bare.zk.ensure_path(znodes.LOG_DIR_EVENT_NOTIFICATION_PATH)
    bare.zk.ensure_path(znodes.ISR_CHANGE_NOTIFICATION_PATH)
    bare.zk.create(znodes.log_dir_event_path(), znodes.encode_log_dir_event(0), sequence=True)
    bare.zk.create(znodes.isr_change_path(), znodes.encode_isr_change([T0]), sequence=True)
    bare.register(0)
    bare.elect()
    assert bare.zk.children(znodes.LOG_DIR_EVENT_NOTIFICATION_PATH) == []
    assert bare.zk.children(znodes.ISR_CHANGE_NOTIFICATION_PATH) == []


# ---- what a new broker is told ------------------------------------------------------------------
# ControllerContext.scala partitionsWithLeaders: every partition with a state, leader or not,
# of topics not queued for deletion; onBrokerStartup sends them to the new brokers.


def test_a_new_broker_learns_offline_partitions_but_not_deleted_topics(bare: Bare) -> None:
    bare.register(0)
    bare.register(1)
    bare.elect()
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0]})
    admin.create_topic_with_assignment(bare.zk, "d", {0: [1]})
    bare.dispatch(ev.TopicChange())
    bare.unregister(0)
    bare.dispatch(ev.BrokerChange())
    admin.delete_topic(bare.zk, "d")
    bare.dispatch(ev.TopicDeletion())  # broker 1 never answers its StopReplica
    assert bare.ctx.topics_to_be_deleted == {"d"}
    bare.register(2)
    bare.dispatch(ev.BrokerChange())
    told = [
        (s.topic_partition, s.leader)
        for r in bare.requests(2)
        if isinstance(r, bc.UpdateMetadataRequest)
        for s in r.partition_states
    ]
    assert told == [(T0, -1)]


# ---- the UpdateMetadata of a failover -----------------------------------------------------------
# KafkaController.scala onControllerFailover: sendUpdateMetadataRequest(liveOrShuttingDownBrokerIds,
# Set.empty) before the state machines start; the partitions reach the brokers with the
# LeaderAndIsr requests of ReplicaStateMachine.startup.


def test_failover_first_sends_the_live_brokers_without_partitions(bare: Bare) -> None:
    bare.register(0)
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0]})
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(0, (0,)), 0)
    bare.zk.create(
        znodes.topic_partition_state_path(T0), znodes.encode_partition_state(state),
        makepath=True,
    )  # fmt: skip
    bare.elect()
    sent = bare.requests(0)
    assert isinstance(sent[0], bc.UpdateMetadataRequest)
    assert sent[0].partition_states == ()
    assert [b.id for b in sent[0].live_brokers] == [0]
    assert isinstance(sent[1], bc.LeaderAndIsrRequest)
    assert [s.topic_partition for s in sent[1].partition_states] == [T0]
    assert isinstance(sent[2], bc.UpdateMetadataRequest)
    assert [s.topic_partition for s in sent[2].partition_states] == [T0]


# ---- a reassignment that fails ------------------------------------------------------------------
# KafkaController.scala maybeTriggerPartitionReassignment: an exception from one partition's
# onPartitionReassignment is logged, answered UNKNOWN_SERVER_ERROR and that partition leaves the
# znode; the other partitions go on.


def test_a_failing_partition_reassignment_leaves_the_znode_and_the_others_go_on(
    bare: Bare, monkeypatch: pytest.MonkeyPatch
) -> None:
    for broker in (0, 1, 2):
        bare.register(broker)
    bare.elect()
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0], 1: [1]})
    bare.dispatch(ev.TopicChange())
    t1 = TopicPartition("t", 1)
    reassignments = bare.controller.reassignments
    original = reassignments.on_partition_reassignment

    def failing(tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        if tp == T0:
            raise RuntimeError("disk on fire")
        original(tp, assignment)

    monkeypatch.setattr(reassignments, "on_partition_reassignment", failing)
    admin.reassign_partitions(bare.zk, {T0: [1], t1: [2]})
    bare.dispatch(ev.ZkPartitionReassignment())
    node = bare.zk.get(znodes.REASSIGN_PARTITIONS_PATH)
    assert node is not None
    assert znodes.decode_reassignment(node.path, node.data) == {t1: [2]}
    assert bare.ctx.partitions_being_reassigned == {t1}


# ---- partitions added to a topic being deleted ------------------------------------------------
# KafkaController.scala processPartitionModifications / restorePartitionReplicaAssignment: the
# znode gets back the controller's own assignment of the partitions that exist, unconditionally.


def test_a_topic_being_deleted_gets_the_controllers_assignment_back(bare: Bare) -> None:
    bare.register(0)
    bare.elect()
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0, 1]})  # broker 1 never comes
    bare.dispatch(ev.TopicChange())
    topic_id = bare.ctx.topic_ids["t"]
    admin.delete_topic(bare.zk, "t")
    bare.dispatch(ev.TopicDeletion())
    assert "t" in bare.ctx.topics_ineligible_for_deletion
    changed = {0: ReplicaAssignment((0,)), 1: ReplicaAssignment((0,))}
    bare.zk.set(znodes.topic_path("t"), znodes.encode_topic(changed, topic_id))
    bare.dispatch(ev.PartitionModifications("t"))
    node = bare.zk.get(znodes.topic_path("t"))
    assert node is not None
    data = znodes.decode_topic(node.path, node.data)
    assert {p: a.replicas for p, a in data.partitions.items()} == {0: (0, 1)}
    assert data.topic_id == topic_id


# ---- the order of controlled shutdown's checks --------------------------------------------------
# KafkaController.scala doControlledShutdown: the broker epoch is checked first, against
# liveBrokerIdAndEpochs(id), which throws for a broker that is not live (answered
# UNKNOWN_SERVER_ERROR); only a request with no epoch reaches BROKER_NOT_AVAILABLE.


def _shutdown(bare: Bare, broker: int, epoch: int) -> bc.ControlledShutdownResult | None:
    path = bc.controlled_shutdown_path(broker)
    request = bc.ControlledShutdownRequest(broker, epoch)
    bare.zk.create(path, bc.encode_controlled_shutdown(request), makepath=True)
    bare.dispatch(ev.ControlledShutdown())
    node = bare.zk.get(path)
    assert node is not None
    bare.zk.delete(path)
    return bc.decode_controlled_shutdown(node.path, node.data).result


@pytest.mark.parametrize(
    ("epoch", "error"),
    [
        (10, bc.Errors.UNKNOWN_SERVER_ERROR),
        (bc.UNKNOWN_BROKER_EPOCH, bc.Errors.BROKER_NOT_AVAILABLE),
    ],
)
def test_controlled_shutdown_of_a_broker_that_is_not_live(
    bare: Bare, epoch: int, error: str
) -> None:
    bare.register(0)
    bare.elect()
    result = _shutdown(bare, 7, epoch)
    assert result is not None and result.error == error
    assert 7 not in bare.ctx.shutting_down


def test_controlled_shutdown_with_a_stale_epoch(bare: Bare) -> None:
    bare.register(0)
    bare.elect()
    result = _shutdown(bare, 0, bare.ctx.broker_epochs[0] - 1)
    assert result is not None and result.error == bc.Errors.STALE_BROKER_EPOCH
    assert bare.ctx.shutting_down == set()


# ---- a broker's endpoints change ---------------------------------------------------------------
# KafkaController.scala BrokerModificationsHandler (data changes of /brokers/ids/<id>),
# processBrokerModification and onBrokerUpdate: UpdateMetadata with the new endpoints to every
# live broker.


def test_a_changed_endpoint_reaches_every_broker(bare: Bare) -> None:
    bare.register(0)
    bare.register(1)
    bare.elect()
    bare.requests(0)
    bare.requests(1)
    bare.register(1, port=9093)  # the same registration, rewritten (KafkaZkClient.updateBrokerInfo)
    eventually(
        lambda: ev.BrokerModifications(1) in list(bare.controller.events.queue.queue),
        "the registration's data watch",
    )
    bare.dispatch(ev.BrokerModifications(1))
    for broker in (0, 1):
        sent = _update_metadata(bare.requests(broker))
        assert len(sent) == 1
        ports = {b.id: [e.port for e in b.endpoints] for b in sent[0].live_brokers}
        assert ports == {0: [9092], 1: [9093]}
    assert bare.ctx.live_brokers[1].endpoints[0].port == 9093


# ---- the topic znode's whole tree goes ----------------------------------------------------------
# TopicDeletionManager.completeDeleteTopic -> KafkaZkClient.deleteTopicZNode -> deleteRecursive.


def test_a_deleted_topic_leaves_nothing_under_its_znode(cluster: Cluster) -> None:
    cluster.start_broker(0)
    cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0]})
    cluster.wait_online("t", 1)
    cluster.zk.create(f"{znodes.topic_path('t')}/extra/deeper", b"x", makepath=True)
    cluster.zk.create(f"{znodes.topic_partition_state_path(T0)}/note", b"x")
    admin.delete_topic(cluster.zk, "t")
    cluster.wait_gone(znodes.topic_path("t"))
    cluster.wait_gone(znodes.delete_topic_path("t"))


# ---- the end of a ZooKeeper-triggered preferred election --------------------------------------
# KafkaController.scala removePartitionsFromPreferredReplicaElection: deletePreferredReplicaElection
# (KafkaZkClient.scala, its result unchecked), then ReplicaLeaderElection is queued to look again.


def test_a_preferred_election_request_removed_meanwhile_is_no_error(
    bare: Bare, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    bare.register(0)
    bare.register(1)
    bare.elect()
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0, 1]})
    bare.dispatch(ev.TopicChange())
    admin.elect_preferred_leaders(bare.zk, [T0])
    sm = bare.controller.partition_sm
    original = sm.handle_state_changes

    def and_remove(*args: object, **kwargs: object) -> object:
        bare.zk.delete(znodes.PREFERRED_REPLICA_ELECTION_PATH)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sm, "handle_state_changes", and_remove)
    # T0 already has its preferred leader: make it look otherwise so an election runs.
    bare.ctx.leadership[T0] = bare.ctx.leadership[T0]._replace(
        leader_and_isr=bare.ctx.leadership[T0].leader_and_isr._replace(leader=1),
    )
    with caplog.at_level("ERROR"):
        bare.dispatch(ev.ReplicaLeaderElection())
    assert not [r for r in caplog.records if "Error processing event" in r.getMessage()]
    assert ev.ReplicaLeaderElection() in list(bare.controller.events.queue.queue)


# ---- /feature: KafkaController.enableFeatureVersioning at every failover ---------------------


def _feature(bare: Bare) -> object:
    node = bare.zk.get(znodes.FEATURE_PATH)
    assert node is not None
    return json.loads(node.data)


def test_a_new_controller_creates_the_feature_znode_as_kafka_3_9_does(bare: Bare) -> None:
    bare.elect()
    assert _feature(bare) == {"version": 2, "status": 1, "features": {}}


@pytest.mark.parametrize(
    ("status", "features"),
    [(0, {}), (1, {"x": {"max_version_level": 2}})],
    ids=["disabled: enabled, its features cleared", "enabled: its features kept"],
)
def test_an_existing_feature_znode_is_rewritten_enabled_at_version_2(
    bare: Bare, status: int, features: dict[str, object]
) -> None:
    levels = '{"x":{"min_version_level":1,"max_version_level":2}}'
    bare.zk.create(
        znodes.FEATURE_PATH, f'{{"version":1,"status":{status},"features":{levels}}}'.encode()
    )
    bare.elect()
    assert _feature(bare) == {"version": 2, "status": 1, "features": features}


def test_an_unreadable_feature_znode_is_left_as_it_is(bare: Bare) -> None:
    bare.zk.create(znodes.FEATURE_PATH, b"not json")
    bare.elect()
    node = bare.zk.get(znodes.FEATURE_PATH)
    assert node is not None and node.data == b"not json"


# ---- KIP-841: a broker in controlled shutdown does not join an ISR ---------------------------
# KafkaController.processAlterPartition refuses ISRs naming a broker that is not in
# liveBrokerIds, which excludes shutting-down brokers. Dev brokers write ISR expansions
# themselves, so the leader skips brokers whose shutting-down mark exists.


def test_a_broker_marked_as_shutting_down_is_not_added_to_an_isr(cluster: Cluster) -> None:
    cluster.start_broker(0)
    cluster.start_broker(1)
    controller = cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1]})
    cluster.wait_state(T0, lambda lai: lai.isr == (0, 1))
    cluster.stop_broker(1)
    cluster.wait_state(T0, lambda lai: lai.isr == (0,))
    # What broker 1 writes when its controlled shutdown begins, held by this session.
    cluster.zk.create(bc.shutting_down_path(1), b"", ephemeral=True)
    follower = cluster.start_broker(1)
    eventually(lambda: T0 in follower.replica_manager.partitions, "broker 1 following t-0")
    cluster.settle(controller)
    state = cluster.state(T0)
    assert state is not None and state.leader_and_isr.isr == (0,)
    cluster.zk.delete(bc.shutting_down_path(1))
    cluster.wait_state(T0, lambda lai: lai.isr == (0, 1), "broker 1 back in the ISR")


# ---- the cluster-wide dynamic default of unclean.leader.election.enable ----------------------
# DynamicLogConfig.reconfigure calls KafkaController.enableDefaultUncleanLeaderElection when the
# default turns true; processUncleanLeaderElectionEnable elects every offline partition.


@pytest.mark.parametrize("broker", [None, 100], ids=["cluster-wide default", "controller's broker"])
def test_enabling_unclean_election_by_dynamic_broker_config_elects_offline_partitions(
    bare: Bare, broker: int | None
) -> None:
    _offline_partition_with_live_replica_outside_the_isr(bare)
    admin.change_broker_config(bare.zk, broker, {"unclean.leader.election.enable": "true"})
    bare.dispatch(ev.ConfigChanges())
    lai = bare.ctx.leadership[T0].leader_and_isr
    assert (lai.leader, lai.isr) == (1, (1,))


def test_another_brokers_dynamic_config_does_not_change_the_controllers_default(
    bare: Bare,
) -> None:
    _offline_partition_with_live_replica_outside_the_isr(bare)
    admin.change_broker_config(bare.zk, 7, {"unclean.leader.election.enable": "true"})
    bare.dispatch(ev.ConfigChanges())
    assert bare.ctx.leadership[T0].leader_and_isr.leader == -1


def test_a_broker_override_wins_over_the_cluster_wide_default(bare: Bare) -> None:
    _offline_partition_with_live_replica_outside_the_isr(bare)
    admin.change_broker_config(bare.zk, 100, {"unclean.leader.election.enable": "false"})
    admin.change_broker_config(bare.zk, None, {"unclean.leader.election.enable": "true"})
    bare.dispatch(ev.ConfigChanges())
    assert bare.ctx.leadership[T0].leader_and_isr.leader == -1


def test_the_dynamic_default_is_read_at_failover(bare: Bare) -> None:
    # Written before the controller started, with no notification left to process.
    bare.zk.create(
        znodes.config_entity_path(znodes.ConfigType.BROKER, "<default>"),
        znodes.encode_config({"unclean.leader.election.enable": "true"}),
        makepath=True,
    )
    lai = _broker_back_outside_the_isr(bare)  # elected only because unclean is on
    assert (lai.leader, lai.isr) == (1, (1,))


# ---- a topic znode someone wrote garbage into ----------------------------------------------
# KafkaController.processTopicChange sets allTopics to every child of /brokers/topics before it
# reads the new ones, so an unreadable topic is new once, not at every later topic change.


def test_an_unreadable_new_topic_is_reported_once_and_loaded_when_fixed(
    cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    cluster.start_broker(0)
    controller = cluster.start_controller()
    cluster.settle(controller)
    caplog.set_level("INFO", logger="kafka_topic_operator.controller")
    cluster.zk.create(znodes.topic_path("junk"), b"{not json")
    for topic in ("a", "b"):  # two later topic changes
        admin.create_topic_with_assignment(cluster.zk, topic, {0: [0]})
        cluster.wait_online(topic, 1)
    cluster.settle(controller)
    said = [r.getMessage() for r in caplog.records]
    unreadable = [m for m in said if "whose znode cannot be read" in m]
    assert len(unreadable) == 1
    assert unreadable[0].startswith(
        "Skipping a topic whose znode cannot be read: Malformed data in znode /brokers/topics/junk"
    )
    announced = [m for m in said if m.startswith("New topics: [") and "junk" in m]
    assert len(announced) == 1  # with "a" too when both changes were read at once
    # Fixed: its partitions are created as a new topic's.
    cluster.zk.set(znodes.topic_path("junk"), znodes.encode_topic({0: ReplicaAssignment((0,))}))
    cluster.wait_online("junk", 1)


# ---- /admin/reassign_partitions: one watch, spent by someone else's deletion -------------------
# PartitionReassignmentHandler overrides handleCreation only; ZooKeeperClient sets a watch on
# every exists/getData of a path with a registered handler (shouldWatch), so the watch comes
# back when the controller next reads the znode (removePartitionFromReassigningPartitions) or
# fails over (initializePartitionReassignments).


def _seen_by_the_controller(cluster: Cluster, controller: KafkaController, topic: str) -> None:
    """Creates `topic` and waits until the controller knows it: its watch events come in order,
    so whatever the controller was told before has been handled."""
    admin.create_topic_with_assignment(cluster.zk, topic, {0: [0]})
    eventually(lambda: topic in controller.ctx.all_topics, f"the controller to see {topic}")


def test_a_request_written_again_after_an_outside_deletion_waits_for_the_controllers_next_read(
    cluster: Cluster,
) -> None:
    for broker in (0, 1):
        cluster.start_broker(broker)
    controller = cluster.start_controller()
    admin.create_topic_with_assignment(cluster.zk, "t", {0: [0, 1]})
    admin.create_topic_with_assignment(cluster.zk, "u", {0: [0, 1]})
    cluster.wait_online("t", 1)
    cluster.wait_online("u", 1)
    admin.reassign_partitions(cluster.zk, {T0: [0, 2]})  # broker 2 is not there yet
    eventually(lambda: T0 in controller.ctx.partitions_being_reassigned, "the move started")
    cluster.zk.delete(znodes.REASSIGN_PARTITIONS_PATH)  # by hand: the watch is spent
    _seen_by_the_controller(cluster, controller, "marker-0")
    admin.reassign_partitions(cluster.zk, {TopicPartition("u", 0): [1, 0]})
    _seen_by_the_controller(cluster, controller, "marker-1")
    assert assignment(cluster, "u") == {0: (0, 1)}
    # t-0 finishes: the controller reads the request (the watch is set again) and rewrites it
    # unchanged (which spends it again), as Kafka does.
    cluster.start_broker(2)
    eventually(lambda: assignment(cluster, "t") == {0: (0, 2)}, "t-0 moved")
    eventually(lambda: not controller.ctx.partitions_being_reassigned, "the move finished")
    _seen_by_the_controller(cluster, controller, "marker-2")
    assert assignment(cluster, "u") == {0: (0, 1)}
    assert cluster.zk.exists(znodes.REASSIGN_PARTITIONS_PATH)
    # A failover takes it up.
    cluster.zk.delete(znodes.CONTROLLER_PATH)
    eventually(lambda: assignment(cluster, "u") == {0: (1, 0)}, "u-0 reassigned at failover")
    cluster.wait_gone(znodes.REASSIGN_PARTITIONS_PATH)
