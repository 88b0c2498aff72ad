"""KafkaRebalances planned through the real Spark operator (kubeflow/spark-operator, built from
its Go module: kto_dev.spark_operator) on the real node: its CRDs installed, its webhook and
controller running on the host against the node's API server, the chart installed with the
sparkApplication engine and a work volume, on real Kafka (ZooKeeper mode). The operator creates a
SparkApplication; the Spark operator's controller runs spark-submit, its webhook gives the driver
and executor pods the application's volume and security contexts; the plan is the one the
in-process planner makes from the same snapshot, and approving it moves real replicas. Deleting
the KafkaRebalance deletes its SparkApplication and the pods with it."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kto_testing import eventually
from node_session import NodeSession

from kafka_topic_operator.rebalance.engines.manifests import RUN_AS, SPARK_API_VERSION, planner_name
from kto_dev.node import chart, configs, storage
from kto_dev.spark_operator.launcher import SparkOperator

from .helpers import Release, kafka_topic, unique
from .rebalancing import (
    CLAIM,
    PLANNER_IMAGE,
    PLANNING_TIMEOUT,
    WORK_DIR,
    approved_plan_is_carried_out,
    crowded_topics,
    rebalance_values,
    the_plan_is_the_in_process_planners,
)
from .rebalancing import kafka_rebalance as rebalance_of
from .rebalancing import wait_state as rebalance_state
from .spark_pods import Seen, live, watching

pytestmark = pytest.mark.node

# As the kubernetes engine's test: the chart gives the rest (work directory, claim, image,
# service account, CPU requests).
ENGINE = {"type": "sparkApplication", "executors": 2, "executorMemory": "1Gi"}
# What the Spark operator puts on the pods it launches (its pkg/common).
APP_NAME_LABEL = "sparkoperator.k8s.io/app-name"
LAUNCHED_LABEL = "sparkoperator.k8s.io/launched-by-spark-operator"


@dataclass(frozen=True)
class Planning:
    release: Release
    volume: Path  # the work volume's folder on the node, as the pods see it at WORK_DIR
    spark_operator: SparkOperator

    def controller_log(self) -> str:
        return self.spark_operator.controller_log.read_text(errors="replace")[-3000:]


@pytest.fixture(scope="module")
def planning(
    node_session: NodeSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Planning]:
    """The Spark operator watching a namespace of its own, and the chart there with the
    sparkApplication engine, on the session's Kafka, its work volume a claim on the node."""
    node = node_session.node
    namespace = unique("sa")
    volume = storage.work_volume(node, namespace, CLAIM)
    # Its CRD before the chart: the operator checks for it when a KafkaRebalance names it.
    operator = SparkOperator(tmp_path_factory.mktemp("spark-operator"), node.kubeconfig,
                             [namespace], name=f"kto-spark-operator-{namespace}")  # fmt: skip
    with operator:
        values = {"watch": {"namespaces": [namespace]},
                  "zookeeper": {"connect": node_session.kafka_zookeeper},
                  "rebalance": rebalance_values(["sparkApplication"])}  # fmt: skip
        release = Release(node, namespace, namespace, values)
        chart.install(node, release.name, namespace, values)
        try:
            yield Planning(release, volume, operator)
        finally:
            chart.uninstall(node, release.name, namespace)
            node.kubectl("delete", "namespace", namespace, "--wait=false")


def kafka_rebalance(name: str, topic_prefix: str) -> dict[str, Any]:
    return rebalance_of(name, topic_prefix, ENGINE)


def wait_state(planning: Planning, name: str, state: str, timeout: float) -> dict[str, Any]:
    # A failure says why at once, with what the Spark operator said.
    return rebalance_state(planning.release, name, state, timeout, planning.controller_log)


def launched_pods(seen: Seen, proposal: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The proposal's driver and executors, checked to be the Spark operator's: launched by it
    for the proposal's SparkApplication, on the node, from the planner image, the driver owned
    by the SparkApplication and the executors by the driver (the garbage collector deletes them
    with it)."""
    (driver,) = seen.role("driver", proposal)
    executors = seen.role("executor", proposal)
    application = driver["metadata"]["labels"][APP_NAME_LABEL]
    for pod in (driver, *executors):
        labels = pod["metadata"]["labels"]
        assert (labels[APP_NAME_LABEL], labels[LAUNCHED_LABEL]) == (application, "true")
        assert labels["spark-app-selector"] == driver["metadata"]["labels"]["spark-app-selector"]
        assert pod["spec"]["nodeName"] == configs.NODE_NAME
        assert pod["spec"]["containers"][0]["image"].endswith(PLANNER_IMAGE)
    (owner,) = driver["metadata"]["ownerReferences"]
    assert (owner["apiVersion"], owner["kind"]) == (SPARK_API_VERSION, "SparkApplication")
    assert owner["name"] == application
    for executor in executors:
        owners = {(o["kind"], o["uid"]) for o in executor["metadata"]["ownerReferences"]}
        assert ("Pod", driver["metadata"]["uid"]) in owners
    return driver, executors


def mutated_by_the_webhook(pod: dict[str, Any]) -> None:
    """What only the Spark operator's webhook puts on the pod from the SparkApplication: the
    work volume at workDir, the pod's and the container's security contexts."""
    spec = pod["spec"]
    claims = {v["name"]: v["persistentVolumeClaim"]["claimName"]
              for v in spec["volumes"] if "persistentVolumeClaim" in v}  # fmt: skip
    assert CLAIM in claims.values(), spec["volumes"]
    container = spec["containers"][0]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert any(mounts.get(name) == WORK_DIR for name, claim in claims.items() if claim == CLAIM)
    assert spec["securityContext"]["runAsUser"] == RUN_AS
    assert spec["securityContext"]["fsGroup"] == RUN_AS
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert container["securityContext"]["allowPrivilegeEscalation"] is False


def test_the_spark_operator_plans_a_rebalance_that_real_kafka_carries_out(
    planning: Planning, node_session: NodeSession, tmp_path: Path
) -> None:
    release = planning.release
    prefix = unique("crowd")
    topics, before = crowded_topics(node_session, prefix)

    with watching(release.node, release.namespace, "even-out") as watch:
        submitted = time.monotonic()
        release.apply(kafka_rebalance("even-out", prefix))
        ready = wait_state(planning, "even-out", "ProposalReady", PLANNING_TIMEOUT)
        planned_in = time.monotonic() - submitted
        watch.poll()
        seen = watch.snapshot()
    proposal = ready["status"]["proposalId"]
    print(f"submitted to ProposalReady in {planned_in:.0f} s; pods: "
          + ", ".join(f"{n} ({p['metadata']['labels'].get('spark-role')})"
                      for n, p in sorted(seen.pods.items())))  # fmt: skip

    # The Spark operator's controller submitted the operator's SparkApplication; a driver and
    # two executors ran on the node, each with what the webhook adds, and each executor ran tasks.
    application = planner_name("even-out", proposal)
    submitted_log = planning.spark_operator.controller_log.read_text(errors="replace")
    assert re.search(rf"Running spark-submit.*{re.escape(application)}", submitted_log)
    assert not seen.jobs
    driver, executors = launched_pods(seen, proposal)
    assert driver["metadata"]["labels"][APP_NAME_LABEL] == application
    assert len(executors) >= 2
    for pod in (driver, *executors):
        mutated_by_the_webhook(pod)
    for executor in executors:
        env = {e["name"]: e.get("value") for e in executor["spec"]["containers"][0]["env"]}
        assert env["SPARK_EXECUTOR_MEMORY"] == "1024m"
        # The chart's CPU request, which the resource left out (a SparkApplication's coreRequest).
        assert executor["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "250m"
        # (Said by each executor: the driver may have quietened its log before they register.)
        log = seen.logs.get(executor["metadata"]["name"], "")
        assert "Successfully registered with driver" in log, log[-3000:]
        assert "Running task" in log and "Finished task" in log, log[-3000:]
    driver_log = seen.logs[driver["metadata"]["name"]]
    assert re.search(r"planned \d+ replica moves and \d+ leader moves", driver_log), driver_log
    # Once the plan is read, the operator deletes the SparkApplication, and its pods go with it.
    selector = f"kto.dev/proposal={proposal}"
    eventually(lambda: not live(release.node, release.namespace, "sparkapplications", selector)
               and not live(release.node, release.namespace, "pods", selector),
               "the SparkApplication and its pods deleted", timeout=120)  # fmt: skip

    # The plan is in the volume, shown in status, and is the in-process planner's plan of the
    # same snapshot; approved, Kafka carries it out.
    directory = planning.volume / release.namespace / "even-out" / proposal
    the_plan_is_the_in_process_planners(release, ready, directory, prefix, before, driver_log,
                                        tmp_path)  # fmt: skip
    approved_plan_is_carried_out(release, node_session, "even-out", topics, before, directory,
                                 planning.controller_log)  # fmt: skip


def test_deleting_the_rebalance_deletes_its_spark_application_and_pods(planning: Planning) -> None:
    release = planning.release
    node, namespace = release.node, release.namespace
    prefix = unique("busy")
    release.apply(kafka_topic(f"{prefix}-0", partitions=3, replicas=3))
    release.ready_topic(f"{prefix}-0")

    with watching(node, namespace, "dropped") as watch:

        def executors_started() -> bool:
            seen = watch.snapshot()
            drivers = [p for p in seen.role("driver")
                       if p.get("status", {}).get("phase") == "Running"]  # fmt: skip
            return bool(drivers) and len(seen.role("executor")) >= 2

        release.apply(kafka_rebalance("dropped", prefix))
        eventually(executors_started, "the driver and its executors", timeout=PLANNING_TIMEOUT)
        selector = "kto.dev/rebalance=dropped"
        (application,) = live(node, namespace, "sparkapplications", selector)
        release.kubectl("delete", "kafkarebalance", "dropped", "--wait=false")
        eventually(lambda: not live(node, namespace, "sparkapplications", selector)
                   and not live(node, namespace, "pods", selector),
                   "the SparkApplication, its driver and executors deleted",
                   timeout=120)  # fmt: skip
        seen = watch.snapshot()

    # What was deleted was the Spark operator's: the application's driver and executors.
    (driver,) = seen.role("driver")
    assert driver["metadata"]["labels"][APP_NAME_LABEL] == application
    assert len(seen.role("executor")) >= 2
