"""argparse that raises instead of exiting, so every `kto` command reports usage errors as one
line on stderr with exit status 2."""

from __future__ import annotations

import argparse
from typing import NoReturn


class UsageError(Exception):
    """A command-line argument is malformed; the message names it."""


class RaisingParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
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
