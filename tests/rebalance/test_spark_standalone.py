"""`kto plan` on a real Spark standalone cluster: a master and two workers started from pyspark's
own distribution on loopback; the plan's executors run on the workers (their JSON status says
so), and the plan equals the one local Spark makes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyspark
import pytest
from kto_testing import eventually

from kafka_topic_operator.zk.client import ZkClient
from kafka_topic_operator.zk.server import free_port

from .test_plan_cli import crowded, kto_plan

pytestmark = [pytest.mark.zookeeper, pytest.mark.spark, pytest.mark.e2e]

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"


def _status(port: int) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/", timeout=5) as answer:
        return json.load(answer)


def _answers(port: int) -> Any:
    try:
        return _status(port)
    except OSError:
        return None


class StandaloneCluster:
    """A master and two one-core workers; their logs in `directory`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port, self.ui = free_port(), free_port()
        self.worker_uis = [free_port(), free_port()]
        self.processes: list[subprocess.Popen[bytes]] = []
        # Executors run the planner's Python: this interpreter, where the package is installed.
        self.env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}

    @property
    def master(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _start(self, name: str, *args: str) -> None:
        with (self.directory / f"{name}.log").open("wb") as log:
            self.processes.append(
                subprocess.Popen([str(SPARK_CLASS), *args], stdout=log, stderr=log, env=self.env)
            )

    def start(self) -> None:
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.ui))  # fmt: skip
        for number, ui in enumerate(self.worker_uis):
            work = self.directory / f"work-{number}"
            self._start(f"worker-{number}", "org.apache.spark.deploy.worker.Worker",
                        "--host", "127.0.0.1", "--cores", "1", "--memory", "1536m",
                        "--webui-port", str(ui), "--work-dir", str(work), self.master)  # fmt: skip

        def both_alive() -> bool:
            status = _answers(self.ui)
            return status is not None and [w["state"] for w in status["workers"]] == ["ALIVE"] * 2

        eventually(both_alive, "two workers registered with the master", timeout=120)

    def stop(self) -> None:
        for process in self.processes:
            process.kill()
            process.wait()

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in
                         sorted(self.directory.glob("*.log")))  # fmt: skip


@pytest.fixture
def spark_cluster(tmp_path: Path) -> Iterator[StandaloneCluster]:
    cluster = StandaloneCluster(tmp_path / "spark")
    cluster.directory.mkdir()
    cluster.start()
    yield cluster
    cluster.stop()
    print(cluster.logs())  # shown when the test failed


def test_kto_plan_on_a_standalone_spark_cluster_runs_on_its_workers_and_plans_as_local_spark(
    zk: ZkClient, zk_chroot: str, dev_brokers: None, tmp_path: Path,
    spark_cluster: StandaloneCluster,
) -> None:  # fmt: skip
    crowded(zk)
    local = kto_plan("--zookeeper", zk_chroot, "--output", "local.json", "--master", "local[2]",
                     cwd=tmp_path)  # fmt: skip
    assert local.returncode == 0, local.stderr
    remote = kto_plan("--zookeeper", zk_chroot, "--output", "remote.json",
                      "--master", spark_cluster.master, cwd=tmp_path)  # fmt: skip
    assert remote.returncode == 0, remote.stderr
    assert json.loads((tmp_path / "remote.json").read_text()) == json.loads(
        (tmp_path / "local.json").read_text()
    )
    apps = _status(spark_cluster.ui)["completedapps"]
    assert len(apps) == 1, apps
    for ui in spark_cluster.worker_uis:
        executors = _status(ui)["finishedexecutors"]
        assert [e["appid"] for e in executors] == [apps[0]["id"]], executors
