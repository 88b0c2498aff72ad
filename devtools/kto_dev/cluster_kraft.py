"""The dev cluster's Kafka on KRaft (`kto dev-cluster up --kraft`): Apache Kafka 4.x nodes and
no ZooKeeper, for cluster.py.

Combined mode (the default): nodes 0, 1, 2 (racks a, b, c), each broker and controller, all
voters of one static quorum, as Kafka's quick start runs them. Split mode: the same three as
brokers only, and node 3 the quorum's one controller. Each node lives in `kraft-<id>/` of the
dev cluster's directory (`server.properties`, `server.log`, `data/`): its log directory is
formatted with the cluster's id before its first start only, so a restart, or an `up` after a
`down`, starts it on the data it has; the cluster's id and mode are read back from the nodes'
`meta.properties`. What `up` decided (ports, roles, the cluster's id) is kept in state.json under
"kraft", each node's pid under "nodes". Failures raise KafkaBrokerError with one line.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from kto_dev.apache_kafka.broker import (
    KafkaBrokerError,
    alive,
    java_executable,
    metadata_of,
    startup_failure,
)
from kto_dev.apache_kafka.distribution import KRAFT_KAFKA_VERSION, is_complete, libs_dir
from kto_dev.apache_kafka.kraft import KRaftNodeSpec, new_cluster_id, recorded_leader, spawn
from kto_dev.ports import free_port

MODES = ("combined", "split")
BROKERS = (0, 1, 2)
RACKS = ("a", "b", "c")
CONTROLLER = 3  # split mode's controller-only node
COMBINED, BROKER, CONTROLLER_ONLY = "broker,controller", "broker", "controller"
HEAP_MB = {COMBINED: 384, BROKER: 320, CONTROLLER_ONLY: 256}
# Three or four JVMs starting at once, on a small machine that may be busy with others.
START_TIMEOUT = 180.0
TOPIC_TOOL = "org.apache.kafka.tools.TopicCommand"
LOOPBACK = "127.0.0.1"


def check_prerequisites() -> None:
    """Java and Kafka's jars, before anything starts: one line saying what to do."""
    java_executable()
    libs = libs_dir(KRAFT_KAFKA_VERSION)
    if not is_complete(libs):
        raise KafkaBrokerError(
            f"Kafka {KRAFT_KAFKA_VERSION} jars not found in {libs}: run `make kafka`"
        )


def node_directory(directory: Path, node: int) -> Path:
    return directory / f"kraft-{node}"


def _meta_properties(directory: Path) -> dict[int, dict[str, str]]:
    """Each formatted node's `meta.properties`, by node."""
    found = {}
    for node in (*BROKERS, CONTROLLER):
        meta = node_directory(directory, node) / "data" / "meta.properties"
        try:
            lines = meta.read_text().splitlines()
        except OSError:
            continue
        found[node] = dict(
            line.split("=", 1) for line in lines if "=" in line and not line.startswith("#")
        )
    return found


def existing_cluster(directory: Path) -> tuple[str, str] | None:
    """The cluster id and mode the nodes' data in `directory` was formatted for, if any."""
    formatted = _meta_properties(directory)
    if not formatted:
        return None
    ids = {meta.get("cluster.id") for meta in formatted.values()}
    if len(ids) != 1 or None in ids:
        raise KafkaBrokerError(
            f"the KRaft nodes' data in {directory} is not one cluster's (cluster ids "
            f"{', '.join(sorted(str(i) for i in ids))}): `kto dev-cluster down --reset` removes it"
        )
    return ids.pop() or "", "split" if CONTROLLER in formatted else "combined"


def plan(directory: Path, mode: str | None, host: str = LOOPBACK) -> dict[str, Any]:
    """The cluster `up` starts: the data's id and mode when `directory` has some (another mode
    asked for is refused), else a new id; each node's roles and new free ports, its listeners on
    `host` (loopback, or a real node's link address, where its pods reach them)."""
    existing = existing_cluster(directory)
    if existing is not None and mode is not None and existing[1] != mode:
        raise KafkaBrokerError(
            f"{directory} holds a {existing[1]}-mode KRaft cluster's data: start it with "
            f"--kraft-mode {existing[1]}, or remove it first with `kto dev-cluster down --reset`"
        )
    mode = existing[1] if existing is not None else mode or "combined"
    if mode not in MODES:
        raise KafkaBrokerError(f"unknown KRaft mode {mode!r}: {' or '.join(MODES)}")
    roles = {b: COMBINED for b in BROKERS}
    if mode == "split":
        roles = {**dict.fromkeys(BROKERS, BROKER), CONTROLLER: CONTROLLER_ONLY}
    nodes: dict[str, dict[str, Any]] = {}
    for node, role in roles.items():
        settings: dict[str, Any] = {"roles": role}
        if role != CONTROLLER_ONLY:
            port = free_port()
            settings |= {"port": port, "rack": RACKS[node], "bootstrap": f"{host}:{port}"}
        if role != BROKER:
            settings["controller_port"] = free_port()
        nodes[str(node)] = settings
    voters = ",".join(
        f"{node}@{host}:{settings['controller_port']}"
        for node, settings in nodes.items()
        if "controller_port" in settings
    )
    planned: dict[str, Any] = {
        "version": KRAFT_KAFKA_VERSION,
        "mode": mode,
        "cluster_id": existing[0] if existing is not None else new_cluster_id(),
        "voters": voters,
        "nodes": nodes,
    }
    if host != LOOPBACK:  # loopback's plan stays as it always was
        planned["host"] = host
    return planned


def spec(directory: Path, kraft: Mapping[str, Any], node: int) -> KRaftNodeSpec:
    """A node as `up` planned it: the same ports, roles and directory every start."""
    settings = kraft["nodes"][str(node)]
    controller_port = settings.get("controller_port", 0)
    return KRaftNodeSpec(
        node_id=node,
        directory=node_directory(directory, node),
        # A controller's only listener is its controller listener.
        port=settings.get("port", controller_port),
        controller_port=controller_port,
        voters=kraft["voters"],
        cluster_id=kraft["cluster_id"],
        rack=settings.get("rack"),
        heap_mb=HEAP_MB[settings["roles"]],
        internal_replication_factor=len(BROKERS),
        roles=settings["roles"],
        host=kraft.get("host", LOOPBACK),
    )


def nodes_of(kraft: Mapping[str, Any]) -> list[int]:
    return sorted(int(node) for node in kraft["nodes"])


def brokers_of(kraft: Mapping[str, Any]) -> list[int]:
    return [n for n in nodes_of(kraft) if kraft["nodes"][str(n)]["roles"] != CONTROLLER_ONLY]


def bootstrap(kraft: Mapping[str, Any]) -> str:
    return ",".join(kraft["nodes"][str(b)]["bootstrap"] for b in brokers_of(kraft))


def start_node(directory: Path, kraft: Mapping[str, Any], node: int) -> int:
    """Formats the node's log directory if it never was, and starts its JVM; does not wait.
    Each start logs to a new `server.log` (the one before is kept as `server.log.1`), where a
    failed start-up's reason is the first error."""
    node_spec = spec(directory, kraft, node)
    if node_spec.log_file.exists():
        node_spec.log_file.replace(node_spec.log_file.with_name("server.log.1"))
    return spawn(node_spec).pid


def quorum_leader(
    directory: Path, kraft: Mapping[str, Any], running: Collection[int]
) -> int | None:
    """The active controller as the running controllers recorded it (the leader of the latest
    epoch any of them knows), None when that leader is not running."""
    known = [
        recorded
        for node in nodes_of(kraft)
        if node in running and kraft["nodes"][str(node)]["roles"] != BROKER
        if (recorded := recorded_leader(spec(directory, kraft, node).log_dir)) is not None
    ]
    leader = max(known)[1] if known else None
    return leader if leader in running else None


def wait_ready(
    directory: Path,
    kraft: Mapping[str, Any],
    pids: Mapping[int, int],
    *,
    since: float = 0.0,
    timeout: float = START_TIMEOUT,
) -> None:
    """Until each node of `pids` (node: its JVM's pid) does its part: a broker is named by a
    metadata request to the brokers, a controller-only node has recorded a leader since `since`
    (a time.time()). A node that exits raises with Kafka's reason from its log."""
    brokers = {n for n in pids if n in brokers_of(kraft)}
    controllers = [n for n in pids if n not in brokers]
    deadline = time.monotonic() + timeout
    while True:
        for node, pid in pids.items():
            if not alive(pid):
                log = spec(directory, kraft, node).log_file
                raise KafkaBrokerError(f"KRaft node {node} exited during start-up: "
                                       f"{startup_failure(log)} (see {log})")  # fmt: skip
        if all(_recorded_since(directory, kraft, n, since) for n in controllers):
            metadata = metadata_of(bootstrap(kraft)) if brokers else None
            if not brokers or (metadata is not None and brokers <= set(metadata.brokers)):
                return
        if time.monotonic() > deadline:
            waiting = ", ".join(str(n) for n in sorted(pids))
            log = spec(directory, kraft, min(pids)).log_file
            raise KafkaBrokerError(f"KRaft nodes {waiting} were not ready within {timeout:.0f} s "
                                   f"(see {log})")  # fmt: skip
        time.sleep(0.25)


def _recorded_since(directory: Path, kraft: Mapping[str, Any], node: int, since: float) -> bool:
    return recorded_leader(spec(directory, kraft, node).log_dir, since) is not None


ROLE_NAMES = {COMBINED: "broker and controller", BROKER: "broker", CONTROLLER_ONLY: "controller"}


def summary(kraft: Mapping[str, Any]) -> str:
    """One line: the cluster id, version and mode."""
    mode = kraft["mode"]
    how = "each node broker and controller" if mode == "combined" else "brokers and a controller"
    return (f"KRaft cluster {kraft['cluster_id']}: Apache Kafka {kraft['version']}, {mode} mode "
            f"({how}), no ZooKeeper")  # fmt: skip


def node_lines(state: Mapping[str, Any]) -> list[str]:
    """Each node in `status`: its address, rack and roles, whether it runs, and which one the
    controllers last recorded as the quorum's leader."""
    kraft, alive_by_pid = state["kraft"], state["alive"]
    lines = []
    for node in nodes_of(kraft):
        settings, pid = kraft["nodes"][str(node)], state["nodes"][str(node)]
        if "bootstrap" in settings:
            where = f"{settings['bootstrap']} rack {settings['rack']}"
        else:
            where = (
                f"controller listener {kraft.get('host', LOOPBACK)}:{settings['controller_port']}"
            )
        running = f"running (pid {pid})" if alive_by_pid.get(str(pid)) else "stopped"
        leader = ", quorum leader" if state.get("controller") == node else ""
        lines.append(f"  KRaft node {node} {where}, {ROLE_NAMES[settings['roles']]}: "
                     f"{running}{leader}")  # fmt: skip
    return lines


def topic_tool_command(kraft: Mapping[str, Any]) -> list[str]:
    """Kafka's own kafka-topics (its class, from the jars: Maven ships no bin/ scripts)
    describing every topic."""
    return [java_executable(), "-Xmx256m", "-cp", f"{libs_dir(kraft['version'])}/*", TOPIC_TOOL,
            "--bootstrap-server", bootstrap(kraft), "--describe"]  # fmt: skip
