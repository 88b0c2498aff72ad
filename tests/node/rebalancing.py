"""What the rebalance tests on the node share, whichever engine plans (a Job running spark-submit,
or the Spark operator's SparkApplication): the chart's rebalance settings, crowded topics on the
session's Kafka, the KafkaRebalance and its states, the plan checked against the in-process
planner's, and the approved plan checked in the brokers' metadata."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import yaml
from kafka_client import metadata
from kto_testing import eventually
from node_session import NodeSession

from kafka_topic_operator.rebalance.in_process import plan_in_process
from kafka_topic_operator.rebalance.job import write_output
from kafka_topic_operator.rebalance.planning_io import PlanningInput
from kafka_topic_operator.zk import admin
from kafka_topic_operator.zk.client import ZkClient
from kto_dev.node import chart

from .helpers import Release

CLAIM = "kto-plans"
# The chart's own defaults: where the operator mounts the claim, and the planner image.
REBALANCE_VALUES = yaml.safe_load((chart.CHART / "values.yaml").read_text())["rebalance"]
WORK_DIR = REBALANCE_VALUES["workDir"]
APP_VERSION = yaml.safe_load((chart.CHART / "Chart.yaml").read_text())["appVersion"]
PLANNER_IMAGE = f"{REBALANCE_VALUES['plannerImage']['repository']}:{APP_VERSION}"
# A two-core node holds the driver and two executors only with requests below a core each.
PLANNER_RESOURCES = {"executorCpuRequest": "250m", "driverCpuRequest": "250m"}
# Spark pods start in tens of seconds each on a busy two-core machine.
PLANNING_TIMEOUT = 600

Assignment = dict[tuple[str, int], list[int]]


def rebalance_values(engines: list[str]) -> dict[str, Any]:
    """The chart's rebalance values: the engines, the work volume's claim, the CPU requests."""
    return {"enabled": True, "engines": engines, "workVolume": {"claimName": CLAIM},
            "plannerResources": PLANNER_RESOURCES}  # fmt: skip


def kafka_rebalance(name: str, topic_prefix: str, engine: dict[str, Any]) -> dict[str, Any]:
    """A full rebalance of the topics named `<topic_prefix>-...` only: other tests' topics share
    the session's Kafka."""
    return {"apiVersion": "kto.dev/v1", "kind": "KafkaRebalance", "metadata": {"name": name},
            "spec": {"excludedTopics": f"(?!{re.escape(topic_prefix)}-).*",
                     "engine": dict(engine)}}  # fmt: skip


def condition(release: Release, name: str) -> dict[str, Any]:
    conditions = release.get("kafkarebalance", name).get("status", {}).get("conditions") or [{}]
    return dict(conditions[0])


def wait_state(release: Release, name: str, state: str, timeout: float,
               context: Callable[[], str] = str) -> dict[str, Any]:  # fmt: skip
    """The KafkaRebalance once in `state`; NotReady fails at once, with what `context` says."""

    def reached() -> bool:
        found = condition(release, name)
        assert found.get("type") != "NotReady", (found, context())
        return found.get("type") == state

    eventually(reached, f"KafkaRebalance {name} {state}", timeout)
    return release.get("kafkarebalance", name)


def approve(release: Release, name: str) -> None:
    release.kubectl("annotate", "--overwrite", "kafkarebalance", name, "kto.dev/rebalance=approve")


def assignment(node_session: NodeSession, topics: list[str]) -> Assignment:
    """Each partition's replicas as the brokers answer a metadata request."""
    cluster = SimpleNamespace(bootstrap=node_session.bootstrap)
    found = {}
    for topic in topics:
        partitions = metadata(cluster, topic) or {}
        found.update({(topic, p): list(s.replicas) for p, s in partitions.items()})
    return found


def crowded_topics(node_session: NodeSession, prefix: str) -> tuple[list[str], Assignment]:
    """Three topics of six partitions with every replica on brokers 0 and 1: broker 2 as if it
    had joined empty. Made in ZooKeeper as Kafka's own tools would: a KafkaTopic's
    replicaAssignment would be restored by its reconcile after the rebalance."""
    topics = [f"{prefix}-{i}" for i in range(3)]
    client = ZkClient(node_session.kafka_zookeeper)
    client.start()
    try:
        crowded = {p: [p % 2, (p + 1) % 2] for p in range(6)}
        for topic in topics:
            admin.create_topic_with_assignment(client, topic, crowded)
    finally:
        client.stop()

    def all_there() -> Assignment | None:
        found = assignment(node_session, topics)
        return found if len(found) == 18 else None

    before = eventually(all_there, "the crowded topics in the brokers' metadata", timeout=60)
    assert {b for replicas in before.values() for b in replicas} == {0, 1}
    return topics, before


def the_plan_is_the_in_process_planners(
    release: Release, ready: dict[str, Any], directory: Path, prefix: str, before: Assignment,
    driver_log: str, scratch: Path,
) -> None:  # fmt: skip
    """The plan in the volume's `directory` is shown in status and is the plan the in-process
    planner makes from the same snapshot, whose crowded topics are as they were `before`."""
    assert {"input.json", "plan.json", "changes.json", "result.json"} <= {
        p.name for p in directory.iterdir()
    }
    snapshot = json.loads((directory / "input.json").read_text())
    assert {(p["topic"], p["partition"]): p["replicas"] for p in snapshot["partitions"]
            if p["topic"].startswith(f"{prefix}-")} == before  # fmt: skip
    # How many moves depends on the other tests' topics the shared Kafka holds (they count as
    # load, though excluded): the driver, status and the in-process planner must agree.
    message = condition(release, ready["metadata"]["name"])["message"]
    moves = re.match(r"(\d+) replica moves \(lower bound (\d+)\), (\d+) leader moves", message)
    assert moves is not None, message
    replica_moves, _, leader_moves = moves.groups()
    assert f"planned {replica_moves} replica moves and {leader_moves} leader moves" in driver_log
    alone = plan_in_process(PlanningInput.from_json(snapshot))
    assert alone is not None
    write_output(alone, scratch)
    for name in ("plan.json", "changes.json"):
        assert json.loads((directory / name).read_text()) == json.loads(
            (scratch / name).read_text()
        )
    result = json.loads((directory / "result.json").read_text())["optimizationResult"]
    assert result == json.loads((scratch / "result.json").read_text())["optimizationResult"]
    assert ready["status"]["optimizationResult"] == result
    plan_map = release.get("configmap", ready["status"]["planConfigMap"])
    assert json.loads(plan_map["data"]["plan.json"]) == json.loads(
        (directory / "plan.json").read_text()
    )


def approved_plan_is_carried_out(
    release: Release, node_session: NodeSession, name: str, topics: list[str], before: Assignment,
    directory: Path, context: Callable[[], str] = str,
) -> None:  # fmt: skip
    """Approved, Kafka's controller carries the plan out: the brokers answer with the planned
    lists, which give broker 2 its share."""
    planned = dict(before)
    for change in json.loads((directory / "changes.json").read_text()):
        planned[(change["topic"], change["partition"])] = change["after"]
    assert planned != before
    approve(release, name)
    wait_state(release, name, "Ready", timeout=300, context=context)
    eventually(lambda: assignment(node_session, topics) == planned,
               "the planned replicas in the brokers' metadata", timeout=120)  # fmt: skip
    counts = {b: sum(b in r for r in planned.values()) for b in (0, 1, 2)}
    assert counts[2] > 0 and sum(counts.values()) == 36, counts
