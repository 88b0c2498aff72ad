"""1,000 KafkaTopics (12 partitions, replication factor 3) applied at once, until every one is
Ready: the API emulator, `kto run --embedded-controller` (kopf, the controller) and three
`kto dev-broker` processes on a real ZooKeeper. Prints the milestones and the share of each part.

Anchors quoted, not measured here (no Strimzi can run on this machine): Strimzi's unidirectional
topic operator took about 33 s for 1,000 topic events in its own 2023 benchmark, its older
operator about 13 minutes. Target: under 10 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

from bench_support import scratch_dir, warm_up
from kafka_topic_operator.apiserver import ApiServer
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import ZkClient
from kafka_topic_operator.zk.server import ZooKeeperServer

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


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU time of processes so far (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def ready_count(base: str) -> int:
    items = request(base, "GET", KT_PATH)["items"]
    return sum(
        1
        for item in items
        for c in (item.get("status") or {}).get("conditions") or []
        if c["type"] == "Ready" and c["status"] == "True"
    )


def main() -> None:
    with (
        scratch_dir("kto-bench-operator-") as tmp,
        ZooKeeperServer(Path(tmp) / "zk") as server,
        ApiServer() as api,
    ):
        work = Path(tmp)
        warm_up(server.connect_string)
        connect = server.connect_string + "/kafka"
        zk = ZkClient(server.connect_string)
        zk.start()
        zk.ensure_path("/kafka")
        zk.stop()
        zk = ZkClient(connect)
        zk.start()
        crd = yaml.safe_load((ROOT / "crds" / "kafkatopics.yaml").read_text())
        request(api.url, "POST", CRD_PATH, crd)
        kubeconfig = api.write_kubeconfig(work / "kubeconfig")
        env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
        processes = []
        logs = []
        for broker in (0, 1, 2):
            log = (work / f"broker-{broker}.log").open("w")
            logs.append(log)
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "kafka_topic_operator.cli", "dev-broker", "--zookeeper",
                 connect, "--id", str(broker), "--rack", f"rack-{broker}", "--log-dir",
                 str(work / f"data-{broker}"), "--log-level", "WARNING"],
                stdout=log, stderr=subprocess.STDOUT, env=env,
            ))  # fmt: skip
        log = (work / "operator.log").open("w")
        logs.append(log)
        processes.append(subprocess.Popen(
            [sys.executable, "-m", "kafka_topic_operator.cli", "run", "--zookeeper", connect,
             "--embedded-controller", "--liveness", "", "--log-level", "WARNING"],
            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work,
        ))  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while len(zk.children(znodes.BROKER_IDS_PATH) or []) < 3 or not zk.exists(
                znodes.CONTROLLER_PATH
            ):
                if time.monotonic() > deadline:
                    raise RuntimeError("the brokers and the controller did not come up")
                time.sleep(0.2)
            bodies = [
                {"apiVersion": "kto.dev/v1", "kind": "KafkaTopic",
                 "metadata": {"name": f"topic-{i}"}, "spec": {"partitions": 12, "replicas": 3}}
                for i in range(TOPICS)
            ]  # fmt: skip
            parts = {
                "operator and controller": [processes[3].pid],
                "dev brokers": [p.pid for p in processes[:3]],
                "ZooKeeper": [server.pid] if server.pid else [],
                "API emulator and this client": [os.getpid()],
            }
            cpu_before = {part: cpu_seconds(pids) for part, pids in parts.items()}
            began = time.monotonic()
            with ThreadPoolExecutor(16) as pool:
                list(pool.map(lambda b: request(api.url, "POST", KT_PATH, b), bodies))
            applied = time.monotonic() - began
            in_zk = ready = None
            deadline = time.monotonic() + 600
            while ready is None:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"only {ready_count(api.url)} of {TOPICS} Ready")
                # Listing 1,000 resources costs the emulator (in this process) real time: only
                # once every topic is in ZooKeeper, and then sparingly.
                if in_zk is None:
                    if len(zk.children(znodes.TOPICS_PATH) or []) >= TOPICS:
                        in_zk = time.monotonic() - began
                    else:
                        time.sleep(0.2)
                elif ready_count(api.url) >= TOPICS:
                    ready = time.monotonic() - began
                else:
                    time.sleep(0.5)
            print(
                f"operator, {TOPICS} KafkaTopics x 12 partitions x RF3 applied at once: applied "
                f"to the API in {applied:.1f} s, all topics in ZooKeeper at {in_zk:.1f} s, all "
                f"Ready at {ready:.1f} s (API {applied / ready:.0%}, to ZooKeeper "
                f"{(in_zk - applied) / ready:.0%}, controller and status "
                f"{(ready - in_zk) / ready:.0%}); Strimzi's unidirectional operator ~33 s "
                "(quoted); target < 10 s"
            )
            used = {part: cpu_seconds(pids) - cpu_before[part] for part, pids in parts.items()}
            total = sum(used.values())
            print(
                f"  CPU until all Ready: {total:.1f} s on {os.cpu_count()} cpus ("
                + ", ".join(f"{part} {s:.1f} s = {s / total:.0%}" for part, s in used.items())
                + ")"
            )
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:  # stuck in shutdown: not what is measured
                    process.kill()
                    process.wait()
            for log in logs:
                log.close()
            zk.stop()


if __name__ == "__main__":
    main()
