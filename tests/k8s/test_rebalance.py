"""KafkaRebalance end to end: `kto run` with the embedded controller and dev brokers, kopf
against the API emulator, the planning job in its own process with local Spark, and the moves
carried out by the controller onto the dev brokers' disks."""

from __future__ import annotations

import base64
import gzip
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kto_testing import eventually
from status_captures import capture

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.execution.executor import read_now
from kafka_topic_operator.rebalance.results.summary import PartitionMove
from kafka_topic_operator.zk import admin

from .test_operator import Setup, events_of, on_both_api_servers, running

pytestmark = [pytest.mark.zookeeper, pytest.mark.e2e, pytest.mark.spark]

GROUP, VERSION, PLURAL = "kto.dev", "v1", "kafkarebalances"
TOPICS = ("orders", "payments", "audit")


@pytest.fixture
def metrics_port() -> int:
    from kto_dev.ports import free_port

    return free_port()


@pytest.fixture
def setup(
    zk_chroot: str, tmp_path: Path, request: pytest.FixtureRequest, metrics_port: int
) -> Iterator[Setup]:
    api_server = getattr(request, "param", "emulator")
    with running(zk_chroot, tmp_path, "--metrics-port", str(metrics_port),
                 api_server=api_server) as s:  # fmt: skip
        yield s


def served(port: int, *samples: str) -> str | None:
    """The operator's /metrics once it serves every sample given (`name{labels} value`)."""
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text: str = r.read().decode()
    return text if all(f"\n{sample}\n" in text for sample in samples) else None


def crowd(setup: Setup) -> None:
    """Every replica on brokers 0 and 1: broker 2 joined empty."""
    for topic in TOPICS:
        admin.create_topic_with_assignment(
            setup.zk, topic, {p: [p % 2, (p + 1) % 2] for p in range(6)}
        )


def assignment(setup: Setup) -> dict[TopicPartition, tuple[int, ...]]:
    every = [PartitionMove(TopicPartition(t, p), (), ()) for t in TOPICS for p in range(6)]
    return dict(read_now(setup.zk, every).assignment)


def apply(setup: Setup, name: str, **spec: Any) -> None:
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KafkaRebalance",
            "metadata": {"name": name}, "spec": spec}  # fmt: skip
    setup.api.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)


def get(setup: Setup, name: str) -> dict[str, Any]:
    found: dict[str, Any] = setup.api.get_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, name
    )
    return found


def state_of(setup: Setup, name: str) -> str | None:
    for c in (get(setup, name).get("status") or {}).get("conditions") or []:
        if c["status"] == "True":
            return str(c["type"])
    return None


def wait_state(setup: Setup, name: str, state: str, timeout: float = 120) -> dict[str, Any]:
    eventually(lambda: state_of(setup, name) == state, f"{name} {state}", timeout=timeout)
    return get(setup, name)


def annotations(setup: Setup, name: str) -> dict[str, str]:
    return get(setup, name)["metadata"].get("annotations") or {}


def progress(setup: Setup, name: str) -> dict[str, Any]:
    return get(setup, name)["status"].get("progress") or {}


def annotate(setup: Setup, name: str, value: str) -> None:
    patch = {"metadata": {"annotations": {"kto.dev/rebalance": value}}}
    setup.api.patch_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, name, patch)


@on_both_api_servers
def test_propose_approve_rebalance_ready(setup: Setup, metrics_port: int) -> None:
    crowd(setup)
    before = assignment(setup)
    apply(setup, "even-out")
    ready = wait_state(setup, "even-out", "ProposalReady")
    capture(ready)
    result = ready["status"]["optimizationResult"]
    # 36 replicas on 3 brokers, 18 each on two of them: the lower bound moves 12.
    assert (result["replicaMoves"], result["replicaMovesLowerBound"]) == (12, 12)
    message = ready["status"]["conditions"][0]["message"]
    assert message == "12 replica moves (lower bound 12), 6 leader moves"  # as README shows
    assert {b["broker"]: b["replicasAfter"] for b in result["brokers"]} == {0: 12, 1: 12, 2: 12}
    assert assignment(setup) == before  # nothing moves before approval
    from kubernetes import client

    plan = client.CoreV1Api().read_namespaced_config_map(
        ready["status"]["planConfigMap"], "default"
    )
    assert plan.metadata.owner_references[0].name == "even-out"
    assert '"version":1' in plan.data["plan.json"]
    moves = 'kto_rebalance_plan_moves{kind="%s",name="even-out",namespace="default"} %s'
    eventually(lambda: served(metrics_port, 'kto_rebalances{state="ProposalReady"} 1.0',
                              moves % ("replica", "12.0"), moves % ("leader", "6.0")),
               "the proposal's metrics")  # fmt: skip

    annotate(setup, "even-out", "approve")
    done = wait_state(setup, "even-out", "Ready")
    capture(done)
    eventually(lambda: served(metrics_port, 'kto_rebalances{state="Ready"} 1.0',
                              'kto_rebalances{state="ProposalReady"} 0.0'),
               "the finished rebalance's metrics")  # fmt: skip
    assert "kto.dev/rebalance" not in (done["metadata"].get("annotations") or {})
    after = assignment(setup)
    replicas = Counter(b for r in after.values() for b in r)
    assert sorted(replicas.values()) == [12, 12, 12]
    assert sum(len(set(after[tp]) - set(before[tp])) for tp in before) == 12
    preferred = Counter(r[0] for r in after.values())
    assert sorted(preferred.values()) == [6, 6, 6]
    moved_to_2 = [tp for tp in after if 2 in after[tp]]
    for tp in moved_to_2:
        log_dir = setup.root / "broker-2" / f"{tp.topic}-{tp.partition}"
        eventually(log_dir.is_dir, f"{tp} on broker 2's disk")


@on_both_api_servers
def test_an_unknown_or_misplaced_annotation_is_refused_and_removed(setup: Setup) -> None:
    crowd(setup)
    apply(setup, "careful")
    wait_state(setup, "careful", "ProposalReady")
    annotate(setup, "careful", "stop")  # a proposal waiting for approval cannot be stopped
    eventually(lambda: "kto.dev/rebalance" not in annotations(setup, "careful"),
               "the annotation removed")  # fmt: skip
    assert state_of(setup, "careful") == "ProposalReady"


def test_an_invalid_spec_is_not_ready_with_the_reason(setup: Setup) -> None:
    apply(setup, "bad", mode="add-brokers", brokers=[9])
    done = wait_state(setup, "bad", "NotReady")
    condition = done["status"]["conditions"][0]
    assert condition["reason"] == "CannotPlan"
    assert condition["message"] == (
        "brokers 9 to add are not registered (the cluster's brokers: 0, 1, 2)"
    )
    capture(done)


def test_hard_goals_no_plan_can_keep_are_not_ready_and_nothing_is_planned(setup: Setup) -> None:
    crowd(setup)
    apply(setup, "drain-two", mode="remove-brokers", brokers=[1, 2])
    done = wait_state(setup, "drain-two", "NotReady")
    condition = done["status"]["conditions"][0]
    assert (condition["reason"], condition["message"]) == (
        "ProposalFailed",
        "partition audit-0 cannot keep replication factor 2: only 1 broker remains after "
        "removing 1, 2 (and 17 other partitions)",
    )
    capture(done)
    assert "planConfigMap" not in done["status"]


def test_adding_a_broker_moves_replicas_only_onto_it(setup: Setup) -> None:
    crowd(setup)
    before = assignment(setup)
    apply(setup, "grow", mode="add-brokers", brokers=[2])
    annotate_auto_approval(setup, "grow")
    wait_state(setup, "grow", "Ready")
    after = assignment(setup)
    gained = {b for tp in before for b in set(after[tp]) - set(before[tp])}
    assert gained == {2}
    assert Counter(b for r in after.values() for b in r)[2] == 12


def test_removing_a_broker_drains_it(setup: Setup) -> None:
    for topic in TOPICS:
        admin.create_topic_with_assignment(
            setup.zk, topic, {p: [p % 3, (p + 1) % 3] for p in range(6)}
        )
    apply(setup, "shrink", mode="remove-brokers", brokers=[2])
    annotate_auto_approval(setup, "shrink")
    wait_state(setup, "shrink", "Ready")
    after = assignment(setup)
    assert not [tp for tp, r in after.items() if 2 in r]
    assert sorted(Counter(b for r in after.values() for b in r).values()) == [18, 18]
    for tp in after:
        log_dir = setup.root / "broker-2" / f"{tp.topic}-{tp.partition}"
        eventually(lambda d=log_dir: not d.exists(), f"{tp} gone from broker 2's disk")


@on_both_api_servers
def test_stop_halts_after_the_batch_in_flight_and_refresh_plans_the_rest(setup: Setup) -> None:
    crowd(setup)
    apply(setup, "paced", concurrentPartitionMovementsPerBroker=1)
    wait_state(setup, "paced", "ProposalReady")
    # Broker 2 away: the first batch waits for it, so the stop comes while it is in flight.
    setup.kill_broker(2)
    annotate(setup, "paced", "approve")
    rebalancing = wait_state(setup, "paced", "Rebalancing")
    assert rebalancing["status"]["conditions"][0]["reason"] == "Rebalancing"
    eventually(lambda: progress(setup, "paced").get("partitionsInFlight") == 1,
               "one partition in flight")  # fmt: skip
    capture(get(setup, "paced"))  # Rebalancing, with its progress
    annotate(setup, "paced", "stop")
    setup.start_broker(2)
    stopped = wait_state(setup, "paced", "Stopped")
    assert stopped["status"]["conditions"][0]["message"] == "stopped on request"
    capture(stopped)
    after = assignment(setup)
    assert Counter(b for r in after.values() for b in r)[2] == 1  # the one batch, carried out

    annotate(setup, "paced", "refresh")
    eventually(lambda: state_of(setup, "paced") in ("PendingProposal", "ProposalReady"), "planning")
    again = wait_state(setup, "paced", "ProposalReady")
    assert again["status"]["proposalId"] != stopped["status"]["proposalId"]
    assert again["status"]["optimizationResult"]["replicaMoves"] == 11


def test_a_plan_the_cluster_outgrew_is_made_again_not_carried_out(setup: Setup) -> None:
    """A partition of the proposal moved by someone else between proposal and approval:
    nothing of the outdated plan is written, status says ClusterChanged, and a new proposal is
    made from the cluster as it is."""
    crowd(setup)
    before = assignment(setup)
    apply(setup, "outdated")
    ready = wait_state(setup, "outdated", "ProposalReady")
    after = planned(ready, before)
    moved = sorted(tp for tp in before if after[tp] != before[tp])
    tp = next(tp for tp in moved if before[tp][::-1] != after[tp])
    admin.reassign_partitions(setup.zk, {tp: before[tp][::-1]})  # neither start nor end
    eventually(lambda: assignment(setup)[tp] == before[tp][::-1], f"{tp} reordered by hand")
    elsewhere = assignment(setup)
    annotate(setup, "outdated", "approve")
    # The condition lasts until the new proposal's planning replaces it: the event stays.
    message = f"partitions changed since the plan was made: {tp}: planning again"
    said = eventually(
        lambda: ("Warning", "ClusterChanged", message) in events_of("outdated"), "ClusterChanged"
    )
    assert said
    again = wait_state(setup, "outdated", "ProposalReady")
    assert again["status"]["proposalId"] != ready["status"]["proposalId"]
    assert assignment(setup) == elsewhere  # nothing of the outdated plan was written
    assert "kto.dev/rebalance" not in annotations(setup, "outdated")


def annotate_auto_approval(setup: Setup, name: str) -> None:
    patch = {"metadata": {"annotations": {"kto.dev/rebalance-auto-approval": "true"}}}
    setup.api.patch_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, name, patch)


def log_dirs_output(
    before: dict[TopicPartition, tuple[int, ...]], size: Any, broker_list: set[int]
) -> str:
    """What kafka-log-dirs.sh --describe --broker-list would print for the cluster: each
    leader's replica holds its partition's size, each follower a byte less (it lags)."""
    brokers: dict[int, list[dict[str, Any]]] = {}
    for tp, replicas in before.items():
        for i, b in enumerate(replicas):
            if b not in broker_list:
                continue
            brokers.setdefault(b, []).append(
                {"partition": f"{tp.topic}-{tp.partition}", "size": size(tp) - (i > 0),
                 "offsetLag": 0, "isFuture": False}
            )  # fmt: skip
    described = [
        {"broker": b, "logDirs": [{"logDir": "/var/kafka", "error": None, "partitions": p}]}
        for b, p in brokers.items()
    ]
    return ("Querying brokers for log directories information\n"
            + json.dumps({"version": 1, "brokers": described}) + "\n")  # fmt: skip


def planned(
    ready: dict[str, Any], before: dict[TopicPartition, tuple[int, ...]]
) -> dict[TopicPartition, tuple[int, ...]]:
    """The assignment after the proposal in the plan's ConfigMap."""
    from kubernetes import client

    name = ready["status"]["planConfigMap"]
    plan = client.CoreV1Api().read_namespaced_config_map(name, "default")
    after = dict(before)
    for entry in json.loads(plan.data["plan.json"])["partitions"]:
        after[TopicPartition(entry["topic"], entry["partition"])] = tuple(entry["replicas"])
    return after


def test_partition_sizes_come_from_a_config_map_and_disk_usage_is_balanced(setup: Setup) -> None:
    from kubernetes import client

    crowd(setup)
    before = assignment(setup)
    goals = ["RackAware", "ReplicaDistribution", "DiskUsageDistribution", "LeaderDistribution"]
    apply(setup, "bytes", goals=goals, partitionSizes={"configMap": "sizes"})
    missing = wait_state(setup, "bytes", "NotReady")["status"]["conditions"][0]
    assert missing["reason"] == "PartitionSizesUnavailable"
    assert missing["message"] == (
        "ConfigMap default/sizes (spec.partitionSizes) not found: create it, then annotate "
        "kto.dev/rebalance=refresh"
    )

    def size(tp: TopicPartition) -> int:  # orders heavy and uneven, the others light
        return 10_000 * (tp.partition + 1) if tp.topic == "orders" else 1_000

    # Described in two parts: broker 0 gzipped (binaryData, as kubectl stores a .gz file),
    # broker 1 as text.
    zipped = gzip.compress(log_dirs_output(before, size, {0}).encode())
    body = {"metadata": {"name": "sizes"},
            "binaryData": {"broker-0.txt.gz": base64.b64encode(zipped).decode()},
            "data": {"broker-1.txt": log_dirs_output(before, size, {1})}}  # fmt: skip
    client.CoreV1Api().create_namespaced_config_map("default", body)
    annotate(setup, "bytes", "refresh")
    # Four goals planned by local Spark in the operator: the whole test took 42 s alone and
    # 90-102 s beside make test's other workers (a wait, not a speed figure: make bench
    # measures planning).
    ready = wait_state(setup, "bytes", "ProposalReady", timeout=240)
    result = ready["status"]["optimizationResult"]
    after = planned(ready, before)

    def held(assignment: dict[TopicPartition, tuple[int, ...]]) -> Counter[int]:
        return Counter({b: 0 for b in range(3)}) + Counter(
            {b: sum(size(tp) for tp, r in assignment.items() if b in r) for b in range(3)}
        )

    # Sizes are the leaders' replicas' (followers' a byte less were not taken).
    brokers = {b["broker"]: (b["bytesBefore"], b["bytesAfter"]) for b in result["brokers"]}
    assert brokers == {b: (held(before)[b], held(after)[b]) for b in range(3)}
    moved = sum(size(tp) * len(set(after[tp]) - set(before[tp])) for tp in before)
    assert result["dataToMoveBytes"] == moved > 0
    # Every broker within 9% of the mean bytes, the counts still balanced.
    mean = sum(held(after).values()) / 3
    assert all(abs(held(after)[b] - mean) <= 0.09 * mean for b in range(3)), held(after)
    assert sorted(Counter(b for r in after.values() for b in r).values()) == [12, 12, 12]


def test_the_log_directories_the_operator_reads_give_sizes_without_a_config_map(
    zk_chroot: str, tmp_path: Path
) -> None:
    from kafka_topic_operator.zk.snapshot_reader import read_cluster

    dirs = [tmp_path / f"broker-{b}" for b in (0, 1, 2)]
    with running(zk_chroot, tmp_path, "--log-dirs", *map(str, dirs)) as setup:
        crowd(setup)
        before = assignment(setup)

        def hosted() -> bool:
            topics = read_cluster(setup.zk).topics
            return all(
                (dirs[b] / f"{tp.topic}-{tp.partition}").is_dir()
                and topics[tp.topic].partitions[tp.partition].leader == replicas[0]
                for tp, replicas in before.items()
                for b in replicas
            )

        eventually(hosted, "every replica hosted, the first one leading")
        for tp, replicas in before.items():
            for i, b in enumerate(replicas):  # a follower holds more: only the leader's counts
                segment = dirs[b] / f"{tp.topic}-{tp.partition}" / "00000000000000000000.log"
                segment.write_bytes(b"x" * (100 * (tp.partition + 1) + 7 * i))
        apply(setup, "from-disk")
        ready = wait_state(setup, "from-disk", "ProposalReady")
        result, after = ready["status"]["optimizationResult"], planned(ready, before)

        def size(tp: TopicPartition) -> int:
            return 100 * (tp.partition + 1)

        def held(placed: dict[TopicPartition, tuple[int, ...]], b: int) -> int:
            return sum(size(tp) for tp, r in placed.items() if b in r)

        brokers = {b["broker"]: (b["bytesBefore"], b["bytesAfter"]) for b in result["brokers"]}
        assert brokers == {b: (held(before, b), held(after, b)) for b in range(3)}
        moved = sum(size(tp) * len(set(after[tp]) - set(before[tp])) for tp in before)
        assert result["dataToMoveBytes"] == moved > 0
