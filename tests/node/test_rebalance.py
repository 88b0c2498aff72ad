"""KafkaRebalances planned by Spark on Kubernetes on the real node: the chart installed with
rebalance enabled and a work volume, on real Kafka (ZooKeeper mode). The kubernetes engine's Job
runs spark-submit in cluster mode, which starts a driver pod and executor pods from the spark
image; the plan lands in the volume and is the one the in-process planner makes from the same
snapshot; approving it moves real replicas. Refresh and stop while the driver runs leave no pod
or Job behind."""

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

from kafka_topic_operator.rebalance.engines.manifests import KUBERNETES_MASTER, planner_name
from kto_dev.node import chart, configs, storage

from .helpers import Release, kafka_topic, unique
from .rebalancing import (
    CLAIM,
    PLANNER_IMAGE,
    PLANNING_TIMEOUT,
    WORK_DIR,
    approved_plan_is_carried_out,
    condition,
    crowded_topics,
    rebalance_values,
    the_plan_is_the_in_process_planners,
    wait_state,
)
from .rebalancing import kafka_rebalance as rebalance_of
from .spark_pods import Seen, live, watching

pytestmark = pytest.mark.node

# All a KafkaRebalance in the release's namespace needs: the chart gives the work directory, the
# claim, the image, the service account and (as values here) the CPU requests.
ENGINE = {"type": "kubernetes", "executors": 2, "executorMemory": "1Gi"}


@dataclass(frozen=True)
class Planning:
    release: Release
    volume: Path  # the work volume's folder on the node, as the pods see it at the workDir


@pytest.fixture(scope="module")
def planning(node_session: NodeSession) -> Iterator[Planning]:
    """The chart with rebalancing enabled in a namespace of its own, on the session's Kafka, its
    work volume a claim bound to a folder of the node."""
    node = node_session.node
    namespace = unique("kr")
    volume = storage.work_volume(node, namespace, CLAIM)
    values = {"watch": {"namespaces": [namespace]},
              "zookeeper": {"connect": node_session.kafka_zookeeper},
              "rebalance": rebalance_values(["kubernetes"])}  # fmt: skip
    # Named as its namespace: the release's ClusterRole carries its name.
    release = Release(node, namespace, namespace, values)
    chart.install(node, release.name, namespace, values)
    yield Planning(release, volume)
    chart.uninstall(node, release.name, namespace)
    node.kubectl("delete", "namespace", namespace, "--wait=false")


def kafka_rebalance(name: str, topic_prefix: str) -> dict[str, Any]:
    return rebalance_of(name, topic_prefix, ENGINE)


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


def test_spark_on_kubernetes_plans_a_rebalance_that_real_kafka_carries_out(
    planning: Planning, node_session: NodeSession, tmp_path: Path
) -> None:
    release = planning.release
    prefix = unique("crowd")
    topics, before = crowded_topics(node_session, prefix)

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
    # What the resource left out, the chart's values gave: the claim, where it is mounted, the
    # pods' CPU requests.
    claim = "spark.kubernetes.driver.volumes.persistentVolumeClaim.workdir"
    assert {f"{claim}.options.claimName={CLAIM}", f"{claim}.mount.path={WORK_DIR}",
            "spark.kubernetes.executor.request.cores=250m",
            "spark.kubernetes.driver.request.cores=250m"} <= set(args)  # fmt: skip
    # A driver and two executors ran on the node, and each executor ran tasks.
    driver, executors = spark_pods_of(seen, proposal)
    assert len(executors) >= 2
    for executor in executors:
        env = {e["name"]: e.get("value") for e in executor["spec"]["containers"][0]["env"]}
        assert env["SPARK_EXECUTOR_MEMORY"] == "1024m"
        # (Said by each executor: the driver may have quietened its log before they register.)
        log = seen.logs.get(executor["metadata"]["name"], "")
        assert "Successfully registered with driver" in log, log[-3000:]
        assert "Running task" in log and "Finished task" in log, log[-3000:]
    driver_log = seen.logs[driver["metadata"]["name"]]
    assert re.search(r"planned \d+ replica moves and \d+ leader moves", driver_log), driver_log
    # The driver and its executors go with the Job once the plan is read.
    selector = f"kto.dev/proposal={proposal}"
    eventually(lambda: not live(release.node, release.namespace, "pods", selector)
               and not live(release.node, release.namespace, "jobs", selector),
               "the planner's pods and Job deleted", timeout=120)  # fmt: skip

    # The plan is in the volume, shown in status and the plan's ConfigMap, and is the plan the
    # in-process planner makes from the same snapshot; approved, Kafka carries it out.
    directory = planning.volume / release.namespace / "even-out" / proposal
    the_plan_is_the_in_process_planners(release, ready, directory, prefix, before, driver_log,
                                        tmp_path)  # fmt: skip
    approved_plan_is_carried_out(release, node_session, "even-out", topics, before, directory)

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
