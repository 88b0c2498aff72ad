"""`make demo`: a tour of Kafka's placement rules through the `kto` previews, then the dev
cluster on real Apache Kafka: KafkaTopics applied with kubectl, a real producer writing keyed
messages where `kto partition-for` predicts and a real consumer reading them back, a broker
stopped, a deletion that waits for it and finishes when it returns. The cluster is left running
(`--down` stops it at the end); `--twin` runs the same story on the dev brokers and this
project's controller, `--kraft` a KRaft story instead: Kafka 4 without ZooKeeper, the operator on
its Admin API, a node stopped with the status following, a deletion that does not wait."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from kafka_topic_operator.cli import main as kto
from kafka_topic_operator.kafka.partitioner import partition_for_key
from kto_dev import cluster as devcluster
from kto_dev import cluster_kraft
from kto_dev.apache_kafka.distribution import KRAFT_KAFKA_VERSION

if TYPE_CHECKING:
    from confluent_kafka import Message

STEPS: list[tuple[str, list[str]]] = [
    (
        "Six brokers in three racks: where does a 6-partition, RF-3 topic land?",
        [
            "assign",
            "--brokers",
            "0,1,2,3,4,5",
            "--racks",
            "0:rack1,1:rack3,2:rack3,3:rack2,4:rack2,5:rack1",
            "--partitions",
            "6",
            "--replication-factor",
            "3",
            "--start-index",
            "0",
        ],
    ),
    (
        "Growing a topic: Kafka starts new partitions at the broker that leads partition 0.",
        ["assign", "--brokers", "0,1,2,3", "--existing", '{"0":[2,3,0,1]}', "--partitions", "7"],
    ),
    (
        "Bad input gets Kafka's own message:",
        ["assign", "--brokers", "0,1,2,3,4", "--partitions", "10", "--replication-factor", "6"],
    ),
    (
        "Which partition does the Java producer pick for these keys (12 partitions)?",
        ["partition-for", "--partitions", "12", "order-1", "order-2", "customer-42"],
    ),
    (
        "Three consumers, 8 partitions, sticky assignor:",
        ["consumers", "--partitions", "8", "--members", "3", "--strategy", "sticky"],
    ),
]


ROOT = Path(__file__).resolve().parents[2]
KUBECTL = ROOT / ".kto" / "bin" / "kubectl"
CLUSTER_DIR = Path(".kto") / "dev-cluster"
KUBECONFIG = Path(".kto") / "kubeconfig"


def tour() -> None:
    for title, argv in STEPS:
        print(f"\n=== {title}\n$ kto {shlex.join(argv)}", flush=True)
        status = kto(argv)
        sys.stderr.flush()
        if status != 0:
            print(f"(exit status {status})")


def kubectl(*args: str, show: bool = True) -> str:
    env = {**os.environ, "KUBECONFIG": str(KUBECONFIG.resolve())}
    if show:
        print(f"$ kubectl {shlex.join(args)}", flush=True)
    done = subprocess.run([str(KUBECTL), *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"kubectl failed: {done.stderr}")
    if show:
        print(done.stdout, end="", flush=True)
    return done.stdout


def wait_for(what: str, check: Callable[[], bool], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.5)


def ready_reasons() -> dict[str, str]:
    out = kubectl("get", "kt", "-o", "json", show=False)
    reasons = {}
    for item in json.loads(out)["items"]:
        for c in (item.get("status") or {}).get("conditions") or []:
            if c["type"] == "Ready":
                reasons[item["metadata"]["name"]] = c["reason"]
    return reasons


DEMO_TOPIC = "orders"  # examples/orders.yaml: 12 partitions
DEMO_KEYS = [f"customer-{i}" for i in range(200)]


def _where(message: Message) -> tuple[str, int]:
    """A keyed message's key and partition (the client types both as optional)."""
    key, partition = message.key(), message.partition()
    assert isinstance(key, bytes) and partition is not None, "a keyed, delivered message"
    return key.decode(), partition


def produce_and_consume(bootstrap: str) -> None:
    """Keyed messages through real Kafka: each must land where `kto partition-for` says (the
    Java producer's murmur2 partitioner, which confluent-kafka's `murmur2_random` reproduces for
    keyed messages), and all must come back to a consumer."""
    from confluent_kafka import Consumer, KafkaError, Producer

    shown = DEMO_KEYS[:4]
    print(f"\n=== A real producer writes {len(DEMO_KEYS)} keyed messages to '{DEMO_TOPIC}'; "
          "where will they land?\n"
          f"$ kto partition-for --partitions 12 {' '.join(shown)}", flush=True)  # fmt: skip
    kto(["partition-for", "--partitions", "12", *shown])
    landed: dict[str, int] = {}
    failures: list[str] = []

    def delivered(error: KafkaError | None, message: Message) -> None:
        if error is not None:
            failures.append(str(error))
        else:
            landed.update([_where(message)])

    producer = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random",
                         "acks": "all"})  # fmt: skip
    for key in DEMO_KEYS:
        producer.produce(DEMO_TOPIC, key=key, value=f"order of {key}", on_delivery=delivered)
    producer.flush(30)
    if failures or len(landed) != len(DEMO_KEYS):
        raise SystemExit(f"producing failed: {failures[:3] or 'not every message was delivered'}")
    wrong = [k for k in DEMO_KEYS if landed[k] != partition_for_key(k, 12)]
    if wrong:
        raise SystemExit(f"keys not where kto partition-for predicted: {wrong[:5]}")
    print("delivered: " + ", ".join(f"{k} -> partition {landed[k]}" for k in shown) + ", ...")
    print(f"all {len(DEMO_KEYS)} keys landed on the partition kto partition-for predicted")
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "kto-demo",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})  # fmt: skip
    consumer.subscribe([DEMO_TOPIC])
    seen: dict[str, int] = {}
    deadline = time.monotonic() + 60
    try:
        while len(seen) < len(DEMO_KEYS) and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None or message.error() is not None:
                continue
            seen.update([_where(message)])
    finally:
        consumer.close()
    if seen != landed:
        raise SystemExit(f"the consumer read {len(seen)} of {len(DEMO_KEYS)} messages back")
    print(
        f"a real consumer (group kto-demo) read all {len(seen)} messages back, each from the "
        "partition it was written to"
    )


def wait_for_examples() -> None:
    # Every example, not just those that already have a status: the set of reasons alone is
    # {"Created"} as soon as the first one is Ready.
    examples = {yaml.safe_load(f.read_text())["metadata"]["name"]
                for f in (ROOT / "examples").glob("*.yaml")}  # fmt: skip
    wait_for("every KafkaTopic Ready",
             lambda: ready_reasons() == dict.fromkeys(examples, "Created"))  # fmt: skip


def under_replicated(name: str) -> int | None:
    out = kubectl("get", "kt", name, "-o", "jsonpath={.status.partitionCounts.underReplicated}",
                  show=False)  # fmt: skip
    return int(out) if out else None


def show_partition_counts(name: str) -> None:
    path = "jsonpath={.status.partitionCounts}"
    print(f"$ kubectl get kt {name} -o '{path}'")
    print(kubectl("get", "kt", name, "-o", path, show=False), flush=True)


def kraft_cluster(down: bool) -> None:
    """The KRaft story: no ZooKeeper, the operator on Kafka's Admin API."""
    print(f"\n=== The dev cluster on KRaft: three Apache Kafka {KRAFT_KAFKA_VERSION} nodes on "
          "three racks, each broker and controller, no ZooKeeper; the operator on their Admin API\n"
          "$ kto dev-cluster down --reset; kto dev-cluster up --kraft", flush=True)  # fmt: skip
    devcluster.down(CLUSTER_DIR, reset=True)
    state = devcluster.up(CLUSTER_DIR, KUBECONFIG, kraft=True)
    print(f"KRaft cluster {state['kraft']['cluster_id']}, API {state['api']}\n"
          f"Kafka brokers {state['bootstrap']}")  # fmt: skip
    print("\n=== KafkaTopics applied with kubectl", flush=True)
    kubectl("apply", "-f", str(ROOT / "examples"))
    wait_for_examples()
    kubectl("get", "kt")
    print("\n=== What Kafka says (its kafka-topics, run from the jars)\n"
          "$ kafka-topics --describe --topic orders", flush=True)  # fmt: skip
    described = subprocess.run([*cluster_kraft.topic_tool_command(state["kraft"]), "--topic",
                                "orders"])  # fmt: skip
    if described.returncode != 0:
        print(f"(exit status {described.returncode})")
    produce_and_consume(state["bootstrap"])
    print("\n=== Node 2 shuts down: Kafka fences its broker, and the status follows (the operator "
          "asks Kafka every 2 s)\n$ kto dev-cluster stop-broker --id 2", flush=True)  # fmt: skip
    devcluster.stop_broker(CLUSTER_DIR, 2)
    wait_for("orders under-replicated", lambda: under_replicated("orders") == 12)
    show_partition_counts("orders")
    print("\n=== audit has its only replica on node 2; delete audit: on KRaft the deletion does "
          "not wait for the broker (it deletes its logs when it returns)", flush=True)  # fmt: skip
    kubectl("delete", "kt", "audit", "--timeout=90s")
    kubectl("get", "kt")
    print("\n=== Node 2 returns: its replicas are back in sync\n"
          "$ kto dev-cluster start-broker --id 2", flush=True)  # fmt: skip
    devcluster.start_broker(CLUSTER_DIR, 2)
    wait_for("orders fully replicated", lambda: under_replicated("orders") == 0)
    show_partition_counts("orders")
    if down:
        print("\n$ kto dev-cluster down")
        devcluster.down(CLUSTER_DIR)
        return
    print(
        "\nThe dev cluster is still running. Try:\n"
        f"  export KUBECONFIG={KUBECONFIG.resolve()}\n"
        f"  {KUBECTL} get kt\n"
        "  .venv/bin/kto dev-cluster status    # the nodes, their roles, the quorum leader\n"
        "  .venv/bin/kto dev-cluster down      # stops it"
    )


def cluster(down: bool, kafka: bool = True) -> None:
    if kafka:
        print("\n=== The dev cluster on Apache Kafka: ZooKeeper, three real Kafka brokers on three "
              "racks (Kafka's own controller), the Kubernetes API emulator and the operator\n"
              "$ kto dev-cluster down --reset; kto dev-cluster up --kafka", flush=True)  # fmt: skip
    else:
        print("\n=== The dev cluster: ZooKeeper, three dev brokers on three racks, the Kubernetes "
              "API emulator and the operator with its embedded controller\n"
              "$ kto dev-cluster down --reset; kto dev-cluster up",
              flush=True)  # fmt: skip
    # A fresh cluster every time, so the demo can run again: the last run's topics and
    # resources (and any of yours in the dev cluster) are removed first.
    devcluster.down(CLUSTER_DIR, reset=True)
    state = devcluster.up(CLUSTER_DIR, KUBECONFIG, kafka=kafka)
    zookeeper = state["zookeeper"]
    print(f"ZooKeeper {zookeeper}, API {state['api']}")
    if kafka:
        print(f"Kafka brokers {state['bootstrap']}")
    print("\n=== KafkaTopics applied with kubectl", flush=True)
    kubectl("apply", "-f", str(ROOT / "examples"))
    wait_for_examples()
    kubectl("get", "kt")
    print(f"\n=== What Kafka's znodes say\n$ kto describe --zookeeper {zookeeper}", flush=True)
    kto(["describe", "--zookeeper", zookeeper])
    if kafka:
        produce_and_consume(state["bootstrap"])
        print("\n=== Broker 2 shuts down; audit has its only replica there; delete audit",
              flush=True)  # fmt: skip
    else:
        print("\n=== Broker 2 dies; audit has its only replica there; delete audit", flush=True)
    print("$ kto dev-cluster stop-broker --id 2")
    devcluster.stop_broker(CLUSTER_DIR, 2)
    kubectl("delete", "kt", "audit", "--wait=false")
    wait_for("DeletionIneligible", lambda: ready_reasons().get("audit") == "DeletionIneligible")
    kubectl("get", "kt")
    message = kubectl(
        "get",
        "kt",
        "audit",
        "-o",
        'jsonpath={.status.conditions[?(@.type=="Ready")].message}',
        show=False,
    )
    print(f"audit: {message}")
    print("\n=== Broker 2 returns: the deletion completes\n$ kto dev-cluster start-broker --id 2",
          flush=True)  # fmt: skip
    devcluster.start_broker(CLUSTER_DIR, 2)
    wait_for("audit gone", lambda: "audit" not in ready_reasons())
    kubectl("get", "kt")
    if down:
        print("\n$ kto dev-cluster down")
        devcluster.down(CLUSTER_DIR)
        return
    print(
        "\nThe dev cluster is still running. Try:\n"
        f"  export KUBECONFIG={KUBECONFIG.resolve()}\n"
        f"  {KUBECTL} get kt\n"
        f"  {KUBECTL} explain kt.spec\n"
        f"  .venv/bin/kto describe --zookeeper {zookeeper}\n"
        "  .venv/bin/kto dev-cluster status    # the brokers, and which is the controller\n"
        "  .venv/bin/kto dev-cluster down      # stops it"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kto_dev.demo")
    parser.add_argument("--down", action="store_true", help="stop the dev cluster at the end")
    parser.add_argument("--tour-only", action="store_true", help="only the kto previews")
    parser.add_argument(
        "--twin",
        action="store_true",
        help="dev brokers and this project's controller instead of real Kafka",
    )
    parser.add_argument(
        "--kraft",
        action="store_true",
        help="Kafka 4 in KRaft mode (no ZooKeeper) and the operator on its Admin API instead",
    )
    args = parser.parse_args(argv)
    if args.twin and args.kraft:
        parser.error("--twin and --kraft exclude each other")
    tour()
    if args.tour_only:
        return 0
    if args.kraft:
        kraft_cluster(args.down)
    else:
        cluster(args.down, kafka=not args.twin)
    return 0


if __name__ == "__main__":
    sys.exit(main())
