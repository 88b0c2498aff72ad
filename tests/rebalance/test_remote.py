"""The remote engines as the operator follows them (rebalance/remote.py): the planner of a
proposal, the work directory's reachability, the end read from status, and the messages."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_topic_operator.rebalance.engines import remote
from kafka_topic_operator.rebalance.engines.manifests import planner_name
from kafka_topic_operator.rebalance.engines.remote import (
    JOB,
    SPARK_APPLICATION,
    Ended,
    Planner,
    ended,
    logs_hint,
    output_problem,
    owned_by,
    planner_for,
    planning_refusal,
    refusal_message,
    work_dir_problem,
)
from kafka_topic_operator.rebalance.spec import EngineType, rebalance_spec

PROPOSAL = "3f9a1c2b7d4e"
JOB_PLANNER = Planner(JOB, "kafka", f"kr-weekly-{PROPOSAL}", PROPOSAL)
APP_PLANNER = Planner(SPARK_APPLICATION, "kafka", f"kr-weekly-{PROPOSAL}", PROPOSAL)
DRIVER_LOGS = f"kubectl -n kafka logs -l spark-role=driver,kto.dev/proposal={PROPOSAL}"


def test_each_remote_engine_has_its_planner_named_after_the_proposal() -> None:
    job = planner_for(EngineType.KUBERNETES, "kafka", "weekly", PROPOSAL)
    app = planner_for(EngineType.SPARK_APPLICATION, "kafka", "weekly", PROPOSAL)
    assert job == JOB_PLANNER and app == APP_PLANNER
    assert (job.kind.group, job.kind.version, job.kind.plural) == ("batch", "v1", "jobs")
    assert (app.kind.group, app.kind.version, app.kind.plural) == (
        "sparkoperator.k8s.io", "v1beta2", "sparkapplications"
    )  # fmt: skip
    assert str(job) == f"Job kafka/kr-weekly-{PROPOSAL}"
    long = planner_for(EngineType.KUBERNETES, "kafka", "x" * 80, PROPOSAL)
    assert long.name == planner_name("x" * 80, PROPOSAL) and len(long.name) == 63
    with pytest.raises(ValueError, match="the local engine creates no Kubernetes object"):
        planner_for(EngineType.LOCAL, "kafka", "weekly", PROPOSAL)


def engine(**fields: Any) -> Any:
    return rebalance_spec({"engine": {"type": "kubernetes", **fields}}).engine


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"workDir": "s3a://plans/kto"},
         "spec.engine.workDir s3a://plans/kto is a URI: this operator exchanges the planning files "
         "only through a directory mounted in its pod, and does not support object stores"),
        ({"workDir": "file:///plans"}, "is a URI"),
        ({}, "spec.engine.workDir is not set and this operator has no default work directory "
         "(kto run --planner-work-dir; the Helm chart's rebalance.workDir, with "
         "rebalance.enabled)"),
        ({"workDir": "plans"}, "spec.engine.workDir plans must be an absolute path"),
        ({"workDir": "/plans"}, "spec.engine.volume is required: the planner's pods mount that "
         "PersistentVolumeClaim at /plans, where this operator"),
        ({"workDir": "/elsewhere", "volume": "plans"},
         "spec.engine.workDir /elsewhere is not a directory in the operator's pod: mount the "
         "volume of spec.engine.volume there too"),
    ],
)  # fmt: skip
def test_a_work_dir_the_operator_cannot_reach_is_refused_with_the_reason(
    fields: dict[str, str], fragment: str
) -> None:
    problem = work_dir_problem(engine(**fields), lambda path: path == "/plans")
    assert problem is not None and fragment in problem


def test_a_mounted_work_dir_with_its_volume_is_fine() -> None:
    mounted = {"/plans"}.__contains__
    assert work_dir_problem(engine(workDir="/plans", volume="plans"), mounted) is None


def job_status(*conditions: dict[str, str]) -> dict[str, Any]:
    return {"status": {"active": 0, "conditions": list(conditions)}}


@pytest.mark.parametrize(
    ("planner", "obj", "end"),
    [
        (JOB_PLANNER, {}, None),
        (JOB_PLANNER, job_status({"type": "SuccessCriteriaMet", "status": "True"}), None),
        (JOB_PLANNER, job_status({"type": "SuccessCriteriaMet", "status": "True"},
                                 {"type": "Complete", "status": "True"}), Ended(True)),
        (JOB_PLANNER, job_status({"type": "Failed", "status": "True",
                                  "reason": "DeadlineExceeded",
                                  "message": "Job was active longer than specified deadline"}),
         Ended(False, "DeadlineExceeded: Job was active longer than specified deadline")),
        (JOB_PLANNER, job_status({"type": "Failed", "status": "True"}), Ended(False, "Failed")),
        (APP_PLANNER, {"status": {"applicationState": {"state": "RUNNING"}}}, None),
        (APP_PLANNER, {"status": {"applicationState": {"state": "COMPLETED"}}}, Ended(True)),
        (APP_PLANNER, {"status": {"applicationState": {
            "state": "FAILED", "errorMessage": "driver container failed with ExitCode: 1"}}},
         Ended(False, "FAILED: driver container failed with ExitCode: 1")),
        (APP_PLANNER, {"status": {"applicationState": {"state": "SUBMISSION_FAILED"}}},
         Ended(False, "SUBMISSION_FAILED")),
    ],
)  # fmt: skip
def test_the_end_is_read_from_the_planners_status(
    planner: Planner, obj: dict[str, Any], end: Ended | None
) -> None:
    assert ended(planner.kind, obj) == end


def test_the_logs_are_pointed_at() -> None:
    assert logs_hint(JOB_PLANNER, {}) == (
        f"spark-submit's log: kubectl -n kafka logs job/kr-weekly-{PROPOSAL}; "
        f"the driver's: {DRIVER_LOGS}"
    )
    assert logs_hint(APP_PLANNER, {}) == (
        f"the driver's log: {DRIVER_LOGS}; "
        f"kubectl -n kafka describe sparkapplication kr-weekly-{PROPOSAL}"
    )
    app = {"status": {"driverInfo": {"podName": "kr-weekly-driver"}}}
    assert logs_hint(APP_PLANNER, app).startswith("the driver's log: kubectl -n kafka logs "
                                                  "kr-weekly-driver;")  # fmt: skip


def test_success_without_the_plan_is_a_failure_naming_the_planner_and_the_logs() -> None:
    everything = set(remote.OUTPUT_FILES)
    assert output_problem(JOB_PLANNER, {}, "/plans/p", everything, None) is None
    reason, message = output_problem(JOB_PLANNER, {}, "/plans/p", {"input.json"}, None) or ("", "")
    assert reason == "PlanningFailed"
    assert message == (
        f"Job kafka/kr-weekly-{PROPOSAL} succeeded but the planning job wrote no plan.json, "
        "changes.json, result.json to /plans/p: its driver failed, or did not mount the work "
        "volume (spark-submit in cluster mode exits 0 whatever the driver does); "
        + logs_hint(JOB_PLANNER, {})
    )
    problem = output_problem(APP_PLANNER, {}, "/plans/p", {"plan.json", "changes.json"}, None)
    assert problem and "wrote no result.json to /plans/p" in problem[1]


def test_the_jobs_own_reason_is_reported_when_it_wrote_one() -> None:
    cannot = {"reason": "CannotPlan", "message": "brokers 9 to add are not registered"}
    assert output_problem(JOB_PLANNER, {}, "/p", set(), cannot) == (
        "CannotPlan", "brokers 9 to add are not registered"
    )  # fmt: skip
    infeasible = {"reason": "ProposalFailed", "message": "the 9 replicas do not fit 2 brokers"}
    assert output_problem(APP_PLANNER, {}, "/p", set(), infeasible) == (
        "ProposalFailed", "the 9 replicas do not fit 2 brokers"
    )  # fmt: skip
    assert planning_refusal(infeasible) == ("ProposalFailed", "the 9 replicas do not fit 2 brokers")
    crashed = {"reason": "PlanningFailed", "message": "MemoryError: Java heap space"}
    assert planning_refusal(crashed) is None and planning_refusal(None) is None
    reason, message = output_problem(APP_PLANNER, {}, "/p", {"plan.json"}, crashed) or ("", "")
    assert reason == "PlanningFailed"
    assert message.startswith(
        f"MemoryError: Java heap space (SparkApplication kafka/kr-weekly-{PROPOSAL}; the driver's"
    )


def test_ownership_is_by_the_owners_uid() -> None:
    obj = {"metadata": {"ownerReferences": [{"uid": "u1", "name": "weekly"}]}}
    assert owned_by(obj, "u1")
    assert not owned_by(obj, "u2") and not owned_by({"metadata": {}}, "u1")


def test_a_refused_planner_says_what_to_do() -> None:
    assert refusal_message(APP_PLANNER, 404, "not found") == (
        "the API server does not serve sparkapplications.sparkoperator.k8s.io/v1beta2: install "
        "the Spark operator (its SparkApplication CRD) or use the kubernetes engine"
    )
    assert refusal_message(JOB_PLANNER, 403, 'jobs.batch is forbidden: User "x" cannot') == (
        "the operator may not create jobs.batch in namespace kafka (jobs.batch is forbidden: User "
        '"x" cannot): grant it (the Helm chart does with rebalance.enabled)'
    )
    assert refusal_message(JOB_PLANNER, 422, "spec.template: Invalid") == (
        f"creating Job kafka/kr-weekly-{PROPOSAL} was refused (422): spec.template: Invalid"
    )
