"""`kto plan` on a real Spark standalone cluster: a master and two workers started from pyspark's
own distribution on loopback; the plan's executors run on the workers (their JSON status says
so), and the plan equals the one local Spark makes, and the one made without Spark."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from spark_standalone import StandaloneCluster, standalone_cluster, status

from kafka_topic_operator.zk.client import ZkClient

from .test_plan_cli import crowded, kto_plan

pytestmark = [pytest.mark.zookeeper, pytest.mark.spark, pytest.mark.e2e]


@pytest.fixture
def spark_cluster(tmp_path: Path) -> Iterator[StandaloneCluster]:
    with standalone_cluster(tmp_path / "spark") as cluster:
        yield cluster


def test_kto_plan_on_a_standalone_spark_cluster_runs_on_its_workers_and_plans_as_local_spark(
    zk: ZkClient, zk_chroot: str, dev_brokers: None, tmp_path: Path,
    spark_cluster: StandaloneCluster,
) -> None:  # fmt: skip
    crowded(zk)
    plans = {}
    for name, master in [("local", ["--master", "local[2]"]), ("alone", []),
                         ("remote", ["--master", spark_cluster.master])]:  # fmt: skip
        done = kto_plan("--zookeeper", zk_chroot, "--output", f"{name}.json", *master,
                        cwd=tmp_path)  # fmt: skip
        assert done.returncode == 0, done.stderr
        plans[name] = json.loads((tmp_path / f"{name}.json").read_text())
    assert plans["remote"] == plans["local"] == plans["alone"]
    apps = status(spark_cluster.ui)["completedapps"]
    assert len(apps) == 1, apps
    for ui in spark_cluster.worker_uis:
        executors = status(ui)["finishedexecutors"]
        assert [e["appid"] for e in executors] == [apps[0]["id"]], executors
