"""Kafka's Uuid and CoreUtils.generateUuidAsBase64 against UuidTest and Java's base64 decoder."""

from __future__ import annotations

import base64
import random
import uuid
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_topic_operator.kafka import ids
from kafka_topic_operator.kafka.errors import IllegalArgumentException
from kafka_topic_operator.kafka.ids import (
    METADATA_TOPIC_ID,
    ONE_UUID,
    RESERVED,
    ZERO_UUID,
    Uuid,
    generate_uuid_as_base64,
    new_topic_id,
    random_uuid,
)

URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
longs = st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1)


class Scripted:
    """A random source that hands out the given 16-byte blocks in order."""

    def __init__(self, *blocks: bytes) -> None:
        self._blocks: Iterator[bytes] = iter(blocks)
        self.calls = 0

    def __call__(self, n: int) -> bytes:
        assert n == 16
        self.calls += 1
        return next(self._blocks)


def is_version_4(value: Uuid) -> bool:
    msb, lsb = value.most_significant_bits, value.least_significant_bits
    return (msb >> 12) & 0xF == 4 and (lsb >> 62) & 0x3 == 0b10


def test_significant_bits() -> None:
    value = Uuid(34, 98)
    assert value.most_significant_bits == 34
    assert value.least_significant_bits == 98


def test_reserved_ids_print_as_kafka_prints_them() -> None:
    assert str(ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert str(ONE_UUID) == "AAAAAAAAAAAAAAAAAAAAAQ"
    assert METADATA_TOPIC_ID == ONE_UUID
    assert sorted(RESERVED) == [ZERO_UUID, ONE_UUID]
    assert Uuid.from_string("AAAAAAAAAAAAAAAAAAAAAA") == ZERO_UUID


def test_string_form_is_java_uuid_bytes_in_url_safe_base64_without_padding() -> None:
    java = uuid.UUID("f8e1c2a0-7b3d-4e5f-9a8b-0c1d2e3f4a5b")
    value = Uuid.from_bytes(java.bytes)
    # Both halves have their top bit set, so Java sees them as negative longs.
    assert value.most_significant_bits == 0xF8E1C2A07B3D4E5F - (1 << 64)
    assert value.least_significant_bits == 0x9A8B0C1D2E3F4A5B - (1 << 64)
    assert str(value) == "-OHCoHs9Tl-aiwwdLj9KWw"
    assert Uuid.from_string("-OHCoHs9Tl-aiwwdLj9KWw") == value


@given(longs, longs)
def test_string_conversion_round_trips(msb: int, lsb: int) -> None:
    value = Uuid(msb, lsb)
    text = str(value)
    assert len(text) == 22
    assert text == base64.urlsafe_b64encode(value.to_bytes()).decode().rstrip("=")
    assert Uuid.from_string(text) == value


@given(st.binary(min_size=16, max_size=16))
def test_padded_base64_is_accepted_as_by_java(data: bytes) -> None:
    padded = base64.urlsafe_b64encode(data).decode()
    assert len(padded) == 24
    assert Uuid.from_string(padded) == Uuid.from_bytes(data)


def test_halves_must_be_signed_longs() -> None:
    with pytest.raises(ValueError, match="signed 64-bit"):
        Uuid(1 << 63, 0)
    with pytest.raises(ValueError, match="signed 64-bit"):
        Uuid(0, -(1 << 63) - 1)


def test_from_string_with_invalid_input() -> None:
    oversize = base64.urlsafe_b64encode(bytes(32)).decode().rstrip("=")
    with pytest.raises(IllegalArgumentException) as too_long:
        Uuid.from_string(oversize)
    assert too_long.value.message == (
        f"Input string with prefix `{oversize[:24]}` is too long to be decoded as a base64 UUID"
    )
    with pytest.raises(IllegalArgumentException) as just_too_long:
        Uuid.from_string("A" * 25)
    assert just_too_long.value.message == (
        f"Input string with prefix `{'A' * 24}` is too long to be decoded as a base64 UUID"
    )
    undersize = base64.urlsafe_b64encode(bytes(4)).decode().rstrip("=")
    with pytest.raises(IllegalArgumentException) as too_short:
        Uuid.from_string(undersize)
    assert too_short.value.message == (
        "Input string `AAAAAA` decoded as 4 bytes, which is not equal to the expected 16 bytes "
        "of a base64-encoded UUID"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # Messages of java.util.Base64's URL decoder (checked against JDK 17).
        ("AAAAAAAAAAAAAAAAAAAAA+", "Illegal base64 character 2b"),
        ("AAAAAAAAAAAAAAAAAAAAA/", "Illegal base64 character 2f"),
        ("AAAAAAAAAAAA AAAAAAAAA", "Illegal base64 character 20"),
        ("A\u00e9", "Illegal base64 character -17"),
        ("A\u20ac", "Illegal base64 character 3f"),
        ("A", "Input byte[] should at least have 2 bytes for base64 bytes"),
        ("AAAAA", "Last unit does not have enough valid bits"),
        ("AA=A", "Input byte array has wrong 4-byte ending unit"),
        ("=AAA", "Input byte array has wrong 4-byte ending unit"),
        ("AA==x", "Input byte array has incorrect ending byte at 4"),
        (
            "",
            "Input string `` decoded as 0 bytes, which is not equal to the expected 16 bytes "
            "of a base64-encoded UUID",
        ),
    ],
)
def test_from_string_fails_as_javas_decoder_does(text: str, message: str) -> None:
    with pytest.raises(IllegalArgumentException) as failure:
        Uuid.from_string(text)
    assert failure.value.message == message


def test_compare_uuids_as_unsigned() -> None:
    id00, id01, id10 = Uuid(0, 0), Uuid(0, 1), Uuid(1, 0)
    assert id00 < id01 < id10
    assert id10 > id01 > id00
    assert id00 <= id00 and id00 >= id00
    # Negative halves are large unsigned values.
    assert Uuid(-1, 0) > Uuid((1 << 63) - 1, 0)
    assert Uuid(0, -1) > Uuid(0, 1)
    assert sorted([Uuid(-1, 0), id10, id00]) == [id00, id10, Uuid(-1, 0)]


def test_random_uuid_is_version_4() -> None:
    value = random_uuid(Scripted(bytes(16)))
    assert value != ZERO_UUID
    assert is_version_4(value)
    assert str(value) == "AAAAAAAAQACAAAAAAAAAAA"


def test_random_uuid_retries_an_id_that_prints_with_a_leading_dash() -> None:
    dash = b"\xf8" + bytes(15)
    underscore = b"\xfc" + bytes(15)
    source = Scripted(dash, underscore)
    value = random_uuid(source)
    assert source.calls == 2
    assert str(value).startswith("_")
    assert is_version_4(value)


@given(st.integers(min_value=0, max_value=2**32))
def test_random_uuid_never_returns_a_reserved_or_dash_id(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(20):
        value = random_uuid(rng.randbytes)
        assert value not in RESERVED
        assert not str(value).startswith("-")
        assert is_version_4(value)


def test_random_uuid_defaults_to_the_system_source() -> None:
    first, second = random_uuid(), random_uuid()
    assert first != second
    assert is_version_4(first)


def test_cluster_id_is_a_plain_random_uuid_in_base64() -> None:
    # generateUuidAsBase64 keeps ids that print with a leading '-'.
    assert generate_uuid_as_base64(Scripted(b"\xf8" + bytes(15))) == "-AAAAAAAQACAAAAAAAAAAA"
    cluster_id = generate_uuid_as_base64()
    assert len(cluster_id) == 22
    assert is_version_4(Uuid.from_string(cluster_id))


def test_a_short_random_source_is_refused() -> None:
    with pytest.raises(ValueError, match="returned 15 bytes"):
        random_uuid(lambda n: bytes(n - 1))


@given(st.text(alphabet=URL_ALPHABET, min_size=22, max_size=22))
def test_the_fast_path_for_ids_decodes_as_java_does(text: str) -> None:
    # Every id's 22 characters take base64's fast path; the character-by-character decoder
    # carries Java's rules for any input and is the reference.
    assert ids._java_url_base64_decode(text) == ids._java_url_base64_decode_any(text)


def test_a_new_topic_id_is_kafkas_random_uuid() -> None:
    # KafkaZkClient.setTopicIds draws Uuid.randomUuid(): a '-' id is drawn again.
    source = Scripted(b"\xf8" + bytes(15), bytes(16))
    assert new_topic_id(source) == "AAAAAAAAQACAAAAAAAAAAA"
    assert source.calls == 2
    assert is_version_4(Uuid.from_string(new_topic_id()))
