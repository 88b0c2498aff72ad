"""The ZooKeeper credential and TLS flags every long-running `kto` command shares, and the
credentials and TLS settings they name."""

from __future__ import annotations

import argparse
from pathlib import Path

from kafka_topic_operator.process.argparsing import UsageError
from kafka_topic_operator.zk.client import ZkCredentials, load_credentials
from kafka_topic_operator.zk.tls import ZkTls, ZkTlsError

TLS_FLAGS = {
    "--zookeeper-tls": "zookeeper_tls",
    "--zookeeper-tls-cafile": "zookeeper_tls_cafile",
    "--zookeeper-tls-certfile": "zookeeper_tls_certfile",
    "--zookeeper-tls-keyfile": "zookeeper_tls_keyfile",
    "--zookeeper-tls-no-hostname-check": "zookeeper_tls_no_hostname_check",
}


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
    tls = parser.add_argument_group(
        "ZooKeeper over TLS",
        "a secure client port (Kafka's zookeeper.ssl.client.enable); any "
        "of these flags turns TLS on",
    )
    tls.add_argument(
        "--zookeeper-tls",
        action="store_true",
        help="TLS, trusting the system's CAs unless --zookeeper-tls-cafile",
    )
    tls.add_argument(
        "--zookeeper-tls-cafile",
        type=Path,
        metavar="FILE",
        help="PEM CA certificates the servers' certificates are checked against",
    )
    tls.add_argument(
        "--zookeeper-tls-certfile",
        type=Path,
        metavar="FILE",
        help="PEM client certificate, for servers that ask for one",
    )
    tls.add_argument(
        "--zookeeper-tls-keyfile",
        type=Path,
        metavar="FILE",
        help="PEM private key of --zookeeper-tls-certfile",
    )
    tls.add_argument("--zookeeper-tls-no-hostname-check", action="store_true",
                     help="do not check that a server's certificate names its host")  # fmt: skip
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


def zookeeper_tls(args: argparse.Namespace) -> ZkTls | None:
    """The TLS settings the flags ask for (None: plaintext), their files checked; UsageError
    naming what is wrong."""
    if not any(getattr(args, dest, None) for dest in TLS_FLAGS.values()):
        return None
    tls = ZkTls(
        args.zookeeper_tls_cafile,
        args.zookeeper_tls_certfile,
        args.zookeeper_tls_keyfile,
        check_hostname=not args.zookeeper_tls_no_hostname_check,
    )
    try:
        tls.check()
    except ZkTlsError as e:
        raise UsageError(str(e)) from e
    return tls
