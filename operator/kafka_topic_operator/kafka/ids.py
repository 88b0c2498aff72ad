"""Kafka's Uuid (clients' `org.apache.kafka.common.Uuid`) and `CoreUtils.generateUuidAsBase64`.

Topic ids and cluster ids are 128-bit values printed in URL-safe base64 without padding; parsing
follows `Uuid.fromString`, including Java's base64 decoder's errors, so a bad id fails as in Kafka.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from kafka_topic_operator.kafka.errors import IllegalArgumentException
from kafka_topic_operator.kafka.java import LONG_MAX, LONG_MIN

RandomBytes = Callable[[int], bytes]
"""A source of random bytes, `os.urandom` by default; tests pass a seeded or scripted one."""

_MASK64 = (1 << 64) - 1

# Java's URL-safe alphabet; '=' is padding and everything else is illegal (not MIME: no skipping).
_URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_FROM_BASE64_URL = {ord(c): i for i, c in enumerate(_URL_ALPHABET)}
_PAD = ord("=")
# 22 characters of the URL alphabet: 16 bytes and 4 spare bits, the form every id takes.
_CANONICAL_ID = re.compile(r"[A-Za-z0-9_-]{22}")


def _signed64(value: int) -> int:
    value &= _MASK64
    return value - (1 << 64) if value > LONG_MAX else value


@dataclass(frozen=True, slots=True)
class Uuid:
    """A 128-bit id held, as in Java, as two signed 64-bit halves."""

    most_significant_bits: int
    least_significant_bits: int

    def __post_init__(self) -> None:
        for half in (self.most_significant_bits, self.least_significant_bits):
            if not LONG_MIN <= half <= LONG_MAX:
                raise ValueError(f"{half} is not a signed 64-bit value")

    @classmethod
    def from_bytes(cls, data: bytes) -> Uuid:
        if len(data) != 16:
            raise ValueError(f"a Uuid is 16 bytes, got {len(data)}")
        return cls(
            int.from_bytes(data[:8], "big", signed=True),
            int.from_bytes(data[8:], "big", signed=True),
        )

    def to_bytes(self) -> bytes:
        return self.most_significant_bits.to_bytes(
            8, "big", signed=True
        ) + self.least_significant_bits.to_bytes(8, "big", signed=True)

    @classmethod
    def from_string(cls, text: str) -> Uuid:
        """Uuid.fromString: at most 24 characters of URL-safe base64 that decode to 16 bytes."""
        if len(text) > 24:
            raise IllegalArgumentException(
                f"Input string with prefix `{text[:24]}` is too long to be decoded as a base64 UUID"
            )
        data = _java_url_base64_decode(text)
        if len(data) != 16:
            raise IllegalArgumentException(
                f"Input string `{text}` decoded as {len(data)} bytes, which is not equal to the "
                "expected 16 bytes of a base64-encoded UUID"
            )
        return cls.from_bytes(data)

    def __str__(self) -> str:
        return base64.urlsafe_b64encode(self.to_bytes()).rstrip(b"=").decode("ascii")

    def _unsigned(self) -> tuple[int, int]:
        return self.most_significant_bits & _MASK64, self.least_significant_bits & _MASK64

    # Uuid.compareTo compares both halves as unsigned longs.
    def __lt__(self, other: Uuid) -> bool:
        return self._unsigned() < other._unsigned()

    def __le__(self, other: Uuid) -> bool:
        return self._unsigned() <= other._unsigned()

    def __gt__(self, other: Uuid) -> bool:
        return self._unsigned() > other._unsigned()

    def __ge__(self, other: Uuid) -> bool:
        return self._unsigned() >= other._unsigned()


ZERO_UUID = Uuid(0, 0)
"""The null/empty id; never returned by `random_uuid`."""

ONE_UUID = Uuid(0, 1)
"""Reserved (2.8's sentinel id); never returned by `random_uuid`."""

METADATA_TOPIC_ID = ONE_UUID
"""KRaft's `__cluster_metadata` topic id (3.x name for ONE_UUID)."""

RESERVED = frozenset({ZERO_UUID, ONE_UUID})


def _java_random_uuid_bytes(random_bytes: RandomBytes) -> bytes:
    """java.util.UUID.randomUUID's 16 bytes: random, stamped as version 4, IETF variant."""
    raw = bytearray(random_bytes(16))
    if len(raw) != 16:
        raise ValueError(f"the random source returned {len(raw)} bytes, not 16")
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return bytes(raw)


def random_uuid(random_bytes: RandomBytes = os.urandom) -> Uuid:
    """Uuid.randomUuid: a random version-4 id that is neither reserved nor printed with a leading
    '-' (a 3.2+ rule, so ids stay usable as command-line arguments; 2.8 reads them all alike)."""
    while True:
        uuid = Uuid.from_bytes(_java_random_uuid_bytes(random_bytes))
        if uuid not in RESERVED and not str(uuid).startswith("-"):
            return uuid


def new_topic_id(random_bytes: RandomBytes | None = None) -> str:
    """A topic id as the ZooKeeper-mode controller gives one (KafkaZkClient.setTopicIds, 3.9:
    `Uuid.randomUuid()`): never reserved, never printed with a leading '-'. `random_bytes` is
    read at call time (`os.urandom` unless given) so a test can script it."""
    return str(random_uuid(random_bytes or os.urandom))


def generate_uuid_as_base64(random_bytes: RandomBytes = os.urandom) -> str:
    """CoreUtils.generateUuidAsBase64, the broker's cluster id (and delegation token ids): a plain
    random version-4 UUID in URL-safe base64 without padding (no reserved-value or leading '-'
    check here). Never a topic id: those come from `new_topic_id`."""
    return str(Uuid.from_bytes(_java_random_uuid_bytes(random_bytes)))


def _illegal_char_hex(code: int) -> str:
    # Java prints the offending *signed* byte with Integer.toString(b, 16).
    signed = code - 256 if code >= 0x80 else code
    return f"-{-signed:x}" if signed < 0 else f"{signed:x}"


def _java_url_base64_decode(text: str) -> bytes:
    """Base64.getUrlDecoder().decode(String), with Java's acceptance rules and messages."""
    if _CANONICAL_ID.fullmatch(text):
        # What Uuid.toString writes: both decoders ignore the last character's low 4 bits.
        return base64.urlsafe_b64decode(text + "==")
    return _java_url_base64_decode_any(text)


def _java_url_base64_decode_any(text: str) -> bytes:
    """`_java_url_base64_decode` character by character, for any input."""
    # String.getBytes(ISO_8859_1): characters beyond Latin-1 become '?'.
    src = bytes(ord(c) if ord(c) <= 0xFF else ord("?") for c in text)
    if len(src) == 1:
        raise IllegalArgumentException("Input byte[] should at least have 2 bytes for base64 bytes")
    out = bytearray()
    bits = 0
    shift = 18
    pos = 0
    end = len(src)
    while pos < end:
        code = src[pos]
        pos += 1
        value = _FROM_BASE64_URL.get(code)
        if value is None:
            if code == _PAD:
                # '=' may only end a unit of two characters plus "==", or of three plus "=".
                if shift == 18 or (shift == 6 and (pos == end or src[pos] != _PAD)):
                    raise IllegalArgumentException("Input byte array has wrong 4-byte ending unit")
                if shift == 6:
                    pos += 1
                break
            raise IllegalArgumentException(f"Illegal base64 character {_illegal_char_hex(code)}")
        bits |= value << shift
        shift -= 6
        if shift < 0:
            out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF, bits & 0xFF))
            shift = 18
            bits = 0
    if shift == 6:
        out.append((bits >> 16) & 0xFF)
    elif shift == 0:
        out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF))
    elif shift == 12:
        raise IllegalArgumentException("Last unit does not have enough valid bits")
    if pos < end:
        raise IllegalArgumentException(f"Input byte array has incorrect ending byte at {pos}")
    return bytes(out)
