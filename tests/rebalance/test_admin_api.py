"""Carrying out a plan through Kafka's Admin API (`execution.admin_api`), on a KRaft cluster
simulated as the Admin API shows it: the throttles' configs and values (those of the ZooKeeper
path), their removal, reassignments polled until the controller lists them no more, waits that
end when told to stop, refused requests, elections asked for again, brokers' metadata lagging
the controller's, and brokers that are down. On a real KRaft cluster:
tests/kafka_e2e/test_rebalance_kraft.py.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import pytest

from kafka_topic_operator.kafka.brokers import BrokerInfo
from kafka_topic_operator.kafka.errors import ReassignmentInProgressException
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.snapshot import (
    ClusterSnapshot,
    Expected,
    PartitionSnapshot,
    TopicSnapshot,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.execution import steps as ex
from kafka_topic_operator.rebalance.execution.admin_api import (
    RATE_KEYS,
    REPLICA_KEYS,
    AdminApiCluster,
    ConfigKind,
    broker_throttles,
    removals,
    topic_throttles,
)
from kafka_topic_operator.rebalance.execution.cluster import RebalanceCluster
from kafka_topic_operator.rebalance.execution.executor import Executor, Report
from kafka_topic_operator.rebalance.results.summary import PartitionMove

FAST = {"interval": 0.01, "metadata_lag": 0.5, "election_retry": 0.05}


def tp(partition: int, topic: str = "orders") -> TopicPartition:
    return TopicPartition(topic, partition)


class FakeKafka:
    """What the Admin API answers: reassignments the controller completes after `polls`
    listings each, preferred elections, dynamic configs, live brokers, and metadata that shows
    `stale` partitions' old view for a number of reads."""

    def __init__(
        self, assignment: Mapping[TopicPartition, Sequence[int]], brokers: Iterable[int]
    ) -> None:
        self.replicas = {p: tuple(r) for p, r in assignment.items()}
        self.leaders = {p: r[0] for p, r in self.replicas.items()}
        self.live = set(brokers)
        self.moving: dict[TopicPartition, tuple[tuple[int, ...], int]] = {}  # target, polls left
        self.polls = 2
        self.configs: dict[str, dict[str, dict[str, str]]] = {"topic": {}, "broker": {}}
        self.stale: dict[TopicPartition, tuple[tuple[int, ...], int]] = {}  # shown, reads left
        self.not_electable: set[TopicPartition] = set()
        self.calls: list[tuple[str, Any]] = []
        self.elections: list[float] = []  # when each was asked for (monotonic)
        self.lock = threading.Lock()
        self.called = threading.Condition(self.lock)

    # ---- the controller --------------------------------------------------------------------

    def _complete(self, partition: TopicPartition) -> None:
        target, _ = self.moving.pop(partition)
        if self.leaders[partition] not in target:
            self.leaders[partition] = target[0]
        self.replicas[partition] = target

    # ---- AdminApi ---------------------------------------------------------------------------

    def topic_names(self) -> list[str]:
        return sorted({p.topic for p in self.replicas})

    def read(
        self, topics: Iterable[str], *, list_topics: bool, expected: Expected | None = None
    ) -> ClusterSnapshot:
        with self.lock:
            wanted = set(topics)
            found: dict[str, dict[int, PartitionSnapshot]] = {}
            for p, replicas in self.replicas.items():
                if p.topic not in wanted:
                    continue
                if p in self.moving:
                    assignment = ReplicaAssignment.from_origin_and_target(
                        replicas, self.moving[p][0]
                    )
                elif p in self.stale:
                    shown, left = self.stale[p]
                    assignment = ReplicaAssignment(shown)
                    if left <= 1:
                        del self.stale[p]
                    else:
                        self.stale[p] = (shown, left - 1)
                else:
                    assignment = ReplicaAssignment(replicas)
                state = LeaderIsrAndControllerEpoch(
                    LeaderAndIsr(self.leaders[p], assignment.replicas), -1
                )
                found.setdefault(p.topic, {})[p.partition] = PartitionSnapshot(
                    p.partition, assignment, state
                )
            return ClusterSnapshot(
                brokers={b: BrokerInfo(b, ()) for b in sorted(self.live)},
                topics={t: TopicSnapshot(t, None, ps) for t, ps in found.items()},
                pending_reassignments={p: target for p, (target, _) in self.moving.items()},
                topic_names=frozenset(self.topic_names() if list_topics else found),
            )

    def reassign(self, targets: Mapping[TopicPartition, Sequence[int]]) -> None:
        with self.lock:
            self.calls.append(("reassign", dict(targets)))
            if any(p in self.moving for p in targets):
                raise ReassignmentInProgressException("There is an existing assignment running.")
            for p, target in targets.items():
                if tuple(target) == self.replicas[p]:
                    continue
                if set(target) == set(self.replicas[p]):
                    self.replicas[p] = tuple(target)  # a reorder: at once
                else:
                    self.moving[p] = (tuple(target), self.polls)

    def list_reassignments(self) -> dict[TopicPartition, ReplicaAssignment]:
        with self.lock:
            self.calls.append(("list", None))
            listed = {
                p: ReplicaAssignment.from_origin_and_target(self.replicas[p], target)
                for p, (target, _) in self.moving.items()
            }
            for p, (target, left) in list(self.moving.items()):
                if left <= 1:
                    self._complete(p)
                else:
                    self.moving[p] = (target, left - 1)
            return listed

    def elect_preferred(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, Exception | None]:
        with self.lock:
            asked = list(partitions)
            self.calls.append(("elect", asked))
            self.elections.append(time.monotonic())
            self.called.notify_all()
            outcomes: dict[TopicPartition, Exception | None] = {}
            for p in asked:
                if p in self.not_electable:
                    outcomes[p] = RuntimeError("PreferredLeaderNotAvailableException")
                else:
                    self.leaders[p] = self.replicas[p][0]
                    outcomes[p] = None
            return outcomes

    def dynamic_configs(
        self, kind: ConfigKind, names: Iterable[str], keys: Collection[str]
    ) -> dict[str, dict[str, str]]:
        with self.lock:
            named = list(names)
            for name in named:
                if kind == "broker" and int(name) not in self.live:
                    raise AssertionError(f"broker {name} is down: it cannot be asked")
            return {
                name: {k: v for k, v in self.configs[kind].get(name, {}).items() if k in set(keys)}
                for name in named
            }

    def alter_configs(
        self, kind: ConfigKind, changes: Mapping[str, Mapping[str, str | None]]
    ) -> None:
        with self.lock:
            self.calls.append(("alter " + kind, {n: dict(c) for n, c in changes.items()}))
            for name, ops in changes.items():
                if kind == "broker" and int(name) not in self.live:
                    raise AssertionError(f"broker {name} is down: its configs cannot be changed")
                config = self.configs[kind].setdefault(name, {})
                for key, value in ops.items():
                    if value is None:
                        config.pop(key, None)
                    else:
                        config[key] = value

    # ---- what the tests look at ----------------------------------------------------------------

    def throttles(self) -> dict[str, dict[str, dict[str, str]]]:
        keys = {*REPLICA_KEYS, *RATE_KEYS}
        found = {
            kind: {n: {k: v for k, v in c.items() if k in keys} for n, c in by.items()}
            for kind, by in self.configs.items()
        }
        return {kind: {n: c for n, c in by.items() if c} for kind, by in found.items()}


ASSIGNMENT = {0: (0, 1), 1: (1, 2), 2: (2, 0), 3: (0, 2), 4: (1, 0), 5: (2, 1)}
AFTER = {0: (0, 3), 1: (3, 2), 2: (3, 0), 3: (0, 3), 4: (0, 1), 5: (2, 1)}


def make_plan() -> list[PartitionMove]:
    """tests/rebalance/test_executor.py's plan: four partitions move a replica to broker 3 (two
    of them also a new preferred leader), one only changes its preferred leader, one stays."""
    return [PartitionMove(tp(p), ASSIGNMENT[p], AFTER[p]) for p in range(6)
            if ASSIGNMENT[p] != AFTER[p]]  # fmt: skip


def fake_kafka() -> FakeKafka:
    return FakeKafka({tp(p): r for p, r in ASSIGNMENT.items()}, brokers=(0, 1, 2, 3))


def test_it_is_what_the_executor_takes() -> None:
    cluster: RebalanceCluster = AdminApiCluster(fake_kafka(), **FAST)
    assert cluster.now(make_plan()).assignment[tp(0)] == (0, 1)


def test_the_throttles_are_those_of_the_zookeeper_path() -> None:
    batch = make_plan()[:2]  # as test_executor.py's first batch: orders-0 and orders-1
    assert topic_throttles(batch, {}) == {
        "orders": {
            ex.LEADER_THROTTLED_REPLICAS: "0:0,0:1,1:1,1:2",
            ex.FOLLOWER_THROTTLED_REPLICAS: "0:3,1:3",
        }
    }
    # Merged with what the topic has; "*" stays "*".
    has = {"orders": {ex.LEADER_THROTTLED_REPLICAS: "7:5,0:0", ex.FOLLOWER_THROTTLED_REPLICAS: "*"}}
    assert topic_throttles(batch, has) == {
        "orders": {
            ex.LEADER_THROTTLED_REPLICAS: "7:5,0:0,0:1,1:1,1:2",
            ex.FOLLOWER_THROTTLED_REPLICAS: "*",
        }
    }
    assert broker_throttles([0, 3], 1_000_000) == {
        "0": {ex.LEADER_THROTTLED_RATE: "1000000", ex.FOLLOWER_THROTTLED_RATE: "1000000"},
        "3": {ex.LEADER_THROTTLED_RATE: "1000000", ex.FOLLOWER_THROTTLED_RATE: "1000000"},
    }


def test_removals_delete_only_what_is_set() -> None:
    current = {
        "orders": {ex.LEADER_THROTTLED_REPLICAS: "0:0"},
        "payments": {},
        "audit": {ex.LEADER_THROTTLED_REPLICAS: "*", ex.FOLLOWER_THROTTLED_REPLICAS: "*"},
    }
    assert removals(current, REPLICA_KEYS) == {
        "audit": {ex.LEADER_THROTTLED_REPLICAS: None, ex.FOLLOWER_THROTTLED_REPLICAS: None},
        "orders": {ex.LEADER_THROTTLED_REPLICAS: None},
    }
    assert removals({"1": {}}, RATE_KEYS) == {}


def test_a_plan_is_carried_out_with_throttles_while_data_moves_and_none_after() -> None:
    kafka = fake_kafka()
    kafka.configs["topic"]["orders"] = {"retention.ms": "1000"}
    kafka.configs["broker"]["0"] = {"log.cleaner.threads": "2"}
    plan = make_plan()
    seen: list[dict[str, dict[str, dict[str, str]]]] = []

    def report(r: Report) -> None:
        if r.step.wait and r.step.phase is ex.Phase.REPLICAS:
            seen.append(kafka.throttles())

    executor = Executor(
        AdminApiCluster(kafka, **FAST), plan, ex.Limits(partitions_per_broker=2), throttle=10
    )
    assert executor.run(report=report) is True

    assert all(kafka.replicas[m.partition] == m.after for m in plan)
    assert all(kafka.leaders[m.partition] == m.after[0] for m in plan)
    rate = {ex.LEADER_THROTTLED_RATE: "10", ex.FOLLOWER_THROTTLED_RATE: "10"}
    assert seen[0] == {
        "topic": {"orders": {ex.LEADER_THROTTLED_REPLICAS: "0:0,0:1,1:1,1:2",
                             ex.FOLLOWER_THROTTLED_REPLICAS: "0:3,1:3"}},
        "broker": {"0": rate, "1": rate, "2": rate, "3": rate},
    }  # fmt: skip
    # The second batch's replicas merged in.
    assert seen[-1]["topic"]["orders"] == {
        ex.LEADER_THROTTLED_REPLICAS: "0:0,0:1,1:1,1:2,2:2,2:0,3:0,3:2",
        ex.FOLLOWER_THROTTLED_REPLICAS: "0:3,1:3,2:3,3:3",
    }
    # Gone after; the other configs untouched.
    assert kafka.throttles() == {"topic": {}, "broker": {}}
    assert kafka.configs["topic"]["orders"] == {"retention.ms": "1000"}
    assert kafka.configs["broker"]["0"] == {"log.cleaner.threads": "2"}
    # Batches as on ZooKeeper: [p0, p1] and [p2, p3] (broker 3 takes two at a time), the
    # reorder, the elections; each batch polled until the controller listed it no more.
    submitted = [c for c in kafka.calls if c[0] in ("reassign", "elect")]
    assert [(kind, sorted(map(str, what))) for kind, what in submitted] == [
        ("reassign", ["orders-0", "orders-1"]),
        ("reassign", ["orders-2", "orders-3"]),
        ("reassign", ["orders-4"]),  # the reorder
        ("elect", ["orders-4"]),  # the others' leaders moved with their replicas
    ]
    assert sum(1 for c in kafka.calls if c[0] == "list") >= 2 * kafka.polls


def test_no_throttle_asked_none_set_and_none_removed() -> None:
    kafka = fake_kafka()
    assert Executor(AdminApiCluster(kafka, **FAST), make_plan(), ex.Limits()).run()
    assert not [c for c in kafka.calls if c[0].startswith("alter")]


def test_a_wait_polls_until_nothing_listed_and_ends_on_timeout_or_stop() -> None:
    kafka = fake_kafka()
    kafka.polls = 1000
    stop = threading.Event()
    cluster = AdminApiCluster(kafka, stop=stop, interval=0.01)
    plan = make_plan()
    assert cluster.reassign({tp(0): [0, 3]})
    now = cluster.now(plan)
    assert now.reassigning == {tp(0)}
    began = time.monotonic()
    assert cluster.wait_in_flight(now, 0.2) is False  # still moving
    assert 0.2 <= time.monotonic() - began < 5
    assert 2 <= sum(1 for c in kafka.calls if c[0] == "list") <= 25  # every 10 ms at most

    slow = AdminApiCluster(kafka, stop=stop, interval=60.0)
    threading.Timer(0.2, stop.set).start()
    began = time.monotonic()
    assert slow.wait_in_flight(now, 30.0) is False
    assert time.monotonic() - began < 10  # the stop, not the interval nor the timeout

    kafka.polls = 0
    kafka.moving[tp(0)] = ((0, 3), 2)
    assert AdminApiCluster(kafka, interval=0.01).wait_in_flight(now, 5.0) is True
    assert kafka.replicas[tp(0)] == (0, 3)


def test_a_move_read_in_flight_but_listed_no_more_is_given_one_pause() -> None:
    """The backend reads a move it knows of as in flight while the describing broker lags;
    the controller lists it no more. The wait ends, after one pause (the next read would
    otherwise ask at once), or at once when stopped."""
    kafka = fake_kafka()
    now = ex.ClusterNow({}, {}, frozenset({tp(0)}), election_pending=False)
    began = time.monotonic()
    assert AdminApiCluster(kafka, interval=0.2).wait_in_flight(now, 5.0) is True
    assert time.monotonic() - began >= 0.2
    assert sum(1 for c in kafka.calls if c[0] == "list") == 1
    stop = threading.Event()
    stop.set()
    began = time.monotonic()
    assert AdminApiCluster(kafka, stop=stop, interval=60.0).wait_in_flight(now, 30.0) is True
    assert time.monotonic() - began < 10


def test_a_refused_reassignment_is_not_a_batch_and_the_next_read_waits_for_the_other() -> None:
    kafka = fake_kafka()
    kafka.moving[tp(3)] = ((0, 1), 3)  # someone else's, of a partition the plan moves too
    cluster = AdminApiCluster(kafka, **FAST)
    assert cluster.reassign({tp(3): [0, 3], tp(0): [0, 3]}) is False
    assert tp(0) not in kafka.moving
    with pytest.raises(ex.PlanOutdated, match="orders-3"):
        # Once the other completes, orders-3 holds neither the plan's before nor its after.
        Executor(cluster, make_plan(), ex.Limits()).run()


def test_metadata_behind_the_controller_is_read_again() -> None:
    kafka = fake_kafka()
    plan = make_plan()
    kafka.replicas[tp(0)] = (0, 3)  # done, but a broker still shows both sets
    kafka.stale[tp(0)] = ((0, 1, 3), 3)
    cluster = AdminApiCluster(kafka, **FAST)
    assert cluster.now(plan).assignment[tp(0)] == (0, 3)
    # A change that does not settle is the plan's to refuse, after `metadata_lag`.
    kafka.stale[tp(0)] = ((0, 1, 3), 10_000)
    began = time.monotonic()
    assert cluster.now(plan).assignment[tp(0)] == (0, 1, 3)
    assert time.monotonic() - began >= FAST["metadata_lag"]


def test_metadata_behind_while_stopping_is_in_flight_not_outdated() -> None:
    kafka = fake_kafka()
    kafka.replicas[tp(0)] = (0, 3)
    kafka.stale[tp(0)] = ((0, 1, 3), 10_000)
    stop = threading.Event()
    stop.set()
    cluster = AdminApiCluster(kafka, stop=stop, interval=0.01, metadata_lag=60.0)
    began = time.monotonic()
    now = cluster.now(make_plan())
    assert time.monotonic() - began < 10
    assert tp(0) in now.reassigning
    assert Executor(cluster, make_plan(), ex.Limits()).run(abandon=stop.is_set) is False


def test_partitions_not_elected_are_asked_for_again_after_a_pause() -> None:
    kafka = fake_kafka()
    plan = [PartitionMove(tp(4), (1, 0), (0, 1))]
    kafka.replicas[tp(4)] = (0, 1)  # reordered; broker 1 leads
    kafka.leaders[tp(4)] = 1
    kafka.not_electable.add(tp(4))
    reports: list[Report] = []
    cluster = AdminApiCluster(kafka, interval=0.01, election_retry=0.3)
    worker = threading.Thread(
        target=lambda: Executor(cluster, plan, ex.Limits()).run(report=reports.append)
    )
    worker.start()
    with kafka.called:
        assert kafka.called.wait_for(lambda: len(kafka.elections) >= 3, timeout=60)
        kafka.not_electable.clear()
        asked = list(kafka.elections[:3])
    assert all(later - earlier >= 0.3 for earlier, later in itertools.pairwise(asked))
    assert any(r.step.phase is ex.Phase.LEADERS and r.step.wait for r in reports)
    worker.join(30)
    assert not worker.is_alive()
    assert reports[-1].step.phase is ex.Phase.DONE and kafka.leaders[tp(4)] == 0


def test_a_broker_that_is_down_gets_no_rate() -> None:
    kafka = fake_kafka()
    kafka.live.discard(2)  # it sends nothing, and its configs can only be changed through it
    plan = make_plan()
    assert Executor(AdminApiCluster(kafka, **FAST), plan, ex.Limits(), throttle=10).run()
    rated = {n for kind, what in kafka.calls if kind == "alter broker" for n in what}
    assert rated == {"0", "1", "3"}
    assert kafka.throttles() == {"topic": {}, "broker": {}}
