"""Two operator replicas from the chart on the real node: one handles events, the other stands
by; a kill -9 of the active one's process and the deletion of its pod each hand the work over,
every KafkaTopic applied meanwhile is reconciled once and written once; a drain of the node is
held up by the PodDisruptionBudget."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

import pytest
from kto_testing import eventually
from node_session import NodeSession

from kafka_topic_operator.zk.client import ZkClient
from kto_dev.cluster_api import kubectl

from .helpers import Release, kafka_topic, unique

pytestmark = pytest.mark.node

HANDLED = "Handler 'reconcile' succeeded"


def handled_by(release: Release, topic: str) -> list[str]:
    """The pods whose operator logged handling the KafkaTopic (current containers)."""
    names = [p["metadata"]["name"] for p in release.pods()]
    return [name for name in names if HANDLED in _handled_lines(release, name, topic)]


def _handled_lines(release: Release, pod: str, topic: str) -> str:
    lines = release.kubectl("logs", pod, check=False).splitlines()
    return "\n".join(line for line in lines if topic in line)


def main_process(release: Release, pod: dict[str, Any]) -> int:
    """The pid (on the machine) of the pod's container's main process, from containerd."""
    container = pod["status"]["containerStatuses"][0]["containerID"].split("://", 1)[1]
    paths = release.node.paths
    ctr = ["ctr", "--address", str(paths.containerd_socket), "-n", "k8s.io"]
    listed = subprocess.run([*ctr, "tasks", "list"], capture_output=True, text=True, check=True)
    for line in listed.stdout.splitlines()[1:]:
        task, pid, _status = line.split()
        if task == container:
            return int(pid)
    raise AssertionError(f"no task for container {container}")


def written_once(session: NodeSession, topics: list[str]) -> dict[str, tuple[int, int]]:
    """Each topic's znode and config znode versions: 0 and 0 when each was written once."""
    client = ZkClient(session.kafka_zookeeper)
    client.start()
    try:
        versions = {}
        for topic in topics:
            node, config = (
                client.get(f"/brokers/topics/{topic}"),
                client.get(f"/config/topics/{topic}"),
            )
            assert node is not None and config is not None, topic
            versions[topic] = (node.version, config.version)
        return versions
    finally:
        client.stop()


def failover(release: Release, stop: Any, prefix: str) -> tuple[float, list[str]]:
    """Stops the active replica with `stop(pod)`, applies topics until one is Ready again;
    returns the seconds from the stop to that Ready, and the topics applied."""
    topic = unique(prefix)
    release.apply(kafka_topic(topic, partitions=1, replicas=1))
    release.ready_topic(topic)
    active = eventually(lambda: handled_by(release, topic), "the active replica")
    (active_pod,) = [p for p in release.pods() if p["metadata"]["name"] in active]
    stopped = time.monotonic()
    stop(active_pod)
    applied = [unique(prefix) for _ in range(3)]
    for name in applied:
        release.apply(kafka_topic(name, partitions=1, replicas=1))
    for name in applied:
        release.ready_topic(name, timeout=150)
    return time.monotonic() - stopped, [topic, *applied]


def test_two_replicas_hand_over_on_a_crash_and_on_a_deleted_pod(
    node_session: NodeSession, chart_release: Callable[..., Release]
) -> None:
    release = chart_release("ha", replicaCount=2)
    assert len(release.pods()) == 2
    killed, first = failover(
        release, lambda pod: os.kill(main_process(release, pod), signal.SIGKILL), "crash"
    )
    deleted, second = failover(
        release,
        lambda pod: release.kubectl("delete", "pod", pod["metadata"]["name"], "--wait=false"),
        "deleted",
    )
    topics = first + second
    assert written_once(node_session, topics) == {t: (0, 0) for t in topics}
    for topic in topics:
        status = release.get("kafkatopic", topic)["status"]
        assert status["observedGeneration"] == 1
    print(f"failover: {killed:.1f} s after kill -9, {deleted:.1f} s after a pod's deletion")
    eventually(lambda: len(release.pods()) == 2, "two replicas again", timeout=60)


def test_the_disruption_budget_holds_one_replica_through_a_drain(
    chart_release: Callable[..., Release],
) -> None:
    release = chart_release("pdb", replicaCount=2)
    eventually(lambda: all(c["status"] == "True" for p in release.pods()
                           for c in p["status"].get("conditions", [])
                           if c["type"] == "Ready"), "both replicas Ready", timeout=60)  # fmt: skip
    before = {p["metadata"]["name"] for p in release.pods()}
    selector = f"app.kubernetes.io/instance={release.name}"
    # Only this release's pods are evicted; the node is cordoned, as by any drain, so the evicted
    # pod's replacement cannot start until it is uncordoned.
    try:
        drain = subprocess.run(
            [kubectl(), f"--kubeconfig={release.node.kubeconfig}", "drain", "kto-node",
             f"--pod-selector={selector}", "--timeout=20s", "--delete-emptydir-data"],
            capture_output=True, text=True,
        )  # fmt: skip
        during = {p["metadata"]["name"]: p["status"].get("phase") for p in release.pods()}
    finally:
        release.node.kubectl("uncordon", "kto-node")
    assert drain.returncode != 0, drain.stdout
    assert "Cannot evict pod as it would violate the pod's disruption budget" in drain.stderr
    # One pod was evicted, the other held up and running; the replacement waits for the node.
    kept = [name for name, phase in during.items() if name in before and phase == "Running"]
    replacements = [name for name in during if name not in before]
    assert len(kept) == 1 and [during[n] for n in replacements] == ["Pending"], during
    eventually(lambda: len([p for p in release.pods()
                            if p["status"].get("phase") == "Running"]) == 2,
               "both replicas running after the uncordon", timeout=60)  # fmt: skip
