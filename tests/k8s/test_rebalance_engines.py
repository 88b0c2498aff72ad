"""The kubernetes and sparkApplication engines end to end: `kto run` against the API emulator
creates the Job or the SparkApplication of a KafkaRebalance's proposal and follows it, while the
test plays the cluster's part: it runs the real planning job into the proposal's directory (what
the Spark driver would do) and writes the object's status as the Job controller or the Spark
operator would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kto_testing import eventually
from status_captures import capture

from kafka_topic_operator.rebalance.engines import manifests as engines
from kafka_topic_operator.rebalance.engines.manifests import (
    planner_labels,
    planner_name,
    planning_paths,
)
from kafka_topic_operator.rebalance.spec import rebalance_spec

from .test_operator import ROOT, Setup, running
from .test_rebalance import annotate, apply, crowd, get, state_of, wait_state

pytestmark = [pytest.mark.zookeeper, pytest.mark.e2e]

IMAGE = "registry.example/kafka-topic-operator-spark:0.1.0"
SPARK_CRD = ROOT / "tests" / "rebalance" / "sparkapplications-crd.yaml"
JOB = ("batch", "v1", "jobs")
APP = ("sparkoperator.k8s.io", "v1beta2", "sparkapplications")


class Cluster:
    """The test's view of the emulated cluster, and the parts it plays."""

    def __init__(self, setup: Setup, work_dir: Path) -> None:
        from kubernetes import client

        self.setup, self.work_dir = setup, work_dir
        self.custom, self.core = client.CustomObjectsApi(), client.CoreV1Api()

    def engine(self, kind: str, **extra: Any) -> dict[str, Any]:
        return {"type": kind, "workDir": str(self.work_dir), "volume": "kto-plans",
                "serviceAccountName": "kto-planner", **extra}  # fmt: skip

    def proposal(self, name: str) -> str:
        """The proposal being planned, once the planner has been created for it."""

        def planning() -> str | None:
            status = get(self.setup, name).get("status") or {}
            conditions = status.get("conditions") or [{}]
            if conditions[0].get("reason") == "Planning" and status.get("proposalId"):
                return str(status["proposalId"])
            return None

        return eventually(planning, f"{name} planning", timeout=60)

    def read(self, resource: tuple[str, str, str], name: str) -> dict[str, Any] | None:
        from kubernetes.client.exceptions import ApiException

        try:
            found: dict[str, Any] = self.custom.get_namespaced_custom_object(
                *resource[:2], "default", resource[2], name
            )
        except ApiException as e:
            if e.status == 404:
                return None
            raise
        return found

    def created(self, resource: tuple[str, str, str], name: str) -> dict[str, Any]:
        return eventually(lambda: self.read(resource, name), f"{resource[2]} {name}", timeout=60)

    def listed(self, resource: tuple[str, str, str], rebalance: str) -> list[str]:
        found = self.custom.list_namespaced_custom_object(
            *resource[:2], "default", resource[2], label_selector=f"kto.dev/rebalance={rebalance}"
        )
        return sorted(o["metadata"]["name"] for o in found["items"])

    def set_status(self, resource: tuple[str, str, str], name: str, status: dict[str, Any]) -> None:
        self.custom.patch_namespaced_custom_object_status(
            *resource[:2], "default", resource[2], name, {"status": status}
        )

    def plan_for_real(self, name: str, proposal: str) -> Path:
        """What the Spark driver does: the planning job into the proposal's directory."""
        paths = planning_paths(str(self.work_dir), "default", name, proposal)
        command = engines.local_command(sys.executable, paths, master="local[1]")
        env = {**os.environ, "PYTHONPATH": str(ROOT / "operator")}
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        return Path(paths.output)

    def pods(self) -> list[str]:
        return sorted(p.metadata.name for p in self.core.list_namespaced_pod("default").items)

    def pod(self, name: str, labels: dict[str, str], owner: dict[str, Any] | None = None) -> None:
        metadata: dict[str, Any] = {"name": name, "labels": labels}
        if owner is not None:
            metadata["ownerReferences"] = [owner]
        spec = {"containers": [{"name": "c", "image": IMAGE}]}
        self.core.create_namespaced_pod("default", {"metadata": metadata, "spec": spec})


@pytest.fixture
def cluster(zk_chroot: str, tmp_path: Path) -> Iterator[Cluster]:
    # The operator as the Helm chart runs it: no Spark of its own, a default planner image and
    # service account.
    with running(zk_chroot, tmp_path, "--planner-image", IMAGE,
                 "--planner-service-account", "chart-planner",
                 "--rebalance-engines", "kubernetes,sparkApplication") as setup:  # fmt: skip
        setup.ext.create_custom_resource_definition(yaml.safe_load(SPARK_CRD.read_text()))
        work_dir = tmp_path / "plans"  # the volume, as mounted in the operator's pod
        work_dir.mkdir()
        yield Cluster(setup, work_dir)


def condition(cluster: Cluster, name: str) -> dict[str, Any]:
    conditions = (get(cluster.setup, name).get("status") or {}).get("conditions") or [{}]
    return dict(conditions[0])


def not_ready(cluster: Cluster, name: str) -> dict[str, Any]:
    wait_state(cluster.setup, name, "NotReady", timeout=60)
    return condition(cluster, name)


JOB_COMPLETE = {
    "startTime": "2025-01-01T00:00:00Z",
    "completionTime": "2025-01-01T00:05:00Z",
    "succeeded": 1,
    "conditions": [
        {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached"},
        {"type": "Complete", "status": "True", "reason": "CompletionsReached"},
    ],
}


def the_plan_is_shown(cluster: Cluster, name: str, directory: Path) -> None:
    ready = wait_state(cluster.setup, name, "ProposalReady", timeout=60)
    assert condition(cluster, name)["message"] == (
        "12 replica moves (lower bound 12), 6 leader moves"
    )
    plan = cluster.core.read_namespaced_config_map(ready["status"]["planConfigMap"], "default")
    assert plan.metadata.annotations["kto.dev/proposal"] == ready["status"]["proposalId"]
    assert plan.data["plan.json"] == (directory / "plan.json").read_text()
    assert plan.data["changes.json"] == (directory / "changes.json").read_text()


# -- the kubernetes engine: a Job running spark-submit --------------------------------------------


@pytest.mark.spark
def test_the_kubernetes_engine_plans_with_a_job_the_operator_creates_and_follows(
    cluster: Cluster,
) -> None:
    crowd(cluster.setup)
    # An older proposal's directory: removed once the new proposal is shown.
    stale = cluster.work_dir / "default" / "even-out" / "0123456789ab"
    stale.mkdir(parents=True)
    (stale / "snapshot.parquet").write_text("old")
    engine = cluster.engine("kubernetes", executors=2)
    apply(cluster.setup, "even-out", engine=engine)
    proposal = cluster.proposal("even-out")
    name = planner_name("even-out", proposal)
    job = cluster.created(JOB, name)
    rebalance = get(cluster.setup, "even-out")
    paths = planning_paths(str(cluster.work_dir), "default", "even-out", proposal)

    assert job["metadata"]["labels"] == planner_labels("even-out", proposal)
    (owner,) = job["metadata"]["ownerReferences"]
    assert owner == {"apiVersion": "kto.dev/v1", "kind": "KafkaRebalance", "name": "even-out",
                     "uid": rebalance["metadata"]["uid"], "controller": True,
                     "blockOwnerDeletion": True}  # fmt: skip
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == IMAGE  # the operator's --planner-image
    assert container["command"] == ["spark-submit"]
    args = container["args"]
    assert args[:4] == ["--master", "k8s://https://kubernetes.default.svc",
                        "--deploy-mode", "cluster"]  # fmt: skip
    assert args[-5:] == [engines.JOB_APPLICATION, "--input", paths.input, "--output", paths.output]
    assert f"spark.kubernetes.container.image={IMAGE}" in args
    assert "spark.kubernetes.authenticate.driver.serviceAccountName=kto-planner" in args
    assert "spark.executor.instances=2" in args
    claim = "spark.kubernetes.driver.volumes.persistentVolumeClaim.workdir"
    assert f"{claim}.options.claimName=kto-plans" in args
    assert f"{claim}.mount.path={cluster.work_dir}" in args
    assert pod["serviceAccountName"] == "kto-planner"
    assert {"name": "workdir", "persistentVolumeClaim": {"claimName": "kto-plans"}} in pod[
        "volumes"
    ]
    # Exactly what rebalance.engines builds for this spec and proposal.
    built = engines.kubernetes_job(rebalance, rebalance_spec({"engine": engine}), paths,
                                   default_image=IMAGE, proposal=proposal)  # fmt: skip
    assert job["spec"] == built["spec"]
    planning_input = json.loads(Path(paths.input).read_text())
    assert planning_input["brokers"] == [0, 1, 2] and len(planning_input["partitions"]) == 18
    assert state_of(cluster.setup, "even-out") == "PendingProposal"
    assert condition(cluster, "even-out")["message"] == (
        f"planning proposal {proposal} with Job default/{name}"
    )
    capture(get(cluster.setup, "even-out"))

    directory = cluster.plan_for_real("even-out", proposal)
    # spark-submit's driver pod, which outlives it (completed, holding its log).
    cluster.pod(f"{name}-driver", {**planner_labels("even-out", proposal), "spark-role": "driver"})
    cluster.set_status(JOB, name, JOB_COMPLETE)
    the_plan_is_shown(cluster, "even-out", directory)
    assert not stale.exists() and directory.is_dir()
    # The plan read, the finished planner and its driver pod are deleted.
    eventually(lambda: not cluster.listed(JOB, "even-out"), "the finished Job deleted")
    eventually(lambda: cluster.pods() == [], "the finished driver pod deleted")


def test_an_engine_of_type_and_size_only_takes_the_operators_planner_defaults(
    zk_chroot: str, tmp_path: Path
) -> None:
    # What the Helm chart passes with rebalance.enabled: the work directory its claim is mounted
    # at, the claim in its own namespace, and the planner pods' CPU requests.
    work_dir = tmp_path / "plans"
    work_dir.mkdir()
    with running(zk_chroot, tmp_path, "--planner-image", IMAGE,
                 "--planner-service-account", "chart-planner", "--rebalance-engines", "kubernetes",
                 "--planner-work-dir", str(work_dir), "--planner-volume", "default/chart-plans",
                 "--planner-executor-cpu-request", "250m",
                 "--planner-driver-cpu-request", "0.5") as setup:  # fmt: skip
        cluster = Cluster(setup, work_dir)
        crowd(setup)
        engine = {"type": "kubernetes", "executors": 2, "executorMemory": "1Gi"}
        apply(setup, "sized", engine=engine)
        proposal = cluster.proposal("sized")
        job = cluster.created(JOB, planner_name("sized", proposal))
        pod = job["spec"]["template"]["spec"]
        args = pod["containers"][0]["args"]
        paths = planning_paths(str(work_dir), "default", "sized", proposal)
        assert args[-4:] == ["--input", paths.input, "--output", paths.output]
        assert Path(paths.input).is_file()  # written where the operator mounts the claim
        for role in ("driver", "executor"):
            claim = f"spark.kubernetes.{role}.volumes.persistentVolumeClaim.workdir"
            assert f"{claim}.options.claimName=chart-plans" in args
            assert f"{claim}.mount.path={work_dir}" in args
        assert "spark.kubernetes.executor.request.cores=250m" in args
        assert "spark.kubernetes.driver.request.cores=0.5" in args
        assert "spark.executor.memory=1g" in args
        assert "spark.kubernetes.authenticate.driver.serviceAccountName=chart-planner" in args
        assert {"name": "workdir", "persistentVolumeClaim": {"claimName": "chart-plans"}} in pod[
            "volumes"
        ]


def test_without_a_work_dir_of_its_own_or_the_operators_the_rebalance_is_not_ready(
    cluster: Cluster,
) -> None:
    crowd(cluster.setup)
    apply(cluster.setup, "nowhere", engine={"type": "kubernetes", "executors": 2})
    refused = not_ready(cluster, "nowhere")
    assert (refused["reason"], refused["message"]) == (
        "WorkDirUnreachable",
        "spec.engine.workDir is not set and this operator has no default work directory (kto run "
        "--planner-work-dir; the Helm chart's rebalance.workDir, with rebalance.enabled)",
    )
    assert cluster.listed(JOB, "nowhere") == []


def test_a_failed_job_is_not_ready_with_its_reason_and_where_the_logs_are(
    cluster: Cluster,
) -> None:
    crowd(cluster.setup)
    engine = cluster.engine("kubernetes")
    del engine["serviceAccountName"]  # the operator's --planner-service-account, then
    apply(cluster.setup, "late", engine=engine)
    proposal = cluster.proposal("late")
    name = planner_name("late", proposal)
    pod = cluster.created(JOB, name)["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "chart-planner"
    assert ("spark.kubernetes.authenticate.driver.serviceAccountName=chart-planner"
            in pod["containers"][0]["args"])  # fmt: skip
    cluster.set_status(JOB, name, {"failed": 1, "conditions": [
        {"type": "FailureTarget", "status": "True", "reason": "DeadlineExceeded"},
        {"type": "Failed", "status": "True", "reason": "DeadlineExceeded",
         "message": "Job was active longer than specified deadline"},
    ]})  # fmt: skip
    failed = not_ready(cluster, "late")
    assert failed["reason"] == "PlanningFailed"
    assert failed["message"] == (
        f"Job default/{name} failed (DeadlineExceeded: Job was active longer than specified "
        f"deadline); spark-submit's log: kubectl -n default logs job/{name}; the driver's: "
        f"kubectl -n default logs -l spark-role=driver,kto.dev/proposal={proposal}"
    )
    assert get(cluster.setup, "late")["status"]["proposalId"] == proposal
    # The failed planner stays for its logs until the next proposal replaces it.
    cluster.pod(f"{name}-driver", {**planner_labels("late", proposal), "spark-role": "driver"})
    assert cluster.listed(JOB, "late") == [name]
    annotate(cluster.setup, "late", "refresh")
    second = eventually(lambda: (p := cluster.proposal("late")) != proposal and p, "a new one")
    cluster.created(JOB, planner_name("late", second))
    assert cluster.listed(JOB, "late") == [planner_name("late", second)]
    assert cluster.pods() == []


def test_a_job_that_succeeds_without_a_plan_is_planning_failed(cluster: Cluster) -> None:
    """spark-submit in cluster mode exits 0 even when the driver fails: the Job completes."""
    crowd(cluster.setup)
    apply(cluster.setup, "silent", engine=cluster.engine("kubernetes"))
    proposal = cluster.proposal("silent")
    name = planner_name("silent", proposal)
    cluster.created(JOB, name)
    cluster.set_status(JOB, name, JOB_COMPLETE)
    failed = not_ready(cluster, "silent")
    directory = cluster.work_dir / "default" / "silent" / proposal
    assert failed["reason"] == "PlanningFailed"
    assert failed["message"].startswith(
        f"Job default/{name} succeeded but the planning job wrote no plan.json, changes.json, "
        f"result.json to {directory}: "
    )
    assert failed["message"].endswith(
        f"the driver's: kubectl -n default logs -l spark-role=driver,kto.dev/proposal={proposal}"
    )


def test_the_jobs_own_reason_is_reported_when_the_driver_could_not_plan(
    cluster: Cluster,
) -> None:
    crowd(cluster.setup)
    apply(cluster.setup, "capped", engine=cluster.engine("kubernetes"))
    proposal = cluster.proposal("capped")
    name = planner_name("capped", proposal)
    cluster.created(JOB, name)
    # What the driver's planning job leaves when it cannot plan (rebalance.job.write_failure).
    failure = {"reason": "CannotPlan", "message": "maxReplicasPerBroker 11 cannot be met"}
    (cluster.work_dir / "default" / "capped" / proposal / "error.json").write_text(
        json.dumps(failure)
    )
    cluster.set_status(JOB, name, JOB_COMPLETE)
    failed = not_ready(cluster, "capped")
    assert (failed["reason"], failed["message"]) == (
        "CannotPlan", "maxReplicasPerBroker 11 cannot be met"
    )  # fmt: skip


def test_stop_while_the_job_runs_deletes_it_its_pod_and_the_driver(cluster: Cluster) -> None:
    crowd(cluster.setup)
    apply(cluster.setup, "halted", engine=cluster.engine("kubernetes"))
    proposal = cluster.proposal("halted")
    name = planner_name("halted", proposal)
    job = cluster.created(JOB, name)
    labels = planner_labels("halted", proposal)
    # The Job controller's pod (owned by the Job) and spark-submit's driver pod (owned by
    # nothing: only its labels tie it to the proposal); an unrelated pod stays.
    cluster.pod(
        f"{name}-x7k2p",
        labels,
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": name,
            "uid": job["metadata"]["uid"],
            "controller": True,
        },
    )
    cluster.pod(f"{name}-driver", {**labels, "spark-role": "driver"})
    cluster.pod("bystander", {"spark-role": "driver", "kto.dev/proposal": "0123456789ab"})
    annotate(cluster.setup, "halted", "stop")
    stopped = wait_state(cluster.setup, "halted", "Stopped", timeout=60)
    assert stopped["status"]["conditions"][0]["message"] == "stopped on request"
    assert cluster.read(JOB, name) is None
    assert cluster.pods() == ["bystander"]


def test_a_spec_changed_while_the_job_runs_replaces_it_with_a_new_proposals(
    cluster: Cluster,
) -> None:
    crowd(cluster.setup)
    apply(cluster.setup, "resized", engine=cluster.engine("kubernetes", executors=1))
    first = cluster.proposal("resized")
    cluster.created(JOB, planner_name("resized", first))
    cluster.setup.api.patch_namespaced_custom_object(
        "kto.dev", "v1", "default", "kafkarebalances", "resized",
        {"spec": {"engine": {"executors": 3}}},
    )  # fmt: skip
    second = eventually(lambda: (p := cluster.proposal("resized")) != first and p, "a new proposal")
    job = cluster.created(JOB, planner_name("resized", second))
    assert "spark.executor.instances=3" in job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert cluster.listed(JOB, "resized") == [planner_name("resized", second)]


def test_a_restarted_operator_follows_the_job_it_had_created(cluster: Cluster) -> None:
    crowd(cluster.setup)
    apply(cluster.setup, "steady", engine=cluster.engine("kubernetes"))
    proposal = cluster.proposal("steady")
    name = planner_name("steady", proposal)
    cluster.created(JOB, name)
    cluster.setup.operator.kill()  # kill -9, mid-planning
    cluster.setup.operator.wait(30)
    annotate(cluster.setup, "steady", "approve")  # refused while planning: changes nothing
    cluster.setup.operator = cluster.setup.restart_operator()
    # The Job ends while (or before) the new operator looks: it reports this Job's end, for the
    # same proposal, and never made a second Job.
    cluster.set_status(JOB, name, {"failed": 1, "conditions": [
        {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]})  # fmt: skip
    failed = not_ready(cluster, "steady")
    assert failed["message"].startswith(f"Job default/{name} failed (BackoffLimitExceeded)")
    assert get(cluster.setup, "steady")["status"]["proposalId"] == proposal
    assert cluster.listed(JOB, "steady") == [name]
    assert "kto.dev/rebalance" not in get(cluster.setup, "steady")["metadata"]["annotations"]


def test_a_stop_asked_while_no_operator_ran_deletes_the_job_on_restart(cluster: Cluster) -> None:
    crowd(cluster.setup)
    apply(cluster.setup, "paused", engine=cluster.engine("kubernetes"))
    proposal = cluster.proposal("paused")
    name = planner_name("paused", proposal)
    cluster.created(JOB, name)
    cluster.setup.operator.kill()
    cluster.setup.operator.wait(30)
    annotate(cluster.setup, "paused", "stop")
    cluster.setup.operator = cluster.setup.restart_operator()
    wait_state(cluster.setup, "paused", "Stopped", timeout=60)
    assert cluster.read(JOB, name) is None


def test_a_work_dir_the_operator_cannot_reach_is_not_ready_and_creates_nothing(
    cluster: Cluster,
) -> None:
    crowd(cluster.setup)
    apply(cluster.setup, "remote", engine={"type": "kubernetes", "workDir": "s3a://plans/kto"})
    apply(cluster.setup, "unmounted", engine=cluster.engine("kubernetes", workDir="/mnt/kto"))
    uri = not_ready(cluster, "remote")
    assert uri["reason"] == "WorkDirUnreachable"
    assert uri["message"].startswith(
        "spec.engine.workDir s3a://plans/kto is a URI: this operator exchanges the planning files "
        "only through a directory mounted in its pod, and does not support object stores"
    )
    missing = not_ready(cluster, "unmounted")
    assert (missing["reason"], missing["message"]) == (
        "WorkDirUnreachable",
        "spec.engine.workDir /mnt/kto is not a directory in the operator's pod: mount the volume "
        "of spec.engine.volume there too (the Helm chart mounts rebalance.workVolume at "
        "rebalance.workDir)",
    )
    assert cluster.listed(JOB, "remote") == cluster.listed(JOB, "unmounted") == []


def test_the_local_engine_is_refused_by_an_operator_without_it(cluster: Cluster) -> None:
    apply(cluster.setup, "here")
    refused = not_ready(cluster, "here")
    assert (refused["reason"], refused["message"]) == (
        "EngineNotEnabled",
        "engine local is not enabled in this operator (kto run --rebalance-engines: kubernetes, "
        "sparkApplication): the local engine runs Spark in the operator's pod, whose image has "
        "none",
    )


# -- the sparkApplication engine: a SparkApplication for the Spark operator ----------------------


@pytest.mark.spark
def test_the_spark_application_engine_plans_with_the_spark_operator(cluster: Cluster) -> None:
    crowd(cluster.setup)
    engine = cluster.engine("sparkApplication", executors=2, image="planner:2")
    apply(cluster.setup, "even-out", engine=engine)
    proposal = cluster.proposal("even-out")
    name = planner_name("even-out", proposal)
    app = cluster.created(APP, name)
    rebalance = get(cluster.setup, "even-out")
    paths = planning_paths(str(cluster.work_dir), "default", "even-out", proposal)
    assert app["metadata"]["labels"] == planner_labels("even-out", proposal)
    assert app["metadata"]["ownerReferences"][0]["uid"] == rebalance["metadata"]["uid"]
    spec = app["spec"]
    assert (spec["type"], spec["mode"], spec["image"]) == ("Python", "cluster", "planner:2")
    assert spec["mainApplicationFile"] == engines.JOB_APPLICATION
    assert spec["arguments"] == ["--input", paths.input, "--output", paths.output]
    assert spec["driver"]["serviceAccount"] == "kto-planner"
    assert spec["executor"]["instances"] == 2
    assert spec["volumes"] == [{"name": "workdir",
                                "persistentVolumeClaim": {"claimName": "kto-plans"}}]  # fmt: skip
    for role in ("driver", "executor"):
        assert spec[role]["volumeMounts"] == [{"name": "workdir",
                                               "mountPath": str(cluster.work_dir)}]  # fmt: skip
    built = engines.spark_application(rebalance, rebalance_spec({"engine": engine}), paths,
                                      default_image=IMAGE, proposal=proposal)  # fmt: skip
    assert spec == built["spec"]

    cluster.set_status(APP, name, {"applicationState": {"state": "RUNNING"},
                                   "driverInfo": {"podName": f"{name}-driver"}})  # fmt: skip
    directory = cluster.plan_for_real("even-out", proposal)
    assert state_of(cluster.setup, "even-out") == "PendingProposal"  # RUNNING: still planning
    cluster.set_status(APP, name, {"applicationState": {"state": "COMPLETED"},
                                   "driverInfo": {"podName": f"{name}-driver"}})  # fmt: skip
    the_plan_is_shown(cluster, "even-out", directory)
    eventually(lambda: not cluster.listed(APP, "even-out"), "the finished application deleted")


def test_a_failed_spark_application_is_not_ready_with_its_error(cluster: Cluster) -> None:
    crowd(cluster.setup)
    apply(cluster.setup, "broken", engine=cluster.engine("sparkApplication"))
    proposal = cluster.proposal("broken")
    name = planner_name("broken", proposal)
    cluster.created(APP, name)
    cluster.set_status(APP, name, {
        "applicationState": {"state": "FAILED",
                             "errorMessage": "driver container failed with ExitCode: 1"},
        "driverInfo": {"podName": f"{name}-driver"},
    })  # fmt: skip
    failed = not_ready(cluster, "broken")
    assert (failed["reason"], failed["message"]) == (
        "PlanningFailed",
        f"SparkApplication default/{name} failed (FAILED: driver container failed with "
        f"ExitCode: 1); the driver's log: kubectl -n default logs {name}-driver; kubectl -n "
        f"default describe sparkapplication {name}",
    )


def test_a_driver_that_refused_its_input_is_not_ready_with_the_jobs_reason(
    cluster: Cluster,
) -> None:
    crowd(cluster.setup)
    apply(cluster.setup, "refused", engine=cluster.engine("sparkApplication"))
    proposal = cluster.proposal("refused")
    name = planner_name("refused", proposal)
    cluster.created(APP, name)
    # What the planning job leaves when its plan broke a hard goal; the driver then exits 2.
    failure = {
        "reason": "ProposalFailed",
        "message": "the brokers to remove cannot be emptied: 3 on broker 2 would stay",
    }
    (cluster.work_dir / "default" / "refused" / proposal / "error.json").write_text(
        json.dumps(failure)
    )
    cluster.set_status(APP, name, {
        "applicationState": {"state": "FAILED",
                             "errorMessage": "driver container failed with ExitCode: 2"},
        "driverInfo": {"podName": f"{name}-driver"},
    })  # fmt: skip
    failed = not_ready(cluster, "refused")
    assert (failed["reason"], failed["message"]) == ("ProposalFailed", failure["message"])


def test_refresh_while_the_application_runs_replaces_it_with_a_new_proposals(
    cluster: Cluster,
) -> None:
    crowd(cluster.setup)
    apply(cluster.setup, "again", engine=cluster.engine("sparkApplication"))
    first = cluster.proposal("again")
    cluster.created(APP, planner_name("again", first))
    annotate(cluster.setup, "again", "refresh")
    second = eventually(lambda: (p := cluster.proposal("again")) != first and p, "a new proposal")
    cluster.created(APP, planner_name("again", second))
    assert cluster.listed(APP, "again") == [planner_name("again", second)]


def test_without_the_spark_operator_the_engine_is_not_ready_with_the_reason(
    cluster: Cluster,
) -> None:
    cluster.setup.ext.delete_custom_resource_definition("sparkapplications.sparkoperator.k8s.io")
    crowd(cluster.setup)
    apply(cluster.setup, "nowhere", engine=cluster.engine("sparkApplication"))
    refused = not_ready(cluster, "nowhere")
    assert (refused["reason"], refused["message"]) == (
        "PlannerRefused",
        "the API server does not serve sparkapplications.sparkoperator.k8s.io/v1beta2: install "
        "the Spark operator (its SparkApplication CRD) or use the kubernetes engine",
    )


def test_an_operator_run_with_no_rebalance_leaves_kafkarebalances_alone(
    zk_chroot: str, tmp_path: Path
) -> None:
    with running(zk_chroot, tmp_path, "--no-rebalance") as setup:
        apply(setup, "untouched")
        setup.apply("orders", partitions=1, replicas=1)
        setup.ready("orders")  # the operator is up and handling events
        assert "status" not in get(setup, "untouched")
