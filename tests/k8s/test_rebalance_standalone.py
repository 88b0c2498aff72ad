"""A KafkaRebalance whose local engine points at a real Spark standalone cluster
(`spec.engine.master`): the operator's planning job runs its executors on the cluster's two
workers, and the proposal is the one planned without Spark."""

from __future__ import annotations

from pathlib import Path

import pytest
from spark_standalone import standalone_cluster, status

from .test_operator import running
from .test_rebalance import apply, crowd, get, wait_state

pytestmark = [pytest.mark.zookeeper, pytest.mark.e2e, pytest.mark.spark]


def test_a_rebalance_planned_on_a_standalone_spark_cluster(zk_chroot: str, tmp_path: Path) -> None:
    with standalone_cluster(tmp_path / "spark") as spark, running(zk_chroot, tmp_path) as setup:
        crowd(setup)
        apply(setup, "on-spark", engine={"master": spark.master})
        apply(setup, "alone")  # no master: planned without Spark
        on_spark = wait_state(setup, "on-spark", "ProposalReady", timeout=240)
        alone = wait_state(setup, "alone", "ProposalReady", timeout=240)
        result = on_spark["status"]["optimizationResult"]
        assert (result["replicaMoves"], result["replicaMovesLowerBound"]) == (12, 12)
        assert result == alone["status"]["optimizationResult"]
        apps = status(spark.ui)["completedapps"]
        assert [app["name"] for app in apps] == ["kto-rebalance"], apps
        for ui in spark.worker_uis:
            executors = status(ui)["finishedexecutors"]
            assert [e["appid"] for e in executors] == [apps[0]["id"]], executors
        assert get(setup, "on-spark")["spec"]["engine"]["master"] == spark.master
