"""argparse that raises instead of exiting, so every `kto` command reports usage errors as one
line on stderr with exit status 2."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from kafka_topic_operator.kafka.java import INT_MAX

if TYPE_CHECKING:  # the ZooKeeper client is imported only by commands that connect
    from kafka_topic_operator.zk.client import ZkCredentials


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


def add_zookeeper_auth_arguments(parser: argparse.ArgumentParser, *, acl: bool) -> None:
    """The ZooKeeper credential flags every long-running command shares."""
    parser.add_argument(
        "--zookeeper-digest-file",
        type=Path,
        metavar="FILE",
        help="'user:password' for ZooKeeper digest auth (else $KTO_ZOOKEEPER_DIGEST)",
    )
    parser.add_argument(
        "--zookeeper-sasl-file",
        type=Path,
        metavar="FILE",
        help="'user:password' for ZooKeeper SASL DIGEST-MD5, as a Kafka broker's JAAS Client "
        "section gives (else $KTO_ZOOKEEPER_SASL)",
    )
    if acl:
        parser.add_argument(
            "--zookeeper-set-acl",
            action="store_true",
            help="create znodes readable by all and writable by the authenticated user only "
            "(Kafka's zookeeper.set.acl)",
        )


def zookeeper_credentials(args: argparse.Namespace) -> ZkCredentials | None:
    """The credentials `add_zookeeper_auth_arguments` asked for; UsageError when they cannot
    be used (both kinds, unreadable, malformed, or ACLs without any)."""
    from kafka_topic_operator.zk.client import load_credentials

    try:
        credentials = load_credentials(args.zookeeper_digest_file, args.zookeeper_sasl_file)
    except (OSError, ValueError) as e:
        raise UsageError(str(e)) from e
    if getattr(args, "zookeeper_set_acl", False) and credentials is None:
        raise UsageError("--zookeeper-set-acl needs digest or SASL credentials")
    return credentials
