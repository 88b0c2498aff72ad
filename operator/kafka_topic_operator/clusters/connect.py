"""The one way from a command line to a cluster: `add_cluster_arguments` adds the flags that name
it (`--zookeeper` for a ZooKeeper-mode cluster, `--bootstrap-servers` and its security flags for
a KRaft cluster), `cluster_flags` checks them together, `connect` opens the cluster they name.
`kto run`, `kto describe` and `kto plan` share them."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass

from kafka_topic_operator.clusters.cluster import Cluster
from kafka_topic_operator.clusters.kraft import KRaftCluster
from kafka_topic_operator.clusters.zookeeper_mode import ZooKeeperModeCluster
from kafka_topic_operator.kafka_admin.connection import (
    KafkaConnection,
    add_kafka_arguments,
    kafka_connection,
)
from kafka_topic_operator.process.argparsing import UsageError
from kafka_topic_operator.zk.client import ZkClient, ZkCredentials
from kafka_topic_operator.zk.credential_flags import (
    TLS_FLAGS,
    add_zookeeper_auth_arguments,
    zookeeper_credentials,
    zookeeper_tls,
)
from kafka_topic_operator.zk.tls import ZkTls

DEFAULT_SESSION_TIMEOUT = 18.0


@dataclass(frozen=True, slots=True, repr=False)
class ZooKeeperFlags:
    """A ZooKeeper-mode cluster's ZooKeeper, and how to log in to it."""

    hosts: str
    credentials: ZkCredentials | None = None
    secure_acls: bool = False
    tls: ZkTls | None = None

    def __repr__(self) -> str:  # the credentials stay out of any log line
        return (f"ZooKeeperFlags(hosts={self.hosts!r}, secure_acls={self.secure_acls}, "
                f"tls={self.tls is not None})")  # fmt: skip


ClusterFlags = ZooKeeperFlags | KafkaConnection


def add_cluster_arguments(parser: argparse.ArgumentParser, *, zookeeper_acl: bool) -> None:
    """`--zookeeper` with ZooKeeper's credential flags (and `--zookeeper-set-acl` with
    `zookeeper_acl`: for commands that write), `--bootstrap-servers` with Kafka's."""
    parser.add_argument(
        "--zookeeper",
        metavar="HOST:PORT[/CHROOT]",
        help="a ZooKeeper-mode cluster's ZooKeeper, as in Kafka's zookeeper.connect",
    )
    add_zookeeper_auth_arguments(parser, acl=zookeeper_acl)
    add_kafka_arguments(parser)


def cluster_flags(
    args: argparse.Namespace, zookeeper_only: Mapping[str, object] | None = None
) -> ClusterFlags:
    """The cluster the flags name; UsageError for flags that do not go together (both kinds,
    neither, or `zookeeper_only`, the caller's own ZooKeeper flags, with a KRaft cluster) and
    credential files that cannot be used."""
    connection = kafka_connection(args)
    if (args.zookeeper is None) == (connection is None):
        raise UsageError("give either --zookeeper (a ZooKeeper-mode cluster) or "
                         "--bootstrap-servers (a KRaft cluster)")  # fmt: skip
    if connection is None:
        return ZooKeeperFlags(
            args.zookeeper,
            zookeeper_credentials(args),
            bool(getattr(args, "zookeeper_set_acl", False)),
            zookeeper_tls(args),
        )
    others = {
        **(zookeeper_only or {}),
        "--zookeeper-digest-file": args.zookeeper_digest_file,
        "--zookeeper-sasl-file": args.zookeeper_sasl_file,
        "--zookeeper-set-acl": getattr(args, "zookeeper_set_acl", False),
        **{flag: getattr(args, dest, None) for flag, dest in TLS_FLAGS.items()},
    }
    if given := [flag for flag, value in others.items() if value]:
        raise UsageError(f"{', '.join(given)}: ZooKeeper only, not with --bootstrap-servers")
    return connection


def connect(
    flags: ClusterFlags,
    *,
    timeout: float,
    request_timeout: float | None = None,
    session_timeout: float = DEFAULT_SESSION_TIMEOUT,
    retry_deadline: float | None = None,
    config_interval: float | None = None,
) -> Cluster:
    """The cluster, connected: ZooKeeper's session started within `timeout` seconds, or one
    read through the brokers answered within `request_timeout` (each Admin API request's limit;
    the backend's default for None). `config_interval`: how often a KRaft cluster's status
    follower reads the followed topics' configs, at the most (the drift interval).
    ClusterUnavailableError says why not."""
    if isinstance(flags, ZooKeeperFlags):
        zk = ZkClient(
            flags.hosts,
            session_timeout=session_timeout,
            credentials=flags.credentials,
            secure_acls=flags.secure_acls,
            tls=flags.tls,
            **({} if retry_deadline is None else {"retry_deadline": retry_deadline}),
        )
        zk.start(timeout=timeout)
        return ZooKeeperModeCluster(zk)
    cluster = KRaftCluster(
        flags,
        timeout=request_timeout,
        **({} if config_interval is None else {"config_interval": config_interval}),
    )
    try:
        cluster.check()
    except BaseException:
        cluster.close()
        raise
    return cluster
