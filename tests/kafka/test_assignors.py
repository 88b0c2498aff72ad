"""Consumer assignors for one topic against Kafka's assignor tests and the Java 3.6.2 client."""

from __future__ import annotations

import random
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_topic_operator.kafka.assignors import (
    ASSIGNORS,
    CooperativeStickyAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
    Strategy,
    assign,
    member_order,
    members_by_count,
)

STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)

# Kafka 3.6.2 tests, restricted to single-topic fresh groups. For multi-topic tests the expectation
# used is the first topic's share, which is what that topic alone yields (noted per case).
# (strategy, partitions, members, expected)
KAFKA_TEST_VECTORS: list[tuple[Strategy, int, list[str], dict[str, list[int]]]] = [
    # RangeAssignorTest
    ("range", 3, ["consumer1"], {"consumer1": [0, 1, 2]}),  # testOneConsumerOneTopic
    # testTwoConsumersOneTopicOnePartition
    ("range", 1, ["consumer1", "consumer2"], {"consumer1": [0], "consumer2": []}),
    # testTwoConsumersOneTopicTwoPartitions
    ("range", 2, ["consumer1", "consumer2"], {"consumer1": [0], "consumer2": [1]}),
    # testMultipleConsumersMixedTopics, topic1 (all three subscribe; range works per topic)
    (
        "range",
        3,
        ["consumer1", "consumer2", "consumer3"],
        {"consumer1": [0], "consumer2": [1], "consumer3": [2]},
    ),
    # testTwoConsumersTwoTopicsSixPartitions, either topic
    ("range", 3, ["consumer1", "consumer2"], {"consumer1": [0, 1], "consumer2": [2]}),
    # RoundRobinAssignorTest
    ("roundrobin", 3, ["consumer"], {"consumer": [0, 1, 2]}),  # testOneConsumerOneTopic
    # testTwoConsumersOneTopicOnePartition
    ("roundrobin", 1, ["consumer1", "consumer2"], {"consumer1": [0], "consumer2": []}),
    # testTwoConsumersOneTopicTwoPartitions
    ("roundrobin", 2, ["consumer1", "consumer2"], {"consumer1": [0], "consumer2": [1]}),
    # testMultipleConsumersMixedTopics, topic1 (sorted first, so the cycle starts on it)
    (
        "roundrobin",
        3,
        ["consumer1", "consumer2", "consumer3"],
        {"consumer1": [0], "consumer2": [1], "consumer3": [2]},
    ),
    # testTwoDynamicConsumersTwoTopicsSixPartitions, topic1
    ("roundrobin", 3, ["consumer1", "consumer2"], {"consumer1": [0, 2], "consumer2": [1]}),
    # AbstractStickyAssignorTest (run by StickyAssignorTest and CooperativeStickyAssignorTest)
    ("sticky", 3, ["consumer"], {"consumer": [0, 1, 2]}),  # testOneConsumerOneTopic
    ("sticky", 3, ["consumer1"], {"consumer1": [0, 1, 2]}),  # testAddRemoveConsumerOneTopic
    # testTwoConsumersOneTopicTwoPartitions
    ("sticky", 2, ["consumer1", "consumer2"], {"consumer1": [0], "consumer2": [1]}),
    # testTwoConsumersTwoTopicsSixPartitions, topic1 (topics are handed out in name order)
    ("sticky", 3, ["consumer1", "consumer2"], {"consumer1": [0, 2], "consumer2": [1]}),
]

# Computed by Kafka 3.6.2's own assignors through ConsumerPartitionAssignor.assign(Cluster,
# GroupSubscription), members with no user data and no group.instance.id:
# (partitions, members, {strategy-family: partitions per member, in the members' listed order}).
CONSUMERS_12 = [f"consumer-{i}" for i in range(12)]
PADDED_9 = [f"c{i:02d}" for i in range(1, 10)]  # AbstractStickyAssignorTest's getConsumerName
JAVA_3_6_2_VECTORS: list[tuple[int, list[str], list[list[int]], list[list[int]]]] = [
    # (partitions, members, range result, roundrobin/sticky/cooperative-sticky result)
    (
        3,
        ["\uff21", "\U0001f600"],  # Java orders by UTF-16 unit: the emoji's 0xD83D comes first
        [[2], [0, 1]],
        [[1], [0, 2]],
    ),
    (
        5,
        CONSUMERS_12,  # consumer-10 and consumer-11 sort before consumer-2
        [[0], [1], [4], [], [], [], [], [], [], [], [2], [3]],
        [[0], [1], [4], [], [], [], [], [], [], [], [2], [3]],
    ),
    (
        20,
        PADDED_9,
        [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9], [10, 11], [12, 13], [14, 15], [16, 17], [18, 19]],
        [[0, 9, 18], [1, 10, 19], [2, 11], [3, 12], [4, 13], [5, 14], [6, 15], [7, 16], [8, 17]],
    ),
    (
        7,
        ["consumer-0", "consumer-1", "consumer-2"],
        [[0, 1, 2], [3, 4], [5, 6]],
        [[0, 3, 6], [1, 4], [2, 5]],
    ),
]


@pytest.mark.parametrize(("strategy", "partitions", "members", "expected"), KAFKA_TEST_VECTORS)
def test_kafka_assignor_test_vectors(
    strategy: Strategy, partitions: int, members: list[str], expected: dict[str, list[int]]
) -> None:
    assert assign(strategy, partitions, members) == expected


def test_cooperative_sticky_matches_the_sticky_vectors() -> None:
    for strategy, partitions, members, expected in KAFKA_TEST_VECTORS:
        if strategy == "sticky":
            assert assign("cooperative-sticky", partitions, members) == expected


@pytest.mark.parametrize(("partitions", "members", "ranged", "cycled"), JAVA_3_6_2_VECTORS)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_matches_the_java_3_6_2_client(
    strategy: Strategy,
    partitions: int,
    members: list[str],
    ranged: list[list[int]],
    cycled: list[list[int]],
) -> None:
    expected = ranged if strategy == "range" else cycled
    assert assign(strategy, partitions, members) == dict(zip(members, expected, strict=True))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_member_is_a_key_in_kafka_member_order(strategy: Strategy) -> None:
    members = ["consumer-2", "consumer-10", "consumer-1"]
    result = assign(strategy, 2, members)
    assert list(result) == ["consumer-1", "consumer-10", "consumer-2"]
    assert result["consumer-2"] == []


def test_member_order_compares_utf16_code_units_like_java() -> None:
    assert member_order(["consumer-2", "consumer-10", "consumer-1"]) == [
        "consumer-1",
        "consumer-10",
        "consumer-2",
    ]
    # Python's code-point order would put U+FF21 before U+1F600; Java's String.compareTo does not.
    assert member_order(["\uff21", "\U0001f600"]) == ["\U0001f600", "\uff21"]
    assert member_order(["ab", "a"]) == ["a", "ab"]


def test_members_by_count_names_consumers_from_zero() -> None:
    assert members_by_count(3) == ["consumer-0", "consumer-1", "consumer-2"]
    with pytest.raises(ValueError, match=r"^count must be at least 1, got 0$"):
        members_by_count(0)


def test_assignor_classes_carry_kafka_names() -> None:
    assert RangeAssignor.name == "range"
    assert RoundRobinAssignor.name == "roundrobin"
    assert StickyAssignor.name == "sticky"
    assert CooperativeStickyAssignor.name == "cooperative-sticky"
    assert list(ASSIGNORS) == ["range", "roundrobin", "sticky", "cooperative-sticky"]
    assert list(ASSIGNORS) == list(STRATEGIES)


@pytest.mark.parametrize(
    ("partitions", "members", "message"),
    [
        (0, ["a"], r"^num_partitions must be between 1 and 2147483647, got 0$"),
        (-3, ["a"], r"^num_partitions must be between 1 and 2147483647, got -3$"),
        (2**31, ["a"], r"^num_partitions must be between 1 and 2147483647, got 2147483648$"),
        (3, [], r"^at least one member is required$"),
        (3, ["a", "b", "a"], r"^duplicate member id 'a'$"),
        (3, ["a", ""], r"^member id at index 1 is empty$"),
    ],
)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_bad_input_is_rejected(
    strategy: Strategy, partitions: int, members: list[str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        assign(strategy, partitions, members)


def test_member_order_rejects_bad_members() -> None:
    with pytest.raises(ValueError, match=r"^duplicate member id 'x'$"):
        member_order(["x", "x"])
    with pytest.raises(TypeError, match="not a single string"):
        member_order("abc")


def test_unknown_strategy_is_rejected() -> None:
    message = (
        r"^unknown assignment strategy 'uniform'; "
        r"expected one of: range, roundrobin, sticky, cooperative-sticky$"
    )
    with pytest.raises(ValueError, match=message):
        assign("uniform", 3, ["a"])  # type: ignore[arg-type]


member_ids = st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=30, unique=True)
partition_counts = st.integers(min_value=1, max_value=300)


@given(st.sampled_from(STRATEGIES), partition_counts, member_ids)
def test_every_partition_is_assigned_exactly_once(
    strategy: Strategy, partitions: int, members: list[str]
) -> None:
    result = assign(strategy, partitions, members)
    assert set(result) == set(members)
    handed_out = sorted(p for owned in result.values() for p in owned)
    assert handed_out == list(range(partitions))


@given(st.sampled_from(STRATEGIES), partition_counts, member_ids)
def test_counts_differ_by_at_most_one_and_the_first_members_get_the_extras(
    strategy: Strategy, partitions: int, members: list[str]
) -> None:
    counts = [len(owned) for owned in assign(strategy, partitions, members).values()]
    quota, extra = divmod(partitions, len(members))
    assert counts == [quota + 1] * extra + [quota] * (len(members) - extra)


@given(partition_counts, member_ids)
def test_range_hands_out_contiguous_ranges_in_member_order(
    partitions: int, members: list[str]
) -> None:
    result = assign("range", partitions, members)
    flattened = [p for owned in result.values() for p in owned]
    assert flattened == list(range(partitions))


@given(partition_counts, member_ids)
def test_sticky_on_a_fresh_single_topic_group_deals_like_roundrobin(
    partitions: int, members: list[str]
) -> None:
    cycled = assign("roundrobin", partitions, members)
    step = len(members)
    assert list(cycled.values()) == [list(range(i, partitions, step)) for i in range(step)]
    assert assign("sticky", partitions, members) == cycled
    assert assign("cooperative-sticky", partitions, members) == cycled


@given(st.sampled_from(STRATEGIES), partition_counts, member_ids, st.randoms())
def test_the_order_members_are_given_in_does_not_matter(
    strategy: Strategy, partitions: int, members: list[str], rng: random.Random
) -> None:
    shuffled = list(members)
    rng.shuffle(shuffled)
    first = assign(strategy, partitions, members)
    second = assign(strategy, partitions, shuffled)
    assert list(first.items()) == list(second.items())
