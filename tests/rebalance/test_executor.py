"""The executor on a real ZooKeeper with the controller and dev brokers: batches, throttles set
while moving and cleared after, preferred leaders elected, a stop after the batch in flight, a
restart that resumes, and a plan the cluster outgrew refused."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from kto_testing import Waiter, eventually

from kafka_topic_operator.controller.kafka_controller import ControllerConfig, KafkaController
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.execution import steps as ex
from kafka_topic_operator.rebalance.execution.executor import Executor, Report
from kafka_topic_operator.rebalance.execution.zookeeper import ZooKeeperCluster, read_now
from kafka_topic_operator.rebalance.results.summary import PartitionMove
from kafka_topic_operator.zk import admin, znodes
from kafka_topic_operator.zk.client import ZkClient
from kto_dev.devbroker.broker import BrokerConfig, DevBroker

pytestmark = [pytest.mark.zookeeper]

THROTTLE_KEYS = {ex.LEADER_THROTTLED_REPLICAS, ex.FOLLOWER_THROTTLED_REPLICAS}
RATE_KEYS = {ex.LEADER_THROTTLED_RATE, ex.FOLLOWER_THROTTLED_RATE}


class Brokers:
    def __init__(self, connect: str, root: Path) -> None:
        self.connect, self.root = connect, root
        self.running: dict[int, DevBroker] = {}

    def start(self, broker_id: int) -> None:
        config = BrokerConfig(self.connect, broker_id, self.root / f"broker-{broker_id}",
                              session_timeout=4.0)  # fmt: skip
        self.running[broker_id] = broker = DevBroker(config)
        broker.start()

    def has_log(self, broker_id: int, tp: TopicPartition) -> bool:
        return (self.root / f"broker-{broker_id}" / f"{tp.topic}-{tp.partition}").is_dir()


@pytest.fixture
def brokers(zk_chroot: str, tmp_path: Path) -> Iterator[Brokers]:
    running = Brokers(zk_chroot, tmp_path)
    for b in (0, 1, 2):
        running.start(b)
    controller = KafkaController(
        ControllerConfig(
            zk_chroot, broker_id=100, session_timeout=4.0, auto_leader_rebalance_enable=False
        )
    )
    controller.start()
    yield running
    for broker in running.running.values():
        broker.shutdown(controlled=False)
    controller.stop()


def online(zk: ZkClient, topic: str, partitions: int) -> None:
    def all_led() -> bool:
        now = read_now(
            zk, [PartitionMove(TopicPartition(topic, p), (), ()) for p in range(partitions)]
        )
        return all(now.leaders.get(TopicPartition(topic, p), -1) >= 0 for p in range(partitions))

    eventually(all_led, f"{topic} online")


def make_plan(zk: ZkClient) -> list[PartitionMove]:
    """Six partitions on brokers 0-2: four move a replica to broker 3 (two of them also a new
    preferred leader), one only changes its preferred leader, one stays."""
    assignment = {0: [0, 1], 1: [1, 2], 2: [2, 0], 3: [0, 2], 4: [1, 0], 5: [2, 1]}
    admin.create_topic_with_assignment(zk, "orders", assignment)
    online(zk, "orders", 6)
    after = {0: (0, 3), 1: (3, 2), 2: (3, 0), 3: (0, 3), 4: (0, 1), 5: (2, 1)}
    return [
        PartitionMove(TopicPartition("orders", p), tuple(assignment[p]), after[p])
        for p in range(6)
        if tuple(assignment[p]) != after[p]
    ]


def test_a_plan_is_carried_out_with_throttles_and_preferred_leaders(
    zk: ZkClient, brokers: Brokers
) -> None:
    plan = make_plan(zk)
    # Broker 3 is not up yet: the first batch waits on it, so its throttles can be seen.
    reports: list[Report] = []
    executor = Executor(
        ZooKeeperCluster(zk), plan, ex.Limits(partitions_per_broker=2), throttle=1_000_000
    )
    result: list[bool] = []
    worker = threading.Thread(target=lambda: result.append(executor.run(report=reports.append)))
    worker.start()
    Waiter(zk).exists(znodes.REASSIGN_PARTITIONS_PATH)
    config = admin.topic_config(zk, "orders")
    assert config[ex.LEADER_THROTTLED_REPLICAS] == "0:0,0:1,1:1,1:2"
    assert config[ex.FOLLOWER_THROTTLED_REPLICAS] == "0:3,1:3"
    for b in (0, 1, 2, 3):
        assert {k: v for k, v in admin.broker_config(zk, b).items() if k in RATE_KEYS} == {
            ex.LEADER_THROTTLED_RATE: "1000000",
            ex.FOLLOWER_THROTTLED_RATE: "1000000",
        }
    brokers.start(3)
    worker.join(60)
    assert result == [True], reports[-3:]

    now = read_now(zk, plan)
    for m in plan:
        assert now.assignment[m.partition] == m.after
        assert now.leaders[m.partition] == m.after[0]
        for b in m.after:
            eventually(lambda m=m, b=b: brokers.has_log(b, m.partition), f"{m.partition} on {b}")
    assert not THROTTLE_KEYS & set(admin.topic_config(zk, "orders"))
    assert all(not RATE_KEYS & set(admin.broker_config(zk, b)) for b in range(4))
    phases = [r.step.phase for r in reports if not r.step.wait]
    # 3 receives at most two moves per batch: [p0, p1], [p2], then the reorder, then elections.
    assert phases == [ex.Phase.REPLICAS, ex.Phase.REPLICAS, ex.Phase.REORDERS, ex.Phase.LEADERS,
                      ex.Phase.DONE]  # fmt: skip
    assert reports[-1].progress.partitions_done == len(plan)


def test_stop_halts_after_the_batch_in_flight_and_a_new_executor_resumes(
    zk: ZkClient, brokers: Brokers
) -> None:
    brokers.start(3)
    plan = make_plan(zk)
    limits = ex.Limits(partitions_per_broker=1)
    first = Executor(ZooKeeperCluster(zk), plan, limits, throttle=5_000_000)
    assert first.run(stop=lambda: first.batches >= 1) is False
    now = read_now(zk, plan)
    assert ex.progress(plan, now).partitions_done == 1  # the one batch, done before stopping
    assert not now.reassigning and not zk.exists(znodes.REASSIGN_PARTITIONS_PATH)
    assert not THROTTLE_KEYS & set(admin.topic_config(zk, "orders"))
    assert Executor(ZooKeeperCluster(zk), plan, limits).run() is True
    now = read_now(zk, plan)
    assert all(now.assignment[m.partition] == m.after for m in plan)


def test_a_plan_the_cluster_outgrew_is_refused_before_anything_moves(
    zk: ZkClient, brokers: Brokers
) -> None:
    brokers.start(3)
    plan = make_plan(zk)
    admin.reassign_partitions(zk, {TopicPartition("orders", 1): [2, 0]})
    Waiter(zk).exists(znodes.REASSIGN_PARTITIONS_PATH, present=False)
    with pytest.raises(ex.PlanOutdated, match="orders-1"):
        Executor(ZooKeeperCluster(zk), plan, ex.Limits()).run()
    assert read_now(zk, plan).assignment[TopicPartition("orders", 0)] == (0, 1)


def test_abandoning_returns_at_once_and_leaves_the_batch_and_its_throttles(
    zk: ZkClient, brokers: Brokers
) -> None:
    plan = make_plan(zk)  # broker 3 is not up: the first batch cannot complete
    gone = threading.Event()
    executor = Executor(
        ZooKeeperCluster(zk), plan, ex.Limits(partitions_per_broker=2), throttle=1_000_000
    )
    result: list[bool] = []

    def run() -> None:
        result.append(executor.run(abandon=gone.is_set))

    worker = threading.Thread(target=run)
    worker.start()
    Waiter(zk).exists(znodes.REASSIGN_PARTITIONS_PATH)
    gone.set()
    worker.join(10)
    assert result == [False]
    assert zk.exists(znodes.REASSIGN_PARTITIONS_PATH)  # the controller carries on with it
    assert ex.FOLLOWER_THROTTLED_REPLICAS in admin.topic_config(zk, "orders")
    brokers.start(3)
    assert Executor(
        ZooKeeperCluster(zk), plan, ex.Limits(partitions_per_broker=2), throttle=1_000_000
    ).run()
    assert not THROTTLE_KEYS & set(admin.topic_config(zk, "orders"))


def test_a_move_that_ended_before_the_wait_is_not_waited_for(zk: ZkClient) -> None:
    """A move made without /admin/reassign_partitions (Kafka's Admin API, KIP-455) shows in its
    topic znode. Read moving, and ended (the znode rewritten by the controller) before the
    executor waits: the wait ends at once, where waiting for the znode's next change would
    never end."""
    moving = {0: ReplicaAssignment((1, 0, 2), adding_replicas=(1,), removing_replicas=(2,)),
              1: ReplicaAssignment((1, 2))}  # fmt: skip
    zk.create(znodes.topic_path("orders"), znodes.encode_topic(moving), makepath=True)
    tp = TopicPartition("orders", 0)
    now = ex.ClusterNow({tp: (1, 0, 2)}, {tp: 0}, frozenset({tp}), election_pending=False)
    cluster = ZooKeeperCluster(zk)
    assert cluster.wait_in_flight(now, 0.2) is False  # still moving

    ended = {0: ReplicaAssignment((1, 0)), 1: ReplicaAssignment((1, 2))}
    zk.set(znodes.topic_path("orders"), znodes.encode_topic(ended))
    assert cluster.wait_in_flight(now, 30.0) is True
    # And a wait already under way ends when the move does.
    zk.set(znodes.topic_path("orders"), znodes.encode_topic(moving))
    done = threading.Timer(0.2, lambda: zk.set(znodes.topic_path("orders"),
                                               znodes.encode_topic(ended)))  # fmt: skip
    done.start()
    assert cluster.wait_in_flight(now, 30.0) is True
    done.join()
