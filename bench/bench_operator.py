"""1,000 KafkaTopics (12 partitions, replication factor 3) applied at once, until every one is
Ready: the API emulator, `kto run --embedded-controller` (kopf, the controller) and three
`kto dev-broker` processes on a real ZooKeeper, each in its own process as in the dev cluster.
Prints the milestones and the share of each part. Readiness is seen on a watch, when it happens
(not by listing every resource again and again, which would load the emulator it measures).

Anchors quoted, not measured here (no Strimzi can run on this machine): Strimzi's unidirectional
topic operator took about 33 s for 1,000 topic events in its own 2023 benchmark, its older
operator about 13 minutes. Target: under 10 s.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

from bench_support import cpu_seconds, scratch_dir, wait_idle, warm_up
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import ZkClient
from kto_dev.ports import free_port
from kto_dev.zookeeper_server import ZooKeeperServer

ROOT = Path(__file__).resolve().parent.parent
TOPICS = 1000
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
KT_PATH = "/apis/kto.dev/v1/namespaces/default/kafkatopics"


def request(base: str, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(req, timeout=60) as response:
        return json.loads(response.read() or b"null")


def is_ready(item: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (item.get("status") or {}).get("conditions") or []
    )


class ReadyWatch:
    """Follows the KafkaTopics on a watch; `all_ready` is set, and `ready_at` taken, when
    `expected` of them are Ready at once."""

    def __init__(
        self, base: str, expected: int, holds: Callable[[dict[str, Any]], bool] | None = None
    ) -> None:
        """`holds`: what a KafkaTopic is waited for in (Ready by default)."""
        self.expected = expected
        self._holds = holds or is_ready
        self.ready: set[str] = set()
        self.ready_at: float | None = None
        self.all_ready = threading.Event()
        version = request(base, "GET", KT_PATH)["metadata"]["resourceVersion"]
        self._response = urllib.request.urlopen(
            f"{base}{KT_PATH}?watch=1&resourceVersion={version}", timeout=600
        )
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        try:
            for line in self._response:
                self._see(json.loads(line))
        except OSError:  # the emulator stopped: the run is over
            pass

    def _see(self, event: dict[str, Any]) -> None:
        if event["type"] not in ("ADDED", "MODIFIED", "DELETED"):
            return
        name = event["object"]["metadata"]["name"]
        if event["type"] != "DELETED" and self._holds(event["object"]):
            self.ready.add(name)
        else:
            self.ready.discard(name)
        if len(self.ready) >= self.expected and self.ready_at is None:
            self.ready_at = time.monotonic()
            self.all_ready.set()


class Cluster:
    """The API emulator, `kto run` (with the controller embedded, or `kto controller` beside
    it), three dev brokers and a real ZooKeeper, each in its own process."""

    def __init__(self, work: Path, connect: str, zk: ZkClient, *, embedded: bool) -> None:
        self.work, self.connect, self.zk = work, connect, zk
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self._logs: list[Any] = []
        api_port = free_port()
        kubeconfig = work / "kubeconfig"
        self._spawn("apiserver", ["kube_api_emulator", "--port", str(api_port),
                                  "--kubeconfig", str(kubeconfig)])  # fmt: skip
        self.api = f"http://127.0.0.1:{api_port}"
        wait_for(lambda: request(self.api, "GET", "/version"), "the API emulator")
        crd = yaml.safe_load((ROOT / "crds" / "kafkatopics.yaml").read_text())
        request(self.api, "POST", CRD_PATH, crd)
        env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
        for broker in (0, 1, 2):
            self._spawn(f"broker-{broker}", [
                "kafka_topic_operator.cli", "dev-broker", "--zookeeper", connect, "--id",
                str(broker), "--rack", f"rack-{broker}", "--log-dir",
                str(work / f"data-{broker}"), "--log-level", "WARNING",
            ], env)  # fmt: skip
        if not embedded:
            self._spawn("controller", ["kafka_topic_operator.cli", "controller", "--zookeeper",
                                       connect, "--log-level", "WARNING"])  # fmt: skip
        liveness = f"http://127.0.0.1:{free_port()}/healthz"
        self._spawn("operator", ["kafka_topic_operator.cli", "run", "--zookeeper", connect,
                                 *(["--embedded-controller"] if embedded else []),
                                 "--liveness", liveness, "--metrics-port", str(free_port()),
                                 "--log-level", "WARNING"], env)  # fmt: skip
        wait_for(
            lambda: (
                len(zk.children(znodes.BROKER_IDS_PATH) or []) >= 3
                and zk.exists(znodes.CONTROLLER_PATH)
            ),
            "the brokers and the controller",
        )
        # Applied to a running operator: kopf serves its liveness endpoint once started.
        wait_for(lambda: urllib.request.urlopen(liveness, timeout=2), "the operator")

    def _spawn(self, name: str, args: list[str], env: dict[str, str] | None = None) -> None:
        log = (self.work / f"{name}.log").open("w")
        self._logs.append(log)
        self.processes[name] = subprocess.Popen(
            [sys.executable, "-m", *args], stdout=log, stderr=subprocess.STDOUT, env=env,
            cwd=self.work,
        )  # fmt: skip

    def pids(self, *names: str) -> list[int]:
        return [p.pid for name, p in self.processes.items() if name.startswith(names)]

    def parts(self, server: ZooKeeperServer) -> dict[str, list[int]]:
        """Each part's processes, for its CPU time (the controller is the operator's own where
        embedded)."""
        found = {
            "operator": self.pids("operator"),
            "controller": self.pids("controller"),
            "dev brokers": self.pids("broker-"),
            "ZooKeeper": [server.pid] if server.pid else [],
            "API emulator": self.pids("apiserver"),
            "this client": [os.getpid()],
        }
        return {part: pids for part, pids in found.items() if pids}

    def apply(self, topics: int, partitions: int) -> tuple[float, float, float]:
        """Applies `topics` KafkaTopics at once: the seconds until they were all applied, all
        in ZooKeeper, all Ready."""
        bodies = [
            {"apiVersion": "kto.dev/v1", "kind": "KafkaTopic",
             "metadata": {"name": f"topic-{i}"},
             "spec": {"partitions": partitions, "replicas": 3}}
            for i in range(topics)
        ]  # fmt: skip
        watch = ReadyWatch(self.api, topics)
        began = time.monotonic()
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda b: request(self.api, "POST", KT_PATH, b), bodies))
        applied = time.monotonic() - began
        in_zk = None
        deadline = time.monotonic() + 900
        while in_zk is None:
            if time.monotonic() > deadline:
                raise RuntimeError("the topics did not all reach ZooKeeper")
            if len(self.zk.children(znodes.TOPICS_PATH) or []) >= topics:
                in_zk = time.monotonic() - began
            else:
                # Each look lists every topic: looked at ten times a second, 10,000 topics
                # cost ZooKeeper and this client seconds of CPU the measured parts lacked.
                time.sleep(0.1 if topics <= 1000 else 0.5)
        if not watch.all_ready.wait(900):
            raise RuntimeError(f"only {len(watch.ready)} of {topics} Ready")
        assert watch.ready_at is not None
        ready = watch.ready_at - began
        # Looked for every tenth of a second or more, the last topic may be seen in ZooKeeper
        # after the watch saw it Ready: it was there by then.
        return applied, min(in_zk, ready), ready

    def stop(self) -> None:
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:  # stuck in shutdown: not what is measured
                process.kill()
                process.wait()
        for log in self._logs:
            log.close()


@contextlib.contextmanager
def cluster(*, embedded: bool) -> Iterator[tuple[Cluster, ZooKeeperServer]]:
    with (
        scratch_dir("kto-bench-operator-") as tmp,
        ZooKeeperServer(Path(tmp) / "zk") as server,
    ):
        warm_up(server.connect_string)
        connect = server.connect_string + "/kafka"
        zk = ZkClient(server.connect_string)
        zk.start()
        zk.ensure_path("/kafka")
        zk.stop()
        zk = ZkClient(connect)
        zk.start()
        running = None
        try:
            running = Cluster(Path(tmp), connect, zk, embedded=embedded)
            yield running, server
        finally:
            if running is not None:
                running.stop()
            zk.stop()


def main() -> None:
    with cluster(embedded=True) as (running, server):
        parts = running.parts(server)
        cpu_before = {part: cpu_seconds(pids) for part, pids in parts.items()}
        applied, in_zk, ready = running.apply(TOPICS, 12)
        used = {part: cpu_seconds(pids) - cpu_before[part] for part, pids in parts.items()}
        print(
            f"operator, {TOPICS} KafkaTopics x 12 partitions x RF3 applied at once: applied "
            f"to the API in {applied:.1f} s, all topics in ZooKeeper at {in_zk:.1f} s, all "
            f"Ready at {ready:.1f} s (API {applied / ready:.0%}, to ZooKeeper "
            f"{(in_zk - applied) / ready:.0%}, controller and status "
            f"{(ready - in_zk) / ready:.0%}); Strimzi's unidirectional operator ~33 s "
            "(quoted); target < 10 s"
        )
        print(f"  CPU until all Ready: {cpu_shares(used, ready)}")


def cpu_shares(used: dict[str, float], seconds: float) -> str:
    """The CPU each part used, and all of them against what the machine's cores give."""
    total = sum(used.values())
    cores = os.cpu_count() or 1
    return (
        f"{total:.1f} s on {cores} cpus, {total / (seconds * cores):.0%} of them ("
        + ", ".join(f"{part} {s:.1f} s = {s / total:.0%}" for part, s in used.items())
        + ")"
    )


IDLE_WINDOW = 65.0  # longer than --drift-interval (60): whatever runs on it falls in the window
QUIET = 0.05  # of a core over a 5 s slice: the work after the last Ready (status patches seen
# back on the watch, kopf's workers winding down: half a minute at 10,000) is over


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def idle(sizes: tuple[int, ...] = (1000, 10000), partitions: int = 6) -> None:
    """The operator at rest with many KafkaTopics (the controller in a process of its own, as
    beside a Kafka cluster): its CPU over a window holding a drift pass, and its RSS; and the
    time for them all to become Ready. Targets: under 2% of a core and 500 MB at 10,000
    topics, Ready in under 60 s."""
    for topics in sizes:
        with cluster(embedded=False) as (running, server):
            parts = running.parts(server)
            cpu_before = {part: cpu_seconds(pids) for part, pids in parts.items()}
            _, _, ready = running.apply(topics, partitions)
            used = {part: cpu_seconds(pids) - cpu_before[part] for part, pids in parts.items()}
            (operator,) = running.pids("operator")
            settled = wait_idle(operator, QUIET, window=5.0, timeout=300.0)
            before = cpu_seconds([operator])
            time.sleep(IDLE_WINDOW)
            idle_cpu = cpu_seconds([operator]) - before
            print(
                f"operator idle with {topics} KafkaTopics x {partitions} partitions x RF3: "
                f"{idle_cpu / IDLE_WINDOW:.1%} of a core over {IDLE_WINDOW:.0f} s, RSS "
                f"{rss_mb(operator):.0f} MB; all Ready {ready:.1f} s after applying, quiet "
                f"{settled:.0f} s later; targets < 2%, < 500 MB, Ready < 60 s at 10,000"
            )
            print(f"  CPU until all Ready: {cpu_shares(used, ready)}")


def wait_for(condition: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if condition():
                return
        except OSError:
            pass  # not listening yet
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not come up")
        time.sleep(0.1)


if __name__ == "__main__":
    if sys.argv[1:] == ["idle"]:
        idle()
    else:
        main()
