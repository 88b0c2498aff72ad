"""`kto dev-cluster up|down|status`: the standalone dev cluster, in the background.

A ZooKeeper server (Debian's package), three brokers on three racks, the Kubernetes API emulator
(or, with `--apiserver real`, a real kube-apiserver and etcd built by `make kube-apiserver`)
with the CRDs, and the operator; `up` writes a kubeconfig so real kubectl works against it.
With `--kafka` the brokers are real Apache Kafka brokers (ids 0, 1, 2; racks a, b, c) and Kafka's
own controller runs the cluster; without it, dev brokers and `kto run --embedded-controller`
(this project's controller): the light digital twin. With `--kraft` there is no ZooKeeper:
Apache Kafka 4.x nodes in KRaft mode (cluster_kraft.py), combined or split, and the operator on
their Admin API (`kto run --bootstrap-servers`). With `--kubernetes` a real one-node Kubernetes
cluster instead of the API: real Kafka (on ZooKeeper, or with `--kraft`) where its pods reach it,
and the operator a pod of the Helm chart (cluster_kubernetes.py). A dev and test tool: state,
data and logs live in one directory.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kto_dev import cluster_kraft, cluster_kubernetes
from kto_dev.apache_kafka import broker as kafka_broker
from kto_dev.apache_kafka.broker import alive
from kto_dev.apache_kafka.distribution import KAFKA_VERSION, KRAFT_KAFKA_VERSION
from kto_dev.cluster_api import kubectl, start_emulator, start_kube_apiserver
from kto_dev.cluster_processes import (
    STARTUP_TIMEOUT,
    DevClusterError,
    spawn,
    stop,
    stop_together,
    wait_for,
)
from kto_dev.ports import free_port
from kto_dev.zookeeper_server import ZooKeeperServer, four_letter_word

BROKERS = (0, 1, 2)
KAFKA_RACKS = ("a", "b", "c")
LOOPBACK = "127.0.0.1"
DEFAULT_DIR = Path(".kto") / "dev-cluster"
# A dev broker's ZooKeeper session timeout (kto dev-broker --session-timeout's default): how long
# a killed one's registration lingers.
TWIN_SESSION_SECONDS = 18.0


def build_parser(prog: str = "kto dev-cluster") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Start, stop or inspect the standalone dev cluster (ZooKeeper, three brokers, "
        "the Kubernetes API emulator and the operator): real Apache Kafka brokers with Kafka's own "
        "controller (--kafka), or dev brokers with this project's controller; or, with --kraft, "
        "Apache Kafka 4 nodes in KRaft mode and no ZooKeeper; or, with --kubernetes, real Kafka "
        "beside a real Kubernetes node and the operator installed there by the Helm chart.",
    )
    parser.add_argument("action", choices=["up", "down", "status", "stop-broker", "start-broker"])
    parser.add_argument(
        "--reset",
        action="store_true",
        help="down: also remove the cluster's data (ZooKeeper, brokers' logs, the API emulator's "
        "saved resources, the Kubernetes node's folder), so that the next `up` starts empty",
    )
    parser.add_argument(
        "--id",
        type=int,
        metavar="N",
        help="the broker to stop or start: 0, 1 or 2 (3: a split KRaft cluster's controller)",
    )
    parser.add_argument(
        "--kafka",
        action="store_true",
        help="up: real Apache Kafka brokers and Kafka's controller instead of the dev brokers",
    )
    parser.add_argument(
        "--kraft",
        action="store_true",
        help=f"up: Apache Kafka {KRAFT_KAFKA_VERSION} nodes in KRaft mode, no "
        "ZooKeeper; the operator on their Admin API (kto run --bootstrap-servers)",
    )
    parser.add_argument(
        "--kraft-mode",
        choices=cluster_kraft.MODES,
        help="up --kraft: nodes 0, 1, 2 each broker and controller (combined, the default), or "
        "brokers only with node 3 the controller (split); an `up` on existing data keeps its mode",
    )
    parser.add_argument(
        "--apiserver",
        choices=["emulator", "real"],
        help="up: the Kubernetes API emulator (fast, the default) or a real kube-apiserver with "
        "etcd (built once by `make kube-apiserver`)",
    )
    parser.add_argument(
        "--kubernetes",
        action="store_true",
        help="up: a real one-node Kubernetes cluster (in --dir's node/, as root), Apache "
        f"Kafka {KAFKA_VERSION} brokers on ZooKeeper (or with --kraft, {KRAFT_KAFKA_VERSION} "
        "KRaft nodes) where its pods reach them, and the operator installed by the Helm chart "
        "with rebalancing on; the images and the node's binaries are built the first time "
        "(several minutes), then taken from the cache. The node starts empty each `up`",
    )
    parser.add_argument(
        "--kill",
        action="store_true",
        help="stop-broker: SIGKILL (a crash) instead of SIGTERM (Kafka's controlled shutdown); "
        "dev brokers are always killed",
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=DEFAULT_DIR,
        help="state, data and logs (.kto/dev-cluster)",
    )
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        default=Path(".kto") / "kubeconfig",
        help="where `up` writes the kubeconfig (.kto/kubeconfig)",
    )
    return parser


def _state_file(directory: Path) -> Path:
    return directory / "state.json"


def up(
    directory: Path,
    kubeconfig: Path,
    *,
    kafka: bool = False,
    apiserver: str = "emulator",
    kraft: bool = False,
    kraft_mode: str | None = None,
    kubernetes: bool = False,
) -> dict[str, Any]:
    """Starts the dev cluster; `kraft`: KRaft nodes instead of ZooKeeper and brokers, in
    `kraft_mode` (None: the mode of the data already there, else combined); `kubernetes`: on a
    real node, real Kafka always, the operator installed by the chart."""
    if kafka and kraft:
        raise DevClusterError("--kraft and --kafka exclude each other")
    if kubernetes and (kafka or apiserver != "emulator"):
        raise DevClusterError(f"--kubernetes and --{'kafka' if kafka else 'apiserver'} exclude "
                              "each other")  # fmt: skip
    state_path = _state_file(directory)
    if state_path.exists():
        running = [*json.loads(state_path.read_text())["pids"],
                   *cluster_kubernetes.node_pids(directory).values()]  # fmt: skip
        if any(alive(p) for p in running):
            raise DevClusterError(f"a dev cluster is already running from {directory}; "
                                  "stop it with `kto dev-cluster down`")  # fmt: skip
    if kubernetes:
        made = cluster_kubernetes.up(
            directory, kubeconfig, kraft,
            start_kafka=lambda state, host: _up_kraft(directory, state, kraft_mode, host)
            if kraft else _up_zookeeper(directory, state, True, host),
            stop_kafka=lambda state: _stop_kafka(state, failed=True),
        )  # fmt: skip
        state_path.write_text(json.dumps(made, indent=2))
        return made
    if kraft:  # before anything starts, as below
        try:
            cluster_kraft.check_prerequisites()
        except kafka_broker.KafkaBrokerError as e:
            raise DevClusterError(str(e)) from None
    if apiserver == "real":  # before anything starts: a missing build is one line, at once
        from kto_dev.kube_apiserver.build import KubeApiServerBuildError, require_binaries

        try:
            require_binaries()
        except KubeApiServerBuildError as e:
            raise DevClusterError(str(e)) from None
    directory.mkdir(parents=True, exist_ok=True)
    pids: list[int] = []
    state: dict[str, Any] = {"pids": pids}
    if kraft:
        try:
            _up_kraft(directory, state, kraft_mode)
            _up_api_and_operator(directory, kubeconfig, state, apiserver)
        except BaseException:
            _stop_kraft(state, kill_nodes=True)
            raise
        state_path.write_text(json.dumps(state, indent=2))
        return state
    try:
        _up_zookeeper(directory, state, kafka)
        _up_api_and_operator(directory, kubeconfig, state, apiserver)
    except BaseException:
        stop(pids)
        raise
    state_path.write_text(json.dumps(state, indent=2))
    return state


def _up_zookeeper(directory: Path, state: dict[str, Any], kafka: bool,
                  host: str = LOOPBACK) -> None:  # fmt: skip
    """ZooKeeper, then three brokers: real Kafka's (`kafka`) or dev brokers; all on `host`."""
    pids: list[int] = state["pids"]
    zk = ZooKeeperServer(directory / "zookeeper", host=host)
    zk.directory.mkdir(parents=True, exist_ok=True)
    zk.write_config()
    from kto_dev.zookeeper_server import zookeeper_home

    zk_log = directory / "zookeeper.log"
    env = {**os.environ, "ZOO_LOG_DIR": str(zk.directory), "ZOO_LOG4J_PROP": "WARN,CONSOLE"}
    pids.append(spawn([str(zookeeper_home() / "bin" / "zkServer.sh"), "start-foreground",
                       str(zk.config_path)], zk_log, env))  # fmt: skip
    wait_for(lambda: four_letter_word(zk.port, "ruok", host) == "imok", "ZooKeeper", zk_log)
    connect = f"{zk.connect_string}/kafka"
    state["zookeeper"] = connect
    from kafka_topic_operator.zk.client import ZkClient

    client = ZkClient(zk.connect_string)
    client.start()
    client.ensure_path("/kafka")
    client.stop()
    state["brokers"] = {}
    if kafka:
        ports = {b: free_port() for b in BROKERS}
        state["kafka"] = {
            str(b): {"port": ports[b], "rack": KAFKA_RACKS[b], "bootstrap": f"{host}:{ports[b]}",
                     **({} if host == LOOPBACK else {"host": host})}
            for b in BROKERS
        }  # fmt: skip
        # All three JVMs start at once, then each is waited for.
        for broker in BROKERS:
            pid = _spawn_kafka_broker(directory, state, broker)
            pids.append(pid)
            state["brokers"][str(broker)] = pid
        for broker in BROKERS:
            _wait_kafka_broker(directory, state, broker)
        state["bootstrap"] = ",".join(_kafka_spec(directory, state, b).bootstrap for b in BROKERS)
    else:
        for broker in BROKERS:
            pid = _start_broker(directory, connect, broker)
            pids.append(pid)
            state["brokers"][str(broker)] = pid


def _up_api_and_operator(
    directory: Path, kubeconfig: Path, state: dict[str, Any], apiserver: str
) -> None:
    """The Kubernetes API with the CRDs, then the operator on the cluster `state` has so far."""
    pids: list[int] = state["pids"]
    kubeconfig = kubeconfig.resolve()
    state["apiserver"] = apiserver
    if apiserver == "real":
        state["api"] = start_kube_apiserver(directory, kubeconfig, pids)
    else:
        state["api"] = start_emulator(directory, kubeconfig, pids)
    state["kubeconfig"] = str(kubeconfig)
    liveness, metrics = free_port(), free_port()
    operator_log = directory / "operator.log"
    if "kraft" in state:  # Kafka's Admin API; Kafka's controllers run the cluster
        kraft = state["kraft"]
        cluster = ["--bootstrap-servers", cluster_kraft.bootstrap(kraft)]
        log_dirs = [cluster_kraft.spec(directory, kraft, b).log_dir
                    for b in cluster_kraft.brokers_of(kraft)]  # fmt: skip
    else:
        kafka = "kafka" in state
        # Against real Kafka its own controller runs the cluster; the twin needs ours.
        cluster = ["--zookeeper", state["zookeeper"], *([] if kafka else ["--embedded-controller"])]
        log_dirs = [_kafka_spec(directory, state, b).log_dir if kafka else _log_dir(directory, b)
                    for b in BROKERS]  # fmt: skip
    pids.append(spawn(
        [sys.executable, "-m", "kafka_topic_operator.cli", "run", *cluster,
         "--liveness", f"http://127.0.0.1:{liveness}/healthz", "--metrics-port", str(metrics),
         # KafkaRebalances take partition sizes from the brokers' log directories.
         "--log-dirs", *map(str, log_dirs)],
        operator_log, {**os.environ, "KUBECONFIG": str(kubeconfig)},
    ))  # fmt: skip
    wait_for(lambda: urllib.request.urlopen(f"http://127.0.0.1:{liveness}/healthz", timeout=2),
             "the operator", operator_log)  # fmt: skip
    state["metrics"] = f"http://127.0.0.1:{metrics}/metrics"
    state["liveness"] = f"http://127.0.0.1:{liveness}/healthz"


def _up_kraft(
    directory: Path, state: dict[str, Any], mode: str | None, host: str = LOOPBACK
) -> None:
    """The KRaft nodes on `host`, all started at once (a quorum needs a majority; a split
    cluster's controller first, as its brokers wait for it), then waited for."""
    try:
        kraft = state["kraft"] = cluster_kraft.plan(directory, mode, host)
        state["nodes"] = {}
        since = time.time()
        brokers = cluster_kraft.brokers_of(kraft)
        for node in sorted(cluster_kraft.nodes_of(kraft), key=lambda n: (n in brokers, n)):
            pid = cluster_kraft.start_node(directory, kraft, node)
            state["pids"].append(pid)
            state["nodes"][str(node)] = pid
        cluster_kraft.wait_ready(
            directory, kraft, {int(n): pid for n, pid in state["nodes"].items()}, since=since
        )
    except kafka_broker.KafkaBrokerError as e:
        raise DevClusterError(str(e)) from None
    state["bootstrap"] = cluster_kraft.bootstrap(kraft)


def _log_dir(directory: Path, broker: int) -> Path:
    return directory / f"data-{broker}"


def _start_broker(directory: Path, connect: str, broker: int) -> int:
    return spawn([sys.executable, "-m", "kafka_topic_operator.cli", "dev-broker",
                  "--zookeeper", connect, "--id", str(broker), "--rack", f"rack-{broker}",
                  "--log-dir", str(_log_dir(directory, broker))],
                 directory / f"broker-{broker}.log")  # fmt: skip


def _start_twin_broker(directory: Path, connect: str, broker: int) -> int:
    """A dev broker started again: once its killed predecessor's registration has expired
    (before, it would find the znode taken and exit), and waited for until it registers."""
    try:
        kafka_broker.wait_unregistered(
            connect, broker, TWIN_SESSION_SECONDS + 10,
            waiting=lambda: print(f"waiting for broker {broker}'s previous registration to expire "
                                  f"(its ZooKeeper session: up to {TWIN_SESSION_SECONDS:g} s)"),
        )  # fmt: skip
        pid = _start_broker(directory, connect, broker)
        log = directory / f"broker-{broker}.log"
        kafka_broker.wait_registered(connect, broker, pid, log, STARTUP_TIMEOUT)
    except kafka_broker.KafkaBrokerError as e:
        raise DevClusterError(str(e)) from None
    return pid


def _kafka_spec(directory: Path, state: dict[str, Any], broker: int) -> kafka_broker.BrokerSpec:
    """A real broker as `up` made it: the same port, rack and log directory every start."""
    settings = state["kafka"][str(broker)]
    return kafka_broker.BrokerSpec(
        broker_id=broker,
        zookeeper=state["zookeeper"],
        directory=directory / f"kafka-{broker}",
        port=settings["port"],
        rack=settings["rack"],
        internal_replication_factor=len(BROKERS),
        host=settings.get("host", LOOPBACK),
    )


def _spawn_kafka_broker(directory: Path, state: dict[str, Any], broker: int) -> int:
    try:
        return kafka_broker.spawn(_kafka_spec(directory, state, broker)).pid
    except kafka_broker.KafkaBrokerError as e:
        raise DevClusterError(str(e)) from None


def _wait_kafka_broker(directory: Path, state: dict[str, Any], broker: int) -> None:
    pid = state["brokers"][str(broker)]
    try:
        kafka_broker.wait_until_ready(_kafka_spec(directory, state, broker), pid, STARTUP_TIMEOUT)
    except kafka_broker.KafkaBrokerError as e:
        raise DevClusterError(str(e)) from None


def stop_broker(directory: Path, broker: int, *, kill: bool = False) -> str:
    """Real Kafka: SIGTERM, so Kafka shuts down under control (its controller moves the broker's
    leaderships away first), or SIGKILL with `kill`. Dev brokers: SIGKILL, as a crash; either way
    a killed broker's session expires and the controller sees it die. A KRaft node as real
    Kafka (a killed broker is fenced when its heartbeats stop). Returns what was stopped: "broker"
    or "KRaft node"."""
    state = _running_state(directory)
    pid = _processes(state, broker)[str(broker)]
    if not alive(pid):
        raise DevClusterError(f"{_name(state)} {broker} is not running")
    if "kafka" in state or "kraft" in state:
        kafka_broker.terminate(pid, kill=kill)
        return _name(state)
    if alive(pid):
        os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    return _name(state)


def start_broker(directory: Path, broker: int) -> str:
    """Starts a stopped broker (or KRaft node) again, on its port and data, and waits for it;
    returns what was started: "broker" or "KRaft node"."""
    state = _running_state(directory)
    if alive(_processes(state, broker)[str(broker)]):
        raise DevClusterError(f"{_name(state)} {broker} is already running")
    if "kraft" in state:
        _start_kraft_node(directory, state, broker)
        return _name(state)
    if "kafka" in state:
        pid = _spawn_kafka_broker(directory, state, broker)
    else:
        pid = _start_twin_broker(directory, state["zookeeper"], broker)
    state["pids"] = [pid if p == state["brokers"][str(broker)] else p for p in state["pids"]]
    state["brokers"][str(broker)] = pid
    _state_file(directory).write_text(json.dumps(state, indent=2))
    if "kafka" in state:
        _wait_kafka_broker(directory, state, broker)
    return _name(state)


def _start_kraft_node(directory: Path, state: dict[str, Any], node: int) -> None:
    """The node on its port, roles and data (formatted before its first start only), waited for
    until it does its part again."""
    kraft, before = state["kraft"], state["nodes"][str(node)]
    since = time.time()
    try:
        pid = cluster_kraft.start_node(directory, kraft, node)
        state["pids"] = [pid if p == before else p for p in state["pids"]]
        state["nodes"][str(node)] = pid
        _state_file(directory).write_text(json.dumps(state, indent=2))
        cluster_kraft.wait_ready(directory, kraft, {node: pid}, since=since)
    except kafka_broker.KafkaBrokerError as e:
        raise DevClusterError(str(e)) from None


def _processes(state: dict[str, Any], broker: int) -> dict[str, int]:
    """The cluster's brokers (or KRaft nodes) by id, once `broker` is known to be one of them."""
    processes: dict[str, int] = state["nodes" if "kraft" in state else "brokers"]
    if str(broker) not in processes:
        raise DevClusterError(f"no {_name(state)} {broker} in this dev cluster "
                              f"(its {_name(state)}s: {', '.join(sorted(processes))})")  # fmt: skip
    return processes


def _name(state: dict[str, Any]) -> str:
    return "KRaft node" if "kraft" in state else "broker"


def _running_state(directory: Path) -> dict[str, Any]:
    state_path = _state_file(directory)
    if not state_path.exists():
        raise DevClusterError(f"no dev cluster in {directory}; start one with `kto dev-cluster up`")
    state: dict[str, Any] = json.loads(state_path.read_text())
    return state


# What `up` keeps in its directory: removed by `down --reset` (and nothing else there).
DATA = ("zookeeper", "data-*", "kafka-*", "kraft-*", "apiserver.json", "kube-apiserver",
        cluster_kubernetes.NODE_FOLDER, "*.log", "state.json")  # fmt: skip


def down(directory: Path, *, reset: bool = False) -> bool:
    """Stops the cluster (False: none was running); with `reset`, removes its data too."""
    stopped = _down(directory)
    if reset:
        for pattern in DATA:
            for path in directory.glob(pattern):
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink()
    return stopped


def _down(directory: Path) -> bool:
    state_path = _state_file(directory)
    if not state_path.exists():
        return False
    state = json.loads(state_path.read_text())
    if "kubernetes" in state:  # the node first: the operator, Kafka's client, goes with it
        try:
            cluster_kubernetes.stop_node(directory)
        finally:
            _stop_kafka(state)
        state_path.unlink()
        return True
    if "kraft" in state:
        _stop_kraft(state)
    elif "kafka" in state:  # Kafka's brokers shut down under control one at a time, as before
        stop(state["pids"])
    else:
        # Dev brokers first and together, while the operator's embedded controller is there to
        # grant their controlled shutdowns (stopped after it, each retried for seconds).
        brokers = [int(pid) for pid in state["brokers"].values()]
        stop_together(brokers)
        stop([pid for pid in state["pids"] if pid not in brokers])
    state_path.unlink()
    return True


def _stop_kafka(state: dict[str, Any], *, failed: bool = False) -> None:
    """Real Kafka on a Kubernetes node (no API or operator among its processes); `failed`: a
    start-up that failed (KRaft nodes killed)."""
    if "kraft" in state:
        _stop_kraft(state, kill_nodes=failed)
    else:
        stop(state["pids"])


def _stop_kraft(state: dict[str, Any], *, kill_nodes: bool = False) -> None:
    """The operator first, then every KRaft node at once (one by one, the last ones would wait
    on a quorum already gone; `kill_nodes`: SIGKILL, a start-up that failed), then the API."""
    nodes = [int(pid) for pid in state.get("nodes", {}).values()]
    others = [pid for pid in state["pids"] if pid not in nodes]
    stop(others[-1:])
    if kill_nodes:
        for pid in nodes:
            kafka_broker.terminate(pid, kill=True, timeout=10)
    else:
        stop_together(nodes)
    stop(others[:-1])


def status(directory: Path) -> dict[str, Any] | None:
    state_path = _state_file(directory)
    if not state_path.exists():
        return None
    state: dict[str, Any] = json.loads(state_path.read_text())
    state["alive"] = {str(pid): alive(pid) for pid in state["pids"]}
    if "kubernetes" in state:
        cluster_kubernetes.add_status(directory, state)
    if "kraft" in state:
        running = {int(n) for n, pid in state["nodes"].items() if state["alive"].get(str(pid))}
        state["controller"] = cluster_kraft.quorum_leader(directory, state["kraft"], running)
        return state
    state["controller"] = _controller(state["zookeeper"]) if state["alive"].get(
        str(state["pids"][0])) else None  # fmt: skip
    return state


def _controller(zookeeper: str) -> int | None:
    """The broker `/controller` names (Kafka's, or ours in the twin), None when there is none."""
    from kafka_topic_operator.zk.client import ZkClient, ZkConnectionError

    client = ZkClient(zookeeper)
    try:
        client.start(timeout=5.0)
    except ZkConnectionError:
        return None
    try:
        node = client.get("/controller")
        return None if node is None else int(json.loads(node.data)["brokerid"])
    except (ValueError, KeyError, TypeError):
        return None
    finally:
        client.stop()


def status_lines(state: dict[str, Any]) -> list[str]:
    """What `status` prints: the processes, then each broker with its address."""
    alive = sum(state["alive"].values())

    # `up` starts ZooKeeper (or the KRaft nodes) first, the API server and the operator last.
    pids = state["pids"]
    if "kubernetes" in state:  # the node's processes and the operator's pod around Kafka's
        kafka = [f"  {cluster_kraft.summary(state['kraft'])}" if "kraft" in state
                 else f"  ZooKeeper {state['zookeeper']}: {_running(state, pids[0])}"]  # fmt: skip
        return cluster_kubernetes.status_lines(state, kafka + _broker_lines(state))
    api_name = "kube-apiserver" if state.get("apiserver") == "real" else "API emulator"
    lines = [
        f"dev cluster: {alive} of {len(state['alive'])} processes running",
        f"  {cluster_kraft.summary(state['kraft'])}"
        if "kraft" in state
        else f"  ZooKeeper {state['zookeeper']}: {_running(state, pids[0])}",
        f"  {api_name} {state['api']}: {_running(state, pids[-2])}",
        f"  operator (metrics {state.get('metrics')}, liveness {state.get('liveness')}): "
        f"{_running(state, pids[-1])}",
    ]
    return lines + _broker_lines(state)


def _running(state: dict[str, Any], pid: int) -> str:
    return f"running (pid {pid})" if state["alive"].get(str(pid)) else "stopped"


def _broker_lines(state: dict[str, Any]) -> list[str]:
    """Each broker (or KRaft node) with its address, whether it runs, and the controller."""
    if "kraft" in state:
        return cluster_kraft.node_lines(state)
    kind = "Kafka broker" if "kafka" in state else "dev broker"
    lines = []
    for broker, pid in sorted(state["brokers"].items()):
        settings = state.get("kafka", {}).get(broker)
        where = f" {settings['bootstrap']} rack {settings['rack']}" if settings else ""
        role = ", controller" if state.get("controller") == int(broker) else ""
        lines.append(f"  {kind} {broker}{where}: {_running(state, pid)}{role}")
    if "kafka" not in state:
        lines.append("  controller: this project's (embedded in the operator)")
    return lines


def _print_hints(state: dict[str, Any], directory: Path) -> None:
    """What `up` prints: where things are, and commands that work as printed."""
    kto = Path(sys.executable).parent / "kto"
    dev_cluster = f"{kto} dev-cluster" + (
        "" if directory == DEFAULT_DIR else f" --dir {shlex.quote(str(directory))}"
    )
    if "kubernetes" in state:
        cluster_kubernetes.print_hints(state, dev_cluster)
        return
    if "kraft" in state:
        kraft = state["kraft"]
        print(f"dev cluster up: KRaft cluster {kraft['cluster_id']} ({kraft['mode']} mode, no "
              f"ZooKeeper), API {state['api']}")  # fmt: skip
        print(f"  Apache Kafka {kraft['version']} brokers: {state['bootstrap']}")
    else:
        print(f"dev cluster up: ZooKeeper {state['zookeeper']}, API {state['api']}")
        if "kafka" in state:
            print(f"  Apache Kafka {KAFKA_VERSION} brokers: {state['bootstrap']}")
    print(f"  operator metrics {state['metrics']}, liveness {state['liveness']}")
    print(f"  export KUBECONFIG={state['kubeconfig']}")
    print(f"  {kubectl()} get kt    # KafkaTopics")
    if "kraft" in state:
        print(f"  {shlex.join(cluster_kraft.topic_tool_command(state['kraft']))}"
              "    # Kafka's kafka-topics --describe")  # fmt: skip
        print(f"  {dev_cluster} status   # the nodes, their roles, the quorum leader")
    else:
        print(f"  {kto} describe --zookeeper {state['zookeeper']}")
    print(f"  {dev_cluster} down   # stops it (--reset: and removes its data)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.kraft and args.kafka:
        parser.error("--kraft and --kafka exclude each other: --kafka runs Kafka "
                     f"{KAFKA_VERSION} brokers on ZooKeeper, --kraft Kafka {KRAFT_KAFKA_VERSION} "
                     "nodes without it")  # fmt: skip
    if args.kraft_mode is not None and not args.kraft:
        parser.error("--kraft-mode goes with --kraft")
    if args.kubernetes and args.apiserver is not None:
        parser.error("--kubernetes and --apiserver exclude each other: the Kubernetes node runs "
                     "its own kube-apiserver")  # fmt: skip
    if args.kubernetes and args.kafka:
        parser.error("--kubernetes and --kafka exclude each other: with --kubernetes the brokers "
                     f"are always real Apache Kafka ({KAFKA_VERSION} on ZooKeeper, or "
                     f"{KRAFT_KAFKA_VERSION} with --kraft)")  # fmt: skip
    try:
        if args.action == "up":
            state = up(args.dir, args.kubeconfig, kafka=args.kafka,
                       apiserver=args.apiserver or "emulator", kraft=args.kraft,
                       kraft_mode=args.kraft_mode, kubernetes=args.kubernetes)  # fmt: skip
            _print_hints(state, args.dir)
        elif args.action == "down":
            stopped = down(args.dir, reset=args.reset)
            print("dev cluster stopped" if stopped else f"no dev cluster in {args.dir}")
            if args.reset:
                print(f"its data removed from {args.dir}: the next `up` starts empty")
        elif args.action in ("stop-broker", "start-broker"):
            if args.id is None:
                raise DevClusterError(f"{args.action} needs --id")
            if args.action == "stop-broker":
                what = stop_broker(args.dir, args.id, kill=args.kill)
            else:
                what = start_broker(args.dir, args.id)
            print(f"{what} {args.id} {'stopped' if args.action == 'stop-broker' else 'started'}")
        else:
            found = status(args.dir)
            if found is None:
                print(f"no dev cluster in {args.dir}")
                return 1
            print("\n".join(status_lines(found)))
            return 0 if all(found["alive"].values()) else 1
    except DevClusterError as e:
        print(f"kto dev-cluster: {e}", file=sys.stderr)
        return 1
    return 0
