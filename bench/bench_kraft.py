"""1,000 KafkaTopics (12 partitions, replication factor 3) applied at once until every one is
Ready, on real Apache Kafka both ways the operator reaches it, in the same run: Kafka 3.9 in
ZooKeeper mode (three brokers on a ZooKeeper, `kto run --zookeeper`: the operator writes the
topics' znodes and reads their state there) and Kafka 4.x in KRaft mode (three nodes, each
broker and controller, `kto run --bootstrap-servers`: the operator goes through Kafka's Admin
API). Each cluster is started fresh, measured alone and torn down before the other starts; the
API emulator and the operator are the same on both. Prints the two times, their ratio
KRaft/ZooKeeper, the operator's CPU on each, and the milestones on the way: all applied to the
API, all topics in a broker's metadata and all their partitions led there (a metadata request
every second, the same on both; polled, so up to a second late), all Ready.

The two Readys are not quite the same point: in ZooKeeper mode the operator reads the
partitions' state znodes, which the controller writes before it tells the brokers; on KRaft it
asks the brokers. A ZooKeeper-mode broker's metadata can lag Ready by many seconds here.

12 partitions, as `bench_operator` has them: 36,000 replicas, 12,000 on each broker. The
launchers' heaps (320 MB a ZooKeeper-mode broker, 384 MB a KRaft node) do not hold that many:
their old generation filled (216 of 218 MB, and 262 of 262 MB), the brokers spent their time in
full collections, ZooKeeper sessions expired, and 1,000 topics took minutes to be Ready or
never were. Each broker gets HEAP_MB here instead (about 350 MB of old generation in use at the
end on KRaft); one cluster runs at a time. A broker keeps a log file open per replica and maps
its indexes (lazily): the open-file limit is raised to cover it (the brokers inherit it), and
24,000 mappings stay under the kernel's 65,530 per process.
"""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from bench_operator import CRD_PATH, KT_PATH, ReadyWatch, request, wait_for
from bench_support import cpu_seconds, scratch_dir, wait_idle
from kto_dev.apache_kafka.cluster import KafkaCluster
from kto_dev.apache_kafka.distribution import KAFKA_VERSION, KRAFT_KAFKA_VERSION
from kto_dev.apache_kafka.kraft import KRaftCluster
from kto_dev.ports import free_port
from kto_dev.zookeeper_server import ZooKeeperServer

ROOT = Path(__file__).resolve().parent.parent
TOPICS = 1000
PARTITIONS = 12
REPLICAS = 3
# Open files a broker needs beyond one per replica it holds (sockets, jars, its own logs).
FILES_SPARE = 4000
HEAP_MB = 768  # each broker's heap (see above)
ZK_TICK_MS = 2000  # ZooKeeper's default; sessions may last up to 20 ticks
KAFKA_ZK_SESSION_MS = 18000  # Kafka's default zookeeper.session.timeout.ms
DEADLINE = 240.0  # seconds for one cluster's topics all to be Ready: a failure beyond
PROBE_EVERY = 1.0  # seconds between two metadata requests of the probe
PROBE_AFTER_READY = 15.0  # seconds the probe may go on after all are Ready
# Topics per CreateTopics request when Kafka creates them raw: Kafka 4 refuses a request of more
# than 10,000 metadata records, and 1,000 topics of 12 partitions are 13,000.
RAW_BATCH = 500
IDLE_SETTLE = 10.0  # seconds after the statuses settled before the operator counts as at rest
# seconds its CPU is taken over then: its config sweep (every 60 s at the least) falls in
IDLE_WINDOW = 60.0
# The operator at scale on KRaft: 10,000 topics of one partition and replication factor 2,
# 20,000 replicas (6,667 a node): a Kafka node holds a log file open per replica, and this
# machine's open-file limit (20,000, not to be raised) does not hold 30,000 a node.
SCALE_TOPICS = 10_000
SCALE_PARTITIONS = 1
SCALE_REPLICAS = 2
SCALE_HEAP_MB = 1536
SCALE_DEADLINE = 900.0
STOPPED_NODE = 2


@dataclass(frozen=True)
class Run:
    """One cluster's figures, in seconds from the first request to the API (None: not seen
    within PROBE_AFTER_READY of Ready), and the CPU spent until all were Ready."""

    applied: float
    listed: float | None  # every topic in a broker's metadata
    led: float | None  # every partition there, each with a leader
    ready: float
    operator_cpu: float
    kafka_cpu: float  # the brokers' (and ZooKeeper's) JVMs
    up: float = 0.0  # seconds to start the cluster, the emulator and the operator
    down: float = 0.0  # seconds to stop them
    idle_cpu: float = 0.0  # the operator's share of a core at rest, following every topic
    rss_mb: float = 0.0  # its resident memory then


def raise_open_files(needed: int) -> int:
    """Raises this process's soft open-file limit (which the brokers inherit) to at least
    `needed`, within the hard limit; returns the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        soft = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return soft


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


class Operator:
    """The API emulator with the project's CRDs and `kto run` pointed at a cluster (`where`:
    its flags), each in its own process; stopped on leaving, whatever happened."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.api = ""

    def start(self, where: list[str]) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        api_port = free_port()
        kubeconfig = self.work / "kubeconfig"
        self._spawn("apiserver", ["kube_api_emulator", "--port", str(api_port),
                                  "--kubeconfig", str(kubeconfig)])  # fmt: skip
        self.api = f"http://127.0.0.1:{api_port}"
        wait_for(lambda: request(self.api, "GET", "/version"), "the API emulator")
        for crd in sorted((ROOT / "crds").glob("*.yaml")):
            request(self.api, "POST", CRD_PATH, yaml.safe_load(crd.read_text()))
        liveness = f"http://127.0.0.1:{free_port()}/healthz"
        self._spawn("operator", ["kafka_topic_operator.cli", "run", *where,
                                 "--liveness", liveness, "--metrics-port", str(free_port()),
                                 "--log-level", "WARNING"],
                    {**os.environ, "KUBECONFIG": str(kubeconfig)})  # fmt: skip
        # kopf serves its liveness endpoint once started.
        wait_for(lambda: urllib.request.urlopen(liveness, timeout=2), "the operator", 120)

    def _spawn(self, name: str, args: list[str], env: dict[str, str] | None = None) -> None:
        with (self.work / f"{name}.log").open("w") as log:
            self.processes[name] = subprocess.Popen(
                [sys.executable, "-m", *args], stdout=log, stderr=subprocess.STDOUT, env=env,
                cwd=self.work,
            )  # fmt: skip

    def pid(self, name: str) -> int:
        return self.processes[name].pid

    def log_tail(self, lines: int = 20) -> str:
        path = self.work / "operator.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        # The operator first: the emulator it talks to stays until it is gone.
        for name in ("operator", "apiserver"):
            process = self.processes.pop(name, None)
            if process is None:
                continue
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:  # stuck in shutdown: not what is measured
                process.kill()
                process.wait()


@contextlib.contextmanager
def operating(work: Path, where: list[str]) -> Iterator[Operator]:
    operator = Operator(work)
    try:
        operator.start(where)  # what started before a failure is stopped too
        yield operator
    finally:
        operator.stop()


@contextlib.contextmanager
def zookeeper_kafka(work: Path, heap_mb: int | None = HEAP_MB) -> Iterator[tuple[str, list[str]]]:
    """Kafka 3.9 brokers on a ZooKeeper: (bootstrap, the operator's flags). Killed on leaving:
    a controlled shutdown of 36,000 replicas is not what is measured, and the data goes.

    With ZooKeeper's and Kafka's own session timeouts (the launchers' are short, for tests that
    kill brokers): with 6 s, a broker busy creating 12,000 logs on a loaded machine missed its
    heartbeats, its session expired, and the controller's failover took minutes."""
    with ZooKeeperServer(
        work / "zookeeper", tick_time_ms=ZK_TICK_MS, max_session_timeout_ms=20 * ZK_TICK_MS
    ) as server:
        cluster = KafkaCluster(
            server.connect_string + "/kafka",
            work / "kafka",
            overrides={"zookeeper.session.timeout.ms": str(KAFKA_ZK_SESSION_MS)},
        )
        if heap_mb is not None:
            for broker in cluster.brokers.values():
                broker.spec = replace(broker.spec, heap_mb=heap_mb)
        try:
            cluster.start()
            yield cluster.bootstrap, ["--zookeeper", cluster.zookeeper]
        finally:
            cluster.kill()


@contextlib.contextmanager
def kraft_kafka(work: Path, heap_mb: int | None = HEAP_MB) -> Iterator[tuple[str, list[str]]]:
    """Kafka 4.x nodes in KRaft mode: (bootstrap, the operator's flags). Killed on leaving."""
    cluster = KRaftCluster(work / "kraft")
    if heap_mb is not None:
        cluster.specs = {n: replace(spec, heap_mb=heap_mb) for n, spec in cluster.specs.items()}
    try:
        cluster.start()
        yield cluster.bootstrap, ["--bootstrap-servers", cluster.bootstrap]
    finally:
        cluster.kill()


class MetadataProbe:
    """Asks a broker for the metadata of every topic each PROBE_EVERY seconds, in a thread of
    its own, and notes when it first lists every benchmark topic, and when it first shows all
    their partitions led. Asked the same way of both kinds of cluster: a ZooKeeper-mode broker
    learns of new partitions from its controller after the znodes the operator reads, a KRaft
    broker from the metadata log before the Admin API answers the operator."""

    def __init__(self, bootstrap: str, topics: int, partitions: int, began: float) -> None:
        self._admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
        self._topics, self._partitions, self._began = topics, partitions, began
        self.listed: float | None = None
        self.led: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        while self.led is None and not self._stop.wait(PROBE_EVERY):
            try:
                metadata = self._admin.list_topics(timeout=10)
            except KafkaException:  # a request timed out: ask again
                continue
            now = time.monotonic() - self._began
            ours = [t for n, t in metadata.topics.items() if n.startswith("topic-")]
            if self.listed is None and len(ours) >= self._topics:
                self.listed = now
            led = sum(
                1
                for t in ours
                if t.error is None
                and len(t.partitions) == self._partitions
                and all(p.leader >= 0 for p in t.partitions.values())
            )
            if led >= self._topics:
                self.led = now

    def finish(self, timeout: float) -> None:
        """Gives the probe `timeout` seconds more to see every partition led, then stops it."""
        self._thread.join(timeout)
        self._stop.set()
        self._thread.join()


def raw_creation(kind: str, work: Path, topics: int, partitions: int) -> float:
    """Kafka itself, the anchor: the same topics created through AdminClient.create_topics on a
    fresh cluster of the same kind (every request sent at once, RAW_BATCH topics each), until the
    probe sees every partition led; seconds from the first request."""
    cluster = zookeeper_kafka if kind == "zookeeper" else kraft_kafka
    with cluster(work / f"{kind}-raw") as (bootstrap, _):
        # A ZooKeeper-mode broker answers CreateTopics once the znodes are written, which under
        # this load can take longer than librdkafka's 60 s socket timeout.
        admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0,
                             "socket.timeout.ms": int(DEADLINE * 1000)})  # fmt: skip
        new = [NewTopic(f"topic-{i}", partitions, REPLICAS) for i in range(topics)]
        began = time.monotonic()
        probe = MetadataProbe(bootstrap, topics, partitions, began)
        try:
            futures = [
                future
                for start in range(0, topics, RAW_BATCH)
                for future in admin.create_topics(new[start : start + RAW_BATCH],
                                                  request_timeout=DEADLINE).values()
            ]  # fmt: skip
            for future in futures:
                with contextlib.suppress(KafkaException):  # an answer lost: the probe decides
                    future.result()
        finally:
            probe.finish(DEADLINE)
        if probe.led is None:
            raise RuntimeError(f"{kind}: the topics created raw were not all led within "
                               f"{DEADLINE:.0f} s")  # fmt: skip
        return probe.led


def measure(operator: Operator, bootstrap: str, topics: int, partitions: int) -> Run:
    """Applies `topics` KafkaTopics at once and follows them until all are Ready."""
    bodies = [
        {"apiVersion": "kto.dev/v1", "kind": "KafkaTopic", "metadata": {"name": f"topic-{i}"},
         "spec": {"partitions": partitions, "replicas": REPLICAS}}
        for i in range(topics)
    ]  # fmt: skip
    # Every process this one started but the operator and the emulator: Kafka's JVMs.
    ours = {operator.pid("operator"), operator.pid("apiserver")}
    kafka = [pid for pid in children(os.getpid()) if pid not in ours]
    cpu_before = cpu_seconds([operator.pid("operator")]), cpu_seconds(kafka)
    watch = ReadyWatch(operator.api, topics)
    began = time.monotonic()
    probe = MetadataProbe(bootstrap, topics, partitions, began)
    try:
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda body: request(operator.api, "POST", KT_PATH, body), bodies))
        applied = time.monotonic() - began
        if not watch.all_ready.wait(DEADLINE):
            raise RuntimeError(
                f"only {len(watch.ready)} of {topics} Ready within {DEADLINE:.0f} s; the "
                f"operator's log ends:\n{operator.log_tail()}"
            )
        operator_cpu = cpu_seconds([operator.pid("operator")]) - cpu_before[0]
        kafka_cpu = cpu_seconds(kafka) - cpu_before[1]
    finally:
        probe.finish(PROBE_AFTER_READY)
    assert watch.ready_at is not None
    time.sleep(IDLE_SETTLE)  # a measurement's start, nothing to wait for
    idle_cpu, rss_mb = at_rest(operator.pid("operator"))
    return Run(applied, probe.listed, probe.led, watch.ready_at - began, operator_cpu, kafka_cpu,
               idle_cpu=idle_cpu, rss_mb=rss_mb)  # fmt: skip


def at_rest(pid: int, window: float = IDLE_WINDOW) -> tuple[float, float]:
    """The process's share of a core over `window` seconds, and its resident MB after."""
    before = cpu_seconds([pid])
    time.sleep(window)  # a measurement window, nothing to wait for
    share = (cpu_seconds([pid]) - before) / window
    rss_kb = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text()
                  .splitlines() if line.startswith("VmRSS:"))  # fmt: skip
    return share, rss_kb / 1024


def holds_replica_on(item: dict[str, Any], node: int) -> bool:
    partitions = (item.get("status") or {}).get("partitions") or []
    return any(r["broker"] == node for p in partitions for r in p["replicas"])


def offline_on(node: int) -> Callable[[dict[str, Any]], bool]:
    """Whether a KafkaTopic's status shows its replicas on `node` offline."""

    def holds(item: dict[str, Any]) -> bool:
        partitions = (item.get("status") or {}).get("partitions") or []
        return any(
            r["broker"] == node and r["state"] == "OfflineReplica"
            for p in partitions
            for r in p["replicas"]
        )

    return holds


def run_on(kind: str, work: Path, topics: int, partitions: int) -> Run:
    cluster = zookeeper_kafka if kind == "zookeeper" else kraft_kafka
    began = time.monotonic()
    with contextlib.ExitStack() as stack:
        bootstrap, where = stack.enter_context(cluster(work / kind))
        operator = stack.enter_context(operating(work / kind / "operator", where))
        up = time.monotonic() - began
        run = measure(operator, bootstrap, topics, partitions)
        stopping = time.monotonic()
    return replace(run, up=up, down=time.monotonic() - stopping)


@dataclass(frozen=True)
class ScaleRun:
    ready: float  # seconds from the first request until all were Ready
    settled: float  # seconds after that until the operator used under 5% of a core
    idle_cpu: float
    rss_mb: float
    stop_seen: float  # seconds from a node's controlled shutdown until every status shows it
    affected: int  # the KafkaTopics with a replica on that node


def at_scale(
    work: Path, topics: int = SCALE_TOPICS, partitions: int = SCALE_PARTITIONS
) -> ScaleRun:
    """KRaft only: `topics` KafkaTopics Ready, the operator at rest following them all, then a
    node stopped (a controlled shutdown), until the status of every KafkaTopic with a replica
    there shows it offline."""
    with contextlib.ExitStack() as stack:
        cluster = KRaftCluster(work / "kraft")
        cluster.specs = {
            n: replace(spec, heap_mb=SCALE_HEAP_MB) for n, spec in cluster.specs.items()
        }
        cluster.start()
        stack.callback(cluster.kill)
        where = ["--bootstrap-servers", cluster.bootstrap]
        operator = stack.enter_context(operating(work / "operator", where))
        bodies = [
            {"apiVersion": "kto.dev/v1", "kind": "KafkaTopic",
             "metadata": {"name": f"topic-{i}"},
             "spec": {"partitions": partitions, "replicas": SCALE_REPLICAS}}
            for i in range(topics)
        ]  # fmt: skip
        watch = ReadyWatch(operator.api, topics)
        began = time.monotonic()
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda body: request(operator.api, "POST", KT_PATH, body), bodies))
        if not watch.all_ready.wait(SCALE_DEADLINE):
            raise RuntimeError(f"only {len(watch.ready)} of {topics} Ready within "
                               f"{SCALE_DEADLINE:.0f} s:\n{operator.log_tail()}")  # fmt: skip
        assert watch.ready_at is not None
        ready = watch.ready_at - began
        # The reports of the first sweep after the creations (a status read for each topic)
        # are done before the operator counts as at rest.
        settled = wait_idle(operator.pid("operator"), share=0.05, window=5.0, timeout=600.0)
        idle_cpu, rss_mb = at_rest(operator.pid("operator"))
        listed = request(operator.api, "GET", KT_PATH)["items"]
        affected = sum(1 for item in listed if holds_replica_on(item, STOPPED_NODE))
        offline = ReadyWatch(operator.api, affected, holds=offline_on(STOPPED_NODE))
        stopping = time.monotonic()
        cluster.stop_node(STOPPED_NODE)
        if not offline.all_ready.wait(SCALE_DEADLINE):
            raise RuntimeError(f"only {len(offline.ready)} of {topics} statuses showed node "
                               f"{STOPPED_NODE} stopped within {SCALE_DEADLINE:.0f} s")  # fmt: skip
        assert offline.ready_at is not None
        return ScaleRun(ready, settled, idle_cpu, rss_mb, offline.ready_at - stopping, affected)


def seconds(value: float | None) -> str:
    return f"{value:.1f} s" if value is not None else f"not by Ready + {PROBE_AFTER_READY:.0f} s"


def milestones(run: Run, jvms: str) -> str:
    return (
        f"applied to the API {run.applied:.1f} s, all topics in a broker's metadata "
        f"{seconds(run.listed)}, every partition led there {seconds(run.led)}, all Ready "
        f"{run.ready:.1f} s; CPU until Ready: operator {run.operator_cpu:.1f} s, {jvms} "
        f"{run.kafka_cpu:.1f} s; then at rest {run.idle_cpu:.1%} of a core, {run.rss_mb:.0f} MB "
        f"resident; cluster and operator up in {run.up:.0f} s, down in {run.down:.0f} s"
    )


def main(topics: int = TOPICS, partitions: int = PARTITIONS) -> None:
    began = time.monotonic()
    needed = topics * partitions * REPLICAS // 3 + FILES_SPARE
    if (limit := raise_open_files(needed)) < needed:
        print(f"# open files limited to {limit} (hard limit), below the {needed} a broker needs")
    with scratch_dir("kto-bench-kraft-") as tmp:
        zookeeper = run_on("zookeeper", Path(tmp), topics, partitions)
        raw_zookeeper = raw_creation("zookeeper", Path(tmp), topics, partitions)
        kraft = run_on("kraft", Path(tmp), topics, partitions)
        raw_kraft = raw_creation("kraft", Path(tmp), topics, partitions)
    print(
        f"operator on real Kafka, {topics} KafkaTopics x {partitions} partitions x "
        f"RF{REPLICAS} applied at once, all Ready: KRaft (Kafka {KRAFT_KAFKA_VERSION}, "
        f"--bootstrap-servers) {kraft.ready:.1f} s beside ZooKeeper mode (Kafka "
        f"{KAFKA_VERSION}, --zookeeper) {zookeeper.ready:.1f} s, KRaft/ZooKeeper "
        f"{kraft.ready / zookeeper.ready:.2f}; operator CPU {kraft.operator_cpu:.1f} s on "
        f"KRaft, {zookeeper.operator_cpu:.1f} s on ZooKeeper"
    )
    print(f"  ZooKeeper mode: {milestones(zookeeper, 'brokers and ZooKeeper')}")
    print(f"  KRaft: {milestones(kraft, 'Kafka nodes')}")
    for kind, run, raw in (("ZooKeeper mode", zookeeper, raw_zookeeper),
                           ("KRaft", kraft, raw_kraft)):  # fmt: skip
        led = f"{run.led / raw:.2f}" if run.led is not None else "not seen"
        print(f"  {kind}, Kafka itself (AdminClient.create_topics on a fresh cluster): every "
              f"partition led {raw:.1f} s; the operator's Ready / that {run.ready / raw:.2f}, "
              f"its partitions led / that {led}")  # fmt: skip
    print(f"  ({time.monotonic() - began:.0f} s for both clusters in all)")
    with scratch_dir("kto-bench-kraft-scale-") as tmp:
        raise_open_files(SCALE_TOPICS * SCALE_PARTITIONS * SCALE_REPLICAS + FILES_SPARE)
        scale = at_scale(Path(tmp))
    print(
        f"operator on KRaft at scale, {SCALE_TOPICS} KafkaTopics x {SCALE_PARTITIONS} partition "
        f"x RF{SCALE_REPLICAS}: all Ready {scale.ready:.0f} s, settled {scale.settled:.0f} s "
        f"later; at rest {scale.idle_cpu:.1%} of a "
        f"core (1,000 x {partitions} x RF{REPLICAS}: {kraft.idle_cpu:.1%}), {scale.rss_mb:.0f} MB "
        f"resident; node {STOPPED_NODE} stopped (a controlled shutdown) to the {scale.affected} "
        f"statuses with a replica there showing it {scale.stop_seen:.1f} s"
    )


if __name__ == "__main__":
    main()
