"""Topic names as Kafka's Topic.java rules them: validation, collisions, internal topics.

The default messages are Kafka 3.4+'s; `kafka_version="2.8"` gives 2.8's wording.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal

from kafka_topic_operator.kafka.errors import InvalidTopicException

MAX_NAME_LENGTH: Final = 249
LEGAL_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
GROUP_METADATA_TOPIC_NAME: Final = "__consumer_offsets"
TRANSACTION_STATE_TOPIC_NAME: Final = "__transaction_state"
CLUSTER_METADATA_TOPIC_NAME: Final = "__cluster_metadata"
INTERNAL_TOPICS: Final = frozenset({GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME})
COLLISION_WARNING: Final = (
    "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
    "could collide. To avoid issues it is best to use either, but not both."
)

KafkaVersion = Literal["3", "2.8"]


def validate_topic_name(name: str, *, kafka_version: KafkaVersion = "3") -> None:
    """Topic.validate: empty, `.`/`..`, length, then characters, in that order."""
    modern = kafka_version == "3"
    if not name:
        raise InvalidTopicException(
            "Topic name is invalid: the empty string is not allowed"
            if modern
            else "Topic name is illegal, it can't be empty"
        )
    if name in (".", ".."):
        raise InvalidTopicException(
            f"Topic name is invalid: '{name}' is not allowed"
            if modern
            else 'Topic name cannot be "." or ".."'
        )
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidTopicException(
            f"Topic name is invalid: the length of '{name}' is longer than the max allowed "
            f"length {MAX_NAME_LENGTH}"
            if modern
            else "Topic name is illegal, it can't be longer than "
            f"{MAX_NAME_LENGTH} characters, topic name: {name}"
        )
    if not all(c in LEGAL_CHARS for c in name):
        raise InvalidTopicException(
            f"Topic name is invalid: '{name}' contains one or more characters other than "
            "ASCII alphanumerics, '.', '_' and '-'"
            if modern
            else f'Topic name "{name}" is illegal, it contains a character other than '
            "ASCII alphanumerics, '.', '_' and '-'"
        )


def is_valid_topic_name(name: str) -> bool:
    try:
        validate_topic_name(name)
    except InvalidTopicException:
        return False
    return True


def has_collision_chars(name: str) -> bool:
    return "_" in name or "." in name


def unify_collision_chars(name: str) -> str:
    return name.replace(".", "_")


def has_collision(a: str, b: str) -> bool:
    return unify_collision_chars(a) == unify_collision_chars(b)


def colliding_topics(name: str, existing: Iterable[str]) -> list[str]:
    """Existing topics that differ from `name` only by `.` versus `_` (AdminZkClient's check)."""
    return [t for t in existing if t != name and has_collision(name, t)]


def is_internal(name: str) -> bool:
    return name in INTERNAL_TOPICS
