"""KafkaRebalances planned by Spark on Kubernetes on the real node: the chart installed with
rebalance enabled and a work volume, on real Kafka (ZooKeeper mode). The kubernetes engine's Job
runs spark-submit in cluster mode, which starts a driver pod and executor pods from the spark
image; the plan lands in the volume and is the one the in-process planner makes from the same
snapshot; approving it moves real replicas. Refresh and stop while the driver runs leave no pod
or Job behind."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from kafka_client import metadata
from kto_testing import eventually
from node_session import NodeSession

from kafka_topic_operator.rebalance.engines.manifests import KUBERNETES_MASTER, planner_name
from kafka_topic_operator.rebalance.in_process import plan_in_process
from kafka_topic_operator.rebalance.job import write_output
from kafka_topic_operator.rebalance.planning_io import PlanningInput
from kafka_topic_operator.zk import admin
from kafka_topic_operator.zk.client import ZkClient
from kto_dev.node import chart, configs, storage

from .helpers import Release, kafka_topic, unique
from .spark_pods import Seen, live, watching

pytestmark = pytest.mark.node

CLAIM = "kto-plans"
# The chart's own defaults: where the operator mounts the claim, and the planner image.
REBALANCE_VALUES = yaml.safe_load((chart.CHART / "values.yaml").read_text())["rebalance"]
WORK_DIR = REBALANCE_VALUES["workDir"]
APP_VERSION = yaml.safe_load((chart.CHART / "Chart.yaml").read_text())["appVersion"]
PLANNER_IMAGE = f"{REBALANCE_VALUES['plannerImage']['repository']}:{APP_VERSION}"
# All a KafkaRebalance in the release's namespace needs: the chart gives the work directory, the
# claim, the image, the service account and (as values here) the CPU requests.
ENGINE = {"type": "kubernetes", "executors": 2, "executorMemory": "1Gi"}
# A two-core node holds the driver and two executors only with requests below a core each.
PLANNER_RESOURCES = {"executorCpuRequest": "250m", "driverCpuRequest": "250m"}
# Spark pods start in tens of seconds each on a busy two-core machine.
PLANNING_TIMEOUT = 600


@dataclass(frozen=True)
class Planning:
    release: Release
    volume: Path  # the work volume's folder on the node, as the pods see it at WORK_DIR


@pytest.fixture(scope="module")
def planning(node_session: NodeSession) -> Iterator[Planning]:
    """The chart with rebalancing enabled in a namespace of its own, on the session's Kafka, its
    work volume a claim bound to a folder of the node."""
    node = node_session.node
    namespace = unique("kr")
    volume = storage.work_volume(node, namespace, CLAIM)
    values = {"watch": {"namespaces": [namespace]},
              "zookeeper": {"connect": node_session.kafka_zookeeper},
              "rebalance": {"enabled": True, "workVolume": {"claimName": CLAIM},
                            "plannerResources": PLANNER_RESOURCES}}  # fmt: skip
    # Named as its namespace: the release's ClusterRole carries its name.
    release = Release(node, namespace, namespace, values)
    chart.install(node, release.name, namespace, values)
    yield Planning(release, volume)
    chart.uninstall(node, release.name, namespace)
    node.kubectl("delete", "namespace", namespace, "--wait=false")


def kafka_rebalance(name: str, topic_prefix: str) -> dict[str, Any]:
    """A full rebalance of the topics named `<topic_prefix>-...` only: other tests' topics share
    the session's Kafka."""
    return {"apiVersion": "kto.dev/v1", "kind": "KafkaRebalance", "metadata": {"name": name},
            "spec": {"excludedTopics": f"(?!{re.escape(topic_prefix)}-).*",
                     "engine": dict(ENGINE)}}  # fmt: skip


def condition(release: Release, name: str) -> dict[str, Any]:
    conditions = release.get("kafkarebalance", name).get("status", {}).get("conditions") or [{}]
    return dict(conditions[0])


def wait_state(release: Release, name: str, state: str, timeout: float) -> dict[str, Any]:
    def reached() -> bool:
        found = condition(release, name)
        assert found.get("type") != "NotReady", found  # a failure says why at once
        return found.get("type") == state

    eventually(reached, f"KafkaRebalance {name} {state}", timeout)
    return release.get("kafkarebalance", name)


def annotate(release: Release, name: str, value: str) -> None:
    release.kubectl("annotate", "--overwrite", "kafkarebalance", name, f"kto.dev/rebalance={value}")


def proposal_planned(release: Release, name: str, other_than: str = "") -> str:
    """The proposal being planned, once its Job has been created."""

    def planning() -> str | None:
        status = release.get("kafkarebalance", name).get("status") or {}
        proposal = status.get("proposalId")
        planning = condition(release, name).get("reason") == "Planning"
        return str(proposal) if planning and proposal not in (None, other_than) else None

    return eventually(planning, f"{name} planning a proposal", timeout=120)


def spark_pods_of(seen: Seen, proposal: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The proposal's driver and its executors, checked to be Spark's: on the node, one
    application, the executors owned by the driver (so the garbage collector deletes them with
    it)."""
    (driver,) = seen.role("driver", proposal)
    executors = seen.role("executor", proposal)
    app = driver["metadata"]["labels"]["spark-app-selector"]
    for pod in (driver, *executors):
        assert pod["spec"]["nodeName"] == configs.NODE_NAME
        assert pod["metadata"]["labels"]["spark-app-selector"] == app
        assert pod["spec"]["containers"][0]["image"].endswith(PLANNER_IMAGE)
    for executor in executors:
        (owner,) = executor["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["uid"]) == ("Pod", driver["metadata"]["uid"])
    return driver, executors


def assignment(node_session: NodeSession, topics: list[str]) -> dict[tuple[str, int], list[int]]:
    """Each partition's replicas as the brokers answer a metadata request."""
    cluster = SimpleNamespace(bootstrap=node_session.bootstrap)
    found = {}
    for topic in topics:
        partitions = metadata(cluster, topic) or {}  # type: ignore[arg-type]
        found.update({(topic, p): list(s.replicas) for p, s in partitions.items()})
    return found


def test_spark_on_kubernetes_plans_a_rebalance_that_real_kafka_carries_out(
    planning: Planning, node_session: NodeSession, tmp_path: Path
) -> None:
    release = planning.release
    prefix = unique("crowd")
    topics = [f"{prefix}-{i}" for i in range(3)]
    # Every replica on brokers 0 and 1: broker 2 as if it had joined empty. Made in ZooKeeper as
    # Kafka's own tools would: a KafkaTopic's replicaAssignment would be restored by its
    # reconcile after the rebalance.
    client = ZkClient(node_session.kafka_zookeeper)
    client.start()
    try:
        crowded = {p: [p % 2, (p + 1) % 2] for p in range(6)}
        for topic in topics:
            admin.create_topic_with_assignment(client, topic, crowded)
    finally:
        client.stop()
    before = eventually(lambda: (a := assignment(node_session, topics)) and len(a) == 18 and a,
                        "the crowded topics in the brokers' metadata", timeout=60)  # fmt: skip
    assert {b for replicas in before.values() for b in replicas} == {0, 1}

    with watching(release.node, release.namespace, "even-out") as watch:
        submitted = time.monotonic()
        release.apply(kafka_rebalance("even-out", prefix))
        ready = wait_state(release, "even-out", "ProposalReady", PLANNING_TIMEOUT)
        planned_in = time.monotonic() - submitted
        watch.poll()
        seen = watch.snapshot()
    proposal = ready["status"]["proposalId"]
    print(f"submitted to ProposalReady in {planned_in:.0f} s; pods: "
          + ", ".join(f"{n} ({p['metadata']['labels'].get('spark-role', 'spark-submit')})"
                      for n, p in sorted(seen.pods.items())))  # fmt: skip

    # The Job ran spark-submit in cluster mode against the API server, from the chart's
    # planner image, with the resource's executors.
    job = seen.jobs[planner_name("even-out", proposal)]
    (submitter,) = job["spec"]["template"]["spec"]["containers"]
    assert submitter["image"].endswith(PLANNER_IMAGE)
    assert submitter["command"] == ["spark-submit"]
    args = submitter["args"]
    assert args[:4] == ["--master", KUBERNETES_MASTER, "--deploy-mode", "cluster"]
    assert {"spark.executor.instances=2", "spark.executor.memory=1g"} <= set(args)
    # A driver and two executors ran on the node, and each executor ran tasks.
    driver, executors = spark_pods_of(seen, proposal)
    assert len(executors) >= 2
    for executor in executors:
        env = {e["name"]: e.get("value") for e in executor["spec"]["containers"][0]["env"]}
        assert env["SPARK_EXECUTOR_MEMORY"] == "1024m"
        log = seen.logs.get(executor["metadata"]["name"], "")
        assert "Running task" in log and "Finished task" in log, log[-3000:]
    driver_log = seen.logs[driver["metadata"]["name"]]
    assert driver_log.count("Registered executor") >= 2, driver_log[-3000:]
    assert re.search(r"planned \d+ replica moves and \d+ leader moves", driver_log), driver_log
    # The driver and its executors go with the Job once the plan is read.
    selector = f"kto.dev/proposal={proposal}"
    eventually(lambda: not live(release.node, release.namespace, "pods", selector)
               and not live(release.node, release.namespace, "jobs", selector),
               "the planner's pods and Job deleted", timeout=120)  # fmt: skip

    # The plan is in the volume, shown in status and the plan's ConfigMap, and is the plan the
    # in-process planner makes from the same snapshot.
    directory = planning.volume / release.namespace / "even-out" / proposal
    assert {"input.json", "plan.json", "changes.json", "result.json"} <= {
        p.name for p in directory.iterdir()
    }
    snapshot = json.loads((directory / "input.json").read_text())
    assert {(p["topic"], p["partition"]): p["replicas"] for p in snapshot["partitions"]
            if p["topic"].startswith(f"{prefix}-")} == before  # fmt: skip
    # How many moves depends on the other tests' topics the shared Kafka holds (they count as
    # load, though excluded): the driver, status and the in-process planner must agree.
    message = condition(release, "even-out")["message"]
    moves = re.match(r"(\d+) replica moves \(lower bound (\d+)\), (\d+) leader moves", message)
    assert moves is not None, message
    replica_moves, _, leader_moves = moves.groups()
    assert f"planned {replica_moves} replica moves and {leader_moves} leader moves" in driver_log
    alone = plan_in_process(PlanningInput.from_json(snapshot))
    assert alone is not None
    write_output(alone, tmp_path)
    for name in ("plan.json", "changes.json"):
        assert json.loads((directory / name).read_text()) == json.loads(
            (tmp_path / name).read_text()
        )
    result = json.loads((directory / "result.json").read_text())["optimizationResult"]
    assert result == json.loads((tmp_path / "result.json").read_text())["optimizationResult"]
    assert ready["status"]["optimizationResult"] == result
    plan_map = release.get("configmap", ready["status"]["planConfigMap"])
    assert json.loads(plan_map["data"]["plan.json"]) == json.loads(
        (directory / "plan.json").read_text()
    )

    # Approved, Kafka's controller carries it out: the brokers answer with the planned lists.
    planned = dict(before)
    for change in json.loads((directory / "changes.json").read_text()):
        planned[(change["topic"], change["partition"])] = change["after"]
    assert planned != before
    annotate(release, "even-out", "approve")
    wait_state(release, "even-out", "Ready", timeout=300)
    eventually(lambda: assignment(node_session, topics) == planned,
               "the planned replicas in the brokers' metadata", timeout=120)  # fmt: skip
    # Every replica was on brokers 0 and 1; the plan gives broker 2 its share.
    counts = {b: sum(b in r for r in planned.values()) for b in (0, 1, 2)}
    assert counts[2] > 0 and sum(counts.values()) == 36, counts

    # Deleted, its plan's ConfigMaps go with it: the real garbage collector follows their owner
    # references to it.
    selector = "kto.dev/rebalance=even-out"
    assert live(release.node, release.namespace, "configmaps", selector)
    release.kubectl("delete", "kafkarebalance", "even-out", "--wait=false")
    eventually(lambda: not live(release.node, release.namespace, "configmaps", selector),
               "the plan's ConfigMaps collected", timeout=120)  # fmt: skip


def test_refresh_and_stop_while_the_driver_runs_leave_no_pod_or_job(
    planning: Planning,
) -> None:
    release = planning.release
    node, namespace = release.node, release.namespace
    prefix = unique("busy")
    release.apply(kafka_topic(f"{prefix}-0", partitions=3, replicas=3))
    release.ready_topic(f"{prefix}-0")

    with watching(node, namespace, "halted") as watch:

        def executors_started(proposal: str) -> bool:
            """The proposal's driver runs and its executors exist: what refresh and stop
            must clean up."""
            seen = watch.snapshot()
            drivers = [p for p in seen.role("driver", proposal)
                       if p.get("status", {}).get("phase") == "Running"]  # fmt: skip
            return bool(drivers) and len(seen.role("executor", proposal)) >= 2

        release.apply(kafka_rebalance("halted", prefix))
        first = proposal_planned(release, "halted")
        eventually(lambda: executors_started(first), "the first driver and its executors",
                   timeout=PLANNING_TIMEOUT)  # fmt: skip
        annotate(release, "halted", "refresh")
        second = proposal_planned(release, "halted", other_than=first)
        selector = f"kto.dev/proposal={first}"
        eventually(lambda: not live(node, namespace, "pods", selector)
                   and not live(node, namespace, "jobs", selector),
                   "the first proposal's Job, driver and executors deleted",
                   timeout=120)  # fmt: skip

        eventually(lambda: executors_started(second), "the second driver and its executors",
                   timeout=PLANNING_TIMEOUT)  # fmt: skip
        annotate(release, "halted", "stop")
        wait_state(release, "halted", "Stopped", timeout=120)
        selector = "kto.dev/rebalance=halted"
        eventually(lambda: not live(node, namespace, "pods", selector)
                   and not live(node, namespace, "jobs", selector),
                   "every pod and Job of the rebalance deleted", timeout=120)  # fmt: skip
        seen = watch.snapshot()

    # What was deleted was Spark's: each proposal's driver and executors, owned by the driver.
    for proposal in (first, second):
        _, executors = spark_pods_of(seen, proposal)
        assert len(executors) >= 2
        assert planner_name("halted", proposal) in seen.jobs
    assert condition(release, "halted")["message"] == "stopped on request"
