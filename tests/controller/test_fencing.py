"""Controller-epoch fencing, one test per ZooKeeper write site of the controller.

Each test lets the controller win an election, then has another controller win a later one
while the first still believes it is active (a soft failure: a long pause, or a session
replaced before the Expire event is processed). The event that follows reaches one write site
first; the write must be refused by the `/controller_epoch` version check, the znode left as
it was, and the controller must resign (KafkaController.maybeResign on ControllerMovedException).

Every flow is chosen so that the site under test is the first write it makes: an earlier
fenced write would stop the flow before it, and the test would then prove nothing about that
site. The new controller writes no partition state: one it had written would carry its epoch,
and the old controller's own epoch check would then refuse the write without the fence.

Every controller write goes through one writer (`controller/zk_writer.py`), so the fence lives
in one place: the last tests check that no other module writes, and that without the writer's
fence a deposed controller's write goes through (so each test here can fail).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.controller import config_changes, kafka_controller
from kafka_topic_operator.controller import events as ev
from kafka_topic_operator.controller.leadership import ControllerEpoch, try_become_controller
from kafka_topic_operator.controller.zk_writer import ControllerZkWriter
from kafka_topic_operator.kafka.ids import new_topic_id
from kafka_topic_operator.kafka.leader_and_isr import LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import admin, znodes
from kafka_topic_operator.zk.client import Node

from .conftest import Bare

pytestmark = pytest.mark.zookeeper

T0 = TopicPartition("t", 0)
NEW_CONTROLLER_ID = 200


def depose(bare: Bare) -> ControllerEpoch:
    """Another broker becomes the controller the way Kafka's does
    (registerControllerAndIncrementControllerEpoch): `/controller` is its own and the epoch
    znode moves on. The old controller's session lives on, so only the fence can stop it."""
    stale = bare.ctx.epoch_zk_version
    assert bare.zk.delete(znodes.CONTROLLER_PATH)
    won = try_become_controller(bare.zk, NEW_CONTROLLER_ID)
    assert won is not None and won.zk_version > stale and won.epoch > bare.ctx.epoch
    assert bare.controller.is_active  # it has not noticed
    return won


def assert_resigned(bare: Bare) -> None:
    """The refused write raised ControllerMovedException, and the controller gave way."""
    controller = bare.controller
    assert not controller.is_active
    assert controller.active_controller_id == NEW_CONTROLLER_ID
    assert controller.epoch is None and controller.ctx.all_topics == set()


def read(bare: Bare, path: str) -> Node:
    node = bare.zk.get(path)
    assert node is not None, path
    return node


def state_of(bare: Bare, tp: TopicPartition) -> LeaderIsrAndControllerEpoch:
    node = read(bare, znodes.topic_partition_state_path(tp))
    return znodes.decode_partition_state(node.path, node.data, node.version)


def online_topic(bare: Bare, brokers: tuple[int, ...], assignment: Mapping[int, list[int]]) -> None:
    """Brokers registered, the controller elected, topic `t` created and online."""
    for broker in brokers:
        bare.register(broker)
    bare.elect()
    admin.create_topic_with_assignment(bare.zk, "t", assignment)
    bare.dispatch(ev.TopicChange())
    for p in assignment:
        assert state_of(bare, TopicPartition("t", p)).leader_and_isr.leader >= 0
    for broker in brokers:
        bare.requests(broker)


# ---- kafka_controller.py -----------------------------------------------------------------------


def test_stale_controller_cannot_write_a_topic_id_into_the_topic_znode(bare: Bare) -> None:
    # TopicChange of a topic without an id: _load_topics -> _write_topic_ids, the first write.
    bare.register(0)
    bare.elect()
    depose(bare)
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0]})
    before = read(bare, znodes.topic_path("t"))
    bare.dispatch(ev.TopicChange())
    assert read(bare, znodes.topic_path("t")) == before
    assert znodes.decode_topic(before.path, before.data).topic_id is None
    assert not bare.zk.exists(znodes.topic_partition_state_path(T0))
    assert_resigned(bare)


def test_stale_controller_cannot_restore_the_topic_znode_of_a_topic_being_deleted(
    bare: Bare,
) -> None:
    # Partitions added to a topic queued for deletion: _restore_partition_assignment rewrites
    # the topic znode without them (restorePartitionReplicaAssignment).
    online_topic(bare, (0,), {0: [0]})
    admin.delete_topic(bare.zk, "t")
    bare.dispatch(ev.TopicDeletion())  # StopReplica sent, never answered: the topic stays queued
    assert "t" in bare.ctx.topics_to_be_deleted
    depose(bare)
    admin.add_partitions(bare.zk, "t", {1: [0]})
    before = read(bare, znodes.topic_path("t"))
    bare.dispatch(ev.PartitionModifications("t"))
    assert read(bare, znodes.topic_path("t")) == before
    assert set(znodes.decode_topic(before.path, before.data).partitions) == {0, 1}
    assert_resigned(bare)


def test_stale_controller_cannot_delete_a_log_dir_event_notification(bare: Bare) -> None:
    # A log dir failure on a broker hosting no replica: no state change, only the delete of the
    # notification (_delete_tolerating_missing).
    bare.register(0)
    bare.elect()
    depose(bare)
    path = bare.zk.create(znodes.log_dir_event_path(), znodes.encode_log_dir_event(0),
                          sequence=True)  # fmt: skip
    before = read(bare, path)
    bare.dispatch(ev.LogDirEventNotification())
    assert read(bare, path) == before
    assert_resigned(bare)


def test_stale_controller_cannot_delete_an_isr_change_notification(bare: Bare) -> None:
    # An ISR change of a partition the controller does not know (its topic deleted since): no
    # UpdateMetadata to send, only the delete of the notification (_delete_tolerating_missing).
    bare.register(0)
    bare.elect()
    depose(bare)
    path = bare.zk.create(znodes.isr_change_path(), znodes.encode_isr_change([T0]),
                          sequence=True, makepath=True)  # fmt: skip
    before = read(bare, path)
    bare.dispatch(ev.IsrChangeNotification())
    assert read(bare, path) == before
    assert_resigned(bare)


def test_stale_controller_cannot_purge_config_change_notifications(
    bare: Bare, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A notification naming no config the controller acts on, then the purge of expired ones
    # (_purge_config_changes); every notification counts as expired.
    bare.register(0)
    bare.elect()
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0]})
    depose(bare)
    admin.change_topic_config(bare.zk, "t", {"retention.ms": "1"})
    [name] = bare.zk.children(znodes.CONFIG_CHANGES_PATH) or []
    before = read(bare, f"{znodes.CONFIG_CHANGES_PATH}/{name}")
    monkeypatch.setattr(config_changes, "CONFIG_CHANGE_EXPIRATION_MS", -1)
    bare.dispatch(ev.ConfigChanges())
    assert read(bare, before.path) == before
    assert_resigned(bare)


def test_stale_controller_cannot_delete_the_preferred_replica_election_znode(bare: Bare) -> None:
    # Every partition named already has its preferred leader: no election, only the delete of
    # /admin/preferred_replica_election (removePartitionsFromPreferredReplicaElection).
    online_topic(bare, (0, 1), {0: [0, 1]})
    depose(bare)
    admin.elect_preferred_leaders(bare.zk, [T0])
    before = read(bare, znodes.PREFERRED_REPLICA_ELECTION_PATH)
    bare.dispatch(ev.ReplicaLeaderElection())
    assert read(bare, znodes.PREFERRED_REPLICA_ELECTION_PATH) == before
    assert_resigned(bare)


def test_stale_controller_cannot_answer_a_controlled_shutdown_request(bare: Bare) -> None:
    # A broker leading nothing asks to shut down: the answer is the only write.
    bare.register(0)
    bare.elect()
    depose(bare)
    path = bc.controlled_shutdown_path(0)
    request = bc.ControlledShutdownRequest(0, bare.ctx.broker_epochs[0])
    bare.zk.create(path, bc.encode_controlled_shutdown(request), makepath=True)
    before = read(bare, path)
    bare.dispatch(ev.ControlledShutdown())
    assert read(bare, path) == before
    assert bc.decode_controlled_shutdown(path, before.data).result is None
    assert_resigned(bare)


# ---- request_batch.py --------------------------------------------------------------------------


def test_stale_controller_cannot_queue_requests_for_brokers(bare: Bare) -> None:
    # A broker's endpoint changes: UpdateMetadata to every live broker is the only write.
    bare.register(0)
    bare.register(1)
    bare.elect()
    bare.requests(0)
    bare.requests(1)
    depose(bare)
    bare.register(1, port=9093)
    bare.dispatch(ev.BrokerModifications(1))
    assert bare.zk.children(bc.requests_path(0)) == []
    assert bare.zk.children(bc.requests_path(1)) == []
    assert_resigned(bare)


# ---- deletion_manager.py -----------------------------------------------------------------------


def test_stale_controller_cannot_delete_the_znodes_of_a_deleted_topic(bare: Bare) -> None:
    # The last replica's StopReplica succeeds: completeDeleteTopic deletes the topic's znodes.
    online_topic(bare, (0,), {0: [0]})
    admin.delete_topic(bare.zk, "t")
    bare.dispatch(ev.TopicDeletion())
    [stop] = [
        r
        for r in bare.requests(0)
        if isinstance(r, bc.StopReplicaRequest)
        and any(s.delete_partition for s in r.partition_states)
    ]
    depose(bare)
    paths = [
        znodes.topic_path("t"),
        znodes.topic_partition_state_path(T0),
        znodes.topic_config_path("t"),
        znodes.delete_topic_path("t"),
    ]
    before = [read(bare, p) for p in paths]
    bare.answer(0, stop.error_response(bc.Errors.NONE))
    assert [read(bare, p) for p in paths] == before
    assert_resigned(bare)


def test_stale_controller_cannot_delete_a_marker_of_a_missing_topic(bare: Bare) -> None:
    # A deletion marker for a topic that does not exist is removed (DeleteDeletionMarkers).
    bare.register(0)
    bare.elect()
    depose(bare)
    bare.zk.create(znodes.delete_topic_path("ghost"), makepath=True)
    before = read(bare, znodes.delete_topic_path("ghost"))
    bare.dispatch(ev.TopicDeletion())
    assert read(bare, znodes.delete_topic_path("ghost")) == before
    assert_resigned(bare)


# ---- replica_state_machine.py ------------------------------------------------------------------


def test_stale_controller_cannot_shrink_the_isr_in_partition_state_when_a_follower_dies(
    bare: Bare,
) -> None:
    # The leader lives, so no election: → OfflineReplica removes the follower from the ISR.
    online_topic(bare, (0, 1), {0: [0, 1]})
    depose(bare)
    before = read(bare, znodes.topic_partition_state_path(T0))
    bare.unregister(1)
    bare.dispatch(ev.BrokerChange())
    assert read(bare, znodes.topic_partition_state_path(T0)) == before
    assert state_of(bare, T0).leader_and_isr.isr == (0, 1)
    assert_resigned(bare)


# ---- partition_state_machine.py ----------------------------------------------------------------


def test_stale_controller_cannot_create_partition_state_for_a_new_topic(bare: Bare) -> None:
    # The topic brings its own id, so New → Online's state creates are the first writes.
    bare.register(0)
    bare.elect()
    depose(bare)
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0]}, topic_id=new_topic_id())
    before = read(bare, znodes.topic_path("t"))
    bare.dispatch(ev.TopicChange())
    assert not bare.zk.exists(znodes.topic_partitions_path("t"))
    assert read(bare, znodes.topic_path("t")) == before
    assert_resigned(bare)


def test_stale_controller_cannot_write_partition_state_on_election(bare: Bare) -> None:
    # The leader dies: the offline partition's election is the first write.
    online_topic(bare, (0, 1), {0: [0, 1]})
    depose(bare)
    before = read(bare, znodes.topic_partition_state_path(T0))
    bare.unregister(0)
    bare.dispatch(ev.BrokerChange())
    assert read(bare, znodes.topic_partition_state_path(T0)) == before
    assert state_of(bare, T0).leader_and_isr.leader == 0
    assert_resigned(bare)


# ---- reassignments.py --------------------------------------------------------------------------


def test_stale_controller_cannot_write_the_reassigned_assignment_into_the_topic_znode(
    bare: Bare,
) -> None:
    # A new reassignment: the topic znode records origin and target first.
    online_topic(bare, (0, 1), {0: [0]})
    depose(bare)
    admin.reassign_partitions(bare.zk, {T0: [1]})
    before = read(bare, znodes.topic_path("t"))
    request = read(bare, znodes.REASSIGN_PARTITIONS_PATH)
    bare.dispatch(ev.ZkPartitionReassignment(created=True))
    assert read(bare, znodes.topic_path("t")) == before
    assert read(bare, znodes.REASSIGN_PARTITIONS_PATH) == request
    assert_resigned(bare)


def test_stale_controller_cannot_bump_the_leader_epoch_in_partition_state_on_reassignment(
    bare: Bare,
) -> None:
    # Adding a replica to a partition: once it joined the ISR the reassignment completes; the
    # leader stays, so its epoch is bumped (updateLeaderEpoch) before anything else is written.
    online_topic(bare, (0, 1), {0: [0]})
    admin.reassign_partitions(bare.zk, {T0: [0, 1]})
    bare.dispatch(ev.ZkPartitionReassignment(created=True))
    assert T0 in bare.ctx.partitions_being_reassigned
    # The leader takes replica 1 into the ISR, writing the state as a ZooKeeper-mode broker does.
    current = state_of(bare, T0)
    caught_up = current.leader_and_isr._replace(isr=(0, 1))
    bare.zk.set(
        znodes.topic_partition_state_path(T0),
        znodes.encode_partition_state(current._replace(leader_and_isr=caught_up)),
        current.leader_and_isr.partition_epoch,
    )
    depose(bare)
    before = read(bare, znodes.topic_partition_state_path(T0))
    bare.dispatch(ev.PartitionReassignmentIsrChange(T0))
    assert read(bare, znodes.topic_partition_state_path(T0)) == before
    assert_resigned(bare)


def test_stale_controller_cannot_delete_the_reassignment_znode(bare: Bare) -> None:
    # Every entry is rejected (no such partition): the znode is deleted, nothing else written.
    online_topic(bare, (0,), {0: [0]})
    depose(bare)
    admin.reassign_partitions(bare.zk, {TopicPartition("missing", 0): [0]})
    before = read(bare, znodes.REASSIGN_PARTITIONS_PATH)
    bare.dispatch(ev.ZkPartitionReassignment(created=True))
    assert read(bare, znodes.REASSIGN_PARTITIONS_PATH) == before
    assert_resigned(bare)


def test_stale_controller_cannot_rewrite_the_reassignment_znode(
    bare: Bare, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One entry starts, one is rejected: the znode is rewritten with the started one only. Any
    # valid entry writes first, so the other controller is elected in between: after the
    # reassignments were triggered, before the rejected entry leaves the znode.
    online_topic(bare, (0, 1), {0: [0]})
    reassignments = bare.controller.reassignments
    trigger = reassignments.maybe_trigger

    def trigger_then_depose(
        wanted: Mapping[TopicPartition, ReplicaAssignment],
    ) -> dict[TopicPartition, str]:
        results = trigger(wanted)
        depose(bare)
        return results

    monkeypatch.setattr(reassignments, "maybe_trigger", trigger_then_depose)
    admin.reassign_partitions(bare.zk, {T0: [0, 1], TopicPartition("missing", 0): [0]})
    before = read(bare, znodes.REASSIGN_PARTITIONS_PATH)
    bare.dispatch(ev.ZkPartitionReassignment(created=True))
    assert read(bare, znodes.REASSIGN_PARTITIONS_PATH) == before
    assert set(znodes.decode_reassignment(before.path, before.data)) == {
        T0,
        TopicPartition("missing", 0),
    }
    assert_resigned(bare)


def test_an_unfenced_write_of_a_deposed_controller_would_succeed(bare: Bare) -> None:
    # What makes the tests above meaningful: the deposed controller's session still writes.
    bare.register(0)
    bare.elect()
    depose(bare)
    bare.controller.zk.create("/written-by-the-deposed-controller", b"")
    assert bare.zk.exists("/written-by-the-deposed-controller")


def test_a_controller_whose_session_expired_writes_nothing_in_the_new_session(bare: Bare) -> None:
    """kazoo opens a new session at once after an expiry, and the controller may still be
    handling an event of the old one: no other controller has won yet, so the epoch check
    alone would let its writes through. Kafka's request fails with SESSIONEXPIRED; here the
    fence names the session the epoch was won in."""
    from kto_testing import expire_session

    online_topic(bare, (0,), {0: [0]})
    expire_session(bare.controller.zk)  # returns once the client holds a new session
    assert bare.controller.is_active  # the Expire event is not handled yet
    admin.reassign_partitions(bare.zk, {TopicPartition("missing", 0): [0]})
    before = read(bare, znodes.REASSIGN_PARTITIONS_PATH)
    bare.dispatch(ev.ZkPartitionReassignment(created=True))  # would delete the znode
    assert read(bare, znodes.REASSIGN_PARTITIONS_PATH) == before
    assert not bare.controller.is_active and bare.controller.epoch is None


def test_an_expired_session_drops_the_events_queued_in_it(bare: Bare) -> None:
    """Kafka's clearAndPut(Expire): what was queued before the expiry is not handled after."""
    bare.register(0)
    bare.elect()
    controller = bare.controller
    for event in (ev.BrokerChange(), ev.TopicChange(), ev.ZkPartitionReassignment(created=True)):
        controller.put(event)
    controller.put(ev.ShutdownEventThread())
    session = controller.zk.session_id
    controller.watches.on_session_state("LOST")
    assert list(controller.events.queue.queue) == [ev.ShutdownEventThread(), ev.Expire(session)]


# ---- one write path --------------------------------------------------------------------------

ZK_WRITES = {"create", "set", "delete", "ensure_path", "multi", "multi_many"}
CONTROLLER_DIR = Path(kafka_controller.__file__).parent
# The writer, and the election, whose writes are the fence itself (Kafka's
# registerControllerAndIncrementControllerEpoch checks /controller_epoch's version on its own).
WRITERS = {"zk_writer.py", "leadership.py"}


def zk_writes(path: Path) -> list[str]:
    """`<receiver>.<write>(...)` calls on a ZooKeeper client (`zk`, `self.zk`, `self._zk`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        receiver = node.func.value
        name = receiver.attr if isinstance(receiver, ast.Attribute) else getattr(receiver, "id", "")
        if name in ("zk", "_zk") and node.func.attr in ZK_WRITES:
            found.append(f"{path.name}:{node.lineno} {name}.{node.func.attr}")
    return found


def test_every_controller_write_goes_through_the_writer() -> None:
    modules = sorted(CONTROLLER_DIR.glob("*.py"))
    assert {p.name for p in modules} >= WRITERS | {"kafka_controller.py"}
    assert [w for p in modules if p.name not in WRITERS for w in zk_writes(p)] == []
    assert zk_writes(CONTROLLER_DIR / "zk_writer.py")  # the check sees writes where they are


def test_without_the_writers_fence_a_deposed_controller_writes(
    bare: Bare, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first test of this module, with the fence removed from the one place it lives.
    monkeypatch.setattr(ControllerZkWriter, "fence", lambda _self: None)
    bare.register(0)
    bare.elect()
    depose(bare)
    admin.create_topic_with_assignment(bare.zk, "t", {0: [0]})
    bare.dispatch(ev.TopicChange())
    node = read(bare, znodes.topic_path("t"))
    assert znodes.decode_topic(node.path, node.data).topic_id is not None
    assert bare.controller.is_active
