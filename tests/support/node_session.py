"""One real Kubernetes node for the whole test run, with ZooKeeper and three Kafka brokers
listening where its pods reach them: started by the first test process that needs it (under a
lock, in the folder every pytest-xdist worker shares), found by the others, and stopped by the
run's main process when the run ends (`stop_shared`, from tests/conftest.py).

A node costs about half a minute to start and 700 MiB; one per worker would triple both."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from kto_dev import go_build
from kto_dev.cluster_processes import stop_together
from kto_dev.node.launcher import KubernetesNode
from kto_dev.zookeeper_server import ZooKeeperServer

FOLDER = "kubernetes-node"
# What this process started for the run, held until it ends: `stop_shared` stops them by pid
# (from the run's main process, maybe another), and their process handles must not be collected
# while they run.
_STARTED: list[object] = []


@dataclass(frozen=True)
class NodeSession:
    """What the tests use: the node (its kubeconfig, kubectl, the address of the host as pods
    see it), ZooKeeper's connect string and the Kafka brokers' bootstrap servers there."""

    node: KubernetesNode
    zookeeper: str
    kafka_zookeeper: str
    bootstrap: str


def shared_folder(basetemp: Path, is_worker: bool) -> Path:
    """The folder every process of the run sees: a worker's basetemp is one level down."""
    return (basetemp.parent if is_worker else basetemp) / FOLDER


def session(folder: Path) -> NodeSession:
    """The run's node, started here unless another process did."""
    from kto_dev.apache_kafka.cluster import KafkaCluster
    from kto_dev.node.images import node_images

    record = folder / "session.json"
    with go_build.exclusive(folder):  # one process starts it; the others wait, then find it
        if record.exists():
            saved = json.loads(record.read_text())
            return NodeSession(KubernetesNode.attach(folder / "node"), saved["zookeeper"],
                               saved["kafka_zookeeper"], saved["bootstrap"])  # fmt: skip
        node = KubernetesNode(folder / "node", node_images())
        _STARTED.append(node)
        pids: list[int] = []
        # Written before anything starts, so that whatever starts is stopped at the end.
        record.with_name("pids.json").write_text(json.dumps(pids))
        node.start()
        zookeeper = ZooKeeperServer(folder / "zookeeper", host=node.host_address)
        _STARTED.append(zookeeper)
        zookeeper.start()
        pids.append(zookeeper.pid or 0)
        record.with_name("pids.json").write_text(json.dumps(pids))
        kafka = KafkaCluster(f"{zookeeper.connect_string}/kafka", folder / "kafka",
                             host=node.host_address)  # fmt: skip
        _STARTED.append(kafka)
        try:
            kafka.start()
        finally:
            pids += [b.pid for b in kafka.brokers.values() if b.pid is not None]
            record.with_name("pids.json").write_text(json.dumps(pids))
        saved = {"zookeeper": zookeeper.connect_string,
                 "kafka_zookeeper": kafka.zookeeper, "bootstrap": kafka.bootstrap}  # fmt: skip
        record.write_text(json.dumps(saved))
        return NodeSession(node, saved["zookeeper"], saved["kafka_zookeeper"], saved["bootstrap"])


def stop_shared(folder: Path) -> None:
    """Kafka, ZooKeeper, then the node: everything a test process started for the run."""
    pids_file = folder / "pids.json"
    if pids_file.exists():
        pids = [int(p) for p in json.loads(pids_file.read_text()) if p]
        stop_together(pids[1:])
        stop_together(pids[:1])
        pids_file.unlink()
    KubernetesNode.stop_in(folder / "node")
    (folder / "session.json").unlink(missing_ok=True)
