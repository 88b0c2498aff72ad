"""`kto dev-cluster up --kubernetes`: the dev cluster on a real one-node Kubernetes cluster, for
cluster.py.

The node (node/launcher.py: etcd, kube-apiserver, kube-controller-manager and kube-scheduler on
this machine; containerd, the kubelet and kube-proxy in a network namespace of its own) lives in
`node/` of the dev cluster's directory. ZooKeeper and Apache Kafka's brokers (or, with --kraft,
KRaft nodes) listen on the node's host address, where this machine and the pods both reach them,
and the operator is a pod: the project's Helm chart installed with helm (release `kto` in
namespace `kto-system`) with the images built from the Dockerfile, rebalancing on, its work
volume a folder of the node. The node starts empty at each `up` (its API server's certificate
names the host address, which the next `up` may get another of): KafkaTopics do not outlive a
`down`; Kafka's data does, as in the other modes. What `up` made is kept in state.json under
"kubernetes"; the node's own processes in the node's state.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from kto_dev import cluster_kraft
from kto_dev.apache_kafka.broker import KafkaBrokerError, alive, java_executable
from kto_dev.apache_kafka.distribution import (
    KAFKA_VERSION,
    KRAFT_KAFKA_VERSION,
    is_complete,
    libs_dir,
)
from kto_dev.cluster_api import kubectl
from kto_dev.cluster_processes import DevClusterError
from kto_dev.node.launcher import KubernetesNode, KubernetesNodeError, NodeImages

NODE_FOLDER = "node"
NAMESPACE = "kto-system"
RELEASE = "kto"
WORK_CLAIM = "kto-rebalance-work"
# The node has the machine's cores: a driver and two executors fit with requests below a core.
PLANNER_RESOURCES = {"executorCpuRequest": "250m", "driverCpuRequest": "250m"}
# The node's processes as its state names them, in the order they start.
NODE_PROCESSES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler",
                  "containerd", "kubelet", "kube-proxy")  # fmt: skip
# `up`'s steps, timed, as its summary names them.
PHASES = {"images": "images", "node": "node", "kafka": "Kafka", "chart": "chart"}
# The chart's label on everything of the release.
INSTANCE = f"app.kubernetes.io/instance={RELEASE}"


def node_directory(directory: Path) -> Path:
    return directory / NODE_FOLDER


def up(
    directory: Path,
    kubeconfig: Path,
    kraft: bool,
    start_kafka: Callable[[dict[str, Any], str], None],
    stop_kafka: Callable[[dict[str, Any]], None],
) -> dict[str, Any]:
    """The node, then Kafka (`start_kafka(state, host)`: on the node's host address, its
    processes in state["pids"]), then the chart; on failure, everything started is stopped."""
    kafka_version = KRAFT_KAFKA_VERSION if kraft else KAFKA_VERSION
    check_prerequisites(kafka_version, zookeeper=not kraft)
    directory.mkdir(parents=True, exist_ok=True)
    state: dict[str, Any] = {"pids": []}
    node = start_node(directory, state)
    try:
        with phase(state, "kafka", f"starting Apache Kafka {kafka_version} on the node's host "
                   f"address {node.host_address}"):  # fmt: skip
            start_kafka(state, node.host_address)
        install_operator(node, directory, kubeconfig, state)
    except BaseException:
        try:
            node.stop()
        finally:
            stop_kafka(state)
        raise
    return state


def check_prerequisites(kafka_version: str, zookeeper: bool) -> None:
    """What `up` needs besides the images, before anything starts: one line saying what to do."""
    if os.geteuid() != 0:
        raise DevClusterError("--kubernetes runs a Kubernetes node (a network namespace, mounts, "
                              "cgroups): run it as root")  # fmt: skip
    from kto_dev.node.chart import helm

    for tool in (helm(), kubectl()):
        if shutil.which(tool) is None:
            raise DevClusterError(f"{Path(tool).name} not found: run `make setup`")
    try:
        java_executable()
    except KafkaBrokerError as e:
        raise DevClusterError(str(e)) from None
    if not is_complete(libs_dir(kafka_version)):
        raise DevClusterError(f"Kafka {kafka_version} jars not found in "
                              f"{libs_dir(kafka_version)}: run `make kafka`")  # fmt: skip
    if zookeeper:
        from kto_dev.zookeeper_server import ZooKeeperServerError, zookeeper_home

        try:
            zookeeper_home()
        except ZooKeeperServerError as e:
            raise DevClusterError(str(e)) from None


@contextlib.contextmanager
def phase(state: dict[str, Any], name: str, doing: str) -> Iterator[None]:
    """One step of `up`, announced (the first build of the images takes minutes) and timed into
    state["seconds"]."""
    print(f"{doing} ...", flush=True)
    started = time.monotonic()
    yield
    seconds = state.setdefault("seconds", {})
    seconds[name] = round(time.monotonic() - started, 1)


def start_node(directory: Path, state: dict[str, Any]) -> KubernetesNode:
    """The node, from an empty folder (a node an interrupted `up` left is stopped first), once
    its images and binaries are there; state["kubernetes"] says where it is."""
    folder = node_directory(directory)
    try:
        KubernetesNode.stop_in(folder)
    except KubernetesNodeError as e:
        raise DevClusterError(f"the node left in {folder}: {e}") from None
    shutil.rmtree(folder, ignore_errors=True)
    with phase(state, "images", "images and node binaries: from the cache, or built now if "
               "missing (the first build takes several minutes)"):  # fmt: skip
        images = _images()
    with phase(state, "node", "starting the Kubernetes node"):
        from kto_dev.node.network import NodeNetworkError

        try:
            node = KubernetesNode(folder, images).start()
        except (KubernetesNodeError, NodeNetworkError) as e:
            raise DevClusterError(str(e)) from None
    assert node.network is not None
    state["kubernetes"] = {"node": str(node.directory), "network": node.network.namespace,
                           "host": node.host_address, "namespace": NAMESPACE,
                           "release": RELEASE}  # fmt: skip
    return node


def _images() -> NodeImages:
    """The node's binaries (and kube-apiserver's), then its images: each built unless cached."""
    from kto_dev.go_build import GoBuildError
    from kto_dev.images.buildah import ImageBuildError
    from kto_dev.kube_apiserver import build as kube_build
    from kto_dev.node import build as node_build
    from kto_dev.node.images import node_images

    try:
        kube_build.build()
        node_build.build()
        return node_images()
    except (GoBuildError, ImageBuildError) as e:
        raise DevClusterError(str(e)) from None


def install_operator(
    node: KubernetesNode, directory: Path, kubeconfig: Path, state: dict[str, Any]
) -> None:
    """The chart with helm (`helm install --wait`: the operator's pod Ready) on the Kafka cluster
    `state` has, rebalancing on; then the kubeconfig for the user."""
    from kto_dev.node import chart, storage

    cluster: dict[str, Any] = (
        {"kafka": {"bootstrapServers": state["bootstrap"]}}
        if "kraft" in state
        else {"zookeeper": {"connect": state["zookeeper"]}}
    )
    values = {
        **cluster,
        "rebalance": {
            "enabled": True,
            "workVolume": {"claimName": WORK_CLAIM},
            "plannerResources": PLANNER_RESOURCES,
        },
    }
    with phase(state, "chart", f"installing the chart (release {RELEASE} in {NAMESPACE})"):
        try:
            storage.work_volume(node, NAMESPACE, WORK_CLAIM)
            installed = chart.install(node, RELEASE, NAMESPACE, values)
            deployments = node.kubectl("get", "deployments", "-n", NAMESPACE, "-l", INSTANCE,
                                       "-o", "name").split()  # fmt: skip
        except KubernetesNodeError as e:
            raise DevClusterError(_one_line(str(e))) from None
    (directory / "helm.log").write_text(installed)
    state["kubernetes"]["values"] = values
    state["kubernetes"]["deployment"] = deployments[0] if deployments else None
    kubeconfig = kubeconfig.resolve()
    assert node.api is not None
    node.api.write_kubeconfig(kubeconfig)
    state["kubeconfig"] = str(kubeconfig)


def _one_line(message: str) -> str:
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return "; ".join(lines[-3:]) if lines else message


def stop_node(directory: Path) -> None:
    """The node and every pod on it (the operator's); what it made on the machine removed."""
    try:
        KubernetesNode.stop_in(node_directory(directory))
    except KubernetesNodeError as e:
        raise DevClusterError(str(e)) from None


def node_pids(directory: Path) -> dict[str, int]:
    """The node's processes by name, as its state has them (none once it stopped)."""
    state_file = node_directory(directory) / "state.json"
    try:
        pids: dict[str, int] = json.loads(state_file.read_text())["pids"]
    except (OSError, ValueError, KeyError):
        return {}
    return pids


def add_status(directory: Path, state: dict[str, Any]) -> None:
    """The node's processes (a missing one counts as stopped) and the operator's pods with their
    phase, into what `status` shows."""
    pids = node_pids(directory)
    state["node_pids"] = pids
    for name in NODE_PROCESSES:
        pid = pids.get(name)
        state["alive"][str(pid) if pid else name] = bool(pid) and alive(pid or 0)
    apiserver = pids.get("kube-apiserver")
    state["operator_pods"] = _operator_pods(directory) if apiserver and alive(apiserver) else None


def _operator_pods(directory: Path) -> list[dict[str, Any]] | None:
    """The release's pods (name, phase, Ready), None when the API server does not answer."""
    done = subprocess.run(
        [kubectl(), f"--kubeconfig={node_directory(directory).resolve() / 'kubeconfig'}",
         "--request-timeout=5s", "get", "pods", "-n", NAMESPACE, "-l", INSTANCE, "-o", "json"],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        return None
    pods = []
    for pod in json.loads(done.stdout)["items"]:
        conditions = pod.get("status", {}).get("conditions", [])
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
        pods.append({"name": pod["metadata"]["name"], "phase": pod["status"].get("phase"),
                     "ready": ready})  # fmt: skip
    return pods


def status_lines(state: Mapping[str, Any], kafka_lines: list[str]) -> list[str]:
    """`status`: the node's processes, Kafka's (`kafka_lines`, as the other modes show them),
    and the operator's pods."""
    kubernetes, pids = state["kubernetes"], state["node_pids"]
    running = sum(state["alive"].values())
    lines = [
        f"dev cluster: {running} of {len(state['alive'])} processes running; Kubernetes node "
        f"(network namespace {kubernetes['network']}, host address {kubernetes['host']})"
    ]
    for name in NODE_PROCESSES:
        pid = pids.get(name)
        up = pid is not None and state["alive"].get(str(pid))
        lines.append(f"  {name}: {f'running (pid {pid})' if up else 'stopped'}")
    lines += kafka_lines
    pods = state.get("operator_pods")
    where = f"release {kubernetes['release']} in {kubernetes['namespace']}"
    if pods is None:
        lines.append(f"  operator ({where}): unknown, the API server does not answer")
    elif not pods:
        lines.append(f"  operator ({where}): no pod")
    for pod in pods or []:
        ready = ", Ready" if pod["ready"] else ", not Ready"
        lines.append(f"  operator pod {pod['name']} ({where}): {pod['phase']}{ready}")
    return lines


def print_hints(state: Mapping[str, Any], dev_cluster: str) -> None:
    """What `up` prints: where things are, how long each part took, and commands that work as
    printed."""
    kubernetes = state["kubernetes"]
    print(f"dev cluster up on a Kubernetes node (network namespace {kubernetes['network']}, "
          f"host address {kubernetes['host']})")  # fmt: skip
    if "kraft" in state:
        kraft = state["kraft"]
        print(f"  Apache Kafka {kraft['version']} KRaft nodes ({kraft['mode']} mode, no "
              f"ZooKeeper): {state['bootstrap']}")  # fmt: skip
    else:
        print(f"  ZooKeeper {state['zookeeper']}")
        print(f"  Apache Kafka {KAFKA_VERSION} brokers: {state['bootstrap']}")
    seconds = state.get("seconds", {})
    parts = ", ".join(
        f"{label} {seconds[name]:g} s" for name, label in PHASES.items() if name in seconds
    )
    print(f"  took {sum(seconds.values()):.0f} s: {parts}")
    namespace = kubernetes["namespace"]
    print(f"  operator: the chart's release {kubernetes['release']} in namespace {namespace}")
    print(f"  export KUBECONFIG={state['kubeconfig']}")
    print(f"  {kubectl()} get kt    # KafkaTopics")
    logs = kubernetes.get("deployment") or f"-l {INSTANCE}"
    print(f"  {kubectl()} logs -n {namespace} {logs}    # the operator's log")
    if "kraft" in state:
        print(f"  {shlex.join(cluster_kraft.topic_tool_command(state['kraft']))}"
              "    # Kafka's kafka-topics --describe")  # fmt: skip
    else:
        print(f"  {Path(sys.executable).parent / 'kto'} describe --zookeeper {state['zookeeper']}")
    print(f"  {dev_cluster} status   # the node's processes, Kafka's, the operator's pod")
    print(f"  {dev_cluster} down   # stops it all (--reset: and removes its data)")
