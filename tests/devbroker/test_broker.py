"""The dev broker in-process against a real ZooKeeper: registration, the request queue answered
in order and atomically, and a leader's ISR expansion, with the test playing the controller."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kto_testing import eventually, expire_session

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.broker_channel import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    PartitionError,
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataRequest,
    decode_fetching,
    encode_fetching,
    fetching_path,
    fetching_root,
)
from kafka_topic_operator.kafka.brokers import BrokerInfo, EndPoint, SecurityProtocol
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import Create, ZkClient
from kto_dev.devbroker.broker import BrokerConfig, BrokerRegistrationError, DevBroker
from kto_dev.devbroker.log_dirs import read_status

from .conftest import PlayedController, Waiter

pytestmark = pytest.mark.zookeeper

T0 = TopicPartition("t", 0)
TOPIC_ID = "q1s3mTg9RqSd3Y1y6G3l1w"
StartBroker = Callable[..., DevBroker]


def status_with(broker: DevBroker, condition: Callable[[Any], bool]) -> dict[str, Any]:
    """The status file once it shows `condition`: the broker rewrites it once requests pause
    (STATUS_QUIET), at most every STATUS_INTERVAL."""

    def current() -> dict[str, Any] | None:
        status = read_status(broker.log_dir.path)
        return status if status is not None and condition(status) else None

    return eventually(current, "the broker's status file")


@pytest.fixture
def start_broker(zk_chroot: str, tmp_path: Path) -> Iterator[StartBroker]:
    started: list[DevBroker] = []

    def start(broker_id: int = 1, **settings: object) -> DevBroker:
        config = BrokerConfig(
            zookeeper=zk_chroot,
            broker_id=broker_id,
            log_dir=tmp_path / f"broker-{broker_id}-{len(started)}",
            session_timeout=4.0,
            **settings,  # type: ignore[arg-type]
        )
        broker = DevBroker(config)
        broker.start()
        started.append(broker)
        return broker

    yield start
    for broker in started:
        if broker.status().get("state") != "stopped":
            broker.shutdown(controlled=False)


def lai(
    correlation_id: int,
    *states: LeaderAndIsrPartitionState,
    controller_epoch: int = 1,
    broker_epoch: int = -1,
) -> LeaderAndIsrRequest:
    return LeaderAndIsrRequest(
        0, controller_epoch, broker_epoch, states, {"t": TOPIC_ID}, correlation_id=correlation_id
    )


def state(
    partition: int = 0,
    leader: int = 1,
    leader_epoch: int = 0,
    isr: tuple[int, ...] = (1,),
    replicas: tuple[int, ...] = (1,),
    partition_epoch: int = 0,
) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState(
        "t", partition, 1, leader, leader_epoch, isr, partition_epoch, replicas, is_new=True
    )


def delete_t0(correlation_id: int, controller_epoch: int = 1) -> StopReplicaRequest:
    return StopReplicaRequest(
        0,
        controller_epoch,
        -1,
        (StopReplicaPartitionState("t", 0, -2, True),),
        correlation_id=correlation_id,
    )


# ---- registration -----------------------------------------------------------------------------


def test_registration_is_an_ephemeral_v5_registration(
    start_broker: StartBroker, zk: ZkClient
) -> None:
    broker = start_broker(1, rack="zone-a", host="kafka-1", port=9093)
    node = zk.get("/brokers/ids/1")
    assert node is not None
    assert node.ephemeral_owner == broker.zk.session_id != 0
    assert broker.broker_epoch == node.czxid
    info = znodes.decode_broker(node.path, node.data)
    assert info.version == 5 and info.id == 1 and info.rack == "zone-a" and info.jmx_port == -1
    assert info.endpoints == (EndPoint("PLAINTEXT", "kafka-1", 9093, SecurityProtocol.PLAINTEXT),)
    raw = json.loads(node.data)
    assert isinstance(raw["timestamp"], str) and int(raw["timestamp"]) > 0
    assert raw["features"] == {} and raw["host"] == "kafka-1" and raw["port"] == 9093
    for path in (
        *znodes.PERSISTENT_ZK_PATHS,
        bc.requests_path(1),
        bc.responses_path(1),
        bc.CONTROLLED_SHUTDOWN_PATH,
    ):
        assert zk.exists(path), path
    cluster = zk.get(znodes.CLUSTER_ID_PATH)
    assert cluster is not None
    cluster_id = znodes.decode_cluster_id(cluster.path, cluster.data)
    meta = broker.log_dir.read_meta_properties()
    assert meta == {"version": "0", "broker.id": "1", "cluster.id": cluster_id}
    status = read_status(broker.log_dir.path)
    assert status is not None
    assert (status["state"], status["broker_id"], status["broker_epoch"]) == (
        "running",
        1,
        node.czxid,
    )


def test_a_live_registration_refuses_the_same_id(start_broker: StartBroker, zk: ZkClient) -> None:
    first = start_broker(1)
    with pytest.raises(BrokerRegistrationError) as refused:
        start_broker(1)
    message = str(refused.value)
    assert message.startswith("Error while creating ephemeral at /brokers/ids/1, node already")
    assert f"owner '{first.zk.session_id}' does not match current session" in message
    node = zk.get("/brokers/ids/1")
    assert node is not None and node.ephemeral_owner == first.zk.session_id


def test_leaving_removes_the_registration_at_once(start_broker: StartBroker, zk: ZkClient) -> None:
    broker = start_broker(1)
    broker.shutdown(controlled=False)
    assert not zk.exists("/brokers/ids/1")
    status = read_status(broker.log_dir.path)
    assert status is not None and status["state"] == "stopped"


# ---- requests ---------------------------------------------------------------------------------


def test_leader_and_isr_creates_the_log_and_answers(
    start_broker: StartBroker, controller: PlayedController, zk: ZkClient
) -> None:
    broker = start_broker(1)
    request = lai(
        7,
        state(0, leader=1, replicas=(1, 2)),
        state(1, leader=2, isr=(2,), replicas=(2, 1)),
        broker_epoch=broker.broker_epoch,
    )
    response = controller.call(1, request)
    assert response == LeaderAndIsrResponse(
        "NONE", (PartitionError("t", 0, "NONE"), PartitionError("t", 1, "NONE")), correlation_id=7
    )
    for partition in (0, 1):
        directory = broker.log_dir.path / f"t-{partition}"
        assert sorted(p.name for p in directory.iterdir()) == [
            "00000000000000000000.index",
            "00000000000000000000.log",
            "00000000000000000000.timeindex",
            "partition.metadata",
        ]
        assert (directory / "partition.metadata").read_text() == f"version: 0\ntopic_id: {TOPIC_ID}"
    assert zk.children(bc.requests_path(1)) == []
    status = status_with(broker, lambda s: len(s["partitions"]) == 2)
    partitions = status["partitions"]
    assert isinstance(partitions, list)
    assert [(p["partition"], p["role"]) for p in partitions] == [(0, "leader"), (1, "follower")]
    assert status["logs"] == ["t-0", "t-1"]


def test_stop_replica_with_delete_removes_the_partition_directory(
    start_broker: StartBroker, controller: PlayedController
) -> None:
    broker = start_broker(1)
    controller.call(1, lai(1, state(0)))
    assert (broker.log_dir.path / "t-0").is_dir()
    response = controller.call(1, delete_t0(2))
    assert response == StopReplicaResponse(
        "NONE", (PartitionError("t", 0, "NONE"),), correlation_id=2
    )
    assert list(broker.log_dir.path.glob("t-0*")) == []
    status_with(broker, lambda s: s["partitions"] == [] and s["logs"] == [])


def test_a_stale_controller_epoch_is_rejected(
    start_broker: StartBroker, controller: PlayedController
) -> None:
    broker = start_broker(1)
    assert controller.call(1, lai(1, state(0), controller_epoch=5)).error == "NONE"
    stale = controller.call(1, lai(2, state(1), controller_epoch=4))
    assert stale == LeaderAndIsrResponse(
        "STALE_CONTROLLER_EPOCH",
        (PartitionError("t", 1, "STALE_CONTROLLER_EPOCH"),),
        correlation_id=2,
    )
    assert not (broker.log_dir.path / "t-1").exists()
    stale_stop = controller.call(1, delete_t0(3, controller_epoch=4))
    assert stale_stop == StopReplicaResponse("STALE_CONTROLLER_EPOCH", (), correlation_id=3)
    assert (broker.log_dir.path / "t-0").is_dir()
    stale_metadata = controller.call(1, UpdateMetadataRequest(0, 4, -1, (), correlation_id=4))
    assert stale_metadata.error == "STALE_CONTROLLER_EPOCH"


def test_a_request_for_an_earlier_registration_is_stale(
    start_broker: StartBroker, controller: PlayedController
) -> None:
    broker = start_broker(1)
    response = controller.call(1, lai(1, state(0), broker_epoch=broker.broker_epoch - 1))
    assert response.error == "STALE_BROKER_EPOCH"
    assert not (broker.log_dir.path / "t-0").exists()


def test_the_answer_and_the_dequeue_are_one_transaction(
    start_broker: StartBroker, controller: PlayedController, zk: ZkClient
) -> None:
    start_broker(1)
    controller.call(1, lai(1, state(0)))
    (name,) = zk.children(bc.responses_path(1)) or []
    response_node = zk.raw.exists(f"{bc.responses_path(1)}/{name}")
    requests_dir = zk.raw.exists(bc.requests_path(1))
    # A multi-op commits as one zxid: the response's creation is the queue's last child change.
    assert response_node.czxid == requests_dir.pzxid
    assert zk.children(bc.requests_path(1)) == []


def test_queued_requests_are_answered_in_sequence_order(
    zk: ZkClient, start_broker: StartBroker, controller: PlayedController
) -> None:
    # Queued before the broker starts, in one transaction, as the controller's batch would be.
    zk.ensure_path(bc.requests_path(1))
    batch: list[bc.Request] = [lai(1, state(0)), delete_t0(2), lai(3, state(0, leader_epoch=1))]
    zk.multi([Create(bc.request_prefix(1), bc.encode_request(r), sequence=True) for r in batch])
    broker = start_broker(1)
    controller.waiter.children(bc.responses_path(1), lambda names: len(names) == 3)
    responses = sorted(controller.responses(1), key=lambda r: r.correlation_id)
    assert [(r.correlation_id, r.error) for r in responses] == [
        (1, "NONE"),
        (2, "NONE"),
        (3, "NONE"),
    ]
    # Applied in order: created, deleted, created again at leader epoch 1.
    assert (broker.log_dir.path / "t-0").is_dir()
    assert broker.replica_manager.partitions[T0].leader_epoch == 1


def test_a_malformed_request_is_answered_or_dropped(
    start_broker: StartBroker, controller: PlayedController, zk: ZkClient, waiter: Waiter
) -> None:
    start_broker(1)
    zk.create(bc.request_prefix(1), b"not json", sequence=True)
    bad_body = {"version": 1, "type": "StopReplica", "correlation_id": 5, "partition_states": 3}
    zk.create(bc.request_prefix(1), json.dumps(bad_body).encode(), sequence=True)
    assert controller.await_response(1, 5) == StopReplicaResponse(
        "INVALID_REQUEST", (), correlation_id=5
    )
    assert controller.call(1, lai(6, state(0))).error == "NONE"
    waiter.children(bc.requests_path(1), lambda names: names == [])
    assert sorted(r.correlation_id for r in controller.responses(1)) == [5, 6]


# ---- ISR expansion ----------------------------------------------------------------------------

STATE_PATH = "/brokers/topics/t/partitions/0/state"


def write_state(zk: ZkClient, isr: tuple[int, ...], leader_epoch: int = 0) -> None:
    data = znodes.encode_partition_state(
        LeaderIsrAndControllerEpoch(LeaderAndIsr(1, isr, leader_epoch), 1)
    )
    if zk.exists(STATE_PATH):
        zk.set(STATE_PATH, data)
    else:
        zk.create(STATE_PATH, data, makepath=True)


def read_state(zk: ZkClient) -> LeaderIsrAndControllerEpoch:
    node = zk.get(STATE_PATH)
    assert node is not None
    return znodes.decode_partition_state(node.path, node.data, node.version)


def register_follower(zk: ZkClient, broker_id: int = 2) -> None:
    info = BrokerInfo(broker_id, (), timestamp=1)
    zk.ensure_path(znodes.BROKER_IDS_PATH)
    zk.create(znodes.broker_path(broker_id), znodes.encode_broker(info), ephemeral=True)


def follow(zk: ZkClient, leader_epoch: int, follower: int = 2, leader: int = 1) -> None:
    """What a follower publishes once a LeaderAndIsr made it one: t-0 at `leader_epoch`."""
    path = fetching_path(follower, leader)
    data = encode_fetching({T0.topic: {T0.partition: leader_epoch}})
    if zk.exists(path):
        zk.set(path, data)
    else:
        zk.create(path, data, makepath=True)


def passes_over(controller: PlayedController) -> None:
    """One worker pass answers the queue, then looks at the live brokers and what they follow
    (changed before these requests were sent); the answer to a second request proves that pass
    is over."""
    for correlation_id in (2, 3):
        request = UpdateMetadataRequest(0, 1, -1, (), correlation_id=correlation_id)
        assert controller.call(1, request).error == "NONE"


def isr_notifications(zk: ZkClient) -> list[frozenset[TopicPartition]]:
    names = zk.children(znodes.ISR_CHANGE_NOTIFICATION_PATH) or []
    nodes = zk.get_many(f"{znodes.ISR_CHANGE_NOTIFICATION_PATH}/{n}" for n in names)
    return [znodes.decode_isr_change(n.path, n.data) for n in nodes if n is not None]


def test_a_leader_adds_a_follower_that_comes_alive(
    start_broker: StartBroker, controller: PlayedController, zk: ZkClient, waiter: Waiter
) -> None:
    broker = start_broker(1)
    write_state(zk, isr=(1,), leader_epoch=3)
    controller.call(1, lai(1, state(0, leader_epoch=3, replicas=(1, 2), partition_epoch=0)))
    assert read_state(zk).leader_and_isr.isr == (1,)  # broker 2 is not alive yet
    assert isr_notifications(zk) == []

    register_follower(zk, 2)
    follow(zk, leader_epoch=2)  # an older leader epoch: its fetches would be fenced
    passes_over(controller)
    assert read_state(zk).leader_and_isr.isr == (1,)
    follow(zk, leader_epoch=3)
    waiter.children(znodes.ISR_CHANGE_NOTIFICATION_PATH, lambda names: len(names) == 1)
    assert isr_notifications(zk) == [frozenset({T0})]
    written = read_state(zk)
    # Only the ISR and the zkVersion move; the leader epoch and controller epoch stay.
    assert written.leader_and_isr == LeaderAndIsr(1, (1, 2), 3, partition_epoch=1)
    assert written.controller_epoch == 1
    status = status_with(broker, lambda s: [p["isr"] for p in s["partitions"]] == [[1, 2]])
    (hosted,) = status["partitions"]
    assert (hosted["isr"], hosted["partition_epoch"]) == ([1, 2], 1)


def test_a_follower_alive_from_the_start_joins_at_once(
    start_broker: StartBroker, controller: PlayedController, zk: ZkClient, waiter: Waiter
) -> None:
    register_follower(zk, 2)
    follow(zk, leader_epoch=0)
    start_broker(1)
    write_state(zk, isr=(1,))
    controller.call(1, lai(1, state(0, replicas=(1, 2, 3))))
    waiter.children(znodes.ISR_CHANGE_NOTIFICATION_PATH, lambda names: len(names) == 1)
    assert read_state(zk).leader_and_isr.isr == (1, 2)


def test_a_moved_partition_epoch_is_reread_and_retried(
    start_broker: StartBroker, controller: PlayedController, zk: ZkClient, waiter: Waiter
) -> None:
    start_broker(1)
    write_state(zk, isr=(1,), leader_epoch=2)
    controller.call(1, lai(1, state(0, leader_epoch=2, replicas=(1, 2), partition_epoch=0)))
    write_state(zk, isr=(1,), leader_epoch=2)  # zkVersion 1: the broker still expects 0
    register_follower(zk, 2)
    follow(zk, leader_epoch=2)
    waiter.children(znodes.ISR_CHANGE_NOTIFICATION_PATH, lambda names: len(names) == 1)
    assert read_state(zk).leader_and_isr == LeaderAndIsr(1, (1, 2), 2, partition_epoch=2)


def test_a_follower_publishes_what_it_follows_from_each_leader(
    start_broker: StartBroker, controller: PlayedController, zk: ZkClient
) -> None:
    stale = fetching_path(1, 3)  # from an earlier run of broker 1
    zk.create(stale, encode_fetching({"t": {5: 1}}), makepath=True)
    start_broker(1)
    assert zk.children(fetching_root(1)) == []  # before it registered
    followed = state(0, leader=2, leader_epoch=4, isr=(2, 1), replicas=(2, 1))
    led = state(1, leader=1, replicas=(1, 2))
    assert controller.call(1, lai(1, followed, led)).error == "NONE"
    node = zk.get(fetching_path(1, 2))
    assert node is not None and decode_fetching(node.path, node.data) == {"t": {0: 4}}
    # Led now: followed from broker 2 no more.
    assert (
        controller.call(1, lai(2, state(0, leader=1, leader_epoch=5, replicas=(2, 1)))).error
        == "NONE"
    )
    node = zk.get(fetching_path(1, 2))
    assert node is not None and decode_fetching(node.path, node.data) == {}


def test_no_write_once_the_leader_epoch_moved(
    start_broker: StartBroker, controller: PlayedController, zk: ZkClient
) -> None:
    broker = start_broker(1)
    write_state(zk, isr=(1,), leader_epoch=2)
    controller.call(1, lai(1, state(0, leader_epoch=2, replicas=(1, 2), partition_epoch=0)))
    write_state(zk, isr=(1,), leader_epoch=3)  # a new leadership decision the broker has not seen
    register_follower(zk, 2)
    follow(zk, leader_epoch=2)
    passes_over(controller)
    assert read_state(zk).leader_and_isr == LeaderAndIsr(1, (1,), 3, partition_epoch=1)
    assert isr_notifications(zk) == []
    assert broker.replica_manager.partitions[T0].isr == (1,)


# ---- session expiry ---------------------------------------------------------------------------


def test_an_expired_session_registers_again_with_a_new_broker_epoch(
    start_broker: StartBroker, controller: PlayedController, zk: ZkClient, waiter: Waiter
) -> None:
    broker = start_broker(1)
    old_epoch = broker.broker_epoch
    expire_session(broker.zk)

    def read(watch: Callable[[object], None]) -> int | None:
        if not zk.exists("/brokers/ids/1", watch=watch):
            return None
        node = zk.get("/brokers/ids/1")
        return node.czxid if node is not None else None

    new_epoch = waiter.until(read, lambda czxid: czxid not in (None, old_epoch), "re-registration")
    stale = controller.call(1, lai(1, state(0), broker_epoch=old_epoch))
    assert stale.error == "STALE_BROKER_EPOCH"
    assert new_epoch is not None
    assert controller.call(1, lai(2, state(0), broker_epoch=new_epoch)).error == "NONE"
    assert broker.broker_epoch == new_epoch


# ---- the metadata it publishes ------------------------------------------------------------------


def test_the_metadata_a_client_would_be_told_is_published_once_applied(
    start_broker: StartBroker, controller: PlayedController, zk: ZkClient
) -> None:
    """A dev broker has no Kafka listener: the operator's Ready reads this instead."""
    start_broker(1)
    path = bc.metadata_path(1)

    def update(correlation_id: int, *states: bc.UpdateMetadataPartitionState) -> None:
        request = UpdateMetadataRequest(0, 1, -1, states, correlation_id=correlation_id)
        assert controller.call(1, request).error == "NONE"

    def published() -> dict[str, dict[int, int]] | None:
        node = zk.get(path)
        return None if node is None else bc.decode_metadata_leaders(path, node.data)

    assert published() == {}  # from before it registered: nothing applied, no topic known
    led = bc.UpdateMetadataPartitionState("t", 0, 1, 1, 0, (1,), 0, (1,))
    update(2, led, led._replace(partition=1, leader=-1))
    assert eventually(published, "the metadata published") == {"t": {0: 1, 1: -1}}
    update(3, led._replace(partition=1, leader=1))
    eventually(lambda: published() == {"t": {0: 1, 1: 1}}, "the metadata published again")
