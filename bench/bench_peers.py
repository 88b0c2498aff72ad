"""`kto plan` beside kafka-utils' `kafka-cluster-manager` on the same ZooKeeper cluster of about
2,000 replicas where empty brokers just joined: each tool's wall time (the process end to end),
replica moves and final spread of replicas per broker, and the time ratio.

kafka-utils lives in its own environment (its pins clash with the project's); `make bench` makes
it and names the executable in KTO_KAFKA_CLUSTER_MANAGER.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from bench_support import scratch_dir
from kafka_topic_operator.kafka.assignment import BrokerMetadata, assign_replicas_to_brokers
from kafka_topic_operator.kafka.brokers import BrokerInfo, EndPoint, SecurityProtocol
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import admin, znodes
from kafka_topic_operator.zk.client import ZkClient
from kto_dev.zookeeper_server import ZooKeeperServer

Assignment = dict[tuple[str, int], list[int]]


def _register(zk: ZkClient, broker: int) -> None:
    endpoint = EndPoint("PLAINTEXT", "127.0.0.1", 9092 + broker,
                               SecurityProtocol.PLAINTEXT)  # fmt: skip
    info = BrokerInfo(broker, (endpoint,), jmx_port=-1, timestamp=int(time.time() * 1000))
    zk.create(znodes.broker_path(broker), znodes.encode_broker(info, version=4), makepath=True)


def _populate(zk: ZkClient, topics: int, partitions: int, old: int, new: int, rf: int) -> None:
    for broker in range(old + new):
        _register(zk, broker)
    existing = [BrokerMetadata(b) for b in range(old)]
    for t in range(topics):
        assignment = assign_replicas_to_brokers(existing, partitions, rf, fixed_start_index=t % old)
        admin.create_topic_with_assignment(zk, f"topic-{t}", assignment)
        # What a controller would have written: kafka-cluster-manager reads these znodes.
        for partition, replicas in assignment.items():
            tp = TopicPartition(f"topic-{t}", partition)
            state = LeaderIsrAndControllerEpoch(LeaderAndIsr.initial(replicas[0], replicas), 1)
            zk.create(znodes.topic_partition_state_path(tp), znodes.encode_partition_state(state),
                      makepath=True)  # fmt: skip


def _current(zk: ZkClient) -> Assignment:
    out: Assignment = {}
    for topic in zk.children(znodes.TOPICS_PATH) or []:
        node = zk.get(znodes.topic_path(topic))
        assert node is not None
        data = znodes.decode_topic(node.path, node.data)
        for partition, replicas in data.partitions.items():
            out[(topic, partition)] = list(replicas.replicas)
    return out


def _apply(current: Assignment, plan: Path) -> tuple[int, Assignment]:
    """Replica moves in Kafka's reassignment JSON, and the assignment once it is carried out."""
    after = dict(current)
    moves = 0
    for entry in json.loads(plan.read_text())["partitions"]:
        key = (entry["topic"], entry["partition"])
        moves += len(set(entry["replicas"]) - set(current[key]))
        after[key] = list(entry["replicas"])
    return moves, after


def _spread(assignment: Assignment, brokers: int) -> int:
    counts = Counter(b for replicas in assignment.values() for b in replicas)
    per_broker = [counts.get(b, 0) for b in range(brokers)]
    return max(per_broker) - min(per_broker)


def _timed(command: list[str], env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed: {done.stderr.strip()[-2000:]}")
    return elapsed


def small_plan(topics: int = 70, partitions: int = 10, old: int = 9, new: int = 3) -> None:
    tool = os.environ.get("KTO_KAFKA_CLUSTER_MANAGER")
    replicas = topics * partitions * 3
    label = f"small plan: {replicas:,} replicas, {old} brokers + {new} empty"
    if not tool:
        print(f"{label}: kafka-cluster-manager not installed (make bench installs it); skipped")
        return
    with scratch_dir("peers") as tmp:
        directory = Path(tmp)
        server = ZooKeeperServer(directory / "zookeeper")
        server.start()
        try:
            root = ZkClient(server.connect_string)
            root.start()
            root.ensure_path("/peers")
            root.stop()
            connect = f"{server.connect_string}/peers"
            zk = ZkClient(connect)
            zk.start()
            try:
                _populate(zk, topics, partitions, old, new, 3)
                current = _current(zk)
            finally:
                zk.stop()
            ours_plan = directory / "kto-plan.json"
            ours = _timed([sys.executable, "-m", "kafka_topic_operator.cli", "plan",
                           "--zookeeper", connect, "--output", str(ours_plan)])  # fmt: skip
            discovery = directory / "discovery"
            discovery.mkdir()
            (discovery / "bench.yaml").write_text(json.dumps({
                "clusters": {"bench": {"broker_list": ["127.0.0.1:9092"], "zookeeper": connect}},
                "local_config": {"cluster": "bench"},
            }))  # fmt: skip
            theirs_plan = directory / "kcm-plan.json"
            theirs = _timed([tool, "--cluster-type", "bench", "--discovery-base-path",
                             str(discovery), "--write-to-file", str(theirs_plan), "rebalance",
                             "--brokers", "--leaders",
                             "--max-partition-movements", str(replicas),
                             "--max-leader-changes", str(replicas)])  # fmt: skip
        finally:
            server.stop()
        our_moves, our_after = _apply(current, ours_plan)
        their_moves, their_after = _apply(current, theirs_plan)
    brokers = old + new
    print(
        f"{label}: kto plan {ours:.1f} s, {our_moves} moves, spread "
        f"{_spread(our_after, brokers)}; kafka-cluster-manager {theirs:.1f} s, {their_moves} "
        f"moves, spread {_spread(their_after, brokers)}; time ratio {ours / theirs:.1f}x "
        "(target <= 3x, moves <=, spread <= 1)"
    )


if __name__ == "__main__":
    small_plan()
