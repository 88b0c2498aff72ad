"""Topics reconciled together (one read of the cluster, pipelined writes) against a real
ZooKeeper, the controller and dev brokers: each gets the step it would get alone, a failed write
fails only its own topic, and the batcher groups what waits and reads the outcome back."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from typing import Any

import pytest
from kto_testing import eventually

from kafka_topic_operator.kafka.errors import (
    ClusterUnavailableError,
    ReassignmentInProgressException,
    TopicExistsException,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.topics import batcher as batcher_module
from kafka_topic_operator.topics.batcher import Outcome, ReconcileBatcher
from kafka_topic_operator.topics.plan import CreateTopic, Reason
from kafka_topic_operator.topics.reconcile import Request, Step, reconcile_topics
from kafka_topic_operator.topics.spec import parse_spec
from kafka_topic_operator.topics.zookeeper_backend import ZooKeeperBackend
from kafka_topic_operator.zk import admin, znodes
from kafka_topic_operator.zk.client import ZkClient, ZkConnectionError

from .conftest import Cluster


def request(name: str, spec: dict[str, Any], managed_topic: str | None = None) -> Request:
    """A reconcile request as the handler makes it: the spec parsed where it enters."""
    return Request(name, parse_spec(name, spec), managed_topic)


def partitions_of(cluster: Cluster, topic: str) -> int:
    node = cluster.zk.get(znodes.topic_path(topic))
    assert node is not None
    return len(znodes.decode_topic(node.path, node.data).partitions)


def test_a_batch_plans_each_topic_as_alone_and_in_order(cluster: Cluster) -> None:
    for broker in (0, 1):
        cluster.start_broker(broker)
    requests = [
        *(request(f"t{i}", {"partitions": 1 + i % 4, "replicas": 1 + i % 2}) for i in range(20)),
        request("bad", {"partitions": 0, "replicas": 1}),
        request("wide", {"partitions": 1, "replicas": 3}),
        request("dotted", {"topicName": "a.b", "partitions": 1, "replicas": 1}),
        request("underscored", {"topicName": "a_b", "partitions": 1, "replicas": 1}),
    ]
    outcomes = reconcile_topics(cluster.backend, requests)
    steps = [o for o in outcomes if isinstance(o, Step)]
    assert len(steps) == len(requests)
    for i in range(20):
        assert isinstance(steps[i].plan.actions[0], CreateTopic)
        assert partitions_of(cluster, f"t{i}") == 1 + i % 4
    assert steps[20].plan.blocked is not None
    assert steps[20].plan.blocked[0] is Reason.INVALID_SPEC
    assert steps[21].plan.blocked == (
        Reason.BROKERS_UNAVAILABLE,
        "Replication factor: 3 larger than available brokers: 2.",
    )
    # The first of two colliding names is created; the later one collides with it, as it
    # would if it came alone afterwards.
    assert isinstance(steps[22].plan.actions[0], CreateTopic)
    assert steps[23].plan.blocked == (
        Reason.CONFLICT,
        "Topic 'a_b' collides with existing topics: a.b",
    )
    topics = set(cluster.zk.children(znodes.TOPICS_PATH) or [])
    assert topics == {f"t{i}" for i in range(20)} | {"a.b"}


def test_a_failed_write_fails_only_its_topic(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster.start_broker(0)
    # Someone else creates "taken" right after the read: planned as missing, its creation
    # then finds the znode there.
    read_many = cluster.zk.read_many

    def then_taken(*args: Any, **kwargs: Any) -> Any:
        found = read_many(*args, **kwargs)
        if not cluster.zk.exists(znodes.topic_path("taken")):
            admin.create_topic_with_assignment(cluster.zk, "taken", {0: [0]})
        return found

    monkeypatch.setattr(cluster.zk, "read_many", then_taken)
    requests = [request(name, {"partitions": 2, "replicas": 1}) for name in ("x", "taken", "y")]
    outcomes = reconcile_topics(cluster.backend, requests)
    assert isinstance(outcomes[1], TopicExistsException)
    assert str(outcomes[1]) == "Topic 'taken' already exists."
    assert isinstance(outcomes[0], Step) and isinstance(outcomes[2], Step)
    assert partitions_of(cluster, "x") == partitions_of(cluster, "y") == 2


def test_the_reassignments_of_a_batch_go_in_one_znode(cluster: Cluster) -> None:
    """/admin/reassign_partitions holds one reassignment at a time: the batch's go together, as
    one kafka-reassign-partitions run writes them (topic by topic, all but the first waited);
    while one is there, each topic of the next batch waits with its own name. No controller
    runs: the znode stays as written."""
    for broker in (0, 1, 2):
        cluster.start_broker(broker)
    for name in ("r0", "r1", "r2", "r3"):
        admin.create_topic_with_assignment(cluster.zk, name, {0: [0], 1: [1]})
    wanted = {"replicaAssignment": [[1, 2], [2, 0]]}
    outcomes = reconcile_topics(
        cluster.backend, [request(n, wanted, managed_topic=n) for n in ("r0", "r1")]
    )
    assert all(isinstance(o, Step) and o.plan.blocked is None for o in outcomes), [
        getattr(o, "plan", o) for o in outcomes
    ]
    node = cluster.zk.get(znodes.REASSIGN_PARTITIONS_PATH)
    assert node is not None
    assert znodes.decode_reassignment(node.path, node.data) == {
        TopicPartition(t, p): r
        for t in ("r0", "r1")
        for p, r in enumerate(wanted["replicaAssignment"])
    }
    waiting = reconcile_topics(
        cluster.backend, [request(n, wanted, managed_topic=n) for n in ("r2", "r3")]
    )
    assert [(type(o), str(o)) for o in waiting] == [
        (
            ReassignmentInProgressException,
            f"A partition reassignment is in progress for the topic '{t}'.",
        )
        for t in ("r2", "r3")
    ]


def test_every_topic_name_is_listed_only_for_a_name_that_could_collide(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AdminZkClient lists all topics only when the new name has `.` or `_` in it."""
    cluster.start_broker(0)
    listed: list[Sequence[str]] = []
    read_many = cluster.zk.read_many

    def recording(data: Sequence[str] = (), children: Sequence[str] = ()) -> Any:
        listed.append(children)
        return read_many(data, children)

    monkeypatch.setattr(cluster.zk, "read_many", recording)
    reconcile_topics(cluster.backend, [request("orders", {"partitions": 1, "replicas": 1})])
    assert not any(znodes.TOPICS_PATH in c for c in listed)
    reconcile_topics(cluster.backend, [request("my.orders", {"partitions": 1, "replicas": 1})])
    assert any(znodes.TOPICS_PATH in c for c in listed)


def test_requests_naming_one_topic_cannot_be_batched(cluster: Cluster) -> None:
    twice = [request("a", {"topicName": "t", "partitions": 1, "replicas": 1}),
             request("b", {"topicName": "t", "partitions": 1, "replicas": 1})]  # fmt: skip
    with pytest.raises(ValueError, match="distinct topics"):
        reconcile_topics(cluster.backend, twice)


# ---- the batcher ------------------------------------------------------------------------------


class HeldBatches:
    """Records the requests of each batch; the first batch waits until released."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.batches: list[list[str]] = []
        self.release = threading.Event()
        self.first_taken = threading.Event()
        real = batcher_module.reconcile_topics

        def held(zk: ZkClient, requests: Sequence[Request], *args: Any) -> Any:
            self.batches.append([r.resource_name for r in requests])
            if len(self.batches) == 1:
                self.first_taken.set()
                assert self.release.wait(20)
            return real(zk, requests, *args)

        monkeypatch.setattr(batcher_module, "reconcile_topics", held)


@contextlib.contextmanager
def held_on_first(
    zk: ZkClient,
    monkeypatch: pytest.MonkeyPatch,
    first: Request,
    creation_wait: float = 0.0,
    **options: Any,
) -> Iterator[tuple[ReconcileBatcher, HeldBatches, Future[Outcome]]]:
    """A running batcher whose first batch (`first` alone) waits until `held.release` is set,
    so that what is submitted meanwhile waits together."""
    held = HeldBatches(monkeypatch)
    batcher = ReconcileBatcher(ZooKeeperBackend(zk), creation_wait=creation_wait, **options)
    batcher.start()
    try:
        future = batcher.submit(first)
        assert held.first_taken.wait(20)
        yield batcher, held, future
    finally:
        batcher.stop()


def results(futures: Sequence[Future[Outcome]]) -> list[Outcome]:
    return [f.result(timeout=30) for f in futures]


def test_what_waits_goes_as_one_batch_and_is_read_back_online(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    for broker in (0, 1, 2):
        cluster.start_broker(broker)
    cluster.start_controller()
    first = request("first", {"partitions": 3, "replicas": 3})
    with held_on_first(cluster.zk, monkeypatch, first, creation_wait=10.0) as (
        batcher,
        held,
        first_future,
    ):
        spec = {"partitions": 6, "replicas": 2}
        rest = [batcher.submit(request(f"t{i}", spec)) for i in range(25)]
        held.release.set()
        outcomes = results([first_future, *rest])
    assert held.batches == [["first"], [f"t{i}" for i in range(25)]]
    for i, outcome in enumerate(outcomes[1:]):
        assert outcome.snapshot is not None
        topic = outcome.snapshot.topics[f"t{i}"]
        # Read back once the controller made every partition (the wait is long enough here).
        assert sorted(topic.partitions) == list(range(6))
        assert all(p.leader >= 0 for p in topic.partitions.values())


def test_a_request_in_a_burst_waits_for_others_and_one_after_a_pause_goes_at_once(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each batch costs the controller and the brokers a round of requests: while requests
    keep coming, one waits (up to the linger) for others to go with it."""
    cluster.start_broker(0)
    spec = {"partitions": 1, "replicas": 1}
    # A linger far longer than the waits below: the first request, after a quiet spell, is
    # taken at once all the same (held_on_first waits 20 s for it).
    with held_on_first(
        cluster.zk, monkeypatch, request("first", spec), linger=600.0, max_batch=2
    ) as (batcher, held, first_future):
        a = batcher.submit(request("a", spec))
        held.release.set()
        first_future.result(timeout=30)
        # "a" came in the burst: it lingers for company (a full batch ends the wait) instead
        # of going alone once the first batch is done.
        b = batcher.submit(request("b", spec))
        results([a, b])
    assert held.batches == [["first"], ["a", "b"]]


def test_a_lingering_request_goes_alone_when_no_other_comes(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster.start_broker(0)
    spec = {"partitions": 1, "replicas": 1}
    with held_on_first(cluster.zk, monkeypatch, request("first", spec), linger=0.2) as (
        batcher,
        held,
        first_future,
    ):
        held.release.set()
        first_future.result(timeout=30)
        a = batcher.submit(request("a", spec))  # in the burst: it lingers, then goes alone
        results([a])
    assert held.batches == [["first"], ["a"]]


def test_the_position_read_back_is_after_the_partitions_were_made(cluster: Cluster) -> None:
    """The status follower watches a new topic from the position its outcome gives: taken
    before the controller made the partitions, every one of them would be reported again."""
    for broker in (0, 1):
        cluster.start_broker(broker)
    batcher = ReconcileBatcher(ZooKeeperBackend(cluster.zk), creation_wait=60.0)
    batcher.start()
    try:
        future = batcher.submit(request("late", {"partitions": 2, "replicas": 2}))
        # Written, and no controller yet to make its partitions: the read-back waits.
        eventually(lambda: cluster.zk.exists(znodes.topic_path("late")), "the topic znode")
        cluster.start_controller()
        outcome = future.result(timeout=60)
    finally:
        batcher.stop()
    assert outcome.snapshot is not None and sorted(outcome.snapshot.topics["late"].partitions) == [
        0,
        1,
    ]
    state = cluster.zk.get(znodes.topic_partition_state_path(TopicPartition("late", 1)))
    assert state is not None and outcome.zxid >= state.czxid


def test_requests_for_one_topic_go_in_separate_batches(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster.start_broker(0)
    first = request("first", {"partitions": 1, "replicas": 1})
    with held_on_first(cluster.zk, monkeypatch, first) as (batcher, held, first_future):
        futures = [first_future]
        for resource in ("a", "b", "c"):
            spec = {"topicName": "shared", "partitions": 1, "replicas": 1}
            futures.append(batcher.submit(request(resource, spec)))
        futures.append(batcher.submit(request("other", {"partitions": 1, "replicas": 1})))
        held.release.set()
        outcomes = results(futures)
    assert held.batches == [["first"], ["a", "other"], ["b"], ["c"]]
    # The later requests found the topic the first one created.
    assert isinstance(outcomes[1].step.plan.actions[0], CreateTopic)
    assert outcomes[2].step.plan.actions == outcomes[3].step.plan.actions == ()


def test_a_request_that_breaks_the_planner_fails_alone(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster.start_broker(0)
    from kafka_topic_operator.topics import reconcile

    real_plan = reconcile.plan

    def plan(desired: Any, *args: Any, **kwargs: Any) -> Any:
        if desired.name == "poison":
            raise RuntimeError("a bug")
        return real_plan(desired, *args, **kwargs)

    monkeypatch.setattr(reconcile, "plan", plan)
    first = request("first", {"partitions": 1, "replicas": 1})
    with held_on_first(cluster.zk, monkeypatch, first) as (batcher, held, first_future):
        names = ("a", "poison", "b")
        futures = [first_future]
        futures += [batcher.submit(request(n, {"partitions": 1, "replicas": 1})) for n in names]
        held.release.set()
        with pytest.raises(RuntimeError, match="a bug"):
            futures[2].result(timeout=30)
        ok = results([futures[1], futures[3]])
    assert all(isinstance(o.step.plan.actions[0], CreateTopic) for o in ok)
    assert set(cluster.zk.children(znodes.TOPICS_PATH) or []) == {"first", "a", "b"}


def test_zookeeper_out_of_reach_and_stopping_fail_the_futures(zk_chroot: str) -> None:
    zk = ZkClient(zk_chroot, retry_deadline=0.5)
    zk.start()
    batcher = ReconcileBatcher(ZooKeeperBackend(zk))
    batcher.start()
    zk.stop()
    try:
        with pytest.raises(ZkConnectionError):
            batcher.submit(request("t", {"partitions": 1, "replicas": 1})).result(timeout=30)
    finally:
        batcher.stop()
    with pytest.raises(ClusterUnavailableError, match="stopping"):
        batcher.submit(request("t", {"partitions": 1, "replicas": 1})).result(timeout=1)
