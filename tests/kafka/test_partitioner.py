"""The producer's key partitioner against hashes and partitions the Java client produced."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_topic_operator.kafka.partitioner import (
    murmur2,
    murmur2_many,
    partition_for_key,
    partitions_for_keys,
    serialize_key,
    to_positive,
)

INT_MIN = -(2**31)
INT_MAX = 2**31 - 1


def _signed(value: int) -> int:
    return value - 2**32 if value >= 2**31 else value


# UtilsTest.testMurmur2 (apache/kafka 3.6.2, clients/src/test/.../common/utils/UtilsTest.java).
KAFKA_UTILS_TEST = [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
]

# librdkafka src/rdmurmur2.c `java_murmur2_results`: hashes the Java client gave for these keys,
# covering every tail length (0-3 leftover bytes) and the empty key.
LIBRDKAFKA_JAVA_RESULTS = [
    (b"kafka", _signed(0xD067CF64)),
    (b"giberish123456789", _signed(0x8F552B0C)),
    (b"1234", _signed(0x9FC97B14)),
    (b"234", _signed(0xE7C009CA)),
    (b"34", _signed(0x873930DA)),
    (b"4", _signed(0x5A4B5CA1)),
    (b"PreAmbleWillBeRemoved,ThePrePartThatIs", _signed(0x78424F1C)),
    (b"reAmbleWillBeRemoved,ThePrePartThatIs", _signed(0x4A62B377)),
    (b"eAmbleWillBeRemoved,ThePrePartThatIs", _signed(0xE0E4E09E)),
    (b"AmbleWillBeRemoved,ThePrePartThatIs", _signed(0x62B8B43F)),
    (b"", _signed(0x106E08D9)),
]

# kafka-python test_murmur2_java_compatibility: partitions the Java partitioner chose among 1000.
KAFKA_PYTHON_JAVA_PARTITIONS = [
    (b"", 681),
    (b"a", 524),
    (b"ab", 434),
    (b"abc", 107),
    (b"123456789", 566),
    (b"\x00 ", 742),
]

# Run through Kafka 3.6.2's own StringSerializer, Utils.murmur2 and
# BuiltInPartitioner.partitionForKey: (key, numPartitions, murmur2, partition).
JAVA_3_6_2_KEYS: list[tuple[bytes | str, int, int, int]] = [
    ("alice", 3, 1951417749, 0),
    ("sam", 3, -882220894, 1),
    ("leo", 3, -1033022616, 2),
    ("maria", 3, 1474597647, 0),
    ("omar", 3, 1276124191, 1),
    ("yuki", 3, -450721547, 0),
    ("héllo", 1000, 614509002, 2),
    ("\U0001f600", 1000, 131881617, 617),
    # the same emoji as a surrogate pair of two Python code points: one Java string either way
    ("\ud83d\ude00", 1000, 131881617, 617),
    # an unpaired surrogate: Java's UTF-8 encoder writes '?' for it
    ("a\ud800b", 1000, -348781372, 276),
    (b"\xff", 7, -311467685, 5),
    (b"\x80\xff\x00", 7, 2014942385, 1),
    (b"\x00\x00\x00\x00", 7, 850957120, 6),
    (b"\xff\xff\xff\xff\x7f", 7, -1869881886, 4),
]

ALL_HASH_VECTORS = (
    KAFKA_UTILS_TEST
    + LIBRDKAFKA_JAVA_RESULTS
    + [(serialize_key(key), hashed) for key, _, hashed, _ in JAVA_3_6_2_KEYS]
)


@pytest.mark.parametrize(("data", "expected"), KAFKA_UTILS_TEST)
def test_murmur2_matches_kafka_utils_test(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected


@pytest.mark.parametrize(("data", "expected"), LIBRDKAFKA_JAVA_RESULTS)
def test_murmur2_matches_java_results_recorded_by_librdkafka(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected


@pytest.mark.parametrize(("data", "expected"), KAFKA_PYTHON_JAVA_PARTITIONS)
def test_partition_for_key_matches_java_partitions_recorded_by_kafka_python(
    data: bytes, expected: int
) -> None:
    assert partition_for_key(data, 1000) == expected


@pytest.mark.parametrize(("key", "num_partitions", "hashed", "partition"), JAVA_3_6_2_KEYS)
def test_partition_for_key_matches_the_java_3_6_2_client(
    key: bytes | str, num_partitions: int, hashed: int, partition: int
) -> None:
    assert murmur2(serialize_key(key)) == hashed
    assert partition_for_key(key, num_partitions) == partition


def test_murmur2_many_matches_every_vector_in_one_batch() -> None:
    keys = [data for data, _ in ALL_HASH_VECTORS]
    assert murmur2_many(keys).tolist() == [expected for _, expected in ALL_HASH_VECTORS]


def test_partitions_for_keys_matches_java_partitions() -> None:
    keys = [data for data, _ in KAFKA_PYTHON_JAVA_PARTITIONS]
    assert partitions_for_keys(keys, 1000).tolist() == [p for _, p in KAFKA_PYTHON_JAVA_PARTITIONS]


def test_batch_functions_accept_no_keys() -> None:
    assert murmur2_many([]).tolist() == []
    assert partitions_for_keys([], 3).tolist() == []


def test_to_positive_clears_the_sign_bit_rather_than_negating() -> None:
    assert to_positive(INT_MIN) == 0
    assert to_positive(-1) == INT_MAX
    assert to_positive(-10) == INT_MAX - 9
    assert to_positive(0) == 0
    assert to_positive(INT_MAX) == INT_MAX


def test_str_keys_hash_as_their_utf8_bytes() -> None:
    assert serialize_key("héllo") == "héllo".encode()
    assert partition_for_key("foobar", 97) == partition_for_key(b"foobar", 97)


def test_bytes_keys_are_hashed_as_given() -> None:
    assert serialize_key(b"\xff\x00") == b"\xff\x00"


def test_null_key_is_rejected() -> None:
    with pytest.raises(TypeError, match="a null key has no fixed partition"):
        partition_for_key(None, 3)  # type: ignore[arg-type]


@pytest.mark.parametrize("num_partitions", [0, -1, 2**31])
def test_partition_count_outside_a_java_int_range_is_rejected(num_partitions: int) -> None:
    message = f"num_partitions must be between 1 and 2147483647, got {num_partitions}"
    with pytest.raises(ValueError, match=message):
        partition_for_key(b"k", num_partitions)
    with pytest.raises(ValueError, match=message):
        partitions_for_keys([b"k"], num_partitions)


# Agreement with the Java producer on random keys: tests/apache_kafka/test_rules_against_kafka.py.
@given(st.binary(max_size=64), st.integers(min_value=1, max_value=INT_MAX))
def test_partition_is_in_range(key: bytes, num_partitions: int) -> None:
    assert 0 <= partition_for_key(key, num_partitions) < num_partitions


@given(st.binary(max_size=64))
def test_murmur2_is_a_java_int(key: bytes) -> None:
    assert INT_MIN <= murmur2(key) <= INT_MAX


@given(
    st.lists(st.one_of(st.binary(max_size=40), st.text(max_size=12)), max_size=40),
    st.integers(min_value=1, max_value=INT_MAX),
)
def test_batch_agrees_with_one_key_at_a_time(keys: list[bytes | str], num_partitions: int) -> None:
    assert murmur2_many(keys).tolist() == [murmur2(serialize_key(key)) for key in keys]
    expected = [partition_for_key(key, num_partitions) for key in keys]
    assert partitions_for_keys(keys, num_partitions).tolist() == expected
