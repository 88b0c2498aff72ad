"""`kto dev-cluster up|down|status`: the standalone dev cluster, in the background.

A ZooKeeper server (Debian's package), three brokers on three racks, the Kubernetes API emulator
(or, with `--apiserver real`, a real kube-apiserver and etcd built by `make kube-apiserver`)
with the CRDs, and the operator; `up` writes a kubeconfig so real kubectl works against it.
With `--kafka` the brokers are real Apache Kafka brokers (ids 0, 1, 2; racks a, b, c) and Kafka's
own controller runs the cluster; without it, dev brokers and `kto run --embedded-controller`
(this project's controller): the light digital twin. A dev and test tool: state, data and logs
live in one directory.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from kto_dev.apache_kafka import broker as kafka_broker
from kto_dev.apache_kafka.broker import alive
from kto_dev.apache_kafka.distribution import KAFKA_VERSION
from kto_dev.zookeeper_server import ZooKeeperServer, four_letter_word, free_port

CRDS = Path(__file__).resolve().parents[2] / "crds"
BROKERS = (0, 1, 2)
KAFKA_RACKS = ("a", "b", "c")
STARTUP_TIMEOUT = 60.0
# A dev broker's ZooKeeper session timeout (kto dev-broker --session-timeout's default): how long
# a killed one's registration lingers.
TWIN_SESSION_SECONDS = 18.0


class DevClusterError(RuntimeError):
    pass


def build_parser(prog: str = "kto dev-cluster") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Start, stop or inspect the standalone dev cluster (ZooKeeper, three brokers, "
        "the Kubernetes API emulator and the operator): real Apache Kafka brokers with Kafka's own "
        "controller (--kafka), or dev brokers with this project's controller.",
    )
    parser.add_argument("action", choices=["up", "down", "status", "stop-broker", "start-broker"])
    parser.add_argument(
        "--reset",
        action="store_true",
        help="down: also remove the cluster's data (ZooKeeper, brokers' logs, the API emulator's "
        "saved resources), so that the next `up` starts empty",
    )
    parser.add_argument("--id", type=int, choices=BROKERS, help="the broker to stop or start")
    parser.add_argument(
        "--kafka",
        action="store_true",
        help="up: real Apache Kafka brokers and Kafka's controller instead of the dev brokers",
    )
    parser.add_argument(
        "--apiserver",
        choices=["emulator", "real"],
        default="emulator",
        help="up: the Kubernetes API emulator (fast, the default) or a real kube-apiserver with "
        "etcd (built once by `make kube-apiserver`)",
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
        default=Path(".kto") / "dev-cluster",
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


def _spawn(args: Sequence[str], log: Path, env: dict[str, str] | None = None) -> int:
    with log.open("ab") as out:
        process = subprocess.Popen(
            list(args),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # outlives `kto dev-cluster up`
        )
    return process.pid


def _wait(check: Any, what: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        try:
            if check():
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise DevClusterError(f"{what} did not come up; its log ({log}) ends:\n{tail}")
        time.sleep(0.2)


def _http(url: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method="GET" if body is None else "POST",
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


def up(
    directory: Path, kubeconfig: Path, *, kafka: bool = False, apiserver: str = "emulator"
) -> dict[str, Any]:
    state_path = _state_file(directory)
    if state_path.exists() and any(alive(p) for p in json.loads(state_path.read_text())["pids"]):
        raise DevClusterError(f"a dev cluster is already running from {directory}; "
                              "stop it with `kto dev-cluster down`")  # fmt: skip
    if apiserver == "real":  # before anything starts: a missing build is one line, at once
        from kto_dev.kube_apiserver.build import KubeApiServerBuildError, require_binaries

        try:
            require_binaries()
        except KubeApiServerBuildError as e:
            raise DevClusterError(str(e)) from None
    directory.mkdir(parents=True, exist_ok=True)
    python = sys.executable
    pids: list[int] = []
    state: dict[str, Any] = {"pids": pids}
    try:
        zk = ZooKeeperServer(directory / "zookeeper")
        zk.directory.mkdir(parents=True, exist_ok=True)
        zk.write_config()
        from kto_dev.zookeeper_server import zookeeper_home

        zk_log = directory / "zookeeper.log"
        env = {**os.environ, "ZOO_LOG_DIR": str(zk.directory), "ZOO_LOG4J_PROP": "WARN,CONSOLE"}
        pids.append(_spawn([str(zookeeper_home() / "bin" / "zkServer.sh"), "start-foreground",
                            str(zk.config_path)], zk_log, env))  # fmt: skip
        _wait(lambda: four_letter_word(zk.port, "ruok") == "imok", "ZooKeeper", zk_log)
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
                str(b): {"port": ports[b], "rack": KAFKA_RACKS[b],
                         "bootstrap": f"127.0.0.1:{ports[b]}"}
                for b in BROKERS
            }  # fmt: skip
            # All three JVMs start at once, then each is waited for.
            for broker in BROKERS:
                pid = _spawn_kafka_broker(directory, state, broker)
                pids.append(pid)
                state["brokers"][str(broker)] = pid
            for broker in BROKERS:
                _wait_kafka_broker(directory, state, broker)
            state["bootstrap"] = ",".join(
                _kafka_spec(directory, state, b).bootstrap for b in BROKERS
            )
        else:
            for broker in BROKERS:
                pid = _start_broker(directory, connect, broker)
                pids.append(pid)
                state["brokers"][str(broker)] = pid
        kubeconfig = kubeconfig.resolve()
        state["apiserver"] = apiserver
        if apiserver == "real":
            state["api"] = _start_kube_apiserver(directory, kubeconfig, pids)
        else:
            state["api"] = _start_emulator(directory, kubeconfig, pids)
        state["kubeconfig"] = str(kubeconfig)
        liveness, metrics = free_port(), free_port()
        operator_log = directory / "operator.log"
        # Against real Kafka its own controller runs the cluster; the twin needs ours.
        controller = [] if kafka else ["--embedded-controller"]
        log_dirs = [
            str(_kafka_spec(directory, state, b).log_dir if kafka else _log_dir(directory, b))
            for b in BROKERS
        ]
        pids.append(_spawn(
            [python, "-m", "kafka_topic_operator.cli", "run", "--zookeeper", connect,
             *controller, "--liveness", f"http://127.0.0.1:{liveness}/healthz",
             "--metrics-port", str(metrics),
             # KafkaRebalances take partition sizes from the brokers' log directories.
             "--log-dirs", *log_dirs],
            operator_log, {**os.environ, "KUBECONFIG": str(kubeconfig)},
        ))  # fmt: skip
        _wait(lambda: urllib.request.urlopen(f"http://127.0.0.1:{liveness}/healthz", timeout=2),
              "the operator", operator_log)  # fmt: skip
        state["metrics"] = f"http://127.0.0.1:{metrics}/metrics"
        state["liveness"] = f"http://127.0.0.1:{liveness}/healthz"
    except BaseException:
        _stop(pids)
        raise
    state_path.write_text(json.dumps(state, indent=2))
    return state


def _start_emulator(directory: Path, kubeconfig: Path, pids: list[int]) -> str:
    api_port = free_port()
    api_log = directory / "apiserver.log"
    pids.append(_spawn([sys.executable, "-m", "kube_api_emulator", "--port",
                        str(api_port), "--state-file", str(directory / "apiserver.json"),
                        "--kubeconfig", str(kubeconfig)], api_log))  # fmt: skip
    api = f"http://127.0.0.1:{api_port}"
    _wait(lambda: _http(api + "/version"), "the Kubernetes API emulator", api_log)
    for crd_file in sorted(CRDS.glob("*.yaml")):
        crd = yaml.safe_load(crd_file.read_text())
        try:
            _http(api + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        except urllib.error.HTTPError as e:
            if e.code != 409:  # already there from a saved state
                raise
    return api


def _start_kube_apiserver(directory: Path, kubeconfig: Path, pids: list[int]) -> str:
    """etcd and kube-apiserver, kept in `kube-apiserver/` (data, keys and ports) across `up`s;
    the CRDs applied as kubectl would, waiting until they are served."""
    from kto_dev.kube_apiserver.launcher import KubeApiServer, KubeApiServerError

    try:
        server = KubeApiServer(directory / "kube-apiserver")
        try:
            server.start()
        finally:
            pids.extend(server.pids)
    except KubeApiServerError as e:
        raise DevClusterError(str(e)) from None
    server.write_kubeconfig(kubeconfig)
    log = directory / "kubectl.log"
    with log.open("ab") as out:
        applied = subprocess.run([_kubectl(), f"--kubeconfig={kubeconfig}", "apply", "-f",
                                  str(CRDS)], stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
        established = subprocess.run([_kubectl(), f"--kubeconfig={kubeconfig}", "wait",
                                      "--for=condition=Established", "--timeout=60s", "-f",
                                      str(CRDS)], stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    if applied.returncode or established.returncode:
        raise DevClusterError(f"the CRDs were not installed; see {log}")
    return server.url


def _log_dir(directory: Path, broker: int) -> Path:
    return directory / f"data-{broker}"


def _start_broker(directory: Path, connect: str, broker: int) -> int:
    return _spawn([sys.executable, "-m", "kafka_topic_operator.cli", "dev-broker",
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


def stop_broker(directory: Path, broker: int, *, kill: bool = False) -> None:
    """Real Kafka: SIGTERM, so Kafka shuts down under control (its controller moves the broker's
    leaderships away first), or SIGKILL with `kill`. Dev brokers: SIGKILL, as a crash; either way
    a killed broker's session expires and the controller sees it die."""
    state = _running_state(directory)
    pid = state["brokers"][str(broker)]
    if not alive(pid):
        raise DevClusterError(f"broker {broker} is not running")
    if "kafka" in state:
        kafka_broker.terminate(pid, kill=kill)
        return
    if alive(pid):
        os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def start_broker(directory: Path, broker: int) -> None:
    state = _running_state(directory)
    if alive(state["brokers"][str(broker)]):
        raise DevClusterError(f"broker {broker} is already running")
    if "kafka" in state:
        pid = _spawn_kafka_broker(directory, state, broker)
    else:
        pid = _start_twin_broker(directory, state["zookeeper"], broker)
    state["pids"] = [pid if p == state["brokers"][str(broker)] else p for p in state["pids"]]
    state["brokers"][str(broker)] = pid
    _state_file(directory).write_text(json.dumps(state, indent=2))
    if "kafka" in state:
        _wait_kafka_broker(directory, state, broker)


def _running_state(directory: Path) -> dict[str, Any]:
    state_path = _state_file(directory)
    if not state_path.exists():
        raise DevClusterError(f"no dev cluster in {directory}; start one with `kto dev-cluster up`")
    state: dict[str, Any] = json.loads(state_path.read_text())
    return state


def _stop(pids: Sequence[int]) -> None:
    for pid in reversed(pids):  # the operator first, ZooKeeper last
        _stop_together([pid])


def _stop_together(pids: Sequence[int]) -> None:
    """SIGTERM to each, then up to 30 s for all of them to end, then SIGKILL."""
    running = [pid for pid in pids if alive(pid)]
    for pid in running:
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in running) and time.monotonic() < deadline:
        for pid in running:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)  # reaps it when it is our child
        time.sleep(0.1)
    for pid in running:
        if alive(pid):
            os.killpg(pid, signal.SIGKILL)


# What `up` keeps in its directory: removed by `down --reset` (and nothing else there).
DATA = ("zookeeper", "data-*", "kafka-*", "apiserver.json", "kube-apiserver", "*.log", "state.json")


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
    if "kafka" in state:  # Kafka's brokers shut down under control one at a time, as before
        _stop(state["pids"])
    else:
        # Dev brokers first and together, while the operator's embedded controller is there to
        # grant their controlled shutdowns (stopped after it, each retried for seconds).
        brokers = [int(pid) for pid in state["brokers"].values()]
        _stop_together(brokers)
        _stop([pid for pid in state["pids"] if pid not in brokers])
    state_path.unlink()
    return True


def status(directory: Path) -> dict[str, Any] | None:
    state_path = _state_file(directory)
    if not state_path.exists():
        return None
    state: dict[str, Any] = json.loads(state_path.read_text())
    state["alive"] = {str(pid): alive(pid) for pid in state["pids"]}
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


def _kubectl() -> str:
    """The project's kubectl (`make setup` fetches it), else whichever is on the PATH."""
    fetched = Path(__file__).resolve().parents[2] / ".kto" / "bin" / "kubectl"
    return str(fetched) if fetched.exists() else "kubectl"


def status_lines(state: dict[str, Any]) -> list[str]:
    """What `status` prints: the processes, then each broker with its address."""
    alive = sum(state["alive"].values())

    def running(pid: int) -> str:
        return f"running (pid {pid})" if state["alive"].get(str(pid)) else "stopped"

    # `up` starts ZooKeeper first, the API server and the operator last.
    pids = state["pids"]
    api_name = "kube-apiserver" if state.get("apiserver") == "real" else "API emulator"
    lines = [
        f"dev cluster: {alive} of {len(state['alive'])} processes running",
        f"  ZooKeeper {state['zookeeper']}: {running(pids[0])}",
        f"  {api_name} {state['api']}: {running(pids[-2])}",
        f"  operator (metrics {state.get('metrics')}, liveness {state.get('liveness')}): "
        f"{running(pids[-1])}",
    ]
    kind = "Kafka broker" if "kafka" in state else "dev broker"
    for broker, pid in sorted(state["brokers"].items()):
        settings = state.get("kafka", {}).get(broker)
        where = f" 127.0.0.1:{settings['port']} rack {settings['rack']}" if settings else ""
        role = ", controller" if state.get("controller") == int(broker) else ""
        lines.append(f"  {kind} {broker}{where}: {running(pid)}{role}")
    if "kafka" not in state:
        lines.append("  controller: this project's (embedded in the operator)")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.action == "up":
            state = up(args.dir, args.kubeconfig, kafka=args.kafka, apiserver=args.apiserver)
            print(f"dev cluster up: ZooKeeper {state['zookeeper']}, API {state['api']}")
            if args.kafka:
                print(f"  Apache Kafka {KAFKA_VERSION} brokers: {state['bootstrap']}")
            kto = Path(sys.executable).parent / "kto"
            print(f"  operator metrics {state['metrics']}, liveness {state['liveness']}")
            print(f"  export KUBECONFIG={state['kubeconfig']}")
            print(f"  {_kubectl()} get kt    # KafkaTopics")
            print(f"  {kto} describe --zookeeper {state['zookeeper']}")
            print(f"  {kto} dev-cluster down   # stops it (--reset: and removes its data)")
        elif args.action == "down":
            stopped = down(args.dir, reset=args.reset)
            print("dev cluster stopped" if stopped else f"no dev cluster in {args.dir}")
            if args.reset:
                print(f"its data removed from {args.dir}: the next `up` starts empty")
        elif args.action in ("stop-broker", "start-broker"):
            if args.id is None:
                raise DevClusterError(f"{args.action} needs --id")
            if args.action == "stop-broker":
                stop_broker(args.dir, args.id, kill=args.kill)
            else:
                start_broker(args.dir, args.id)
            print(f"broker {args.id} {'stopped' if args.action == 'stop-broker' else 'started'}")
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
