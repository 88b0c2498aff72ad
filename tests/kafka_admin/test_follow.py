"""The polling status follower: its contract (topics.follow.StatusFollower's) on a scripted
cluster, what it reads (in full only what changed; configs on their own cycle), then against a
real KRaft cluster changed behind its back. Nothing here sleeps: the tests wait on the reports,
or on the follower's sweeps (its cheap reads of every topic), with a timeout."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from kto_testing import eventually

from kafka_topic_operator.kafka.brokers import BrokerInfo
from kafka_topic_operator.kafka.errors import ClusterUnavailableError
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.new_topic import NewTopic
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.snapshot import (
    ClusterSnapshot,
    Expected,
    PartitionSnapshot,
    TopicSnapshot,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.kafka_admin.backend import KafkaAdminBackend
from kafka_topic_operator.kafka_admin.connection import KafkaConnection
from kafka_topic_operator.kafka_admin.follow import (
    MetadataSource,
    PolledBackend,
    PollingStatusFollower,
    ReadLog,
    next_due,
    touched_by,
)
from kafka_topic_operator.kafka_admin.metadata import MetadataClient, Views
from kafka_topic_operator.topics.backend import StatusFollowing
from kto_dev.apache_kafka.kraft import KRaftCluster

WAIT = 20.0  # seconds, for what must happen


class Reports:
    """The follower's callback: what it reported, waited on with a condition."""

    def __init__(self) -> None:
        self.calls: list[tuple[ClusterSnapshot, list[str]]] = []
        self.condition = threading.Condition()
        self.fail_next: Exception | None = None

    def __call__(self, snapshot: ClusterSnapshot, topics: Collection[str]) -> None:
        with self.condition:
            failure, self.fail_next = self.fail_next, None
            self.calls.append((snapshot, list(topics)))
            self.condition.notify_all()
        if failure is not None:
            raise failure

    def reported(self) -> list[str]:
        with self.condition:
            return [t for _, topics in self.calls for t in topics]

    def wait_until(self, topic: str, holds: Callable[[ClusterSnapshot], object]) -> ClusterSnapshot:
        """The first report of `topic` whose snapshot `holds` says is the one."""

        def found() -> ClusterSnapshot | None:
            return next((s for s, ts in self.calls if topic in ts and holds(s)), None)

        with self.condition:
            assert self.condition.wait_for(found, WAIT), f"{topic}: {self.calls}"
            snapshot = found()
            assert snapshot is not None
            return snapshot

    def wait_for(self, topic: str, times: int = 1) -> ClusterSnapshot:
        """The snapshot of the `times`-th report of `topic`."""
        with self.condition:
            reached = self.condition.wait_for(lambda: self.reported().count(topic) >= times, WAIT)
            assert reached, f"{topic} not reported {times} times: {self.reported()}"
            return [s for s, topics in self.calls if topic in topics][times - 1]


class Counted:
    """A metadata source whose sweeps (the follower's periodic reads of every topic) can be
    waited for."""

    def __init__(self, source: MetadataSource) -> None:
        self.source = source
        self.sweeps = 0
        self.condition = threading.Condition()

    def views(self) -> Views:
        try:
            return self.source.views()
        finally:
            with self.condition:
                self.sweeps += 1
                self.condition.notify_all()

    def live_brokers(self) -> frozenset[int]:
        return self.source.live_brokers()

    def configs(self, topics: Sequence[str]) -> Mapping[str, Mapping[str, str] | None]:
        return self.source.configs(topics)

    def passes(self, more: int) -> None:
        """Until the follower has swept `more` times more."""
        with self.condition:
            target = self.sweeps + more
            assert self.condition.wait_for(lambda: self.sweeps >= target, WAIT), "no sweep"


Following = tuple[PollingStatusFollower, Reports, Counted]


def started(
    backend: PolledBackend,
    source: MetadataSource,
    reads: ReadLog,
    interval: float,
    config_interval: float | None = None,
) -> Following:
    reports = Reports()
    counted = Counted(source)
    follower = PollingStatusFollower(backend, reads, reports, counted, interval=interval,
                                     broker_interval=interval,
                                     config_interval=config_interval or interval)  # fmt: skip
    follower.start()
    return follower, reports, counted


# ---- the contract, on a scripted cluster --------------------------------------------------------


def topic(name: str, leader: int = 0, config: dict[str, str] | None = None) -> TopicSnapshot:
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, (0, 1)), -1)
    partition = PartitionSnapshot(0, ReplicaAssignment((0, 1)), state)
    return TopicSnapshot(name, "id-" + name, {0: partition}, config or {})


class Scripted:
    """A cluster the test edits: what `read` answers, with positions and remembered reads as
    the real backend keeps them, the cheap reads of a metadata source (whose views leave
    configs out, as Kafka's Metadata response does), and failures on demand."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.topics: dict[str, TopicSnapshot] = {}
        self.brokers = {0: BrokerInfo(0, ()), 1: BrokerInfo(1, ())}
        self.failure: Exception | None = None
        self.reads = ReadLog()
        self.read_topics: list[list[str]] = []  # what each full read asked for
        self.given_configs: list[dict[str, Mapping[str, str]]] = []  # the configs each was given

    def position(self) -> int:
        return self.reads.position()

    def read(
        self,
        topics: Iterable[str],
        *,
        list_topics: bool,
        expected: Expected | None = None,
        configs: Mapping[str, Mapping[str, str]] | None = None,
    ) -> ClusterSnapshot:
        """As the backend reads: a topic whose configs are given has those."""
        with self.lock:
            if self.failure is not None:
                raise self.failure
            position = self.reads.begin()
            named = sorted(set(topics))
            self.read_topics.append(named)
            self.given_configs.append(dict(configs or {}))
            known = configs or {}
            found = {
                t: replace(self.topics[t], config=known[t]) if t in known else self.topics[t]
                for t in named
                if t in self.topics
            }
            snapshot = ClusterSnapshot(brokers=dict(self.brokers), topics=found)
            self.reads.remember(position, snapshot, named)
            return snapshot

    def views(self) -> Views:
        with self.lock:
            if self.failure is not None:
                raise self.failure
            return {name: repr(replace(t, config={})) for name, t in self.topics.items()}

    def live_brokers(self) -> frozenset[int]:
        with self.lock:
            if self.failure is not None:
                raise self.failure
            return frozenset(self.brokers)

    def configs(self, topics: Sequence[str]) -> Mapping[str, Mapping[str, str] | None]:
        with self.lock:
            if self.failure is not None:
                raise self.failure
            return {t: dict(self.topics[t].config) if t in self.topics else None for t in topics}

    def full_reads(self) -> list[list[str]]:
        with self.lock:
            return list(self.read_topics)


@pytest.fixture
def scripted() -> Scripted:
    return Scripted()


@pytest.fixture
def follow(scripted: Scripted) -> Iterator[Following]:
    following = started(scripted, scripted, scripted.reads, interval=0.05)
    yield following
    following[0].stop()


def test_it_is_a_status_follower(follow: Following) -> None:
    following: StatusFollowing = follow[0]
    assert following.followed == frozenset()


def test_a_followed_topic_is_reported_at_once_then_on_each_change(
    scripted: Scripted, follow: Following
) -> None:
    follower, reports, counted = follow
    scripted.topics["orders"] = topic("orders")
    follower.follow("orders")
    assert reports.wait_for("orders").topics["orders"] == scripted.topics["orders"]
    counted.passes(3)
    assert reports.reported() == ["orders"]  # unchanged: not reported again
    scripted.topics["orders"] = topic("orders", leader=1)  # the leader moved
    assert reports.wait_for("orders", 2).topics["orders"].partitions[0].leader == 1
    scripted.topics["orders"] = topic("orders", leader=1, config={"retention.ms": "1"})
    reports.wait_for("orders", 3)
    assert follower.followed == frozenset({"orders"})


def test_since_a_position_only_changes_after_the_callers_read_are_reported(
    scripted: Scripted, follow: Following
) -> None:
    follower, reports, counted = follow
    scripted.topics["quiet"] = topic("quiet")
    since = scripted.position()
    scripted.read(["quiet"], list_topics=False)  # the caller's own read, its status written
    follower.follow("quiet", since=since)
    counted.passes(3)
    assert reports.reported() == []
    scripted.topics["quiet"] = topic("quiet", leader=1)
    reports.wait_for("quiet")


def test_since_reports_a_change_between_the_callers_read_and_the_follow(
    scripted: Scripted, follow: Following
) -> None:
    follower, reports, _ = follow
    scripted.topics["moved"] = topic("moved")
    since = scripted.position()
    scripted.read(["moved"], list_topics=False)
    scripted.topics["moved"] = topic("moved", leader=1)  # before the follower's first pass
    follower.follow("moved", since=since)
    assert reports.wait_for("moved").topics["moved"].partitions[0].leader == 1


def test_since_without_a_read_after_it_reports(scripted: Scripted, follow: Following) -> None:
    follower, reports, _ = follow
    scripted.topics["unread"] = topic("unread")
    follower.follow("unread", since=scripted.position())
    reports.wait_for("unread")


def test_since_with_the_callers_read_forgotten_reports(
    scripted: Scripted, follow: Following
) -> None:
    follower, reports, _ = follow
    scripted.topics["busy"] = topic("busy")
    since = scripted.position()
    for _ in range(5):  # more reads than are remembered
        scripted.read(["busy"], list_topics=False)
    follower.follow("busy", since=since)
    reports.wait_for("busy")


def test_refresh_reports_a_followed_topic_at_once(scripted: Scripted, follow: Following) -> None:
    follower, reports, counted = follow
    scripted.topics["again"] = topic("again")
    follower.follow("again")
    reports.wait_for("again")
    follower.refresh("again")
    reports.wait_for("again", 2)
    follower.refresh("not-followed")
    counted.passes(2)
    assert "not-followed" not in reports.reported()


def test_a_deleted_topic_is_reported_and_unfollowed(scripted: Scripted, follow: Following) -> None:
    follower, reports, _ = follow
    scripted.topics["doomed"] = topic("doomed")
    follower.follow("doomed")
    reports.wait_for("doomed")
    del scripted.topics["doomed"]
    assert "doomed" not in reports.wait_for("doomed", 2).topics
    assert follower.followed == frozenset()


class Lagging(Scripted):
    """A broker that does not know a topic yet answers the follower's first read of it."""

    def __init__(self) -> None:
        super().__init__()
        self.lagging = {"fresh"}

    def read(
        self,
        topics: Iterable[str],
        *,
        list_topics: bool,
        expected: Expected | None = None,
        configs: Mapping[str, Mapping[str, str]] | None = None,
    ) -> ClusterSnapshot:
        snapshot = super().read(topics, list_topics=list_topics, expected=expected,
                                configs=configs)  # fmt: skip
        if not self.lagging & set(snapshot.topics):
            return snapshot
        self.lagging.clear()
        topics = {t: s for t, s in snapshot.topics.items() if t != "fresh"}
        return ClusterSnapshot(brokers=snapshot.brokers, topics=topics)


def test_a_topic_missing_from_one_read_is_read_again_before_it_counts_as_deleted() -> None:
    lagging = Lagging()
    lagging.topics["fresh"] = topic("fresh")
    follower, reports, _ = started(lagging, lagging, lagging.reads, interval=0.05)
    try:
        follower.follow("fresh")
        assert "fresh" in reports.wait_for("fresh").topics
        assert follower.followed == frozenset({"fresh"})
    finally:
        follower.stop()


def test_a_broker_going_reports_the_topics_with_a_replica_there_and_no_other(
    scripted: Scripted, follow: Following
) -> None:
    follower, reports, counted = follow
    scripted.brokers[2] = BrokerInfo(2, ())
    for name, replicas in (("on-2", (1, 2)), ("elsewhere", (0, 1))):
        state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, replicas), -1)
        partition = PartitionSnapshot(0, ReplicaAssignment(replicas), state)
        scripted.topics[name] = replace(topic(name), partitions={0: partition})
        follower.follow(name)
    reports.wait_for("on-2")
    reports.wait_for("elsewhere")
    counted.passes(2)
    reads = len(scripted.full_reads())
    del scripted.brokers[2]  # the metadata of neither topic changes: only the brokers
    gone = reports.wait_for("on-2", 2)
    assert gone.live_brokers == frozenset({0, 1})
    counted.passes(3)
    assert reports.reported().count("elsewhere") == 1
    # Read without describing its configs again: a broker's going does not change them.
    assert scripted.full_reads()[reads:] == [["on-2"]]
    assert scripted.given_configs[reads] == {"on-2": {}}


def test_a_broker_coming_reports_nothing_where_no_replica_is(
    scripted: Scripted, follow: Following
) -> None:
    follower, reports, counted = follow
    for name in ("a", "b"):
        scripted.topics[name] = topic(name)
        follower.follow(name)
    reports.wait_for("a")
    reports.wait_for("b")
    counted.passes(2)
    scripted.brokers[2] = BrokerInfo(2, ())  # a broker neither topic has a replica on
    counted.passes(5)
    assert reports.reported() == ["a", "b"]


def test_unfollowed_topics_are_no_longer_reported(scripted: Scripted, follow: Following) -> None:
    follower, reports, counted = follow
    scripted.topics["left"] = topic("left")
    scripted.topics["stays"] = topic("stays")
    follower.follow("left")
    follower.follow("stays")
    reports.wait_for("left")
    reports.wait_for("stays")
    follower.unfollow("left")
    scripted.topics["left"] = topic("left", leader=1)
    counted.passes(3)  # passes go on for the other topic
    assert sorted(reports.reported()) == ["left", "stays"]
    assert follower.followed == frozenset({"stays"})


def test_a_repeating_failure_is_logged_in_full_once_then_in_one_line(
    scripted: Scripted, follow: Following, caplog: pytest.LogCaptureFixture
) -> None:
    follower, reports, counted = follow
    scripted.topics["retried"] = topic("retried")
    scripted.failure = RuntimeError("broken")
    with caplog.at_level(logging.INFO, logger="kafka_topic_operator.kafka_admin.follow"):
        follower.follow("retried")
        counted.passes(3)
        scripted.failure = None
        reports.wait_for("retried")
        counted.passes(1)  # made after the pass that worked has said so
    logged = [(r.levelno, r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert logged[0] == (
        logging.ERROR,
        "following the status of 1 topics failed; retrying every 0.05 s",
        True,
    )
    again = (logging.WARNING, "following the status of 1 topics still fails (RuntimeError: "
             "broken); retrying in 0.05 s", False)  # fmt: skip
    assert len(logged) >= 4 and set(logged[1:-1]) == {again}, logged
    assert logged[-1] == (logging.INFO, "following the status of topics works again", False)


def test_an_unavailable_cluster_is_retried_quietly_and_a_failed_report_made_again(
    scripted: Scripted, follow: Following, caplog: pytest.LogCaptureFixture
) -> None:
    follower, reports, counted = follow
    scripted.topics["kept"] = topic("kept")
    scripted.failure = ClusterUnavailableError("Kafka at k:9092 is out of reach")
    follower.follow("kept")
    counted.passes(2)
    assert reports.reported() == []
    reports.fail_next = RuntimeError("status not written")
    scripted.failure = None
    reports.wait_for("kept", 2)  # its first report failed: made again
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        "following the status of 1 topics failed; retrying every 0.05 s"
    ]


def test_nothing_changed_is_read_in_full_once_and_only_what_changed_after(
    scripted: Scripted, follow: Following
) -> None:
    follower, reports, counted = follow
    for name in ("still", "moving"):
        scripted.topics[name] = topic(name)
        follower.follow(name)
    reports.wait_for("still")
    reports.wait_for("moving")
    counted.passes(2)  # the first sweep after the follows reads them once more, from its views
    reads = len(scripted.full_reads())
    counted.passes(5)
    assert len(scripted.full_reads()) == reads  # at rest: the sweeps read nothing in full
    scripted.topics["moving"] = topic("moving", leader=1)
    assert reports.wait_for("moving", 2).topics["moving"].partitions[0].leader == 1
    assert scripted.full_reads()[reads:] == [["moving"]]
    assert reports.reported().count("still") == 1


def test_configs_are_read_on_their_own_cycle(scripted: Scripted) -> None:
    follower, reports, counted = started(scripted, scripted, scripted.reads, interval=0.05,
                                         config_interval=3600)  # fmt: skip
    try:
        scripted.topics["tuned"] = topic("tuned")
        follower.follow("tuned")
        reports.wait_for("tuned")
        counted.passes(2)  # the sweep after the follow has read it with its view
        scripted.topics["tuned"] = topic("tuned", config={"retention.ms": "1"})
        counted.passes(5)
        assert reports.reported() == ["tuned"]  # the sweeps do not read configs
        # A partition's change is read with the configs as last read: the config sweep alone
        # finds them changed, and describes them.
        scripted.topics["tuned"] = topic("tuned", leader=1, config={"retention.ms": "1"})
        assert reports.wait_for("tuned", 2).topics["tuned"].config == {}
    finally:
        follower.stop()


def test_configs_found_changed_are_read_and_reported(scripted: Scripted) -> None:
    follower, reports, counted = started(scripted, scripted, scripted.reads, interval=0.05,
                                         config_interval=0.05)  # fmt: skip
    try:
        scripted.topics["tuned"] = topic("tuned")
        follower.follow("tuned")
        reports.wait_for("tuned")
        counted.passes(2)
        scripted.topics["tuned"] = topic("tuned", config={"retention.ms": "1"})
        assert reports.wait_for("tuned", 2).topics["tuned"].config == {"retention.ms": "1"}
    finally:
        follower.stop()


def test_a_broker_that_came_or_went_touches_the_topics_on_it_and_those_not_read_yet() -> None:
    replicas = {"on-2": frozenset({1, 2}), "elsewhere": frozenset({0, 1})}
    followed = ["on-2", "elsewhere", "unread"]
    assert touched_by([2], replicas, followed) == {"on-2", "unread"}
    assert touched_by([], replicas, followed) == set()  # no broker changed: none


def test_a_costly_sweep_is_made_less_often() -> None:
    assert next_due(100.0, 2.0, 0.005, 0.01) == 102.0  # 5 ms: every 2 s
    assert next_due(100.0, 2.0, 0.05, 0.01) == 105.0  # 50 ms: every 5 s, 1% of a core
    assert next_due(100.0, 60.0, 0.5, 0.005) == 200.0


def test_stop_is_prompt_whatever_the_interval(scripted: Scripted) -> None:
    follower = PollingStatusFollower(scripted, scripted.reads, Reports(), scripted,
                                     interval=3600, broker_interval=3600,
                                     config_interval=3600)  # fmt: skip
    follower.start()
    follower.follow("x")
    begun = time.monotonic()
    follower.stop()
    assert time.monotonic() - begun < 1


# ---- against a real KRaft cluster ----------------------------------------------------------------


@pytest.fixture(scope="module")
def kraft(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaAdminBackend]:
    cluster = KRaftCluster(Path(tmp_path_factory.mktemp("kraft")))
    cluster.start()
    backend = KafkaAdminBackend(KafkaConnection(tuple(cluster.bootstrap.split(","))))
    try:
        yield backend
    finally:
        backend.close()
        cluster.kill()


@pytest.fixture
def polling(kraft: KafkaAdminBackend) -> Iterator[Following]:
    source = MetadataClient(kraft.connection, timeout=10)
    following = started(kraft, source, kraft.reads, interval=0.2)
    yield following
    following[0].stop()
    source.close()


def known_to_every_broker(backend: KafkaAdminBackend, name: str) -> bool:
    """Whether each broker's metadata holds the topic. A read goes to whichever broker
    kafka-python picks, and KRaft brokers learn a new topic a moment apart: one read finding it
    does not make the next find it. So each broker is asked in turn (through kafka-python's
    connection manager: its admin client names no broker)."""
    from kafka.protocol.metadata import MetadataRequest

    def ask_each(admin: Any) -> bool:
        manager = admin._manager
        request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=name)],
                                  allow_auto_topic_creation=False)  # fmt: skip

        async def ask(node: int) -> Any:
            return (await manager.send(request, node_id=node)).to_dict()

        answers = [manager.run(ask, b.node_id) for b in manager.cluster.brokers()]
        return bool(answers) and all(
            [(t["name"], t["error_code"]) for t in answer["topics"]] == [(name, 0)]
            for answer in answers
        )

    return backend._call(ask_each, idempotent=True)


def created(backend: KafkaAdminBackend, name: str, config: dict[str, str]) -> None:
    """A topic every broker knows (the controller's answer comes a moment before)."""
    assert backend.create_topics([NewTopic(name, {0: [0, 1], 1: [1, 2]}, config)]) == {name: None}
    assert backend.wait_for_partitions([TopicPartition(name, 1)], limit=30, idle=10)
    eventually(lambda: known_to_every_broker(backend, name), f"every broker knowing {name}")


@pytest.mark.kafka
def test_a_change_behind_the_followers_back_is_reported_then_the_deletion(
    kraft: KafkaAdminBackend, polling: Following
) -> None:
    follower, reports, _ = polling
    created(kraft, "watched", {"retention.ms": "1000"})
    follower.follow("watched")
    assert reports.wait_for("watched").topics["watched"].config == {"retention.ms": "1000"}

    kraft.change_config("watched", {"retention.ms": "2000"})
    reports.wait_until(
        "watched",
        lambda s: "watched" in s.topics and s.topics["watched"].config == {"retention.ms": "2000"},
    )
    kraft.delete_topic("watched")
    reports.wait_until("watched", lambda s: "watched" not in s.topics)
    assert follower.followed == frozenset()


@pytest.mark.kafka
def test_following_since_a_read_reports_nothing_until_a_change(
    kraft: KafkaAdminBackend, polling: Following
) -> None:
    follower, reports, counted = polling
    created(kraft, "settled", {"segment.ms": "3600000"})
    since = kraft.position()
    # The caller's own read: a reconcile's, that the topic's status is written from.
    assert kraft.read(["settled"], list_topics=False).topics["settled"].config == {
        "segment.ms": "3600000"
    }
    follower.follow("settled", since=since)
    counted.passes(5)  # a second of passes, each reading it
    assert reports.reported() == []
    kraft.change_config("settled", {"segment.ms": "7200000"})
    assert reports.wait_for("settled").topics["settled"].config == {"segment.ms": "7200000"}


class FullReads:
    """A backend whose full reads are counted."""

    def __init__(self, backend: KafkaAdminBackend) -> None:
        self.backend = backend
        self.topics: list[list[str]] = []
        self.lock = threading.Lock()

    def read(
        self,
        topics: Iterable[str],
        *,
        list_topics: bool,
        expected: Expected | None = None,
        configs: Mapping[str, Mapping[str, str]] | None = None,
    ) -> ClusterSnapshot:
        named = sorted(topics)
        with self.lock:
            self.topics.append(named)
        return self.backend.read(named, list_topics=list_topics, expected=expected,
                                 configs=configs)  # fmt: skip

    def count(self) -> int:
        with self.lock:
            return len(self.topics)


@pytest.mark.kafka
def test_at_rest_a_real_cluster_is_swept_and_nothing_read_in_full(
    kraft: KafkaAdminBackend,
) -> None:
    """The views of real brokers are stable: a sweep of a cluster at rest finds nothing
    changed (whichever broker answers), so that following costs one Metadata request."""
    created(kraft, "resting", {})
    created(kraft, "shifting", {})
    counting = FullReads(kraft)
    source = MetadataClient(kraft.connection, timeout=10)
    follower, reports, counted = started(counting, source, kraft.reads, interval=0.1)
    try:
        follower.follow("resting")
        follower.follow("shifting")
        reports.wait_for("resting")
        counted.passes(2)
        reads = counting.count()
        counted.passes(20)
        assert counting.count() == reads
        # Its replicas reordered by a reassignment: the sweep finds it, and reads only that topic.
        kraft.reassign({TopicPartition("shifting", 0): [1, 0]})
        reports.wait_until(
            "shifting",
            lambda s: (
                "shifting" in s.topics and s.topics["shifting"].partitions[0].replicas == (1, 0)
            ),
        )
        assert {t for read in counting.topics[reads:] for t in read} == {"shifting"}
    finally:
        follower.stop()
        source.close()
