"""argparse that raises instead of exiting, so every `kto` command reports usage errors as one
line on stderr with exit status 2."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn, TypeAlias, TypeVar

from kafka_topic_operator.kafka.java import INT_MAX

# What `add_subparsers` returns; typeshed names it with a private class, hence the string.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
T = TypeVar("T")


class UsageError(Exception):
    """A command-line argument is malformed; the message names it."""


class RaisingParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def add_log_level_argument(parser: argparse.ArgumentParser) -> None:
    """`--log-level`, shared by the long-running commands."""
    parser.add_argument("--log-level", default="INFO", choices=LOG_LEVELS, type=str.upper)


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def partition_count(text: str) -> int:
    """A topic's partition count: 1 to Kafka's Int.MaxValue."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if not 1 <= value <= INT_MAX:
        raise argparse.ArgumentTypeError(f"{value} is not between 1 and {INT_MAX}")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} is not positive")
    return value


def boolean(text: str) -> bool:
    """Kafka's boolean config values: `true` or `false`, any case."""
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"'{text}' is not true or false")
    return lowered == "true"


def parsed_by(parse: Callable[[str], T]) -> Callable[[str], T]:
    """An argparse type from a parser whose ValueError says what is wrong (argparse would print
    only "invalid parse value")."""

    def parse_flag(text: str) -> T:
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return parse_flag
