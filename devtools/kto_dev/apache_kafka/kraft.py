"""Real Apache Kafka 4.x in KRaft mode, started from the fetched jars: no ZooKeeper.

Each node is a broker and a controller at once (KRaft's combined mode, as Kafka's quick start
runs it), with a static quorum of every node (`controller.quorum.voters`); a node's `roles` can
make it a broker or a controller only (split mode, as `kto dev-cluster up --kraft-mode split`).
Before its first start a node's log directory is formatted with the cluster's id
(`kafka.tools.StorageTool format`), as Kafka requires; then `java -cp 'libs/*' kafka.Kafka
server.properties`, one JVM per node, logging through log4j 2. A cluster is ready once every
node answers a metadata request naming all of them and a controller. Failures raise
KafkaBrokerError with one line saying why.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from kto_dev.apache_kafka.broker import (
    START_TIMEOUT,
    STOP_TIMEOUT,
    KafkaBrokerError,
    NodeFiles,
    alive,
    kafka_java,
    metadata_of,
    port_taken,
    render_properties,
    small_cluster_settings,
    startup_failure,
    terminate,
)
from kto_dev.apache_kafka.distribution import (
    KRAFT_KAFKA_VERSION,
    KafkaDistributionError,
    require_libs,
)
from kto_dev.ports import accepts_connections, free_port

RACKS = ("a", "b", "c")


def new_cluster_id() -> str:
    """A Kafka Uuid as Kafka writes one: 16 random bytes, base64url without padding, never
    starting with "-" (Uuid.randomUuid draws again: the storage tool would take it for a flag)."""
    while True:
        drawn = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not drawn.startswith("-"):
            return drawn


@dataclass(frozen=True)
class KRaftNodeSpec(NodeFiles):
    """One node: broker and controller at once (combined, the default), or one of the two
    (`roles`, Kafka's `process.roles`: "broker" or "controller", a split cluster). `port` is its
    broker listener, `controller_port` its controller listener: each used only in that role."""

    node_id: int
    directory: Path
    port: int
    controller_port: int
    voters: str  # controller.quorum.voters: id@host:port of every controller
    cluster_id: str
    rack: str | None = None
    heap_mb: int = 384
    internal_replication_factor: int = 3
    overrides: Mapping[str, str] = field(default_factory=dict)
    # A second client listener beside PLAINTEXT, (its security protocol, its port), named after
    # the protocol: its settings (`listener.name.sasl_plaintext.*`, ...) come with `overrides`.
    extra_listener: tuple[str, int] | None = None
    roles: str = "broker,controller"
    # Where every listener binds and what it advertises: loopback, or a real node's link
    # address so that pods reach the brokers too (the voters name the same host).
    host: str = "127.0.0.1"

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles.split(",")

    @property
    def is_controller(self) -> bool:
        return "controller" in self.roles.split(",")

    @property
    def ports(self) -> list[int]:
        """The ports the node listens on."""
        extra = [self.extra_listener[1]] if self.extra_listener else []
        return [
            *([self.port] if self.is_broker else []),
            *([self.controller_port] if self.is_controller else []),
            *extra,
        ]


def server_properties(spec: KRaftNodeSpec) -> dict[str, str]:
    listeners = [
        *([f"PLAINTEXT://{spec.bootstrap}"] if spec.is_broker else []),
        *([f"CONTROLLER://{spec.host}:{spec.controller_port}"] if spec.is_controller else []),
    ]
    properties = {
        "process.roles": spec.roles,
        "node.id": str(spec.node_id),
        "controller.quorum.voters": spec.voters,
        "listeners": ",".join(listeners),
        "advertised.listeners": f"PLAINTEXT://{spec.bootstrap}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(spec.log_dir),
        **small_cluster_settings(spec.internal_replication_factor),
    }
    if not spec.is_broker:  # a controller only: no client listener, nothing between brokers
        del properties["advertised.listeners"], properties["inter.broker.listener.name"]
    if spec.extra_listener is not None:
        name, port = spec.extra_listener
        properties["listeners"] += f",{name}://{spec.host}:{port}"
        properties["advertised.listeners"] += f",{name}://{spec.host}:{port}"
        properties["listener.security.protocol.map"] += f",{name}:{name}"
    if spec.rack is not None:
        properties["broker.rack"] = spec.rack
    properties.update(spec.overrides)
    return properties


def log4j2_properties(log_file: Path) -> str:
    return (
        "appender.file.type = File\n"
        "appender.file.name = file\n"
        f"appender.file.fileName = {log_file}\n"
        "appender.file.layout.type = PatternLayout\n"
        "appender.file.layout.pattern = [%d] %p %m (%c)%n\n"
        "rootLogger.level = INFO\n"
        "rootLogger.appenderRef.file.ref = file\n"
        "logger.request.name = kafka.request.logger\n"
        "logger.request.level = WARN\n"
    )


def _java(spec: KRaftNodeSpec, libs: Path, *main: str) -> list[str]:
    logging = f"-Dlog4j2.configurationFile={spec.directory / 'log4j2.properties'}"
    return kafka_java(libs, spec.heap_mb, logging, *main)


def prepare(spec: KRaftNodeSpec) -> list[str]:
    """Writes the node's files and formats its log directory once; returns the start command."""
    try:
        libs = require_libs(KRAFT_KAFKA_VERSION)
    except KafkaDistributionError as e:
        raise KafkaBrokerError(str(e)) from None
    for port in spec.ports:
        if port_taken(port, spec.host):
            raise KafkaBrokerError(f"node {spec.node_id}: port {port} on {spec.host} is taken")
    spec.directory.mkdir(parents=True, exist_ok=True)
    spec.properties_file.write_text(render_properties(server_properties(spec)))
    (spec.directory / "log4j2.properties").write_text(log4j2_properties(spec.log_file))
    if not (spec.log_dir / "meta.properties").exists():
        formatted = subprocess.run(
            _java(spec, libs, "kafka.tools.StorageTool", "format", "--ignore-formatted",
                  f"--cluster-id={spec.cluster_id}", "-c", str(spec.properties_file)),
            cwd=spec.directory, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if formatted.returncode != 0:
            said = (formatted.stderr or formatted.stdout).strip().splitlines()
            raise KafkaBrokerError(
                f"node {spec.node_id}: formatting {spec.log_dir} failed: "
                + (said[-1] if said else f"exit {formatted.returncode}")
            )
    return _java(spec, libs, "kafka.Kafka", str(spec.properties_file))


def spawn(spec: KRaftNodeSpec) -> subprocess.Popen[bytes]:
    command = prepare(spec)
    with (spec.directory / "stdout.log").open("ab") as out:
        return subprocess.Popen(command, cwd=spec.directory, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip


def recorded_leader(log_dir: Path, since: float = 0.0) -> tuple[int, int] | None:
    """(leader epoch, leader) as a KRaft node last recorded them in
    `__cluster_metadata-0/quorum-state` (Kafka persists each election there); None while it
    records no leader, or when the file was last written before `since` (a time.time())."""
    path = log_dir / "__cluster_metadata-0" / "quorum-state"
    try:
        if path.stat().st_mtime < since:
            return None
        state = json.loads(path.read_text())
        leader, epoch = int(state.get("leaderId", -1)), int(state.get("leaderEpoch", -1))
    except (OSError, ValueError, AttributeError):
        return None
    return (epoch, leader) if leader >= 0 else None


def cluster_answers(bootstrap: str, node_ids: set[int], timeout: float = 2.0) -> bool:
    """Whether a metadata request names every node as a broker, and a controller."""
    metadata = metadata_of(bootstrap, timeout)
    return (
        metadata is not None and node_ids <= set(metadata.brokers) and metadata.controller_id >= 0
    )


class KRaftCluster:
    """Nodes 0..n-1 (racks a, b, c, ...), each broker and controller, all voters."""

    def __init__(
        self,
        directory: Path,
        size: int = 3,
        *,
        overrides: Mapping[str, str] | None = None,
        cluster_id: str | None = None,
        extra_listener: str | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        """`extra_listener`: a security protocol (SASL_PLAINTEXT, ...) each node also listens
        with, on a port of its own (`extra_bootstrap`), set up through `overrides`. `host`:
        where the nodes listen (loopback, or a real node's link address)."""
        self.host = host
        controller_ports = {n: free_port() for n in range(size)}
        voters = ",".join(f"{n}@{host}:{p}" for n, p in controller_ports.items())
        cluster = cluster_id or new_cluster_id()
        self.specs = {
            n: KRaftNodeSpec(
                node_id=n, directory=directory / f"node-{n}", port=free_port(),
                controller_port=controller_ports[n], voters=voters, cluster_id=cluster,
                rack=RACKS[n % len(RACKS)], internal_replication_factor=min(3, size),
                overrides=dict(overrides or {}),
                extra_listener=(extra_listener, free_port()) if extra_listener else None,
                host=host,
            )
            for n in range(size)
        }  # fmt: skip
        self._processes: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def bootstrap(self) -> str:
        return ",".join(self.specs[n].bootstrap for n in sorted(self._processes))

    @property
    def extra_bootstrap(self) -> str:
        """The running nodes' `extra_listener` addresses."""
        return ",".join(
            f"{self.host}:{listener[1]}"
            for n in sorted(self._processes)
            if (listener := self.specs[n].extra_listener) is not None
        )

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Starts every node at once (a quorum needs a majority) and waits for all of them."""
        try:
            for n, spec in self.specs.items():
                self._processes[n] = spawn(spec)
            self._wait(timeout)
        except KafkaBrokerError:
            self.kill()
            raise

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        # A node is named once unfenced, a moment before its listeners accept: a client the
        # metadata sends there would be refused.
        ports = [port for n in self._processes for port in self.specs[n].ports]
        while not (
            cluster_answers(self.bootstrap, set(self.specs))
            and all(accepts_connections(port, self.host) for port in ports)
        ):
            for n, process in self._processes.items():
                if not alive(process.pid):
                    log = self.specs[n].log_file
                    raise KafkaBrokerError(f"node {n} exited during start-up: "
                                           f"{startup_failure(log)} (see {log})")  # fmt: skip
            if time.monotonic() > deadline:
                raise KafkaBrokerError(f"the KRaft cluster was not ready within {timeout:.0f} s")
            time.sleep(0.25)

    def stop_node(self, node: int, timeout: float = STOP_TIMEOUT) -> None:
        """A controlled shutdown of one node (SIGTERM): its leaders move away, the broker is
        fenced, and the other nodes keep the quorum."""
        process = self._processes.pop(node, None)
        if process is not None:
            terminate(process.pid, timeout=timeout)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=1)

    def kill_node(self, node: int) -> None:
        """A crash of one node (SIGKILL): its broker is fenced when its heartbeats stop."""
        process = self._processes.pop(node, None)
        if process is not None:
            terminate(process.pid, kill=True, timeout=10)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=1)

    def start_node(self, node: int, timeout: float = START_TIMEOUT) -> None:
        """Starts a stopped node again and waits until the cluster names it."""
        if node not in self._processes:
            self._processes[node] = spawn(self.specs[node])
        self._wait(timeout)

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        self._end(kill=False, timeout=timeout)

    def kill(self) -> None:
        self._end(kill=True, timeout=10)

    def _end(self, *, kill: bool, timeout: float) -> None:
        processes, self._processes = self._processes, {}
        # Every node told at once: one by one, the last ones would wait on a quorum already gone.
        for process in processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL if kill else signal.SIGTERM)
        for process in processes.values():
            terminate(process.pid, kill=kill, timeout=timeout)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=1)

    def __enter__(self) -> KRaftCluster:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
