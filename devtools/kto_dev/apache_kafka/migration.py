"""A ZooKeeper-mode Kafka 3.9 cluster moved to KRaft, step by step, as Kafka 3.9's operations guide
("ZooKeeper to KRaft Migration", docs/ops.html) does it.

The guide's phases, and the step of `ZkToKRaftMigration` that takes the cluster into each:

1. `read_cluster_id` and `check_prepared`: the cluster id in `/cluster/id`, and every broker on
   software 3.9 with `inter.broker.protocol.version` 3.9 ("Preparing for migration").
2. `provision_controllers`: KRaft controllers (Kafka 3.9, `process.roles=controller`, node ids
   3000 and up), formatted with the SAME cluster id, with the migration enabled and ZooKeeper's
   connect string ("Provisioning the KRaft controller quorum").
3. `enter_migration_mode`: a rolling restart of the brokers with the migration enabled and the
   controller quorum configured ("Enter Migration Mode on the Brokers"); once the last one is
   back, the active controller copies ZooKeeper's metadata into its log by itself.
4. `wait_for_metadata_migration`: until `/migration` records the metadata offset of that copy
   and the controller has moved on to dual writes (the guide: "Completed migration of metadata
   from Zookeeper to KRaft" on the active controller).
5. `migrate_brokers_to_kraft`: a rolling restart of each broker as a KRaft broker,
   `process.roles=broker` and `node.id` its broker id, without ZooKeeper ("Migrating brokers to
   KRaft"): the dual-write phase.
6. `finalize`: each controller restarted without the migration flag and without ZooKeeper
   ("Finalizing the migration"); ZooKeeper may go after that, and there is no way back.

Every node keeps its files under the cluster's directory: a broker keeps its directory (and its
data) through both restarts, each controller gets `controller-<id>/`. Everything runs Kafka 3.9
(the last release that can migrate), logging through log4j 1 like the ZooKeeper-mode brokers.
Failures raise KafkaBrokerError with one line saying why and which log to read.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any

from kto_dev.apache_kafka.broker import (
    START_TIMEOUT,
    STOP_TIMEOUT,
    KafkaBrokerError,
    NodeFiles,
    alive,
    kafka_java,
    log4j_properties,
    metadata_of,
    port_taken,
    render_properties,
    startup_failure,
    terminate,
)
from kto_dev.apache_kafka.cluster import KafkaCluster
from kto_dev.apache_kafka.distribution import (
    KAFKA_VERSION,
    KafkaDistributionError,
    require_libs,
)
from kto_dev.apache_kafka.kraft import new_cluster_id, recorded_leader
from kto_dev.apache_kafka.migration_config import (
    FIRST_CONTROLLER_ID,
    MIGRATION_IBP,
    ControllerSpec,
    controller_log4j_properties,
    controller_properties,
    kraft_broker_properties,
    migrating_broker_overrides,
)
from kto_dev.ports import accepts_connections, free_port

MIGRATION_TIMEOUT = 120.0
# The guide names this line on the active controller; the code spells ZooKeeper with a capital K.
COMPLETED_LINE = "completed migration of metadata from zookeeper to kraft"
DUAL_WRITE_LINE = "to DUAL_WRITE state"  # KRaftMigrationDriver's state change to dual writes
# The record a controller out of migration mode writes once it leads, which every controller
# replays: the ZkMigrationState metric's POST_MIGRATION (3), "the cluster migration is complete".
POST_MIGRATION_LINE = "migration state from MIGRATION to POST_MIGRATION"
MIGRATION_ZNODE = "/migration"


def _root_and_chroot(zookeeper: str) -> tuple[str, str]:
    hosts, slash, chroot = zookeeper.partition("/")
    return hosts, (slash + chroot if chroot else "")


@contextlib.contextmanager
def _zookeeper(zookeeper: str) -> Iterator[Any]:
    """A connected ZkClient in `zookeeper` (with its chroot), or one line saying it is not."""
    from kafka_topic_operator.zk.client import ZkClient, ZkConnectionError

    client = ZkClient(zookeeper)
    try:
        client.start(timeout=5.0)
    except ZkConnectionError:
        raise KafkaBrokerError(f"ZooKeeper at {zookeeper} is not reachable") from None
    try:
        yield client
    finally:
        client.stop()


def read_cluster_id(zookeeper: str) -> str:
    """The cluster id the brokers registered in `/cluster/id` (`{"version":"1","id":...}`).

    The guide: "The KRaft controllers should be provisioned with the same cluster ID as the
    existing Kafka cluster. This can be found by ... running `zookeeper-shell.sh localhost:2181
    get /cluster/id`"."""
    with _zookeeper(zookeeper) as zk:
        node = zk.get("/cluster/id")
    if node is None:
        raise KafkaBrokerError(f"no /cluster/id in {zookeeper}: no broker has started there yet")
    try:
        cluster_id = json.loads(node.data)["id"]
    except (ValueError, KeyError, TypeError):
        raise KafkaBrokerError(
            f"/cluster/id in {zookeeper} is not Kafka's: {node.data!r}"
        ) from None
    return str(cluster_id)


@dataclass(frozen=True)
class MigrationState:
    """`/migration`, where the active KRaft controller records how far the migration got."""

    kraft_controller_id: int
    kraft_controller_epoch: int
    kraft_metadata_offset: int
    kraft_metadata_epoch: int

    @property
    def metadata_migrated(self) -> bool:
        """Kafka's own test (ZkMigrationLeadershipState.initialZkMigrationComplete): the offset
        of the copied metadata is recorded once the copy is committed."""
        return self.kraft_metadata_offset > 0

    @classmethod
    def parse(cls, data: bytes) -> MigrationState:
        fields = json.loads(data)
        return cls(
            int(fields["kraft_controller_id"]),
            int(fields["kraft_controller_epoch"]),
            int(fields["kraft_metadata_offset"]),
            int(fields["kraft_metadata_epoch"]),
        )


def read_migration_state(zookeeper: str) -> MigrationState | None:
    """`/migration` as it stands, None before a KRaft controller first wrote it."""
    with _zookeeper(zookeeper) as zk:
        node = zk.get(MIGRATION_ZNODE)
    return None if node is None else MigrationState.parse(node.data)


# ---- KRaft-mode 3.9 processes -------------------------------------------------------------


def _java(files: NodeFiles, heap_mb: int, libs: Path, *main: str) -> list[str]:
    """As broker.py runs the ZooKeeper-mode brokers (log4j 1)."""
    logging = f"-Dlog4j.configuration=file:{files.directory / 'log4j.properties'}"
    return kafka_java(libs, heap_mb, logging, *main)


def _libs() -> Path:
    try:
        return require_libs(KAFKA_VERSION)
    except KafkaDistributionError as e:
        raise KafkaBrokerError(str(e)) from None


def format_controller(
    spec: ControllerSpec, cluster_id: str, initial_controllers: str | None = None
) -> None:
    """`kafka-storage format` of a controller's log directory with the existing cluster's id,
    and the metadata.version of the brokers' IBP (the guide: "provisioned with the latest
    metadata.version"; 3.9 is the latest 3.9 knows). One controller is formatted as the
    guide's standalone controller (`--standalone`); several, with the same
    `--initial-controllers` list (id@host:port:directory-id) each, as its KRaft section says."""
    libs = _libs()
    quorum_flag = (
        ["--standalone"] if initial_controllers is None
        else ["--initial-controllers", initial_controllers]
    )  # fmt: skip
    formatted = subprocess.run(
        # `=`: a ZooKeeper-mode cluster's id may start with "-" (drawn by
        # CoreUtils.generateUuidAsBase64, not Uuid.randomUuid), which `-t ID` takes for a flag.
        _java(spec, 128, libs, "kafka.tools.StorageTool", "format", f"--cluster-id={cluster_id}",
              "--release-version", MIGRATION_IBP, *quorum_flag, "-c", str(spec.properties_file)),
        cwd=spec.directory, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if formatted.returncode != 0:
        said = _tool_failure(formatted.stderr + formatted.stdout)
        raise KafkaBrokerError(
            f"controller {spec.node_id}: formatting {spec.log_dir} failed: "
            + (said or f"exit {formatted.returncode}")
        )


def _tool_failure(output: str) -> str:
    """The line of a Kafka tool's output that says why it failed: the exception's (without
    `Exception in thread "main"`), else the last line that is not a stack frame or log4j's."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    said = [line for line in lines if not line.startswith(("at ", "log4j:", "..."))]
    thrown = [line for line in said if "Exception" in line or "Error" in line]
    line = thrown[0] if thrown else (said[-1] if said else "")
    return line.removeprefix('Exception in thread "main" ')


class KRaftProcess:
    """One Kafka 3.9 JVM in KRaft mode (a controller, or a broker moved to KRaft): writes its
    `server.properties` and `log4j.properties` into its directory, starts, stops, kills."""

    def __init__(self, name: str, files: NodeFiles, heap_mb: int) -> None:
        self.name = name
        self.files = files
        self.heap_mb = heap_mb
        self.started_at = 0.0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and alive(self._process.pid)

    def start(self, properties: Mapping[str, str], log4j: str) -> None:
        """Writes the configuration and starts the JVM; does not wait for it."""
        libs = _libs()
        if port_taken(self.files.port):
            raise KafkaBrokerError(f"{self.name}: port {self.files.port} on 127.0.0.1 is taken")
        self.files.directory.mkdir(parents=True, exist_ok=True)
        self.files.properties_file.write_text(render_properties(properties))
        (self.files.directory / "log4j.properties").write_text(log4j)
        command = _java(self.files, self.heap_mb, libs, "kafka.Kafka",
                        str(self.files.properties_file))  # fmt: skip
        self.started_at = time.time()
        with (self.files.directory / "stdout.log").open("ab") as out:
            self._process = subprocess.Popen(command, cwd=self.files.directory,
                                             stdin=subprocess.DEVNULL, stdout=out,
                                             stderr=subprocess.STDOUT,
                                             start_new_session=True)  # fmt: skip

    def check_running(self) -> None:
        """Raises, with the first error Kafka logged, once the JVM has exited."""
        if not self.running:
            log = self.files.log_file
            raise KafkaBrokerError(f"{self.name} exited: {startup_failure(log)} (see {log})")

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
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


def fully_replicated(bootstrap: str, broker_ids: set[int]) -> str | None:
    """None once a metadata request through `bootstrap` lists every broker and every partition
    has a leader and all its replicas in sync; else what is still missing."""
    metadata = metadata_of(bootstrap)
    if metadata is None:
        return f"no metadata from {bootstrap}"
    missing = broker_ids - set(metadata.brokers)
    if missing:
        return f"brokers {sorted(missing)} not in the metadata"
    for name, topic in metadata.topics.items():
        if topic.error is not None:
            return f"{name}: {topic.error}"
        for p, partition in topic.partitions.items():
            if partition.leader < 0 or set(partition.isrs) != set(partition.replicas):
                return (f"{name}-{p}: leader {partition.leader}, in sync {partition.isrs} "
                        f"of {partition.replicas}")  # fmt: skip
    return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _logged_since(log: Path, offset: int, line: str) -> bool:
    """Whether `line` (case aside) is in the log after its first `offset` bytes."""
    try:
        with log.open("rb") as f:
            f.seek(offset)
            return line.lower() in f.read().decode(errors="replace").lower()
    except OSError:
        return False


def _poll(condition: Callable[[], bool], what: str, timeout: float, log: Path,
          check: Callable[[], None] = lambda: None, interval: float = 0.25) -> None:  # fmt: skip
    """Until `condition()`, calling `check()` (which raises on a dead process) each round;
    else "`what` within `timeout` s (see `log`)"."""
    deadline = time.monotonic() + timeout
    while True:
        check()
        if condition():
            return
        if time.monotonic() > deadline:
            raise KafkaBrokerError(f"{what} within {timeout:.0f} s (see {log})")
        time.sleep(interval)


# ---- the migration --------------------------------------------------------------------------


class ZkToKRaftMigration:
    """Migrates `cluster` (running ZooKeeper-mode Kafka 3.9 brokers) to KRaft, one step per
    method, in the order of Kafka's guide; `migrate()` runs them all. The controllers and the
    brokers restarted in KRaft mode belong to this object: `stop()` or `kill()` them (the
    cluster's own `stop()`/`kill()` still ends any broker left in ZooKeeper mode)."""

    def __init__(
        self,
        cluster: KafkaCluster,
        controllers: int = 1,
        *,
        controller_heap_mb: int = 256,
        controller_overrides: Mapping[str, str] | None = None,
        timeout: float = START_TIMEOUT,
    ) -> None:
        if not cluster.brokers:
            raise KafkaBrokerError("a cluster without brokers has nothing to migrate")
        self.cluster = cluster
        self.zookeeper = cluster.zookeeper
        self.timeout = timeout
        # The ZooKeeper-mode configuration each broker had before the migration.
        self.zk_specs = {n: b.spec for n, b in cluster.brokers.items()}
        directory = next(iter(self.zk_specs.values())).directory.parent
        ports = {FIRST_CONTROLLER_ID + i: free_port() for i in range(controllers)}
        self.quorum = ",".join(f"127.0.0.1:{port}" for port in ports.values())
        self.controller_specs = {
            n: ControllerSpec(node_id=n, directory=directory / f"controller-{n}", port=port,
                              quorum=self.quorum, zookeeper=cluster.zookeeper,
                              heap_mb=controller_heap_mb,
                              overrides=dict(controller_overrides or {}))
            for n, port in ports.items()
        }  # fmt: skip
        self.controllers = {
            n: KRaftProcess(f"controller {n}", spec, spec.heap_mb)
            for n, spec in self.controller_specs.items()
        }
        self.kraft_brokers: dict[int, KRaftProcess] = {}
        self.cluster_id: str | None = None
        self.migration_state: MigrationState | None = None
        # Where each controller's log stood when it restarted out of migration mode.
        self._finalized_from: dict[int, int] = {}
        self.timings: dict[str, float] = {}

    @property
    def broker_ids(self) -> set[int]:
        return set(self.zk_specs)

    @property
    def bootstrap(self) -> str:
        """Every broker's listener: the ports stay the same through the whole migration."""
        return ",".join(spec.bootstrap for spec in self.zk_specs.values())

    def _timed(self, step: str, started: float) -> None:
        self.timings[step] = time.monotonic() - started

    # -- 1. preparing -----------------------------------------------------------------------

    def read_cluster_id(self) -> str:
        """Step 1: the existing cluster's id, from ZooKeeper's `/cluster/id` (the guide's
        `zookeeper-shell.sh ... get /cluster/id`), which the controllers are formatted with."""
        self.cluster_id = read_cluster_id(self.zookeeper)
        return self.cluster_id

    def check_prepared(self) -> None:
        """The guide's "Preparing for migration": every broker runs 3.9 with an
        `inter.broker.protocol.version` of 3.9 (read back through the Admin API), and is up.
        While migrating, the IBP (metadata.version) must not change."""
        from confluent_kafka.admin import AdminClient, ConfigResource  # type: ignore[attr-defined]

        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 0})
        for broker_id in sorted(self.broker_ids):
            resource = ConfigResource("broker", str(broker_id))
            try:
                described = admin.describe_configs([resource])[resource].result(timeout=30)
            except Exception as e:  # KafkaException: the broker is not answering
                raise KafkaBrokerError(f"broker {broker_id}: configs not readable: {e}") from None
            ibp = described["inter.broker.protocol.version"].value
            if ibp.split("-")[0] != MIGRATION_IBP:
                raise KafkaBrokerError(
                    f"broker {broker_id} runs inter.broker.protocol.version {ibp}: the migration "
                    f"needs {MIGRATION_IBP} (see {self.zk_specs[broker_id].log_file})"
                )

    # -- 2. the controllers -----------------------------------------------------------------

    def provision_controllers(self) -> None:
        """Step 2, "Provisioning the KRaft controller quorum": each controller's configuration
        (`controller_properties`: migration enabled, ZooKeeper's connect string with the chroot),
        its log directory formatted with the cluster's id, then all started; ready once each
        accepts connections and knows the quorum's leader. They then wait for the brokers."""
        started = time.monotonic()
        cluster_id = self.cluster_id or self.read_cluster_id()
        several = len(self.controller_specs) > 1
        directory_ids = {n: new_cluster_id() for n in self.controller_specs}  # a Kafka Uuid each
        initial = ",".join(f"{n}@{spec.bootstrap}:{directory_ids[n]}"
                           for n, spec in self.controller_specs.items())  # fmt: skip
        try:
            for n, spec in self.controller_specs.items():
                spec.directory.mkdir(parents=True, exist_ok=True)
                spec.properties_file.write_text(render_properties(controller_properties(spec)))
                # The storage tool logs through the same configuration.
                (spec.directory / "log4j.properties").write_text(log4j_properties(spec.log_file))
                if not (spec.log_dir / "meta.properties").exists():
                    format_controller(spec, cluster_id, initial if several else None)
                self.controllers[n].start(controller_properties(spec),
                                          controller_log4j_properties(spec.log_file))  # fmt: skip
            for n in self.controllers:
                self._wait_controller(n)
        except KafkaBrokerError:
            self.kill()
            raise
        self._timed("provision controllers", started)

    def _wait_controller(self, node_id: int) -> None:
        """Until the controller accepts connections on its listener and has recorded a leader
        since it started."""
        controller, spec = self.controllers[node_id], self.controller_specs[node_id]
        _poll(lambda: accepts_connections(spec.port)
              and recorded_leader(spec.log_dir, controller.started_at) is not None,
              f"controller {node_id} did not join a quorum with a leader", self.timeout,
              spec.log_file, controller.check_running)  # fmt: skip

    def _check_controllers(self) -> None:
        for controller in self.controllers.values():
            controller.check_running()

    # -- 3. the brokers in migration mode ---------------------------------------------------

    def enter_migration_mode_on(self, broker_id: int) -> None:
        """One broker of step 3, "Enter Migration Mode on the Brokers": a controlled shutdown,
        then the same broker with `migrating_broker_overrides` added; back once registered in
        ZooKeeper, answering, and every partition has all its replicas in sync again."""
        broker = self.cluster.brokers[broker_id]
        spec = self.zk_specs[broker_id]
        broker.stop()
        broker.spec = replace(
            spec, overrides={**spec.overrides, **migrating_broker_overrides(self.quorum)}
        )
        broker.start(timeout=self.timeout)
        self._wait_fully_replicated(f"broker {broker_id} in migration mode", spec.log_file)

    def enter_migration_mode(self) -> None:
        """Step 3, a rolling restart of every broker into migration mode. "Once the final ZK
        broker has been restarted with the necessary configuration, the migration will
        automatically begin": the active controller claims `/controller` and copies the
        metadata."""
        started = time.monotonic()
        for broker_id in sorted(self.broker_ids):
            self._check_controllers()
            self.enter_migration_mode_on(broker_id)
        self._timed("enter migration mode", started)

    # -- 4. the metadata copied -------------------------------------------------------------

    def wait_for_metadata_migration(self, timeout: float = MIGRATION_TIMEOUT) -> MigrationState:
        """Step 4: until the active controller has recorded the copied metadata's offset in
        `/migration` (watched, not polled), has logged the guide's "Completed migration of
        metadata from Zookeeper to KRaft", and has moved on to dual writes (from here on every
        change it makes goes to its log and to ZooKeeper)."""
        started = time.monotonic()
        state = self._watch_migration_znode(timeout)
        controller = self.controllers.get(state.kraft_controller_id)
        if controller is None:
            raise KafkaBrokerError(
                f"{MIGRATION_ZNODE} names controller {state.kraft_controller_id}, not one of "
                f"{sorted(self.controllers)}: another quorum is migrating {self.zookeeper}"
            )
        log = controller.files.log_file
        left = max(1.0, timeout - (time.monotonic() - started))
        _poll(lambda: _logged_since(log, 0, COMPLETED_LINE)
              and _logged_since(log, 0, DUAL_WRITE_LINE),
              f"controller {state.kraft_controller_id} did not report the migration complete "
              "and dual writes", left, log, self._check_controllers)  # fmt: skip
        self.migration_state = state
        self._timed("wait for metadata migration", started)
        return state

    def _watch_migration_znode(self, timeout: float) -> MigrationState:
        deadline = time.monotonic() + timeout
        with _zookeeper(self.zookeeper) as zk:
            while True:
                changed = threading.Event()

                def watch(_event: object, changed: threading.Event = changed) -> None:
                    changed.set()

                node = zk.get(MIGRATION_ZNODE, watch=watch)
                if node is None and zk.exists(MIGRATION_ZNODE, watch=watch):
                    continue  # created in between: read it
                state = None if node is None else MigrationState.parse(node.data)
                if state is not None and state.metadata_migrated:
                    return state
                # Woken by the watch; every second at most to see whether a controller died.
                while not changed.wait(1.0):
                    self._check_controllers()
                    if time.monotonic() > deadline:
                        controllers = ", ".join(str(c.files.log_file)
                                                for c in self.controllers.values())  # fmt: skip
                        raise KafkaBrokerError(
                            f"the metadata migration did not complete within {timeout:.0f} s: "
                            f"{MIGRATION_ZNODE} is {state} (see {controllers})"
                        )

    # -- 5. the brokers in KRaft mode -------------------------------------------------------

    def move_broker_to_kraft(self, broker_id: int) -> None:
        """One broker of step 5, "Migrating brokers to KRaft": a controlled shutdown of the
        ZooKeeper-mode broker, then the same directory, data and listener started as a KRaft
        broker (`kraft_broker_properties`: "It is important that the broker maintain the same
        Broker/Node ID"); back once it answers metadata naming itself and every partition has
        all its replicas in sync again."""
        spec = self.zk_specs[broker_id]
        self.cluster.brokers[broker_id].stop()
        node = KRaftProcess(f"broker {broker_id} (KRaft)", spec, spec.heap_mb)
        self.kraft_brokers[broker_id] = node
        node.start(kraft_broker_properties(spec, self.quorum), log4j_properties(spec.log_file))

        def answers() -> bool:
            metadata = metadata_of(spec.bootstrap)
            return metadata is not None and broker_id in metadata.brokers

        def check() -> None:
            node.check_running()
            self._check_controllers()

        _poll(answers, f"broker {broker_id} did not come back in KRaft mode", self.timeout,
              spec.log_file, check)  # fmt: skip
        self._wait_fully_replicated(f"broker {broker_id} in KRaft mode", spec.log_file)

    def migrate_brokers_to_kraft(self) -> None:
        """Step 5, a rolling restart of every broker into KRaft mode: "Each broker is restarted
        with a KRaft configuration until the entire cluster is running in KRaft mode"."""
        if self.migration_state is None:
            raise KafkaBrokerError("the metadata migration has not completed: wait for it first")
        started = time.monotonic()
        for broker_id in sorted(self.broker_ids):
            self.move_broker_to_kraft(broker_id)
        self._timed("migrate brokers to KRaft", started)

    # -- 6. finalizing ----------------------------------------------------------------------

    def finalize_controller(self, node_id: int) -> None:
        """One controller of step 6: stopped, its configuration without
        `zookeeper.metadata.migration.enable` and the ZooKeeper client configuration, started
        again (its log directory stays formatted); back once it knows a leader again."""
        controller = self.controllers[node_id]
        spec = replace(self.controller_specs[node_id], zookeeper=None)
        self.controller_specs[node_id] = spec
        controller.stop()
        self._finalized_from[node_id] = _size(spec.log_file)
        controller.start(controller_properties(spec), log4j_properties(spec.log_file))
        self._wait_controller(node_id)

    def finalize(self) -> None:
        """Step 6, "Finalizing the migration": the controllers out of migration mode, restarted
        one at a time. "Once the migration has been finalized, you can safely deprovision your
        ZooKeeper cluster ... After this point, it is no longer possible to revert"."""
        if set(self.kraft_brokers) != self.broker_ids:
            raise KafkaBrokerError("brokers still in ZooKeeper mode: move them to KRaft first")
        started = time.monotonic()
        for node_id in sorted(self.controllers):
            self.finalize_controller(node_id)
        for node_id, spec in self.controller_specs.items():
            offset = self._finalized_from[node_id]
            _poll(partial(_logged_since, spec.log_file, offset, POST_MIGRATION_LINE),
                  f"controller {node_id} did not record the migration as finalized "
                  "(POST_MIGRATION)", self.timeout, spec.log_file,
                  self._check_controllers)  # fmt: skip
        log = next(iter(self.controller_specs.values())).log_file
        self._wait_fully_replicated("the finalized cluster", log)
        self._timed("finalize", started)

    # -- all of it ----------------------------------------------------------------------------

    def migrate(self) -> dict[str, float]:
        """Every step in the guide's order; returns how long each took (seconds)."""
        started = time.monotonic()
        self.read_cluster_id()
        self.check_prepared()
        self.provision_controllers()
        self.enter_migration_mode()
        self.wait_for_metadata_migration()
        self.migrate_brokers_to_kraft()
        self.finalize()
        self._timed("total", started)
        return self.timings

    def _wait_fully_replicated(self, what: str, log: Path) -> None:
        problem: list[str | None] = [None]

        def done() -> bool:
            problem[0] = fully_replicated(self.bootstrap, self.broker_ids)
            return problem[0] is None

        def check() -> None:
            self._check_controllers()
            for node in self.kraft_brokers.values():
                node.check_running()

        try:
            _poll(done, f"{what}: not every partition back in sync", self.timeout, log, check)
        except KafkaBrokerError as e:
            if not str(e).startswith(what):  # a process died: that says it all
                raise
            raise KafkaBrokerError(
                f"{what}: not every partition back in sync within "
                f"{self.timeout:.0f} s ({problem[0]}; see {log})"
            ) from None

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Controlled shutdowns: the KRaft brokers first, while the controllers still answer."""
        for node in self.kraft_brokers.values():
            node.stop(timeout)
        for controller in self.controllers.values():
            controller.stop(timeout)

    def kill(self) -> None:
        for node in [*self.kraft_brokers.values(), *self.controllers.values()]:
            node.kill()

    def __enter__(self) -> ZkToKRaftMigration:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.kill()
