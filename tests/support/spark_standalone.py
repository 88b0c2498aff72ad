"""A real Spark standalone cluster on loopback for the tests: a master and two one-core workers
started from pyspark's own distribution, and their JSON status."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyspark
from kto_testing import eventually

from kto_dev.ports import free_port

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"


def status(port: int) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/", timeout=5) as answer:
        return json.load(answer)


def _answers(port: int) -> Any:
    try:
        return status(port)
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


@contextlib.contextmanager
def standalone_cluster(directory: Path) -> Iterator[StandaloneCluster]:
    """A started cluster, stopped after; its logs printed (shown when a test failed)."""
    cluster = StandaloneCluster(directory)
    cluster.directory.mkdir(parents=True)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
        print(cluster.logs())
