"""What Spark on Kubernetes starts for a KafkaRebalance, seen while it runs: its driver and executor
pods end (and are deleted) within seconds of the plan, so a thread polls them and keeps every pod,
Job and log it saw."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kto_dev.node.launcher import KubernetesNode

POLL_SECONDS = 0.5


@dataclass
class Seen:
    """The last state of every pod and Job of one KafkaRebalance, and the longest log of each
    pod (a log read later may be gone with its pod)."""

    pods: dict[str, dict[str, Any]] = field(default_factory=dict)
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)

    def role(self, role: str, proposal: str | None = None) -> list[dict[str, Any]]:
        """The pods of a Spark role (driver, executor), of one proposal if named."""
        return [
            p for p in self.pods.values()
            if p["metadata"]["labels"].get("spark-role") == role
            and proposal in (None, p["metadata"]["labels"].get("kto.dev/proposal"))
        ]  # fmt: skip


class PodWatch:
    """Polls the pods and Jobs labelled `kto.dev/rebalance=<name>` in a namespace."""

    def __init__(self, node: KubernetesNode, namespace: str, rebalance: str) -> None:
        self.node, self.namespace = node, namespace
        self.selector = f"kto.dev/rebalance={rebalance}"
        self.seen = Seen()
        self._lock = threading.Lock()
        self._done = threading.Event()

    def _list(self, kind: str) -> list[dict[str, Any]]:
        listed = self.node.kubectl("--namespace", self.namespace, "get", kind, "-l",
                                   self.selector, "-o", "json", check=False)  # fmt: skip
        try:
            items: list[dict[str, Any]] = json.loads(listed)["items"]
        except (ValueError, KeyError):
            return []  # the API server was busy: the next poll sees it
        return items

    def poll(self) -> None:
        jobs, pods = self._list("jobs"), self._list("pods")
        logs = {}
        for pod in pods:
            if pod.get("status", {}).get("phase") in ("Running", "Succeeded", "Failed"):
                name = pod["metadata"]["name"]
                logs[name] = self.node.kubectl("--namespace", self.namespace, "logs", name,
                                               check=False)  # fmt: skip
        with self._lock:
            self.seen.jobs.update((j["metadata"]["name"], j) for j in jobs)
            self.seen.pods.update((p["metadata"]["name"], p) for p in pods)
            for name, log in logs.items():
                if len(log) > len(self.seen.logs.get(name, "")):
                    self.seen.logs[name] = log

    def snapshot(self) -> Seen:
        with self._lock:
            return Seen(dict(self.seen.pods), dict(self.seen.jobs), dict(self.seen.logs))

    def _run(self) -> None:
        while not self._done.wait(POLL_SECONDS):
            self.poll()


@contextmanager
def watching(node: KubernetesNode, namespace: str, rebalance: str) -> Iterator[PodWatch]:
    watch = PodWatch(node, namespace, rebalance)
    thread = threading.Thread(target=watch._run, name=f"pods of {rebalance}", daemon=True)
    thread.start()
    try:
        yield watch
    finally:
        watch._done.set()
        thread.join()


def live(node: KubernetesNode, namespace: str, kind: str, selector: str) -> list[str]:
    """The names of the objects of `kind` matching `selector`, those being deleted too."""
    listed = json.loads(node.kubectl("--namespace", namespace, "get", kind, "-l", selector,
                                     "-o", "json"))  # fmt: skip
    return sorted(o["metadata"]["name"] for o in listed["items"])
