"""`kto dev-cluster up --kraft`: Apache Kafka 4 nodes in KRaft mode and no ZooKeeper, the
operator on their Admin API, driven with real kubectl and seen through a real Kafka client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kto_testing import eventually

from kto_dev.apache_kafka.broker import alive
from kto_dev.apache_kafka.distribution import KRAFT_KAFKA_VERSION

pytestmark = [pytest.mark.kafka, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[1]
KUBECTL = ROOT / ".kto" / "bin" / "kubectl"
RACKS = {0: "a", 1: "b", 2: "c"}
READY = '{.status.conditions[?(@.type=="Ready")].status}'

TOPIC = """
apiVersion: kto.dev/v1
kind: KafkaTopic
metadata:
  name: payments
spec:
  partitions: 6
  replicas: 3
  config:
    retention.ms: 3600000
    min.insync.replicas: 2
"""


def kto(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    # Generous: three or four JVMs start (and format their logs) on a machine shared with others.
    return subprocess.run([sys.executable, "-m", "kafka_topic_operator.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=420, env=env)  # fmt: skip


def state_of(directory: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads(
        (directory / ".kto" / "dev-cluster" / "state.json").read_text()
    )
    return state


def cmdline(pid: int) -> list[str]:
    return [a.decode() for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]


def properties(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def left_running(directory: Path) -> list[str]:
    """The processes still running on `directory`'s files: Kafka's JVMs, the API emulator, the
    operator."""
    found = subprocess.run(["pgrep", "-af", str(directory)], capture_output=True, text=True)
    return found.stdout.splitlines()


def kafka_id(uuid: Any) -> str:
    """confluent-kafka prints a Uuid in standard base64; Kafka (and status.topicId) in the URL-safe
    alphabet."""
    return str(uuid).replace("+", "-").replace("/", "_")


class Cluster:
    def __init__(self, directory: Path, started: subprocess.CompletedProcess[str]) -> None:
        self.directory = directory
        self.started = started
        self.state = state_of(directory)
        self.env = {**os.environ, "KUBECONFIG": str(directory / ".kto" / "kubeconfig")}
        self.topic_id: str | None = None

    def kto(self, *args: str) -> subprocess.CompletedProcess[str]:
        return kto(*args, cwd=self.directory)

    def kubectl(self, *args: str, stdin: str | None = None) -> str:
        done = subprocess.run([str(KUBECTL), *args], input=stdin, env=self.env,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    def topic(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self.kubectl("get", "kt", name, "-o", "json"))
        return found

    def status_lines(self) -> list[str]:
        return self.kto("dev-cluster", "status").stdout.splitlines()

    def node_dir(self, node: int) -> Path:
        return self.directory / ".kto" / "dev-cluster" / f"kraft-{node}"


def admin(bootstrap: str) -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})


def described(bootstrap: str, topic: str) -> Any | None:
    """The topic as DescribeTopics gives it, None while the broker asked does not know it (or
    has not answered within 30 s, the machine being busy)."""
    from confluent_kafka import KafkaException, TopicCollection

    client = admin(bootstrap)  # kept until the answer: a client destroyed fails its futures
    try:
        return client.describe_topics(TopicCollection([topic]))[topic].result(timeout=30)
    except (KafkaException, TimeoutError):
        return None


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    subprocess.run(["bash", str(ROOT / "scripts" / "fetch-k8s-binaries.sh")], check=True)
    directory = Path(tmp_path_factory.mktemp("dev-cluster-kraft"))
    started = kto("dev-cluster", "up", "--kraft", cwd=directory)
    assert started.returncode == 0, started.stderr
    cluster = Cluster(directory, started)
    # Applied here, not only by the test that checks it: make test's workers may split this
    # module's tests, each worker with a cluster of its own, and the later tests need payments.
    cluster.kubectl("apply", "-f", "-", stdin=TOPIC)
    eventually(lambda: cluster.kubectl("get", "kt", "payments", "-o", f"jsonpath={READY}")
               == "True", "payments Ready", timeout=120)  # fmt: skip
    cluster.topic_id = cluster.topic("payments")["status"]["topicId"]
    yield cluster
    kto("dev-cluster", "down", cwd=directory)


def test_a_split_clusters_nodes_listen_only_for_their_role(tmp_path: Path) -> None:
    from kto_dev.apache_kafka.kraft import KRaftNodeSpec, server_properties

    voters = "3@127.0.0.1:9093"
    controller = KRaftNodeSpec(node_id=3, directory=tmp_path, port=9093, controller_port=9093,
                               voters=voters, cluster_id="x", roles="controller")  # fmt: skip
    broker = KRaftNodeSpec(node_id=0, directory=tmp_path, port=9092, controller_port=0,
                           voters=voters, cluster_id="x", rack="a", roles="broker")  # fmt: skip
    assert controller.ports == [9093] and broker.ports == [9092]
    only_controller = server_properties(controller)
    assert only_controller["process.roles"] == "controller"
    assert only_controller["listeners"] == "CONTROLLER://127.0.0.1:9093"
    assert "advertised.listeners" not in only_controller
    assert "inter.broker.listener.name" not in only_controller
    only_broker = server_properties(broker)
    assert only_broker["process.roles"] == "broker"
    assert (
        only_broker["listeners"]
        == only_broker["advertised.listeners"]
        == ("PLAINTEXT://127.0.0.1:9092")
    )
    # A broker reaches the quorum through the controllers' listener, named and mapped.
    assert only_broker["controller.listener.names"] == "CONTROLLER"
    assert only_broker["controller.quorum.voters"] == voters


def test_a_plan_on_a_nodes_host_address_names_it_everywhere(tmp_path: Path) -> None:
    """`up --kubernetes --kraft`: every listener and voter on the node's host address; a plan on
    loopback is as it always was."""
    from kto_dev import cluster_kraft

    for mode in cluster_kraft.MODES:
        kraft = cluster_kraft.plan(tmp_path, mode, "10.213.0.5")
        assert kraft["host"] == "10.213.0.5"
        controllers = [n for n in kraft["nodes"].values() if "controller_port" in n]
        assert kraft["voters"].count("@10.213.0.5:") == len(controllers)
        assert all(b.startswith("10.213.0.5:") for b in cluster_kraft.bootstrap(kraft).split(","))
        for node in cluster_kraft.nodes_of(kraft):
            assert cluster_kraft.spec(tmp_path, kraft, node).host == "10.213.0.5"
    loopback = cluster_kraft.plan(tmp_path, None)
    assert "host" not in loopback and "@127.0.0.1:" in loopback["voters"]
    assert cluster_kraft.spec(tmp_path, loopback, 0).host == "127.0.0.1"


def test_kraft_and_kafka_exclude_each_other(tmp_path: Path) -> None:
    both = kto("dev-cluster", "up", "--kraft", "--kafka", cwd=tmp_path)
    assert both.returncode == 2
    assert both.stderr.splitlines()[-1] == (
        "kto dev-cluster: error: --kraft and --kafka exclude each other: --kafka runs Kafka "
        f"3.9.2 brokers on ZooKeeper, --kraft Kafka {KRAFT_KAFKA_VERSION} nodes without it"
    )
    alone = kto("dev-cluster", "up", "--kraft-mode", "split", cwd=tmp_path)
    assert alone.returncode == 2
    assert alone.stderr.splitlines()[-1] == "kto dev-cluster: error: --kraft-mode goes with --kraft"
    assert not (tmp_path / ".kto").exists()


def test_without_java_or_jars_up_says_what_to_do_and_starts_nothing(tmp_path: Path) -> None:
    no_java = kto("dev-cluster", "up", "--kraft", cwd=tmp_path,
                  env={**os.environ, "JAVA_HOME": str(tmp_path / "no-java")})  # fmt: skip
    assert (no_java.returncode, no_java.stderr) == (
        1, "kto dev-cluster: Java not found: install Java 17 (apt-get install openjdk-17-jre)\n",
    )  # fmt: skip
    cache = tmp_path / "empty-cache"
    no_jars = kto("dev-cluster", "up", "--kraft", cwd=tmp_path,
                  env={**os.environ, "KTO_KAFKA_CACHE": str(cache)})  # fmt: skip
    assert (no_jars.returncode, no_jars.stderr) == (
        1, f"kto dev-cluster: Kafka {KRAFT_KAFKA_VERSION} jars not found in "
        f"{cache / KRAFT_KAFKA_VERSION / 'libs'}: run `make kafka`\n",
    )  # fmt: skip
    assert not (tmp_path / ".kto").exists()


def formatted(directory: Path, node: int, cluster_id: str, node_id: int | None = None) -> None:
    """A node's log directory as if formatted (its meta.properties only)."""
    data = directory / ".kto" / "dev-cluster" / f"kraft-{node}" / "data"
    data.mkdir(parents=True)
    (data / "meta.properties").write_text(
        f"node.id={node if node_id is None else node_id}\ndirectory.id=Ub5IgMT4ZnbBWpB7_Wq0Ww\n"
        f"version=1\ncluster.id={cluster_id}\n"
    )


def test_data_of_another_mode_or_cluster_is_refused_before_anything_starts(tmp_path: Path) -> None:
    formatted(tmp_path, 3, "9r1ap0cqRuefJKE5gYPojw")  # a split cluster's controller
    combined = kto("dev-cluster", "up", "--kraft", "--kraft-mode", "combined", cwd=tmp_path)
    assert (combined.returncode, combined.stderr) == (
        1, f"kto dev-cluster: {Path('.kto') / 'dev-cluster'} holds a split-mode KRaft cluster's "
        "data: start it with --kraft-mode split, or remove it first with "
        "`kto dev-cluster down --reset`\n",
    )  # fmt: skip
    formatted(tmp_path, 0, "otdmoFhjSF-SfBVT8vvmEw")
    mixed = kto("dev-cluster", "up", "--kraft", cwd=tmp_path)
    assert mixed.returncode == 1
    assert "is not one cluster's (cluster ids 9r1ap0cqRuefJKE5gYPojw, otdmoFhjSF-SfBVT8vvmEw)" in (
        mixed.stderr
    )
    assert not (tmp_path / ".kto" / "dev-cluster" / "state.json").exists()
    assert left_running(tmp_path) == []


def test_a_node_that_exits_is_reported_in_one_line_with_kafkas_reason(tmp_path: Path) -> None:
    # Node 1's data says it is node 7: Kafka refuses to start on it.
    formatted(tmp_path, 1, "9r1ap0cqRuefJKE5gYPojw", node_id=7)
    failed = kto("dev-cluster", "up", "--kraft", cwd=tmp_path)
    assert failed.returncode == 1
    log = tmp_path / ".kto" / "dev-cluster" / "kraft-1" / "server.log"
    assert failed.stderr.startswith("kto dev-cluster: KRaft node 1 exited during start-up: ")
    assert "Stored node id 7 doesn't match previous node id 1" in failed.stderr
    assert failed.stderr.endswith(f"(see {log})\n") and failed.stderr.count("\n") == 1
    # The nodes that did start were stopped; nothing is left, and no state says otherwise.
    assert left_running(tmp_path) == []
    assert not (tmp_path / ".kto" / "dev-cluster" / "state.json").exists()


def test_split_mode_brokers_and_a_controller(tmp_path: Path) -> None:
    subprocess.run(["bash", str(ROOT / "scripts" / "fetch-k8s-binaries.sh")], check=True)
    started = kto("dev-cluster", "up", "--kraft", "--kraft-mode", "split", cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    cluster = Cluster(tmp_path, started)
    try:
        kraft = cluster.state["kraft"]
        roles = {n: properties(cluster.node_dir(n) / "server.properties")["process.roles"]
                 for n in (0, 1, 2, 3)}  # fmt: skip
        assert roles == {0: "broker", 1: "broker", 2: "broker", 3: "controller"}
        controller = kraft["nodes"]["3"]["controller_port"]
        assert kraft["voters"] == f"3@127.0.0.1:{controller}"
        lines = cluster.status_lines()
        assert lines[0] == "dev cluster: 6 of 6 processes running"
        assert "split mode (brokers and a controller)" in lines[1]
        assert [line.split(":")[0] for line in lines[4:7]] == [
            f"  KRaft node {n} 127.0.0.1" for n in (0, 1, 2)
        ]
        assert all(", broker: running (pid " in line for line in lines[4:7])
        assert lines[7] == (f"  KRaft node 3 controller listener 127.0.0.1:{controller}, "
                            f"controller: running (pid {cluster.state['nodes']['3']}), "
                            "quorum leader")  # fmt: skip
        assert sorted(admin(cluster.state["bootstrap"]).list_topics(timeout=30).brokers) == [
            0,
            1,
            2,
        ]
        cluster.kubectl("apply", "-f", "-", stdin=TOPIC)
        eventually(lambda: cluster.kubectl("get", "kt", "payments", "-o", f"jsonpath={READY}")
                   == "True", "payments Ready", timeout=120)  # fmt: skip
        topic = eventually(lambda: described(cluster.state["bootstrap"], "payments"),
                           "payments on the brokers", timeout=60)  # fmt: skip
        assert len(topic.partitions) == 6
        # The controller restarted: the brokers' quorum has its leader again.
        assert cluster.kto("dev-cluster", "stop-broker", "--id", "3").returncode == 0
        assert cluster.status_lines()[7].endswith(", controller: stopped")
        restarted = cluster.kto("dev-cluster", "start-broker", "--id", "3")
        assert restarted.returncode == 0, restarted.stderr
        assert cluster.status_lines()[7].endswith(", quorum leader")
    finally:
        stopped = kto("dev-cluster", "down", cwd=tmp_path)
    assert stopped.returncode == 0, stopped.stderr
    assert left_running(tmp_path) == []
    reset = kto("dev-cluster", "down", "--reset", cwd=tmp_path)
    assert reset.returncode == 0, reset.stderr
    assert sorted(p.name for p in (tmp_path / ".kto" / "dev-cluster").iterdir()) == []


# The tests on the shared cluster come last: it runs until the module ends, and the tests
# above start nodes of their own (two clusters at once would crowd a small machine).


def test_up_starts_three_kraft_nodes_and_the_operator_without_zookeeper(cluster: Cluster) -> None:
    state, kraft = cluster.state, cluster.state["kraft"]
    assert (kraft["mode"], kraft["version"]) == ("combined", KRAFT_KAFKA_VERSION)
    assert "zookeeper" not in state and "brokers" not in state
    assert sorted(state["nodes"]) == ["0", "1", "2"]
    for node in (0, 1, 2):
        settings, pid = kraft["nodes"][str(node)], state["nodes"][str(node)]
        assert settings["bootstrap"] == f"127.0.0.1:{settings['port']}"
        assert settings["rack"] == RACKS[node]
        command = cmdline(pid)
        # The pid is the node's JVM, with a small heap, started on its own configuration.
        assert "kafka.Kafka" in command and "-Xmx384m" in command
        server = properties(cluster.node_dir(node) / "server.properties")
        assert command[-1] == str(cluster.node_dir(node) / "server.properties")
        assert server["process.roles"] == "broker,controller"
        assert (server["node.id"], server["broker.rack"]) == (str(node), RACKS[node])
        assert server["log.dirs"] == str(cluster.node_dir(node) / "data")
        assert server["controller.quorum.voters"] == kraft["voters"]
        assert "zookeeper.connect" not in server
        meta = properties(cluster.node_dir(node) / "data" / "meta.properties")
        assert meta["cluster.id"] == kraft["cluster_id"]
    # Nothing of ZooKeeper runs; the operator talks to the brokers' Admin API.
    assert not any("zookeeper" in " ".join(cmdline(pid)).lower() for pid in state["pids"][:3])
    operator = cmdline(state["pids"][-1])
    assert operator[operator.index("--bootstrap-servers") + 1] == state["bootstrap"]
    assert "--zookeeper" not in operator and "--embedded-controller" not in operator
    metadata = admin(state["bootstrap"]).list_topics(timeout=30)
    assert sorted(metadata.brokers) == [0, 1, 2]
    assert {b.id: b.port for b in metadata.brokers.values()} == {
        n: kraft["nodes"][str(n)]["port"] for n in (0, 1, 2)
    }

    status = cluster.kto("dev-cluster", "status")
    assert status.returncode == 0, status.stdout + status.stderr
    lines = status.stdout.splitlines()
    assert lines[0] == "dev cluster: 5 of 5 processes running"
    assert lines[1] == (
        f"  KRaft cluster {kraft['cluster_id']}: Apache Kafka {KRAFT_KAFKA_VERSION}, combined "
        "mode (each node broker and controller), no ZooKeeper"
    )
    assert lines[2].startswith(f"  API emulator {state['api']}: running (pid ")
    assert lines[3].startswith(f"  operator (metrics {state['metrics']}, ")
    nodes = lines[4:]
    for node, line in zip((0, 1, 2), nodes, strict=True):
        settings, pid = kraft["nodes"][str(node)], state["nodes"][str(node)]
        assert line.startswith(f"  KRaft node {node} {settings['bootstrap']} rack {RACKS[node]}, "
                               f"broker and controller: running (pid {pid})")  # fmt: skip
    # The quorum's leader, as the controllers recorded their election.
    assert sum(line.endswith(", quorum leader") for line in nodes) == 1


def test_a_kafkatopic_is_a_real_topic_on_the_kraft_nodes(cluster: Cluster) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import ConfigResource

    cluster.kubectl("apply", "-f", "-", stdin=TOPIC)
    eventually(lambda: cluster.kubectl("get", "kt", "payments", "-o", f"jsonpath={READY}")
               == "True", "payments Ready", timeout=120)  # fmt: skip
    bootstrap = cluster.state["bootstrap"]
    topic = eventually(lambda: described(bootstrap, "payments"), "the brokers to know payments",
                       timeout=60)  # fmt: skip
    assert sorted(p.id for p in topic.partitions) == list(range(6))
    for partition in topic.partitions:
        # Rack-aware: one replica in each rack, as the operator computed and passed explicitly.
        assert sorted(r.id for r in partition.replicas) == [0, 1, 2]
        assert sorted(r.rack for r in partition.replicas) == ["a", "b", "c"]
    status = cluster.topic("payments")["status"]
    assert status["topicId"] == kafka_id(topic.topic_id)  # the id Kafka's controller gave it
    cluster.topic_id = status["topicId"]
    resource = ConfigResource(ConfigResource.Type.TOPIC, "payments")
    client = admin(bootstrap)

    # The broker asked may not have the topic in its metadata yet (UNKNOWN_TOPIC_OR_PART).
    def configs_of() -> Any:
        try:
            return client.describe_configs([resource])[resource].result(timeout=30)
        except (KafkaException, TimeoutError):
            return None

    configs = eventually(configs_of, "payments' configs from a broker that knows it", timeout=60)
    assert configs["retention.ms"].value == "3600000"
    assert configs["min.insync.replicas"].value == "2"


def test_the_hints_work_as_printed(cluster: Cluster) -> None:
    state = cluster.state
    hints = [line.strip() for line in cluster.started.stdout.splitlines()]
    assert hints[0] == (f"dev cluster up: KRaft cluster {state['kraft']['cluster_id']} (combined "
                        f"mode, no ZooKeeper), API {state['api']}")  # fmt: skip
    assert hints[1] == f"Apache Kafka {KRAFT_KAFKA_VERSION} brokers: {state['bootstrap']}"
    assert hints[2] == f"operator metrics {state['metrics']}, liveness {state['liveness']}"
    with urllib.request.urlopen(state["metrics"], timeout=10) as answer:
        assert b"kto_" in answer.read()
    with urllib.request.urlopen(state["liveness"], timeout=10) as answer:
        assert answer.status == 200
    kto_bin = Path(sys.executable).parent / "kto"
    assert hints[-1] == f"{kto_bin} dev-cluster down   # stops it (--reset: and removes its data)"
    # Every other one, run as printed (comments and all) by a shell in the directory of `up`.
    script = "set -e\n" + "\n".join(hints[3:-1]) + "\n"
    assert "export KUBECONFIG=" in script and "TopicCommand" in script and " status " in script
    ran = subprocess.run(["bash", "-c", script], cwd=cluster.directory, capture_output=True,
                         text=True, timeout=180, env={**os.environ, "KUBECONFIG": ""})  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    out = ran.stdout
    assert out.splitlines()[0].split() == [
        "NAME", "TOPIC", "PARTITIONS", "REPLICAS", "READY", "REASON", "AGE",
    ]  # fmt: skip
    assert f"Topic: payments\tTopicId: {cluster.topic_id}\tPartitionCount: 6" in out
    assert "dev cluster: 5 of 5 processes running" in out


def replica_states(cluster: Cluster) -> tuple[dict[int, set[str]], int] | None:
    """Each broker's replica states in payments' status, and how many partitions are
    under-replicated (None before the status has partitions)."""
    status = cluster.topic("payments").get("status") or {}
    states: dict[int, set[str]] = {}
    for row in status.get("partitions") or []:
        for replica in row["replicas"]:
            states.setdefault(replica["broker"], set()).add(replica["state"])
    if not states:
        return None
    return states, status["partitionCounts"]["underReplicated"]


def test_stop_and_start_a_node_with_the_status_following(cluster: Cluster) -> None:
    before = cluster.state["nodes"]["1"]
    meta = (cluster.node_dir(1) / "data" / "meta.properties").read_text()
    stopped = cluster.kto("dev-cluster", "stop-broker", "--id", "1")
    assert (stopped.returncode, stopped.stdout) == (0, "KRaft node 1 stopped\n"), stopped.stderr
    assert not alive(before)  # SIGTERM: Kafka's controlled shutdown, to the JVM's end
    again = cluster.kto("dev-cluster", "stop-broker", "--id", "1")
    assert (again.returncode, again.stderr) == (1, "kto dev-cluster: KRaft node 1 is not running\n")
    status = cluster.kto("dev-cluster", "status")
    assert status.returncode == 1  # a process is down
    assert status.stdout.splitlines()[0] == "dev cluster: 4 of 5 processes running"
    assert status.stdout.splitlines()[5].endswith(", broker and controller: stopped")
    # Kafka fences the broker; the operator's status shows its replicas offline.
    eventually(lambda: replica_states(cluster) == ({0: {"OnlineReplica"}, 1: {"OfflineReplica"},
                                                    2: {"OnlineReplica"}}, 6),
               "broker 1's replicas offline in payments' status", timeout=60)  # fmt: skip
    left = ",".join(cluster.state["kraft"]["nodes"][n]["bootstrap"] for n in ("0", "2"))
    topic = described(left, "payments")
    assert topic is not None and all(1 not in [r.id for r in p.isr] for p in topic.partitions)

    started = cluster.kto("dev-cluster", "start-broker", "--id", "1")
    assert (started.returncode, started.stdout) == (0, "KRaft node 1 started\n"), started.stderr
    restarted = state_of(cluster.directory)
    assert restarted["nodes"]["1"] != before and alive(restarted["nodes"]["1"])
    assert restarted["kraft"] == cluster.state["kraft"]  # the same port, roles and cluster
    # Started on its data, not formatted again (the directory id would change).
    assert (cluster.node_dir(1) / "data" / "meta.properties").read_text() == meta
    cluster.state = restarted
    eventually(lambda: replica_states(cluster) == ({n: {"OnlineReplica"} for n in (0, 1, 2)}, 0),
               "broker 1's replicas back in payments' status", timeout=120)  # fmt: skip
    assert cluster.kto("dev-cluster", "status").returncode == 0
    running = cluster.kto("dev-cluster", "start-broker", "--id", "1")
    assert (running.returncode, running.stderr) == (
        1, "kto dev-cluster: KRaft node 1 is already running\n",
    )  # fmt: skip
    unknown = cluster.kto("dev-cluster", "stop-broker", "--id", "3")
    assert unknown.stderr == (
        "kto dev-cluster: no KRaft node 3 in this dev cluster (its KRaft nodes: 0, 1, 2)\n"
    )


def test_down_leaves_no_process_and_up_again_keeps_the_topic(cluster: Cluster) -> None:
    state = cluster.state
    stopped = cluster.kto("dev-cluster", "down")
    assert (stopped.returncode, stopped.stdout) == (0, "dev cluster stopped\n"), stopped.stderr
    assert not any(alive(pid) for pid in state["pids"])
    assert left_running(cluster.directory) == []

    started = cluster.kto("dev-cluster", "up", "--kraft")
    assert started.returncode == 0, started.stderr
    cluster.state = again = state_of(cluster.directory)
    cluster.started = started  # what `up` printed now: the hints test may come after this one
    # The nodes' data, and so the cluster (its id, its topics), are the ones `down` left.
    assert again["kraft"]["cluster_id"] == state["kraft"]["cluster_id"]
    eventually(lambda: cluster.kubectl("get", "kt", "payments", "-o", f"jsonpath={READY}")
               == "True", "payments Ready again", timeout=120)  # fmt: skip
    assert cluster.topic("payments")["status"]["topicId"] == cluster.topic_id
    topic = eventually(lambda: described(again["bootstrap"], "payments"), "payments on Kafka",
                       timeout=60)  # fmt: skip
    assert kafka_id(topic.topic_id) == cluster.topic_id  # the same topic, not created again
