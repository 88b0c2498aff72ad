"""Topic-level configs as Kafka 3.9's LogConfig defines them: type, default, validator, the broker
property that supplies the default, and ConfigDef's parsing and messages.

`normalize_topic_config` turns a KafkaTopic's `spec.config` (strings, integers, booleans, numbers)
into the strings stored in `/config/topics/<t>`, or raises InvalidConfigurationException with the
message Kafka would give (`Invalid value X for configuration K: reason`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import Final

from kafka_topic_operator.kafka.errors import InvalidConfigurationException
from kafka_topic_operator.kafka.metadata_version import InvalidVersion, from_version_string

LONG_MAX: Final = 2**63 - 1
INT_MAX: Final = 2**31 - 1


class ConfigType(Enum):
    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"


@dataclass(frozen=True, slots=True)
class TopicConfigKey:
    name: str
    type: ConfigType
    default: str
    doc: str
    server_default_property: str | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    allowed: tuple[str, ...] = ()
    throttled_replicas: bool = False
    version_string: bool = False
    since: str = "0.8"
    deprecated: bool = False
    # CompressionType.GZIP.levelValidator: a range, or the one value outside it meaning "default".
    or_equal_to: int | None = None

    def describe_allowed(self) -> str:
        if self.allowed:
            return "one of: " + ", ".join(self.allowed)
        if self.throttled_replicas:
            return "'*' or a list of partitionId:brokerId"
        if self.minimum is not None and self.maximum is not None:
            also = f" or {self.or_equal_to}" if self.or_equal_to is not None else ""
            return f"[{_show(self.minimum)},...,{_show(self.maximum)}]{also}"
        if self.minimum is not None:
            return f"[{_show(self.minimum)},...]"
        return self.type.value.lower()


def _show(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


_key = TopicConfigKey


_B, _S, _I, _L, _D, _LIST = (
    ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT, ConfigType.LONG, ConfigType.DOUBLE,
    ConfigType.LIST,
)  # fmt: skip

_KEYS: Final = (
    _key(
        "cleanup.policy",
        _LIST,
        "delete",
        "Retention policy for old segments: delete, compact or both.",
        "log.cleanup.policy",
        allowed=("compact", "delete"),
    ),
    _key(
        "compression.type",
        _S,
        "producer",
        "Final compression of the topic's data.",
        "compression.type",
        allowed=("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    ),
    _key(
        "compression.gzip.level",
        _I,
        "-1",
        "Compression level when compression.type is gzip.",
        "compression.gzip.level",
        minimum=1,
        maximum=9,
        or_equal_to=-1,
        since="3.8",
    ),
    _key(
        "compression.lz4.level",
        _I,
        "9",
        "Compression level when compression.type is lz4.",
        "compression.lz4.level",
        minimum=1,
        maximum=17,
        since="3.8",
    ),
    _key(
        "compression.zstd.level",
        _I,
        "3",
        "Compression level when compression.type is zstd.",
        "compression.zstd.level",
        minimum=-131072,
        maximum=22,
        since="3.8",
    ),
    _key(
        "delete.retention.ms",
        _L,
        "86400000",
        "How long delete tombstones are kept on compacted topics.",
        "log.cleaner.delete.retention.ms",
        minimum=0,
    ),
    _key(
        "file.delete.delay.ms",
        _L,
        "60000",
        "Wait before deleting a file from the filesystem.",
        "log.segment.delete.delay.ms",
        minimum=0,
    ),
    _key(
        "flush.messages",
        _L,
        str(LONG_MAX),
        "Messages between forced fsyncs.",
        "log.flush.interval.messages",
        minimum=1,
    ),
    _key(
        "flush.ms",
        _L,
        str(LONG_MAX),
        "Time between forced fsyncs.",
        "log.flush.interval.ms",
        minimum=0,
    ),
    _key(
        "follower.replication.throttled.replicas",
        _LIST,
        "",
        "Replicas whose log replication is throttled on the follower side.",
        "follower.replication.throttled.replicas",
        throttled_replicas=True,
    ),
    _key(
        "index.interval.bytes",
        _I,
        "4096",
        "How often an offset index entry is added.",
        "log.index.interval.bytes",
        minimum=0,
    ),
    _key(
        "leader.replication.throttled.replicas",
        _LIST,
        "",
        "Replicas whose log replication is throttled on the leader side.",
        "leader.replication.throttled.replicas",
        throttled_replicas=True,
    ),
    _key(
        "local.retention.bytes",
        _L,
        "-2",
        "Local bytes kept before deletion with tiered storage.",
        "log.local.retention.bytes",
        minimum=-2,
        since="3.6",
    ),
    _key(
        "local.retention.ms",
        _L,
        "-2",
        "Local time kept before deletion with tiered storage.",
        "log.local.retention.ms",
        minimum=-2,
        since="3.6",
    ),
    _key(
        "max.compaction.lag.ms",
        _L,
        str(LONG_MAX),
        "Longest a message stays ineligible for compaction.",
        "log.cleaner.max.compaction.lag.ms",
        minimum=1,
    ),
    _key(
        "max.message.bytes",
        _I,
        "1048588",
        "Largest record batch size allowed.",
        "message.max.bytes",
        minimum=0,
    ),
    _key(
        "message.downconversion.enable",
        _B,
        "true",
        "Down-convert messages for old consumers.",
        "log.message.downconversion.enable",
        # A plain, undeprecated topic config through 3.9 (TopicConfig has no @Deprecated on it;
        # 4.0 removes it with the old message formats).
    ),
    _key(
        "message.format.version",
        _S,
        "3.0-IV1",
        "Message format version (ignored since 3.0).",
        "log.message.format.version",
        version_string=True,
        deprecated=True,
    ),
    _key(
        "message.timestamp.after.max.ms",
        _L,
        str(LONG_MAX),
        "Largest allowed difference of a timestamp ahead of the broker's.",
        "log.message.timestamp.after.max.ms",
        minimum=0,
        since="3.6",
    ),
    _key(
        "message.timestamp.before.max.ms",
        _L,
        str(LONG_MAX),
        "Largest allowed difference of a timestamp behind the broker's.",
        "log.message.timestamp.before.max.ms",
        minimum=0,
        since="3.6",
    ),
    _key(
        "message.timestamp.difference.max.ms",
        _L,
        str(LONG_MAX),
        "Largest allowed difference between a message's timestamp and the broker's.",
        "log.message.timestamp.difference.max.ms",
        minimum=0,
        deprecated=True,
    ),
    _key(
        "message.timestamp.type",
        _S,
        "CreateTime",
        "Whether timestamps are create or append time.",
        "log.message.timestamp.type",
        allowed=("CreateTime", "LogAppendTime"),
    ),
    _key(
        "min.cleanable.dirty.ratio",
        _D,
        "0.5",
        "Dirty ratio at which the cleaner compacts.",
        "log.cleaner.min.cleanable.ratio",
        minimum=0,
        maximum=1,
    ),
    _key(
        "min.compaction.lag.ms",
        _L,
        "0",
        "Shortest a message stays uncompacted.",
        "log.cleaner.min.compaction.lag.ms",
        minimum=0,
    ),
    _key(
        "min.insync.replicas",
        _I,
        "1",
        "Replicas that must acknowledge a write with acks=all.",
        "min.insync.replicas",
        minimum=1,
    ),
    _key("preallocate", _B, "false", "Preallocate segment files.", "log.preallocate"),
    _key(
        "remote.log.copy.disable",
        _B,
        "false",
        "Stop copying to tiered storage (KRaft only).",
        None,
        since="3.9",
    ),
    _key(
        "remote.log.delete.on.disable",
        _B,
        "false",
        "Delete tiered data when tiered storage is disabled (KRaft only).",
        None,
        since="3.9",
    ),
    _key("remote.storage.enable", _B, "false", "Tiered storage for this topic.", None, since="3.6"),
    _key(
        "retention.bytes",
        _L,
        "-1",
        "Largest size a partition may grow to before deleting.",
        "log.retention.bytes",
    ),
    _key(
        "retention.ms",
        _L,
        "604800000",
        "Longest a log is kept before deleting old segments.",
        "log.retention.ms",
        minimum=-1,
    ),
    _key("segment.bytes", _I, "1073741824", "Segment file size.", "log.segment.bytes", minimum=14),
    _key(
        "segment.index.bytes",
        _I,
        "10485760",
        "Offset index size.",
        "log.index.size.max.bytes",
        minimum=4,
    ),
    _key(
        "segment.jitter.ms",
        _L,
        "0",
        "Random jitter subtracted from segment.ms.",
        "log.roll.jitter.ms",
        minimum=0,
    ),
    _key(
        "segment.ms",
        _L,
        "604800000",
        "Time after which a segment is rolled.",
        "log.roll.ms",
        minimum=1,
    ),
    _key(
        "unclean.leader.election.enable",
        _B,
        "false",
        "Allow a replica outside the ISR to become leader (may lose data).",
        "unclean.leader.election.enable",
    ),
)

TOPIC_CONFIGS: Final[Mapping[str, TopicConfigKey]] = {k.name: k for k in _KEYS}

ConfigValue = str | int | bool | float

# ConfigDef.parseType's LIST: the trimmed value split on commas with Java's whitespace around
# them (`\\s*,\\s*`, split(..., -1) so trailing empty items stay).
_COMMA_WITH_WHITESPACE = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")
# ThrottledReplicaListValidator: each trimmed item is empty or partition:broker (ASCII digits).
_THROTTLED_REPLICA = re.compile(r"(?:[0-9]+:[0-9]+)?")
_THROTTLED_REASON = (
    " must be the literal '*' or a list of replicas in the following format: "
    "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
)
# Integer.parseInt / Long.parseLong: a sign, then decimal digits (Character.digit accepts any
# Unicode decimal digit, as Python's int() does).
_JAVA_INTEGER = re.compile(r"[+-]?\d+")
# Double.parseDouble: Java's decimal and hexadecimal literals (ASCII digits), NaN and Infinity.
_JAVA_DECIMAL = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)"
)
_JAVA_HEX_FLOAT = re.compile(
    r"([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?"
)
_JAVA_CLASS = {str: "java.lang.String", int: "java.lang.Integer", float: "java.lang.Double",
               bool: "java.lang.Boolean"}  # fmt: skip


def _java_trim(text: str) -> str:
    """String.trim: strips every character up to U+0020 (not Unicode whitespace)."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def _java_list(text: str) -> list[str]:
    trimmed = _java_trim(text)
    return _COMMA_WITH_WHITESPACE.split(trimmed) if trimmed else []


def _java_equals_ignore_case(a: str, b: str) -> bool:
    return len(a) == len(b) and all(
        x == y or x.upper() == y.upper() or x.upper().lower() == y.upper().lower()
        for x, y in zip(a, b, strict=True)
    )


def _java_double(text: str) -> float | None:
    trimmed = _java_trim(text)
    if _JAVA_DECIMAL.fullmatch(trimmed):
        body = trimmed.rstrip("fFdD") if not trimmed.endswith("Infinity") else trimmed
        return float(body.replace("Infinity", "inf").replace("NaN", "nan"))
    hexadecimal = _JAVA_HEX_FLOAT.fullmatch(trimmed)
    if hexadecimal:
        return float.fromhex(hexadecimal[1] + "0x" + hexadecimal[2])
    return None


def _java_double_string(number: float) -> str:
    """Double.toString: plain from 10^-3 up to 10^7, otherwise `d.dddE<n>` (shortest digits)."""
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0 or 1e-3 <= abs(number) < 1e7:
        return repr(float(number))  # plain in this range, with at least one decimal
    _, digits, exponent = Decimal(repr(abs(number))).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    return f"{'-' if number < 0 else ''}{text[0]}.{text[1:] or '0'}E{len(text) + exponent - 1}"


def _show_value(value: ConfigValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double_string(value)
    return str(value)


def _error(name: str, value: ConfigValue, reason: str) -> InvalidConfigurationException:
    return InvalidConfigurationException(
        f"Invalid value {_show_value(value)} for configuration {name}: {reason}"
    )


def _parse_integer(key: TopicConfigKey, value: ConfigValue) -> int:
    bits, low, high = (
        (32, -(2**31), INT_MAX) if key.type is ConfigType.INT else (64, -(2**63), LONG_MAX)
    )
    if isinstance(value, bool | float):
        raise _error(
            key.name, value,
            f"Expected value to be a {bits}-bit integer, but it was a {_JAVA_CLASS[type(value)]}",
        )  # fmt: skip
    if isinstance(value, str):
        text = _java_trim(value)
        if not _JAVA_INTEGER.fullmatch(text):
            raise _error(key.name, value, f"Not a number of type {key.type.value}")
        number = int(text)
    else:
        number = value
    if not low <= number <= high:
        raise _error(key.name, value, f"Not a number of type {key.type.value}")
    return number


def _check_range(key: TopicConfigKey, number: float) -> None:
    """Range.atLeast / between, or the compression-level validator; the parsed value shown."""
    if key.or_equal_to is not None:
        if number == key.or_equal_to:
            return
        assert key.minimum is not None and key.maximum is not None
        if number > key.maximum or number < key.minimum:
            raise _error(
                key.name, number,
                f"Value must be between {_show(key.minimum)} and {_show(key.maximum)} or equal "
                f"to {key.or_equal_to}",
            )  # fmt: skip
        return
    if key.minimum is not None and number < key.minimum:
        raise _error(key.name, number, f"Value must be at least {_show(key.minimum)}")
    if key.maximum is not None and number > key.maximum:
        raise _error(key.name, number, f"Value must be no more than {_show(key.maximum)}")


def _normalize_throttled(key: TopicConfigKey, items: list[str]) -> str:
    """ThrottledReplicaListValidator's rule and message. Kafka accepts empty items and
    whitespace around them, but the brokers' own reading (ConfigHandler.parseThrottledPartitions
    splits on ',' and ':' and parses each part as an int) fails on those, so the value is stored
    without them: '*' alone, or `partition:broker` items."""
    trimmed = [_java_trim(item) for item in items]
    if "".join(trimmed) == "*":
        return "*"
    if not all(_THROTTLED_REPLICA.fullmatch(item) for item in trimmed):
        raise _error(key.name, "[" + ", ".join(items) + "]", key.name + _THROTTLED_REASON)
    return ",".join(item for item in trimmed if item)


def _normalize(key: TopicConfigKey, value: ConfigValue) -> str:
    match key.type:
        case ConfigType.BOOLEAN:
            if isinstance(value, bool):
                return "true" if value else "false"
            if isinstance(value, str):
                for word in ("true", "false"):
                    if _java_equals_ignore_case(_java_trim(value), word):
                        return word
            raise _error(key.name, value, "Expected value to be either true or false")
        case ConfigType.INT | ConfigType.LONG:
            number = _parse_integer(key, value)
            _check_range(key, number)
            return str(number)
        case ConfigType.DOUBLE:
            if isinstance(value, bool):
                raise _error(
                    key.name, value, "Expected value to be a double, but it was a java.lang.Boolean"
                )
            parsed = _java_double(value) if isinstance(value, str) else float(value)
            if parsed is None:
                raise _error(key.name, value, "Not a number of type DOUBLE")
            # NaN passes Range's checks in Kafka too (every comparison with it is false).
            _check_range(key, parsed)
            return _java_double_string(parsed)
        case ConfigType.STRING:
            if not isinstance(value, str):
                raise _error(
                    key.name, value,
                    f"Expected value to be a string, but it was a {_JAVA_CLASS[type(value)]}",
                )  # fmt: skip
            text = _java_trim(value)
            if key.allowed and text not in key.allowed:
                raise _error(key.name, text, "String must be one of: " + ", ".join(key.allowed))
            if key.version_string:
                try:
                    from_version_string(text)
                except InvalidVersion as e:
                    raise _error(key.name, text, str(e)) from None
            return text
        case ConfigType.LIST:
            if not isinstance(value, str):
                # parseType's message ends with a period here, unlike the others.
                raise _error(key.name, value, "Expected a comma separated list.")
            items = _java_list(value)
            if key.throttled_replicas:
                return _normalize_throttled(key, items)
            for item in items:
                if key.allowed and item not in key.allowed:
                    raise _error(key.name, item, "String must be one of: " + ", ".join(key.allowed))
            return ",".join(items)
    raise AssertionError(key.type)  # pragma: no cover


def normalize_topic_config(config: Mapping[str, ConfigValue]) -> dict[str, str]:
    """Validate every entry (LogConfig.validate) and return the strings Kafka stores."""
    for name in config:
        if name not in TOPIC_CONFIGS:
            raise InvalidConfigurationException(f"Unknown topic config name: {name}")
    normalized = {
        name: _normalize(TOPIC_CONFIGS[name], value) for name, value in sorted(config.items())
    }
    _validate_values(normalized)
    return normalized


def validate_topic_config(config: Mapping[str, ConfigValue]) -> None:
    normalize_topic_config(config)


def effective(config: Mapping[str, str], name: str) -> str:
    return config.get(name, TOPIC_CONFIGS[name].default)


def _validate_values(config: Mapping[str, str]) -> None:
    """LogConfig.validateValues and the topic checks a ZooKeeper-mode broker adds
    (validateTopicLogConfigValues with fromZK, 3.9) that need no broker config."""
    min_lag = int(effective(config, "min.compaction.lag.ms"))
    max_lag = int(effective(config, "max.compaction.lag.ms"))
    if min_lag > max_lag:
        raise InvalidConfigurationException(
            f"conflict topic config setting min.compaction.lag.ms ({min_lag}) > "
            f"max.compaction.lag.ms ({max_lag})"
        )
    # validateNoInvalidRemoteStorageConfigsInZK: what a ZooKeeper-mode broker refuses.
    if "true" in (
        effective(config, "remote.log.delete.on.disable"),
        effective(config, "remote.log.copy.disable"),
    ):
        raise InvalidConfigurationException(
            "It is invalid to set `remote.log.delete.on.disable` or `remote.log.copy.disable` "
            "under Zookeeper's mode."
        )
    if effective(config, "remote.storage.enable") != "true":
        return
    for local, total in (
        ("local.retention.ms", "retention.ms"),
        ("local.retention.bytes", "retention.bytes"),
    ):
        total_value = int(effective(config, total))
        local_value = int(effective(config, local))
        if total_value != -1 and local_value != -2:
            if local_value == -1:
                raise _error(
                    local,
                    local_value,
                    f"Value must not be -1 as {total} value is set as {total_value}.",
                )
            if local_value > total_value:
                raise _error(
                    local,
                    local_value,
                    f"Value must not be more than {total} property value: {total_value}",
                )


def topic_config_warnings(config: Mapping[str, str], replication_factor: int) -> list[str]:
    """What Kafka accepts but a platform engineer wants to hear about."""
    warnings: list[str] = []
    min_isr = int(effective(config, "min.insync.replicas"))
    if min_isr > replication_factor:
        warnings.append(
            f"min.insync.replicas ({min_isr}) is greater than the replication factor "
            f"({replication_factor}): producers with acks=all will always fail "
            "(NotEnoughReplicas)"
        )
    for name in config:
        if TOPIC_CONFIGS[name].deprecated:
            warnings.append(f"{name} is deprecated in Kafka 3.x")
    return warnings


def unclean_leader_election_enabled(config: Mapping[str, str], default: bool = False) -> bool:
    """The topic's `unclean.leader.election.enable` over the controller-wide default."""
    value = config.get("unclean.leader.election.enable")
    return default if value is None else value.strip().lower() == "true"
