"""Each node's configuration at each step of a ZooKeeper-to-KRaft migration (`migration`), as
Kafka 3.9's operations guide gives it: the KRaft controllers ready for migration, what a
ZooKeeper-mode broker adds to enter migration mode, and a broker's KRaft configuration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kto_dev.apache_kafka.broker import (
    BrokerSpec,
    NodeFiles,
    log4j_properties,
    small_cluster_settings,
)
from kto_dev.apache_kafka.distribution import KAFKA_VERSION

# "the Kafka brokers must be upgraded to software version 3.9 and have the
# inter.broker.protocol.version configuration set to 3.9": the release, without the patch.
MIGRATION_IBP = ".".join(KAFKA_VERSION.split(".")[:2])
# "The KRaft cluster node.id values must be different from any existing ZK broker broker.id":
# the guide's sample controller is node 3000.
FIRST_CONTROLLER_ID = 3000
CONTROLLER_LISTENER = "CONTROLLER"
BROKER_LISTENER = "PLAINTEXT"  # the listener broker.py gives every ZooKeeper-mode broker
SECURITY_PROTOCOL_MAP = f"{BROKER_LISTENER}:PLAINTEXT,{CONTROLLER_LISTENER}:PLAINTEXT"

# ---- the nodes' configurations --------------------------------------------------------------


@dataclass(frozen=True)
class ControllerSpec(NodeFiles):
    """One KRaft controller: `port` is its controller listener; `zookeeper` (with the chroot)
    while it migrates, None once the migration is finalized."""

    node_id: int
    directory: Path
    port: int
    quorum: str  # controller.quorum.bootstrap.servers: host:port of every controller
    zookeeper: str | None
    heap_mb: int = 256
    overrides: Mapping[str, str] = field(default_factory=dict)

    @property
    def migrating(self) -> bool:
        return self.zookeeper is not None


def controller_properties(spec: ControllerSpec) -> dict[str, str]:
    """The guide's "sample config for a KRaft controller that is ready for migration" (and,
    finalized, the same without the migration flag and the ZooKeeper client configuration)."""
    properties = {
        "process.roles": "controller",
        "node.id": str(spec.node_id),
        "controller.quorum.bootstrap.servers": spec.quorum,
        "controller.listener.names": CONTROLLER_LISTENER,
        "listeners": f"{CONTROLLER_LISTENER}://{spec.bootstrap}",
        "listener.security.protocol.map": SECURITY_PROTOCOL_MAP,
        "log.dirs": str(spec.log_dir),
        # A controller serves a handful of nodes: a few threads keep it within a small heap.
        "num.network.threads": "2",
        "num.io.threads": "2",
        "background.threads": "2",
    }
    if spec.zookeeper is not None:
        properties |= {
            "zookeeper.metadata.migration.enable": "true",
            "zookeeper.connect": spec.zookeeper,
            # "The inter broker listener in brokers to allow KRaft controller send RPCs to brokers"
            "inter.broker.listener.name": BROKER_LISTENER,
        }
    properties.update(spec.overrides)
    return properties


def migrating_broker_overrides(quorum: str) -> dict[str, str]:
    """What a ZooKeeper-mode broker adds to enter migration mode, as the guide lists it:
    `controller.quorum.bootstrap.servers`, `controller.listener.names` (also named in
    `listener.security.protocol.map`), `zookeeper.metadata.migration.enable`, and the IBP set
    to the release. `broker.id` stays set (broker.py always sets it)."""
    return {
        "inter.broker.protocol.version": MIGRATION_IBP,
        "zookeeper.metadata.migration.enable": "true",
        "controller.quorum.bootstrap.servers": quorum,
        "controller.listener.names": CONTROLLER_LISTENER,
        "listener.security.protocol.map": SECURITY_PROTOCOL_MAP,
    }


# What a KRaft broker must not keep from its ZooKeeper-mode configuration: "replace the
# broker.id with node.id", "Don't set the IBP", "Remove the migration enabled flag", "The
# zookeeper configurations should be removed", "remove control.plane.listener.name".
_ZOOKEEPER_ONLY = ("broker.id", "inter.broker.protocol.version", "control.plane.listener.name")


def kraft_broker_properties(spec: BrokerSpec, quorum: str) -> dict[str, str]:
    """The guide's "sample KRaft broker server.properties": the broker's id as `node.id`, its
    listener, rack and data directory unchanged, the controller quorum, no ZooKeeper."""
    properties = {
        "process.roles": "broker",
        "node.id": str(spec.broker_id),
        "listeners": f"{BROKER_LISTENER}://{spec.bootstrap}",
        "listener.security.protocol.map": SECURITY_PROTOCOL_MAP,
        "controller.quorum.bootstrap.servers": quorum,
        "controller.listener.names": CONTROLLER_LISTENER,
        "log.dirs": str(spec.log_dir),
        **small_cluster_settings(spec.internal_replication_factor),
    }
    if spec.rack is not None:
        properties["broker.rack"] = spec.rack
    properties.update(
        (key, value) for key, value in spec.overrides.items()
        if key not in _ZOOKEEPER_ONLY and not key.startswith("zookeeper.")
    )  # fmt: skip
    return properties


def controller_log4j_properties(log_file: Path) -> str:
    """The brokers' log4j 1 configuration, plus the TRACE logging of the migration components
    the guide recommends on each KRaft controller while the migration is active."""
    return log4j_properties(log_file) + "log4j.logger.org.apache.kafka.metadata.migration=TRACE\n"
