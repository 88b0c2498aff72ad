"""Real Apache Kafka brokers in ZooKeeper mode, started from the fetched jars.

`java -cp 'libs/*' kafka.Kafka server.properties`, one JVM per broker, with its own directory
(`server.properties`, `log4j.properties`, `server.log`, `data/`) and a loopback listener. The
tests and `kto dev-cluster up --kafka` start brokers only through this module. A broker is ready
once it is registered in `/brokers/ids` and its port answers a metadata request; a start-up that
cannot succeed (no Java, port taken, ZooKeeper out of reach, jars missing, the JVM exiting) raises
KafkaBrokerError with one line saying why.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kto_dev.apache_kafka.distribution import (
    KAFKA_VERSION,
    KafkaDistributionError,
    require_libs,
)
from kto_dev.class_archive import kafka_archive_flags

START_TIMEOUT = 90.0
STOP_TIMEOUT = 60.0
# Kafka's default is 18 s; a broker killed in a test or the dev cluster is noticed sooner.
SESSION_TIMEOUT_MS = 6000


class KafkaBrokerError(RuntimeError):
    """A broker could not be started, reached or stopped; the message is one line."""


class NodeFiles:
    """Where a Kafka node (a ZooKeeper-mode broker or a KRaft node) keeps its files, and its
    address: for frozen dataclasses with `directory` and `port` (and `host`, else loopback)."""

    directory: Path
    port: int
    host: str = "127.0.0.1"

    def __post_init__(self) -> None:
        # The JVM runs in this directory and its files name each other: absolute paths only.
        object.__setattr__(self, "directory", self.directory.resolve())

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def log_dir(self) -> Path:
        return self.directory / "data"

    @property
    def log_file(self) -> Path:
        return self.directory / "server.log"

    @property
    def properties_file(self) -> Path:
        return self.directory / "server.properties"


@dataclass(frozen=True)
class BrokerSpec(NodeFiles):
    """What one broker is: its id, rack, port, ZooKeeper (with the chroot) and directory."""

    broker_id: int
    zookeeper: str
    directory: Path
    port: int
    rack: str | None = None
    heap_mb: int = 320
    # Replication of __consumer_offsets and __transaction_state: at most the cluster's size.
    internal_replication_factor: int = 3
    session_timeout_ms: int = SESSION_TIMEOUT_MS
    overrides: Mapping[str, str] = field(default_factory=dict)
    # Where it listens and what it advertises: loopback, or a real node's link address so that
    # pods reach it too.
    host: str = "127.0.0.1"


def small_cluster_settings(internal_replication_factor: int) -> dict[str, str]:
    """Kafka's defaults changed only where a small local cluster needs it, in either mode."""
    rf = internal_replication_factor
    return {
        "delete.topic.enable": "true",
        "auto.create.topics.enable": "false",
        "offsets.topic.replication.factor": str(rf),
        "offsets.topic.num.partitions": "10",
        "transaction.state.log.replication.factor": str(rf),
        "transaction.state.log.min.isr": str(min(2, rf)),
        "transaction.state.log.num.partitions": "10",
        "group.initial.rebalance.delay.ms": "0",
        # A few threads each and a small log-cleaner buffer (128 MB by default, allocated at
        # start-up) keep a broker within a small heap on a small machine.
        "num.network.threads": "2",
        "num.io.threads": "4",
        "background.threads": "4",
        "num.recovery.threads.per.data.dir": "1",
        "log.cleaner.dedupe.buffer.size": str(8 * 1024 * 1024),
    }


def server_properties(spec: BrokerSpec) -> dict[str, str]:
    """The broker's configuration: Kafka's defaults except what a small local cluster needs."""
    properties = {
        "broker.id": str(spec.broker_id),
        "listeners": f"PLAINTEXT://{spec.bootstrap}",
        "log.dirs": str(spec.log_dir),
        "zookeeper.connect": spec.zookeeper,
        "zookeeper.session.timeout.ms": str(spec.session_timeout_ms),
        **small_cluster_settings(spec.internal_replication_factor),
    }
    if spec.rack is not None:
        properties["broker.rack"] = spec.rack
    properties.update(spec.overrides)
    return properties


def render_properties(properties: Mapping[str, str]) -> str:
    return "".join(f"{key}={value}\n" for key, value in properties.items())


def log4j_properties(log_file: Path) -> str:
    return (
        "log4j.rootLogger=INFO, file\n"
        "log4j.appender.file=org.apache.log4j.FileAppender\n"
        f"log4j.appender.file.File={log_file}\n"
        "log4j.appender.file.layout=org.apache.log4j.PatternLayout\n"
        "log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
        # The state-change log is the controller's every decision: useful, and large.
        "log4j.logger.state.change.logger=INFO\n"
        "log4j.logger.kafka.request.logger=WARN\n"
    )


def java_executable() -> str:
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        raise KafkaBrokerError("Java not found: install Java 17 (apt-get install openjdk-17-jre)")
    return java


def kafka_java(libs: Path, heap_mb: int, logging: str, *main: str) -> list[str]:
    """`java -cp 'libs/*' MAIN ...` for any of Kafka's JVMs (brokers, KRaft nodes, tools), with
    `logging` the system property naming its log4j configuration. In tests they live for seconds
    to minutes: C1 alone and the serial collector start them sooner. A broker or node
    (`kafka.Kafka`) records the class archive; the others only map it."""
    java = java_executable()
    return [
        java,
        f"-Xmx{heap_mb}m",
        "-Xms64m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-XX:-UsePerfData",
        "-Djava.awt.headless=true",
        *kafka_archive_flags(java, libs, record=main[0] == "kafka.Kafka"),
        logging,
        "-cp",
        f"{libs}/*",
        *main,
    ]


def java_command(spec: BrokerSpec, libs: Path) -> list[str]:
    logging = f"-Dlog4j.configuration=file:{spec.directory / 'log4j.properties'}"
    return kafka_java(libs, spec.heap_mb, logging, "kafka.Kafka", str(spec.properties_file))


def _root_and_chroot(zookeeper: str) -> tuple[str, str]:
    hosts, slash, chroot = zookeeper.partition("/")
    return hosts, (slash + chroot if chroot else "")


def port_taken(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something listens there (Kafka binds with SO_REUSEADDR, so connections of an
    earlier broker lingering in TIME_WAIT do not count)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def _registration(zookeeper: str, broker_id: int) -> bytes | None:
    """The broker's `/brokers/ids/<id>` znode data, None when it is not registered."""
    from kafka_topic_operator.zk.client import ZkClient, ZkConnectionError

    hosts, chroot = _root_and_chroot(zookeeper)
    client = ZkClient(hosts)  # the chroot may not exist before the first broker creates it
    try:
        client.start(timeout=5.0)
    except ZkConnectionError:
        raise KafkaBrokerError(f"ZooKeeper at {hosts} is not reachable") from None
    try:
        node = client.get(f"{chroot}/brokers/ids/{broker_id}")
        return None if node is None else node.data
    finally:
        client.stop()


def prepare(spec: BrokerSpec) -> list[str]:
    """Checks what start-up needs and writes the broker's files; returns the command."""
    try:
        libs = require_libs(KAFKA_VERSION)
    except KafkaDistributionError as e:
        raise KafkaBrokerError(str(e)) from None
    command = java_command(spec, libs)
    if port_taken(spec.port, spec.host):
        raise KafkaBrokerError(f"broker {spec.broker_id}: port {spec.port} on {spec.host} is taken")
    spec.directory.mkdir(parents=True, exist_ok=True)
    spec.properties_file.write_text(render_properties(server_properties(spec)))
    (spec.directory / "log4j.properties").write_text(log4j_properties(spec.log_file))
    return command


def spawn(spec: BrokerSpec) -> subprocess.Popen[bytes]:
    """Starts the JVM in its own session (it outlives whoever started it); does not wait."""
    command = prepare(spec)
    # A broker killed a moment ago is still registered until its session expires, and Kafka
    # refuses to start over another session's registration: wait for it to go.
    _wait_unregistered(spec)
    with (spec.directory / "stdout.log").open("ab") as out:
        return subprocess.Popen(
            command,
            cwd=spec.directory,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _wait_unregistered(spec: BrokerSpec) -> None:
    wait_unregistered(spec.zookeeper, spec.broker_id, spec.session_timeout_ms / 1000 + 10)


def wait_unregistered(zookeeper: str, broker_id: int, timeout: float,
                      waiting: Callable[[], None] | None = None) -> None:  # fmt: skip
    """Until `/brokers/ids/<id>` is gone: a killed broker's lingers until its session expires,
    and a broker started before then finds it taken and exits. `waiting` is called once if
    it is there at first."""
    deadline = time.monotonic() + timeout
    if waiting is not None and _registration(zookeeper, broker_id) is not None:
        waiting()
    while _registration(zookeeper, broker_id) is not None:
        if time.monotonic() > deadline:
            raise KafkaBrokerError(
                f"broker {broker_id} is already registered in {zookeeper} by another process"
            )
        time.sleep(0.2)


def wait_registered(zookeeper: str, broker_id: int, pid: int, log: Path, timeout: float) -> None:
    """Until the process `pid` has registered broker `broker_id`, or fails saying why."""
    deadline = time.monotonic() + timeout
    while _registration(zookeeper, broker_id) is None:
        if not alive(pid):
            last = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
            raise KafkaBrokerError(
                f"broker {broker_id} exited during start-up: {' '.join(last) or 'no output'} "
                f"(see {log})"
            )
        if time.monotonic() > deadline:
            raise KafkaBrokerError(f"broker {broker_id} did not register within {timeout:.0f} s")
        time.sleep(0.2)


def alive(pid: int) -> bool:
    """Whether the process runs: not gone, and not a zombie (it has exited, and whoever
    inherited it may not reap it soon); our own exited children are reaped here."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:  # our child, now reaped
            return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def metadata_of(bootstrap: str, timeout: float = 2.0) -> Any | None:
    """The cluster's answer to a metadata request (confluent-kafka's ClusterMetadata), None
    while nothing there answers."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    try:
        return admin.list_topics(timeout=timeout)
    except Exception:  # KafkaException: not answering yet
        return None


def answers_metadata(spec: BrokerSpec, timeout: float = 2.0) -> bool:
    """Whether the broker's port answers a metadata request listing the broker itself."""
    metadata = metadata_of(spec.bootstrap, timeout)
    return metadata is not None and spec.broker_id in metadata.brokers


def startup_failure(log_file: Path) -> str:
    """The first error Kafka logged, as one line."""
    try:
        lines = log_file.read_text(errors="replace").splitlines()
    except OSError:
        return "no log"
    for i, line in enumerate(lines):
        if "] FATAL " in line or "] ERROR " in line:
            cause = next(
                (following.strip() for following in lines[i + 1 : i + 4]
                 if "Exception" in following or "Error" in following),
                "",
            )  # fmt: skip
            message = line.split("] ", 1)[-1].split(" ", 1)[-1]  # without the level
            return f"{message}: {cause}" if cause else message
    return lines[-1] if lines else "no log"


def wait_until_ready(spec: BrokerSpec, pid: int, timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if not alive(pid):
            raise KafkaBrokerError(
                f"broker {spec.broker_id} exited during start-up: "
                f"{startup_failure(spec.log_file)} (see {spec.log_file})"
            )
        if _registration(spec.zookeeper, spec.broker_id) is not None and answers_metadata(spec):
            return
        if time.monotonic() > deadline:
            raise KafkaBrokerError(
                f"broker {spec.broker_id} was not ready within {timeout:.0f} s "
                f"(see {spec.log_file})"
            )
        time.sleep(0.25)


def terminate(pid: int, *, kill: bool = False, timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM (Kafka shuts down under control: the controller moves leaders away first) or
    SIGKILL (a crash: the registration lingers until the session expires); waits for the exit."""
    if not alive(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL if kill else signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
        time.sleep(0.05)


class KafkaBroker:
    """One broker process owned by this Python process (tests): start, stop, kill, restart."""

    def __init__(self, spec: BrokerSpec) -> None:
        self.spec = spec
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and alive(self._process.pid)

    def start(self, *, wait: bool = True, timeout: float = START_TIMEOUT) -> None:
        if self.running:
            return
        self._process = spawn(self.spec)
        if wait:
            self.wait_until_ready(timeout)

    def wait_until_ready(self, timeout: float = START_TIMEOUT) -> None:
        assert self._process is not None, "start() first"
        try:
            wait_until_ready(self.spec, self._process.pid, timeout)
        except KafkaBrokerError:
            self.kill()
            raise

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """A controlled shutdown (SIGTERM)."""
        self._end(kill=False, timeout=timeout)

    def kill(self) -> None:
        self._end(kill=True, timeout=10)

    def _end(self, *, kill: bool, timeout: float) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        terminate(process.pid, kill=kill, timeout=timeout)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=1)
