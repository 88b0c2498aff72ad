"""The Java producer's key partitioner: ``Utils.murmur2``, ``Utils.toPositive`` and
``BuiltInPartitioner.partitionForKey`` (Kafka 3.6 clients), bit for bit, plus a numpy batch form.

Only keyed records have a fixed partition. A record with a null key (or a producer with
``partitioner.ignore.keys=true``) goes wherever the sticky/uniform built-in partitioner's current
batch goes, which depends on timing and broker load, so no function here accepts a null key.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kafka_topic_operator.kafka.java import INT_MAX

__all__ = [
    "murmur2",
    "murmur2_many",
    "partition_for_key",
    "partitions_for_keys",
    "serialize_key",
    "to_positive",
]

_SEED = 0x9747B28C
_M = 0x5BD1E995
_R = 24
_MASK32 = 0xFFFFFFFF


def _to_int32(value: int) -> int:
    """Reinterpret the low 32 bits as a Java ``int`` (two's complement)."""
    value &= _MASK32
    return value - 0x1_0000_0000 if value & 0x8000_0000 else value


def murmur2(data: bytes) -> int:
    """``Utils.murmur2``: the 32-bit murmur2 hash of ``data`` as a signed Java ``int``."""
    length = len(data)
    # Unsigned 32-bit arithmetic has the same bits as Java's wrapping signed ints, and Java's
    # `>>>` is a plain right shift on the unsigned value; the sign is restored at the end.
    h = (_SEED ^ length) & _MASK32
    whole = length & ~3
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _MASK32
        k ^= k >> _R
        k = (k * _M) & _MASK32
        h = (h * _M) & _MASK32
        h ^= k
    # The Java switch on length % 4 falls through from case 3 to case 1.
    tail = length & 3
    if tail == 3:
        h ^= data[whole + 2] << 16
    if tail >= 2:
        h ^= data[whole + 1] << 8
    if tail >= 1:
        h ^= data[whole]
        h = (h * _M) & _MASK32
    h ^= h >> 13
    h = (h * _M) & _MASK32
    h ^= h >> 15
    return _to_int32(h)


def to_positive(number: int) -> int:
    """``Utils.toPositive``: clear the sign bit (not ``abs``: ``toPositive(MIN_VALUE)`` is 0)."""
    return number & INT_MAX


def serialize_key(key: bytes | str) -> bytes:
    """The bytes the producer hashes: ``bytes`` as given, ``str`` as ``StringSerializer`` (UTF-8).

    Java's ``String.getBytes(UTF_8)`` writes ``?`` for an unpaired surrogate and encodes a valid
    surrogate pair as one code point; Python strings can hold either, so both are mirrored.
    """
    if isinstance(key, bytes):
        return key
    if not isinstance(key, str):
        raise TypeError(
            f"key must be bytes or str, not {type(key).__name__}: a null key has no fixed "
            "partition (the built-in partitioner sends it to the sticky batch's partition)"
        )
    try:
        return key.encode("utf-8")
    except UnicodeEncodeError:
        # Join any surrogate pairs into code points first, then replace the lone ones with '?'.
        joined = key.encode("utf-16-be", "surrogatepass").decode("utf-16-be", "surrogatepass")
        return joined.encode("utf-8", "replace")


def _check_num_partitions(num_partitions: int) -> None:
    if not 1 <= num_partitions <= INT_MAX:
        raise ValueError(f"num_partitions must be between 1 and {INT_MAX}, got {num_partitions}")


def partition_for_key(key: bytes | str, num_partitions: int) -> int:
    """``BuiltInPartitioner.partitionForKey``: ``toPositive(murmur2(key)) % numPartitions``.

    ``num_partitions`` is the topic's total partition count (the producer uses all partitions for
    keyed records, available or not). Null keys are rejected: see the module docstring.
    """
    _check_num_partitions(num_partitions)
    return to_positive(murmur2(serialize_key(key))) % num_partitions


def murmur2_many(keys: Sequence[bytes | str]) -> npt.NDArray[np.int32]:
    """``murmur2`` of every key at once (str keys serialised as ``serialize_key`` does).

    Keys are grouped by length so that each group is one 2-D byte array hashed column-block by
    column-block with wrapping ``uint32`` arithmetic.
    """
    encoded = [serialize_key(key) for key in keys]
    out = np.empty(len(encoded), dtype=np.uint32)
    by_length: dict[int, list[int]] = {}
    for index, data in enumerate(encoded):
        by_length.setdefault(len(data), []).append(index)
    m = np.uint32(_M)
    for length, indices in by_length.items():
        rows = np.frombuffer(b"".join(encoded[i] for i in indices), dtype=np.uint8)
        block = rows.reshape(len(indices), length).astype(np.uint32)
        h = np.full(len(indices), (_SEED ^ length) & _MASK32, dtype=np.uint32)
        whole = length & ~3
        for i in range(0, whole, 4):
            k = (
                block[:, i]
                | (block[:, i + 1] << 8)
                | (block[:, i + 2] << 16)
                | (block[:, i + 3] << 24)
            )
            k *= m
            k ^= k >> _R
            k *= m
            h *= m
            h ^= k
        tail = length & 3
        if tail == 3:
            h ^= block[:, whole + 2] << 16
        if tail >= 2:
            h ^= block[:, whole + 1] << 8
        if tail >= 1:
            h ^= block[:, whole]
            h *= m
        h ^= h >> 13
        h *= m
        h ^= h >> 15
        out[np.asarray(indices, dtype=np.intp)] = h
    return out.view(np.int32)


def partitions_for_keys(keys: Sequence[bytes | str], num_partitions: int) -> npt.NDArray[np.int32]:
    """``partition_for_key`` of every key at once."""
    _check_num_partitions(num_partitions)
    hashes = murmur2_many(keys)
    return ((hashes & np.int32(INT_MAX)) % np.int32(num_partitions)).astype(np.int32)
