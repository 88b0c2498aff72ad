"""The ZooKeeper credential flags every long-running `kto` command shares, and the credentials
they name."""

from __future__ import annotations

import argparse
from pathlib import Path

from kafka_topic_operator.process.argparsing import UsageError
from kafka_topic_operator.zk.client import ZkCredentials, load_credentials


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
    try:
        credentials = load_credentials(args.zookeeper_digest_file, args.zookeeper_sasl_file)
    except (OSError, ValueError) as e:
        raise UsageError(str(e)) from e
    if getattr(args, "zookeeper_set_acl", False) and credentials is None:
        raise UsageError("--zookeeper-set-acl needs digest or SASL credentials")
    return credentials
