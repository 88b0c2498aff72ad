"""The Admin API backend against a real KRaft cluster (three Kafka 4.1 nodes, each broker and
controller): creations with explicit assignments and configs, partition additions, config
changes, a reassignment held in progress by a replication throttle, preferred leader elections,
deletions, a stopped (fenced) broker, and an unreachable cluster.

A KRaft broker learns of the controller's changes from the metadata log a moment after the
controller answers, and each request may reach another broker: what was just written is read
back with `eventually`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, KafkaAdminClient
from kto_testing import eventually

from kafka_topic_operator.kafka.errors import (
    ClusterUnavailableError,
    InvalidConfigurationException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    ReassignmentInProgressException,
    TopicExistsException,
    UnknownTopicOrPartitionException,
)
from kafka_topic_operator.kafka.new_topic import NewTopic
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot, PartitionStatus
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.kafka_admin.backend import KafkaAdminBackend
from kafka_topic_operator.kafka_admin.configs import ConfigKind
from kafka_topic_operator.kafka_admin.connection import KafkaConnection
from kafka_topic_operator.kafka_admin.errors import BrokerError
from kafka_topic_operator.topics.backend import TopicBackend
from kto_dev.apache_kafka.kraft import KRaftCluster
from kto_dev.ports import free_port

# A stopped broker and an unreachable cluster refuse connections: see conftest.py.
pytestmark = [
    pytest.mark.kafka,
    pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning"),
]

REPLICA_THROTTLES = ("leader.replication.throttled.replicas",
                     "follower.replication.throttled.replicas")  # fmt: skip
RATE_THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")

# Leaders stay where the test puts them (Kafka would move them back after 5 minutes).
OVERRIDES = {"auto.leader.rebalance.enable": "false"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftCluster]:
    kraft = KRaftCluster(Path(tmp_path_factory.mktemp("kraft")), overrides=OVERRIDES)
    kraft.start()
    yield kraft
    kraft.kill()


@pytest.fixture(scope="module")
def backend(cluster: KRaftCluster) -> Iterator[KafkaAdminBackend]:
    kafka = KafkaAdminBackend(KafkaConnection(tuple(cluster.bootstrap.split(","))))
    yield kafka
    kafka.close()


def read(backend: KafkaAdminBackend, *topics: str) -> ClusterSnapshot:
    return backend.read(topics, list_topics=False)


def read_until(
    backend: KafkaAdminBackend,
    topics: list[str],
    holds: Callable[[ClusterSnapshot], object],
    what: str,
    *,
    unavailable_too: bool = False,
) -> ClusterSnapshot:
    """The first read of `topics` that `holds` likes. `unavailable_too`: a read that finds the
    cluster unavailable (a broker going or coming back) is one more to retry, as the reconciler
    retries it."""

    def attempt() -> ClusterSnapshot | None:
        try:
            snapshot = read(backend, *topics)
        except ClusterUnavailableError:
            if unavailable_too:
                return None
            raise
        return snapshot if holds(snapshot) else None

    found = eventually(attempt, what)
    assert found is not None
    return found


def replicas(snapshot: ClusterSnapshot, topic: str) -> dict[int, tuple[int, ...]]:
    return {p: s.replicas for p, s in snapshot.topics[topic].partitions.items()}


def test_it_is_a_topic_backend(backend: KafkaAdminBackend) -> None:
    typed: TopicBackend = backend  # mypy checks the structure (backend.py checks it too)
    assert typed.where == f"Kafka at {backend.connection.bootstrap}"
    assert typed.unavailable_reason == "KafkaUnavailable"


def test_several_topics_created_in_one_call_as_given(backend: KafkaAdminBackend) -> None:
    wanted = [
        NewTopic("orders", {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1], 3: [0, 2, 1]},
                 {"retention.ms": "86400000", "cleanup.policy": "compact"}),
        NewTopic("payments", {0: [2, 1], 1: [1, 0]}, {"min.insync.replicas": "2"}),
        NewTopic("audit", {0: [1]}),
    ]  # fmt: skip
    assert backend.create_topics(wanted) == {"orders": None, "payments": None, "audit": None}
    every = [TopicPartition(t.name, p) for t in wanted for p in t.assignment]
    assert backend.wait_for_partitions(every, limit=30, idle=10)

    snapshot = read_until(
        backend,
        ["orders", "payments", "audit", "absent"],
        lambda s: len(s.topics) == 3,
        "the three topics",
    )
    assert snapshot.topic_names == frozenset({"orders", "payments", "audit"})
    assert snapshot.live_brokers == frozenset({0, 1, 2})
    assert {b: i.rack for b, i in snapshot.brokers.items()} == {0: "a", 1: "b", 2: "c"}
    assert snapshot.controller_id in {0, 1, 2} and snapshot.controller_epoch is not None
    for topic in wanted:
        found = snapshot.topics[topic.name]
        assert replicas(snapshot, topic.name) == {p: tuple(r) for p, r in topic.assignment.items()}
        # Kafka elects each partition's preferred replica, and keeps only the configs given.
        assert {p: s.leader for p, s in found.partitions.items()} == {
            p: r[0] for p, r in topic.assignment.items()
        }
        assert dict(found.config) == dict(topic.config)
        assert found.topic_id is not None and len(found.topic_id) == 22
        assert all(
            s.status(snapshot.live_brokers) is PartitionStatus.ONLINE
            for s in found.partitions.values()
        )
    assert "absent" not in snapshot.topics and not snapshot.unreadable
    assert {"orders", "payments", "audit"} <= set(backend.topic_names())
    listed = backend.read(["audit"], list_topics=True)
    assert {"orders", "payments", "audit"} <= listed.topic_names and set(listed.topics) == {"audit"}


def test_a_collision_fails_its_topic_and_the_others_are_created(
    backend: KafkaAdminBackend,
) -> None:
    assert backend.create_topics([NewTopic("first", {0: [0]})]) == {"first": None}
    outcomes = backend.create_topics(
        [
            NewTopic("first", {0: [1]}),
            NewTopic("second", {0: [1, 2]}),
            NewTopic("doubled", {0: [1, 1]}),
            NewTopic("misconfigured", {0: [0]}, {"retention.ms": "soon"}),
            NewTopic("third", {0: [2], 1: [0]}),
        ]
    )
    assert set(outcomes) == {"first", "second", "doubled", "misconfigured", "third"}
    assert outcomes["second"] is None and outcomes["third"] is None
    exists = outcomes["first"]
    assert isinstance(exists, TopicExistsException)
    assert str(exists) == "Topic 'first' already exists."
    doubled = outcomes["doubled"]
    assert isinstance(doubled, InvalidReplicaAssignmentException)
    assert str(doubled) == "The manual partition assignment includes the broker 1 more than once."
    misconfigured = outcomes["misconfigured"]
    assert isinstance(misconfigured, InvalidConfigurationException)
    assert str(misconfigured) == (
        "Invalid value soon for configuration retention.ms: Not a number of type LONG"
    )
    assert backend.create_topics([]) == {}
    assert eventually(lambda: backend.topic_exists("third"), "third")
    assert not backend.topic_exists("doubled")


def test_partitions_added_with_an_explicit_assignment(backend: KafkaAdminBackend) -> None:
    backend.create_topics([NewTopic("growing", {0: [0, 1]})])
    backend.add_partitions("growing", {1: [1, 2], 2: [2, 0]})
    assert backend.wait_for_partitions([TopicPartition("growing", 2)], limit=30, idle=10)
    snapshot = read_until(
        backend,
        ["growing"],
        lambda s: "growing" in s.topics and len(s.topics["growing"].partitions) == 3,
        "three partitions",
    )
    assert replicas(snapshot, "growing") == {0: (0, 1), 1: (1, 2), 2: (2, 0)}
    backend.add_partitions("growing", {})  # nothing to add: nothing asked
    with pytest.raises(InvalidPartitionsException, match=r"^Topic already has 3 partition\(s\)\.$"):
        backend.add_partitions("growing", {2: [0, 1]})
    with pytest.raises(
        InvalidReplicaAssignmentException,
        match=r"^The manual partition assignment includes broker 7, but no such broker is "
        r"registered\.$",
    ):
        backend.add_partitions("growing", {3: [0, 7]})
    with pytest.raises(UnknownTopicOrPartitionException):
        backend.add_partitions("nowhere", {1: [0]})


def test_a_config_set_changed_and_removed(backend: KafkaAdminBackend) -> None:
    backend.create_topics([NewTopic("tuned", {0: [0, 1]}, {"retention.ms": "1000"})])
    eventually(lambda: backend.topic_exists("tuned"), "tuned")

    def config_becomes(wanted: dict[str, str]) -> None:
        read_until(
            backend,
            ["tuned"],
            lambda s: "tuned" in s.topics and s.topics["tuned"].config == wanted,
            f"config {wanted}",
        )

    backend.change_config("tuned", {"retention.ms": "1000", "segment.ms": "3600000"})  # set
    config_becomes({"retention.ms": "1000", "segment.ms": "3600000"})
    backend.change_config("tuned", {"retention.ms": "2000", "segment.ms": "3600000"})  # change
    config_becomes({"retention.ms": "2000", "segment.ms": "3600000"})
    backend.change_config("tuned", {"segment.ms": "3600000"})  # remove
    config_becomes({"segment.ms": "3600000"})
    backend.change_config("tuned", {})
    config_becomes({})
    unknown = r"^Unknown topic config name: nonsense$"
    with pytest.raises(InvalidConfigurationException, match=unknown):
        backend.change_config("tuned", {"nonsense": "1"})
    with pytest.raises(InvalidConfigurationException, match=r"^Invalid value -7 for configuration"):
        backend.change_config("tuned", {"min.insync.replicas": "-7"})
    with pytest.raises(
        UnknownTopicOrPartitionException, match=r"^The topic 'nowhere' does not exist\.$"
    ):
        backend.change_config("nowhere", {"retention.ms": "1"})
    config_becomes({})  # nothing of a refused change was applied


@pytest.fixture
def throttle(cluster: KRaftCluster) -> Iterator[Callable[[], None]]:
    """Replication between brokers throttled to a byte a second, until the function given is
    called: a reassignment that copies data stays in progress until then."""
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap.split(","))
    rates = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")

    def set_rates(value: object) -> None:
        for broker in ("0", "1", "2"):
            changes = dict.fromkeys(rates, value)
            resource = ConfigResource(ConfigResourceType.BROKER, broker, changes)
            outcome = admin.alter_configs([resource], raise_on_unknown=False, incremental=True)
            assert outcome == {"broker": {broker: "OK"}}

    set_rates("1")
    try:
        yield lambda: set_rates((AlterConfigOp.DELETE, None))
    finally:
        set_rates((AlterConfigOp.DELETE, None))
        admin.close()


def test_a_reassignment_in_progress_then_finished_then_the_preferred_leader_elected(
    backend: KafkaAdminBackend, cluster: KRaftCluster, throttle: Callable[[], None]
) -> None:
    throttled = {"leader.replication.throttled.replicas": "*",
                 "follower.replication.throttled.replicas": "*"}  # fmt: skip
    backend.create_topics([NewTopic("moving", {0: [0], 1: [1]}, throttled)])
    tp = TopicPartition("moving", 0)
    assert backend.wait_for_partitions([tp], limit=30, idle=10)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "linger.ms": 20, "log_level": 0})
    for _ in range(3000):  # 3 MB: three fetches of replica.fetch.max.bytes
        producer.produce("moving", b"x" * 1000, partition=0)
        producer.poll(0)
    assert producer.flush(30) == 0

    backend.reassign({tp: [1, 0]})
    assert backend.list_reassignments() == {tp: ReplicaAssignment((1, 0), (1,), ())}
    with pytest.raises(
        ReassignmentInProgressException,
        match=r"^A partition reassignment is in progress for the topic 'moving'\.$",
    ):
        backend.reassign({tp: [2, 0], TopicPartition("moving", 1): [1, 2]})
    moving = read_until(
        backend,
        ["moving"],
        lambda s: s.topics["moving"].being_reassigned,
        "the reassignment in the metadata",
    )
    partition = moving.topics["moving"].partitions[0]
    assert partition.assignment == ReplicaAssignment((1, 0), (1,), ())
    assert (partition.leader, partition.isr) == (0, (0,))
    assert moving.pending_reassignments == {tp: (1, 0)}
    assert moving.deletion_blockers("moving") == [
        "partition reassignment in progress for partitions 0"
    ]
    # The preferred replica is not in the ISR yet.
    not_yet = backend.elect_preferred([tp])[tp]
    assert isinstance(not_yet, BrokerError)
    assert not_yet.kafka_name == "PreferredLeaderNotAvailableException"

    # Unknown partitions and brokers: kafka-python keeps each partition's error, not its text.
    with pytest.raises(
        InvalidReplicaAssignmentException, match=r"^Reassigning moving-1: Replication assignment"
    ):
        backend.reassign({TopicPartition("moving", 1): [1, 7]})
    with pytest.raises(UnknownTopicOrPartitionException, match=r"^Reassigning nowhere-0: "):
        backend.reassign({TopicPartition("nowhere", 0): [1]})

    throttle()  # lifted: the copy finishes
    eventually(lambda: backend.list_reassignments() == {}, "the reassignment to finish", 60)
    done = read_until(
        backend,
        ["moving"],
        lambda s: s.topics["moving"].partitions[0].isr == (0, 1),
        "broker 1 in the ISR",
    )
    finished = done.topics["moving"].partitions[0]
    assert finished.assignment == ReplicaAssignment((1, 0))
    assert finished.leader == 0  # the leader stays where it was: not the preferred replica
    assert done.pending_reassignments == {} and done.topics["moving"].being_reassigned == ()
    # Planned from a read taken before the move ended: refused, and nothing is moved back.
    with pytest.raises(
        ReassignmentInProgressException,
        match=r"^The replicas of moving-0 changed since they were read: a partition "
        r"reassignment ended meanwhile\.$",
    ):
        backend.reassign({tp: [0]}, expected={tp: [0], TopicPartition("moving", 1): [1]})
    assert backend.list_reassignments() == {}
    unmoved = backend.read(["moving"], list_topics=False).topics["moving"].partitions[0]
    assert unmoved.assignment == ReplicaAssignment((1, 0))

    assert backend.elect_preferred([tp, TopicPartition("moving", 1)]) == {
        tp: None,
        TopicPartition("moving", 1): None,  # led by its preferred replica already
    }
    read_until(
        backend,
        ["moving"],
        lambda s: s.topics["moving"].partitions[0].leader == 1,
        "the preferred replica leading",
    )
    unknown = backend.elect_preferred([TopicPartition("nowhere", 0)])
    assert isinstance(unknown[TopicPartition("nowhere", 0)], UnknownTopicOrPartitionException)


def test_a_finished_move_reads_as_moving_while_a_broker_shows_it_otherwise(
    backend: KafkaAdminBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broker whose metadata lags the controller describes a move that has ended as if it
    had not: replayed here by answering DescribeTopics as a broker did before the move (a real
    lag of a few milliseconds cannot be timed). The backend remembers the move's target, so the
    read says the partition is moving, and a replication factor change planned from the stale
    replicas is refused: neither undoes the move."""
    replay: list[Any] = []
    last: dict[str, Any] = {}
    real = KafkaAdminClient.describe_topics

    def lagging(admin: KafkaAdminClient, topics: list[str] | None = None) -> Any:
        answer = real(admin, topics)
        if topics == ["drained"]:
            if replay:
                return replay[0]
            last["drained"] = answer
        return answer

    monkeypatch.setattr(KafkaAdminClient, "describe_topics", lagging)
    backend.create_topics([NewTopic("drained", {0: [0, 2]}, {})])
    tp = TopicPartition("drained", 0)
    read_until(backend, ["drained"], lambda s: "drained" in s.topics, "the topic")
    replay.append(last["drained"])  # replicas [0, 2]: broker 2 is to be drained

    backend.reassign({tp: [0, 1]})
    eventually(lambda: backend.list_reassignments() == {}, "the move to end", 60)
    lagged = read(backend, "drained")
    assert lagged.pending_reassignments == {tp: (0, 1)}
    assert lagged.topics["drained"].partitions[0].assignment == ReplicaAssignment(
        (0, 1, 2), (1,), (2,)
    )
    with pytest.raises(
        ReassignmentInProgressException,
        match=r"^The replicas of drained-0 changed since they were read",
    ):
        backend.reassign({tp: [0]}, expected={tp: [0, 2]})  # as if planned from that read

    replay.clear()  # the broker catches up
    caught_up = read_until(
        backend,
        ["drained"],
        lambda s: s.topics["drained"].partitions[0].replicas == (0, 1),
        "the move's end in the metadata",
    )
    assert caught_up.pending_reassignments == {}
    assert caught_up.topics["drained"].being_reassigned == ()


def test_a_deleted_topic_is_gone_at_once(backend: KafkaAdminBackend) -> None:
    backend.create_topics([NewTopic("doomed", {0: [0, 1, 2]})])
    eventually(lambda: backend.topic_exists("doomed"), "doomed")
    backend.delete_topic("doomed")
    assert not backend.deletion_requested("doomed")  # no marker to wait on in KRaft
    eventually(lambda: not backend.topic_exists("doomed"), "doomed gone")
    gone = read(backend, "doomed")
    assert "doomed" not in gone.topics and "doomed" not in backend.topic_names()
    with pytest.raises(UnknownTopicOrPartitionException):
        backend.delete_topic("doomed")


def test_topic_and_broker_dynamic_configs_set_read_and_deleted(
    backend: KafkaAdminBackend,
) -> None:
    leader, follower = REPLICA_THROTTLES
    backend.create_topics([NewTopic("throttled", {0: [0, 1]}, {"retention.ms": "1000"})])
    eventually(lambda: backend.topic_exists("throttled"), "throttled")
    keys = (leader, follower, "retention.ms")
    brokers = ["0", "1", "2"]

    def configs_become(kind: ConfigKind, names: list[str], wanted: object) -> None:
        # Each broker takes a change up from the metadata log a moment after the controller.
        asked = keys if kind == "topic" else RATE_THROTTLES
        eventually(lambda: backend.dynamic_configs(kind, names, asked) == wanted, f"{wanted}")

    try:
        backend.alter_configs("topic", {"throttled": {leader: "0:0,0:1", follower: "0:2"}})
        rates = dict.fromkeys(RATE_THROTTLES, "5000000")
        backend.alter_configs("broker", {"1": rates, "2": rates})
        configs_become(
            "topic",
            ["throttled"],
            {"throttled": {leader: "0:0,0:1", follower: "0:2", "retention.ms": "1000"}},
        )
        configs_become("broker", brokers, {"0": {}, "1": rates, "2": rates})
    finally:
        backend.alter_configs("topic", {"throttled": dict.fromkeys(REPLICA_THROTTLES, None)})
        backend.alter_configs("broker", {b: dict.fromkeys(RATE_THROTTLES, None) for b in brokers})
    configs_become("topic", ["throttled"], {"throttled": {"retention.ms": "1000"}})
    configs_become("broker", brokers, {"0": {}, "1": {}, "2": {}})
    # A topic that does not exist has none, and cannot be given any.
    assert backend.dynamic_configs("topic", ["nowhere"], keys) == {"nowhere": {}}
    with pytest.raises(
        UnknownTopicOrPartitionException, match=r"^The topic 'nowhere' does not exist\.$"
    ):
        backend.alter_configs("topic", {"nowhere": {leader: "0:0"}})
    with pytest.raises(InvalidConfigurationException):
        backend.alter_configs("topic", {"throttled": {leader: "not a replica list"}})


def test_wait_for_partitions(backend: KafkaAdminBackend) -> None:
    assert backend.wait_for_partitions([], limit=1, idle=1)
    backend.create_topics([NewTopic("waited", {p: [p % 3] for p in range(6)})])
    assert backend.wait_for_partitions(
        [TopicPartition("waited", p) for p in range(6)], limit=30, idle=10
    )
    started = time.monotonic()
    # Partition 6 never comes: given up once nothing appeared for `idle` seconds.
    assert not backend.wait_for_partitions(
        [TopicPartition("waited", 6), TopicPartition("never", 0)], limit=30, idle=0.5
    )
    assert 0.5 <= time.monotonic() - started < 5


# Twenty configs, each at Kafka's default: with its partition and itself, 23 records a topic
# (min.insync.replicas takes two).
WIDE_CONFIGS = {
    "cleanup.policy": "delete", "compression.type": "producer", "delete.retention.ms": "86400000",
    "file.delete.delay.ms": "60000", "flush.messages": "9223372036854775807",
    "flush.ms": "9223372036854775807", "index.interval.bytes": "4096",
    "max.compaction.lag.ms": "9223372036854775807", "max.message.bytes": "1048588",
    "message.timestamp.type": "CreateTime", "min.cleanable.dirty.ratio": "0.5",
    "min.compaction.lag.ms": "0", "min.insync.replicas": "1", "preallocate": "false",
    "retention.bytes": "-1", "retention.ms": "604800000", "segment.bytes": "1073741824",
    "segment.index.bytes": "10485760", "segment.jitter.ms": "0", "segment.ms": "604800000",
}  # fmt: skip


def test_a_creation_over_the_controllers_record_limit_goes_in_several_requests(
    backend: KafkaAdminBackend,
) -> None:
    # 480 topics of 23 records: 11,040, which Kafka's controller refuses in one request (its
    # MAX_RECORDS_PER_USER_OP), every topic of it; 434 of them it takes.
    wide = [NewTopic(f"wide-{i:03d}", {0: [i % 3]}, WIDE_CONFIGS) for i in range(480)]

    def validated(topics: list[NewTopic]) -> set[int]:
        answer = backend._call(
            lambda admin: admin.create_topics(
                {t.name: {"assignments": {0: list(t.assignment[0])}, "configs": dict(t.config)}
                 for t in topics},
                timeout_ms=30_000, raise_errors=False, validate_only=True,
            )
        )  # fmt: skip
        return {t["error_code"] for t in answer["topics"]}

    assert validated(wide) == {44}  # POLICY_VIOLATION: excessively large batch operation
    assert validated(wide[:434]) == {0}
    assert validated(wide[:435]) == {44}

    created = backend.create_topics(wide)
    assert created == dict.fromkeys((t.name for t in wide), None)
    names = [t.name for t in wide]
    read_until(backend, names, lambda s: len(s.topics) == len(wide), "every one created")
    for topic in wide:
        backend.delete_topic(topic.name)


class LostAnswers(KafkaAdminBackend):
    """Each CreateTopics reaches Kafka's controller, and its answer is lost on the way back."""

    def _create_topics(self, topics: Sequence[NewTopic]) -> dict[str, Exception | None]:
        super()._create_topics(topics)
        raise ClusterUnavailableError(f"{self.where} did not answer within 0.1 s")


def test_a_creation_whose_answer_was_lost_but_kafka_committed_counts_as_created(
    backend: KafkaAdminBackend,
) -> None:
    lost = LostAnswers(backend.connection)
    try:
        created = lost.create_topics([NewTopic("committed", {0: [0], 1: [1]})])
        assert created == {"committed": None}
        # Not what this creation asked for (Kafka refused it: it exists with two partitions):
        # not taken for created, and with no answer at all the cluster counts as away.
        with pytest.raises(ClusterUnavailableError, match=r"did not answer within 0\.1 s"):
            lost.create_topics([NewTopic("committed", {0: [0], 1: [1], 2: [2]})])
    finally:
        lost.close()
        backend.delete_topic("committed")


def test_positions_grow_with_reads_and_remember_what_each_read_saw(
    backend: KafkaAdminBackend,
) -> None:
    before = backend.position()
    assert backend.reads.baseline("remembered", before) is None
    backend.create_topics([NewTopic("remembered", {0: [0]})])
    read_until(backend, ["remembered"], lambda s: "remembered" in s.topics, "remembered")
    after = backend.position()
    assert after > before
    seen = backend.reads.baseline("remembered", before)
    assert seen is not None and before < seen.position <= after
    assert backend.reads.baseline("remembered", after) is None  # no read since


def test_two_threads_use_one_backend_at_once(backend: KafkaAdminBackend) -> None:
    backend.create_topics([NewTopic("shared", {0: [0, 1]})])
    eventually(lambda: backend.topic_exists("shared"), "shared")
    failures: list[BaseException] = []

    def reads() -> None:
        try:
            for _ in range(30):
                read(backend, "shared", "orders")
        except BaseException as e:
            failures.append(e)

    reader = threading.Thread(target=reads)
    reader.start()
    try:
        for i in range(15):
            backend.change_config("shared", {"retention.ms": str(1000 + i)})
            backend.topic_exists("shared")
    finally:
        reader.join()
    assert failures == []


def test_a_stopped_broker_is_fenced_and_its_replicas_offline(
    backend: KafkaAdminBackend, cluster: KRaftCluster
) -> None:
    backend.create_topics([NewTopic("spread", {0: [2, 0], 1: [0, 1]})])
    assert backend.wait_for_partitions([TopicPartition("spread", 1)], limit=30, idle=10)

    cluster.stop_node(2)
    try:
        # Still registered, but fenced: describe_cluster lists it, the snapshot does not.
        snapshot = read_until(
            backend,
            ["spread"],
            lambda s: (
                s.live_brokers == frozenset({0, 1}) and s.topics["spread"].partitions[0].leader == 0
            ),
            "broker 2 fenced and its leadership moved",
            unavailable_too=True,
        )
        moved = snapshot.topics["spread"].partitions[0]
        assert moved.offline_replicas(snapshot.live_brokers) == (2,)
        assert moved.isr == (0,) and moved.under_replicated()
        assert snapshot.deletion_blockers("spread") == [
            "replicas on offline brokers 2 (deletion resumes when they return)"
        ]
        # Writes the controller takes go on with a broker gone.
        assert backend.create_topics([NewTopic("while-down", {0: [0, 1]})]) == {"while-down": None}
    finally:
        cluster.start_node(2)
    read_until(
        backend,
        ["spread"],
        lambda s: s.live_brokers == frozenset({0, 1, 2}),
        "broker 2 back",
        unavailable_too=True,
    )

    # The admin client routes a broker's requests by its own metadata, which may not know broker
    # 2 yet: the next test of the module asks broker 2 itself.
    def broker_2_answers() -> bool:
        try:
            backend.dynamic_configs("broker", ["2"], RATE_THROTTLES)
        except ClusterUnavailableError:
            return False
        return True

    eventually(broker_2_answers, "broker 2 answering its own requests")


def test_an_unreachable_cluster_is_unavailable_quickly() -> None:
    address = f"127.0.0.1:{free_port()}"
    backend = KafkaAdminBackend(KafkaConnection((address,)), timeout=1.0)
    threads = threading.active_count()
    started = time.monotonic()
    try:
        for call in (
            lambda: backend.read(["t"], list_topics=False),
            lambda: backend.create_topics([NewTopic("t", {0: [0]})]),
            backend.topic_names,
        ):
            with pytest.raises(ClusterUnavailableError, match=f"^Kafka at {address} "):
                call()
    finally:
        backend.close()
    assert time.monotonic() - started < 3 * 1.0 + 2
    # A client that never bootstrapped leaves no network thread behind.
    assert threading.active_count() == threads
    with pytest.raises(ClusterUnavailableError, match="closed"):
        backend.topic_exists("t")
