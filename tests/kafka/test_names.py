"""Topic names against Kafka's TopicTest vectors (reference §7)."""

from __future__ import annotations

import random
import string

import pytest

from kafka_topic_operator.kafka.errors import InvalidTopicException
from kafka_topic_operator.kafka.names import (
    colliding_topics,
    has_collision,
    has_collision_chars,
    is_internal,
    is_valid_topic_name,
    unify_collision_chars,
    validate_topic_name,
)

LONGEST = "".join(random.Random(7).choices(string.ascii_letters + string.digits, k=249))


@pytest.mark.parametrize(
    "name", ["valid", "TOPIC", "nAmEs", "ar6", "VaL1d", "_0-9_.", "...", LONGEST]
)
def test_valid_names(name: str) -> None:
    validate_topic_name(name)
    assert is_valid_topic_name(name)


@pytest.mark.parametrize("name", ["", "foo bar", "..", "foo:bar", "foo=bar", ".", "a" * 250])
def test_invalid_names(name: str) -> None:
    with pytest.raises(InvalidTopicException):
        validate_topic_name(name)
    assert not is_valid_topic_name(name)


@pytest.mark.parametrize("char", list("/\\,\u0000:\"';*? \t\r\n="))
def test_illegal_characters(char: str) -> None:
    assert not is_valid_topic_name("Is " + char + "illegal")
    assert not is_valid_topic_name("a" + char)


@pytest.mark.parametrize(
    ("name", "modern", "legacy"),
    [
        ("", "Topic name is invalid: the empty string is not allowed",
         "Topic name is illegal, it can't be empty"),
        (".", "Topic name is invalid: '.' is not allowed", 'Topic name cannot be "." or ".."'),
        ("..", "Topic name is invalid: '..' is not allowed", 'Topic name cannot be "." or ".."'),
        ("a" * 250,
         f"Topic name is invalid: the length of '{'a' * 250}' is longer than the max allowed "
         "length 249",
         f"Topic name is illegal, it can't be longer than 249 characters, topic name: {'a' * 250}"),
        ("a b",
         "Topic name is invalid: 'a b' contains one or more characters other than ASCII "
         "alphanumerics, '.', '_' and '-'",
         'Topic name "a b" is illegal, it contains a character other than ASCII alphanumerics, '
         "'.', '_' and '-'"),
    ],
)  # fmt: skip
def test_messages_of_both_kafka_versions(name: str, modern: str, legacy: str) -> None:
    with pytest.raises(InvalidTopicException) as e:
        validate_topic_name(name)
    assert str(e.value) == modern
    with pytest.raises(InvalidTopicException) as e:
        validate_topic_name(name, kafka_version="2.8")
    assert str(e.value) == legacy


def test_checks_run_in_kafkas_order() -> None:
    # Too long *and* illegal characters: the length is reported first.
    with pytest.raises(InvalidTopicException, match="longer than"):
        validate_topic_name(" " * 250)


@pytest.mark.parametrize("name", [".start", "end.", "mid.dle", ".ma.ny.", "_start", "end_",
                                  "mid_dle", "_ma_ny."])  # fmt: skip
def test_collision_chars(name: str) -> None:
    assert has_collision_chars(name)


@pytest.mark.parametrize("name", ["start", "end", "middle", "many"])
def test_no_collision_chars(name: str) -> None:
    assert not has_collision_chars(name)


@pytest.mark.parametrize(
    ("a", "b", "collide"),
    [(".topic", "_topic", True), ("to.pic", "to_pic", True), ("topic.", "topic_", True),
     ("topic", "topic", True), (".topic", "topic", False), ("to.pic", "topic_", False)],
)  # fmt: skip
def test_has_collision(a: str, b: str, collide: bool) -> None:
    assert has_collision(a, b) is collide
    assert has_collision(b, a) is collide


@pytest.mark.parametrize(
    ("name", "unified"),
    [("topic", "topic"), (".topic", "_topic"), ("_topic", "_topic"), ("_.topic", "__topic")],
)
def test_unify_collision_chars(name: str, unified: str) -> None:
    assert unify_collision_chars(name) == unified


def test_colliding_topics_excludes_the_topic_itself() -> None:
    assert colliding_topics("test_topic", ["test.topic", "test_topic", "other"]) == ["test.topic"]


def test_internal_topics() -> None:
    assert is_internal("__consumer_offsets") and is_internal("__transaction_state")
    assert not is_internal("__cluster_metadata") and not is_internal("orders")
