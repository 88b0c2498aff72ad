"""Replica assignment against Kafka's own vectors (reference §1 and §2)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import pytest

from kafka_topic_operator.kafka.assignment import (
    BrokerMetadata,
    RackAwareMode,
    assign_replicas_to_brokers,
    broker_metadatas,
    create_new_partitions_assignment,
    new_partitions_from_command_line,
    parse_replica_assignment,
    rack_alternated_broker_list,
    validate_create_partitions,
    validate_create_request,
    validate_replica_assignment,
    validate_topic_create,
)
from kafka_topic_operator.kafka.errors import (
    AdminCommandFailedException,
    AdminOperationException,
    BrokerNotAvailableException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    InvalidRequestException,
    InvalidTopicException,
    ReassignmentInProgressException,
    TopicExistsException,
    UnknownTopicOrPartitionException,
)
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment


@contextmanager
def raises_exactly(kind: type[Exception], message: str) -> Iterator[None]:
    with pytest.raises(kind) as e:
        yield
    assert str(e.value) == message


@contextmanager
def raises_containing(kind: type[Exception], fragment: str) -> Iterator[None]:
    with pytest.raises(kind) as e:
        yield
    assert fragment in str(e.value)


def racked(rack_map: Mapping[int, str]) -> list[BrokerMetadata]:
    return [BrokerMetadata(b, r) for b, r in sorted(rack_map.items())]


def plain(ids: Sequence[int]) -> list[BrokerMetadata]:
    return [BrokerMetadata(b) for b in ids]


class ScriptedRandom:
    def __init__(self, *draws: int) -> None:
        self.draws = list(draws)
        self.bounds: list[int] = []

    def next_int(self, bound: int) -> int:
        self.bounds.append(bound)
        return self.draws.pop(0)


def check_replica_distribution(
    assignment: Mapping[int, Sequence[int]],
    rack_map: Mapping[int, str],
    num_brokers: int,
    num_partitions: int,
    rf: int,
    *,
    rack_aware: bool = True,
    leaders: bool = True,
    replicas: bool = True,
) -> None:
    """A port of RackAwareTest.checkReplicaDistribution."""
    for brokers in assignment.values():
        assert len(set(brokers)) == len(brokers)
    if rack_aware:
        for brokers in assignment.values():
            assert len({rack_map[b] for b in brokers}) == rf
    if leaders:
        counts = Counter(brokers[0] for brokers in assignment.values())
        assert all(counts[b] == num_partitions // num_brokers for b in rack_map)
    if replicas:
        counts = Counter(b for brokers in assignment.values() for b in brokers)
        assert all(counts[b] == num_partitions * rf // num_brokers for b in rack_map)


# ---- AdminRackAwareTest ---------------------------------------------------------------------

RACKS_ALTERNATED = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
R6 = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}


def test_rack_alternated_broker_list() -> None:
    assert rack_alternated_broker_list(RACKS_ALTERNATED) == [0, 3, 1, 5, 4, 2]
    without_5 = {b: r for b, r in RACKS_ALTERNATED.items() if b != 5}
    assert rack_alternated_broker_list(without_5) == [0, 3, 1, 4, 2]
    javadoc = {b: f"rack{b // 3 + 1}" for b in range(9)}
    assert rack_alternated_broker_list(javadoc) == [0, 3, 6, 1, 4, 7, 2, 5, 8]


def test_rack_aware_vector_with_the_shifted_partition() -> None:
    got = assign_replicas_to_brokers(racked(RACKS_ALTERNATED), 7, 3, 0, 0)
    assert got == {
        0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2],
        4: [4, 2, 0], 5: [2, 0, 3], 6: [0, 4, 2],
    }  # fmt: skip


def test_rack_unaware_vector_matches_the_javadoc_table() -> None:
    got = assign_replicas_to_brokers(plain(range(5)), 10, 3, fixed_start_index=0)
    assert got == {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2],
    }  # fmt: skip


@pytest.mark.parametrize("rf", [0, 6])
def test_bad_replication_factors(rf: int) -> None:
    with pytest.raises(InvalidReplicationFactorException):
        assign_replicas_to_brokers(plain(range(5)), 10, rf)


def test_validation_messages_and_order() -> None:
    with pytest.raises(
        InvalidPartitionsException, match=r"^Number of partitions must be larger than 0\.$"
    ):
        assign_replicas_to_brokers(plain(range(5)), 0, 0)
    with pytest.raises(
        InvalidReplicationFactorException, match=r"^Replication factor must be larger than 0\.$"
    ):
        assign_replicas_to_brokers(plain(range(5)), 1, 0)
    with pytest.raises(InvalidReplicationFactorException) as e:
        assign_replicas_to_brokers(plain(range(5)), 1, 6)
    assert str(e.value) == "Replication factor: 6 larger than available brokers: 5."
    with pytest.raises(AdminOperationException) as mixed:
        assign_replicas_to_brokers([BrokerMetadata(0, "a"), BrokerMetadata(1)], 1, 1)
    assert str(mixed.value) == (
        "Not all brokers have rack information for replica rack aware assignment."
    )  # fmt: skip


def test_two_independent_random_draws() -> None:
    rng = ScriptedRandom(1, 3)
    got = assign_replicas_to_brokers(plain(range(5)), 2, 3, rng=rng)
    assert rng.bounds == [5, 5]
    # start index 1 and shift 3: follower j of partition p at (first + 1 + (3 + j) % 4) % 5
    assert got == {0: [1, 0, 2], 1: [2, 1, 3]}


@pytest.mark.parametrize(
    ("rack_map", "partitions", "rf", "start", "start_pid", "checks"),
    [
        (R6, 6, 3, 2, 0, {}),
        (R6, 6, 3, -1, -1, {}),
        (R6, 13, 3, 0, 0, {"leaders": False, "replicas": False}),
        ({0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}, 12, 3, -1, -1,
         {"replicas": False}),
        (R6, 12, 2, -1, -1, {}),
        ({6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack3", 11: "rack1"}, 12, 2, -1, 12,
         {}),
        (R6, 6, 2, -1, -1, {}),
        ({0: "rack1", 1: "rack2", 4: "rack3"}, 3, 2, -1, -1, {}),
        ({0: "r1", 1: "r2", 2: "r2", 3: "r3", 4: "r3", 5: "r1", 6: "r1", 7: "r2", 8: "r2",
          9: "r3", 10: "r1", 11: "r3"}, 96, 3, -1, -1, {}),
    ],
)  # fmt: skip
def test_rack_aware_property_rows(
    rack_map: dict[int, str], partitions: int, rf: int, start: int, start_pid: int,
    checks: dict[str, bool],
) -> None:  # fmt: skip
    for _ in range(20 if start < 0 else 1):
        got = assign_replicas_to_brokers(racked(rack_map), partitions, rf, start, start_pid)
        first = max(0, start_pid)
        assert sorted(got) == list(range(first, first + partitions))
        check_replica_distribution(got, rack_map, len(rack_map), partitions, rf, **checks)


MORE_RACKS = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}


def test_more_replicas_than_racks() -> None:
    for _ in range(20):
        got = assign_replicas_to_brokers(racked(MORE_RACKS), 6, 5)
        assert all(len(r) == 5 and len({MORE_RACKS[b] for b in r}) == 3 for r in got.values())


def test_less_replicas_than_racks() -> None:
    for _ in range(20):
        got = assign_replicas_to_brokers(racked(MORE_RACKS), 6, 2)
        assert all(len(r) == 2 and len({MORE_RACKS[b] for b in r}) == 2 for r in got.values())


def test_single_rack() -> None:
    single = dict.fromkeys(range(6), "rack1")
    for _ in range(20):
        got = assign_replicas_to_brokers(racked(single), 6, 3)
        assert all(len(r) == 3 for r in got.values())
        assert Counter(r[0] for r in got.values()) == dict.fromkeys(range(6), 1)


def test_skip_broker_with_replica_already_assigned() -> None:
    rack_map = {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"}
    got = assign_replicas_to_brokers(racked(rack_map), 6, 4, 2, -1)
    assert all(len(set(r)) == 4 for r in got.values())


# ---- AdminZkClientTest ----------------------------------------------------------------------


def test_get_broker_metadatas() -> None:
    brokers = [BrokerMetadata(b, {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack1", 5: "rack3"}
                              .get(b)) for b in (5, 4, 3, 2, 1, 0)]  # fmt: skip
    for mode in (RackAwareMode.DISABLED, RackAwareMode.SAFE):
        assert broker_metadatas(brokers, mode) == [BrokerMetadata(b) for b in range(6)]
    with pytest.raises(AdminOperationException) as e:
        broker_metadatas(brokers, RackAwareMode.ENFORCED)
    assert str(e.value) == (
        "Not all brokers have rack information. Add --disable-rack-aware in command line to make "
        "replica assignment without rack information."
    )
    subset = broker_metadatas(brokers, RackAwareMode.ENFORCED, [0, 1, 2, 3, 5])
    assert [b.rack for b in subset] == ["rack1", "rack2", "rack2", "rack1", "rack3"]
    assert [b.id for b in subset] == [0, 1, 2, 3, 5]


@pytest.mark.parametrize(
    "assignment",
    [
        {0: [0, 0]},
        {0: [0, 1], 1: [0]},
        {1: [1, 2], 2: [1, 2]},
        {0: [1, 2], 3: [1, 2]},
        {-1: [1, 2], 1: [1, 2], 2: [1, 2], 4: [1, 2]},
        {},
    ],
)
def test_manual_assignments_rejected(assignment: dict[int, list[int]]) -> None:
    with pytest.raises(InvalidReplicaAssignmentException):
        validate_topic_create("test", assignment, existing_topics=[])


def test_manual_assignment_messages() -> None:
    with pytest.raises(InvalidReplicaAssignmentException) as e:
        validate_topic_create("test", {0: [0, 1], 1: [0]}, [])
    assert str(e.value) == "All partitions should have the same number of replicas"
    with pytest.raises(InvalidReplicaAssignmentException) as e:
        validate_topic_create("test", {0: [0, 0]}, [])
    assert str(e.value) == "Duplicate replica assignment found: Map(0 -> List(0, 0))"
    with pytest.raises(InvalidReplicaAssignmentException) as e:
        validate_topic_create("test", {1: [1, 2], 2: [1, 2]}, [])
    assert str(e.value) == "partitions should be a consecutive 0-based integer sequence"


def test_sum_check_quirk_is_kept() -> None:
    validate_topic_create("test", {-3: [1], 0: [1], 1: [1], 5: [1]}, [])


def test_valid_manual_assignment_and_topic_creation_in_zk_map() -> None:
    validate_topic_create("test", {0: [0, 1, 2], 1: [1, 2, 3]}, [])
    table = {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1], 5: [0, 2, 3],
        6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2], 10: [1, 2, 3], 11: [1, 3, 4],
    }  # fmt: skip
    validate_topic_create("test", table, [])
    with raises_exactly(TopicExistsException, "Topic 'test' already exists."):
        validate_topic_create("test", table, ["test"])


def test_creation_checks_in_kafkas_order() -> None:
    with pytest.raises(InvalidTopicException):
        validate_topic_create("bad name", {}, ["bad name"], ["bad name"])
    with raises_exactly(TopicExistsException, "Topic 't' is marked for deletion."):
        validate_topic_create("t", {0: [1]}, ["t"], ["t"])
    with pytest.raises(InvalidTopicException) as e:
        validate_topic_create("test_topic", {0: [1]}, ["test.topic", "other"])
    assert str(e.value) == "Topic 'test_topic' collides with existing topics: test.topic"


def test_create_request_exclusivity() -> None:
    with raises_containing(InvalidRequestException, "Both numPartitions or replicationFactor"):
        validate_create_request(3, None, {0: [1]})
    validate_create_request(None, None, {0: [1]})
    validate_create_request(3, 1, None)


# ---- AddPartitionsTest ----------------------------------------------------------------------

FOUR = plain(range(4))


def test_replica_placement_all_servers() -> None:
    new = create_new_partitions_assignment("new-topic3", {0: [2, 3, 0, 1]}, FOUR, 7)
    assert new == {1: [3, 2, 0, 1], 2: [0, 3, 1, 2], 3: [1, 0, 2, 3], 4: [2, 3, 0, 1],
                   5: [3, 0, 1, 2], 6: [0, 1, 2, 3]}  # fmt: skip


def test_replica_placement_partial_servers() -> None:
    new = create_new_partitions_assignment("new-topic2", {0: [1, 2]}, FOUR, 3)
    assert new == {1: [2, 0], 2: [3, 1]}
    assert {1: {0, 2}, 2: {1, 3}} == {p: set(r) for p, r in new.items()}


def test_manual_assignment_of_replicas() -> None:
    new = create_new_partitions_assignment(
        "new-topic2", {0: [1, 2]}, FOUR, 3, {0: [1, 2], 1: [0, 1], 2: [2, 3]}
    )
    assert new[1] == [0, 1]


def test_wrong_replica_count() -> None:
    with pytest.raises(InvalidReplicaAssignmentException) as e:
        create_new_partitions_assignment("new-topic1", {0: [0, 1]}, FOUR, 2, {1: [0, 1, 2]})
    assert str(e.value) == (
        "Inconsistent replication factor between partitions, partition 0 has 2 while "
        "partitions [1] have replication factors [3], respectively."
    )


def test_missing_partition0() -> None:
    with pytest.raises(AdminOperationException) as e:
        create_new_partitions_assignment("new-topic5", {1: [0, 1]}, FOUR, 2)
    assert "Unexpected existing replica assignment for topic 'new-topic5', partition id 0 is " \
        "missing" in str(e.value)  # fmt: skip


def test_partition_count_must_grow() -> None:
    with pytest.raises(InvalidPartitionsException) as e:
        create_new_partitions_assignment("t", {0: [0, 1], 1: [1, 2]}, FOUR, 2)
    assert str(e.value) == (
        "The number of partitions for a topic can only be increased. Topic t currently has 2 "
        "partitions, 2 would not be an increase."
    )


def test_validate_replica_assignment_messages() -> None:
    with raises_exactly(
        InvalidReplicaAssignmentException,
        "Cannot have replication factor of 0 for partition id 1.",
    ):
        validate_replica_assignment({1: []}, 2, [0, 1])
    with pytest.raises(InvalidReplicaAssignmentException) as e:
        validate_replica_assignment({1: [0, 0]}, 2, [0, 1])
    assert str(e.value) == (
        "Duplicate brokers not allowed in replica assignment: 0, 0 for partition id 1."
    )
    with pytest.raises(BrokerNotAvailableException) as b:
        validate_replica_assignment({1: [0, 9]}, 2, [1, 0])
    assert str(b.value) == (
        "Some brokers specified for partition id 1 are not available. Specified brokers: 0, 9, "
        "available brokers: 0, 1."
    )
    with raises_containing(
        InvalidReplicaAssignmentException,
        "partitions [2, 3] have replication factors [1, 3]",
    ):
        validate_replica_assignment({3: [0, 1, 2], 1: [0, 1], 2: [1]}, 2, [0, 1, 2])


def test_create_partitions_api_checks() -> None:
    existing = {0: ReplicaAssignment.of([0, 1])}
    moving = {0: ReplicaAssignment.of([0, 1]).reassign_to([2, 3])}
    with raises_containing(
        ReassignmentInProgressException,
        "A partition reassignment is in progress for the topic 't'.",
    ):
        validate_create_partitions("t", moving, 3, None, [0, 1, 2, 3])
    with raises_containing(UnknownTopicOrPartitionException, "The topic 't' does not exist."):
        validate_create_partitions("t", {}, 3, None, [0])
    with raises_exactly(
        InvalidPartitionsException,
        "Topic currently has 1 partitions, which is higher than the requested -22.",
    ):
        validate_create_partitions("t", existing, -22, None, [0, 1])
    with raises_exactly(InvalidPartitionsException, "Topic already has 1 partitions."):
        validate_create_partitions("t", existing, 1, None, [0, 1])
    with raises_exactly(
        InvalidReplicaAssignmentException,
        "Unknown broker(s) in replica assignment: 7, 9.",
    ):
        validate_create_partitions("t", existing, 3, [[9, 0], [7, 1]], [0, 1])
    with raises_exactly(
        InvalidReplicaAssignmentException,
        "Increasing the number of partitions by 2 but 1 assignments provided.",
    ):
        validate_create_partitions("t", existing, 3, [[0, 1]], [0, 1])
    assert validate_create_partitions("t", existing, 3, [[1, 0], [0, 1]], [0, 1]) == {
        1: [1, 0], 2: [0, 1]
    }  # fmt: skip
    assert validate_create_partitions("t", existing, 3, None, [0, 1]) is None


# ---- TopicCommandWithZKClientTest -----------------------------------------------------------


def test_parse_replica_assignment() -> None:
    assert parse_replica_assignment("5:4,3:2,1:0") == {0: [5, 4], 1: [3, 2], 2: [1, 0]}
    assert parse_replica_assignment(" 1 : 2 ") == {0: [1, 2]}
    with raises_containing(AdminCommandFailedException, "may not contain duplicate entries: 1"):
        parse_replica_assignment("1:1")
    with pytest.raises(
        AdminOperationException, match="Partition 1 has different replication factor"
    ):
        parse_replica_assignment("1:2,3")
    with raises_containing(AdminCommandFailedException, "Invalid broker id 'x'"):
        parse_replica_assignment("1:x")


def test_alter_assignment_drops_the_existing_entries() -> None:
    existing = {0: [0, 1], 1: [1, 2]}
    manual = new_partitions_from_command_line(existing, parse_replica_assignment("5:3,3:1,4:2"))
    assert manual == {2: [4, 2]}
    new = create_new_partitions_assignment("t", existing, plain(range(6)), 3, manual)
    assert new == {2: [4, 2]}
