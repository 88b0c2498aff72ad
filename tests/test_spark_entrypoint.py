"""The spark image's entrypoint (scripts/spark-entrypoint.sh), run as Spark on Kubernetes runs it
in driver and executor pods, with a fake spark-submit, java, tini and kto that record how they
were called."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENTRYPOINT = ROOT / "scripts" / "spark-entrypoint.sh"
# A recording stand-in: its own name, then its arguments, NUL-terminated (arguments may hold
# spaces), then an RS byte ending the call, in $RECORD.
FAKE = """#!/usr/bin/env bash
printf '%s\\0' "$(basename "$0")" "$@" >> "$RECORD"
printf '\\036' >> "$RECORD"
"""
# tini runs what follows `--`, as the real one does.
FAKE_TINI = """#!/usr/bin/env bash
printf '%s\\0' tini "$@" >> "$RECORD"
printf '\\036' >> "$RECORD"
while [ "$1" != "--" ]; do shift; done
shift
exec "$@"
"""
EXECUTOR_ENV = {
    "SPARK_DRIVER_URL": "spark://CoarseGrainedScheduler@kr-weekly-p1-driver-svc.kafka.svc:7078",
    "SPARK_EXECUTOR_ID": "3",
    "SPARK_EXECUTOR_CORES": "2",
    "SPARK_EXECUTOR_MEMORY": "2048m",
    "SPARK_APPLICATION_ID": "spark-0123456789abcdef",
    "SPARK_EXECUTOR_POD_IP": "10.1.2.3",
    "SPARK_RESOURCE_PROFILE_ID": "0",
    "SPARK_EXECUTOR_POD_NAME": "kr-weekly-p1-exec-3",
    "SPARK_CONF_DIR": "/opt/spark/conf",
}


def write_fake(path: Path, text: str = FAKE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


class Image:
    """The image's layout in a temporary directory: SPARK_HOME/bin/spark-submit, JAVA_HOME/bin/
    java, and commands on PATH."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.record = root / "record"
        self.spark_home = root / "pyspark"
        self.java_home = root / "jvm"
        self.bin = root / "bin"
        write_fake(self.spark_home / "bin" / "spark-submit")
        write_fake(self.java_home / "bin" / "java")
        for command in ("kto", "spark-submit"):
            write_fake(self.bin / command)
        # Only the tools the script and the fakes use: whatever else this machine has on its
        # PATH (a tini, a java) stays out.
        tools = root / "tools"
        tools.mkdir()
        for tool in ("bash", "basename", "sort"):
            found = shutil.which(tool)
            assert found, tool
            (tools / tool).symlink_to(found)
        self.path = f"{self.bin}:{tools}"
        self.env = {
            "PATH": self.path,
            "RECORD": str(self.record),
            "SPARK_HOME": str(self.spark_home),
            "JAVA_HOME": str(self.java_home),
        }

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        environment = {k: v for k, v in {**self.env, **env}.items() if v != ""}
        return subprocess.run([str(ENTRYPOINT), *args], env=environment, cwd=self.root,
                              capture_output=True, text=True, timeout=60)  # fmt: skip

    def calls(self) -> list[list[str]]:
        """Each recorded call: the command's name and its arguments."""
        if not self.record.exists():
            return []
        calls = self.record.read_text().split("\x1e")[:-1]
        return [call.split("\0")[:-1] for call in calls]


@pytest.fixture
def image(tmp_path: Path) -> Image:
    return Image(tmp_path)


def test_the_script_exists_and_is_executable() -> None:
    assert os.access(ENTRYPOINT, os.X_OK)
    assert ENTRYPOINT.read_text().startswith("#!/usr/bin/env bash\n")


def test_a_driver_pod_runs_spark_submit_in_client_mode_on_the_pods_address(image: Image) -> None:
    # What Spark's driver pods get: the properties file it mounts, the main class and the app.
    args = ["--properties-file", "/opt/spark/conf/spark.properties",
            "--class", "org.apache.spark.deploy.PythonRunner",
            "local:///usr/local/lib/python3.11/site-packages/kafka_topic_operator/rebalance/job.py",
            "--input", "/plans/kafka/weekly/p1/input.json", "--output", "/plans/x y"]  # fmt: skip
    done = image.run("driver", *args, SPARK_DRIVER_BIND_ADDRESS="10.1.0.7")
    assert done.returncode == 0, done.stderr
    assert image.calls() == [[
        "spark-submit",
        "--conf", "spark.driver.bindAddress=10.1.0.7",
        "--conf", "spark.executorEnv.SPARK_DRIVER_POD_IP=10.1.0.7",
        "--deploy-mode", "client",
        *args,
    ]]  # fmt: skip


def test_a_driver_without_its_address_says_so(image: Image) -> None:
    done = image.run("driver", "--class", "x")
    assert done.returncode != 0
    assert "SPARK_DRIVER_BIND_ADDRESS: is not set" in done.stderr
    assert image.calls() == []


def test_an_executor_pod_runs_sparks_executor_backend_from_the_environment(image: Image) -> None:
    # Eleven options: SPARK_JAVA_OPT_10 comes after _9, not after _1.
    options = {f"SPARK_JAVA_OPT_{i}": f"-Dspark.opt{i}=v {i}" for i in range(11)}
    done = image.run("executor", **EXECUTOR_ENV, **options, SPARK_EXTRA_CLASSPATH="/extra/*")
    assert done.returncode == 0, done.stderr
    ((java, *args),) = image.calls()
    assert java == "java"
    assert args == [
        *[f"-Dspark.opt{i}=v {i}" for i in range(11)],
        "-Xms2048m", "-Xmx2048m",
        "-cp", f"/opt/spark/conf:{image.spark_home}/jars/*:/extra/*:{image.root}",
        "org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend",
        "--driver-url", EXECUTOR_ENV["SPARK_DRIVER_URL"],
        "--executor-id", "3",
        "--cores", "2",
        "--app-id", "spark-0123456789abcdef",
        "--hostname", "10.1.2.3",
        "--resourceProfileId", "0",
        "--podName", "kr-weekly-p1-exec-3",
    ]  # fmt: skip


def test_the_java_on_path_serves_without_java_home(image: Image) -> None:
    write_fake(image.bin / "java")
    done = image.run("executor", **EXECUTOR_ENV, JAVA_HOME="")
    assert done.returncode == 0, done.stderr
    assert image.calls()[0][0] == "java"
    assert image.calls()[0][1:3] == ["-Xms2048m", "-Xmx2048m"]


def test_an_executor_missing_its_settings_names_them(image: Image) -> None:
    env = {**EXECUTOR_ENV, "SPARK_DRIVER_URL": "", "SPARK_EXECUTOR_POD_NAME": ""}
    done = image.run("executor", **env)
    assert done.returncode == 64
    assert "SPARK_DRIVER_URL SPARK_EXECUTOR_POD_NAME not set" in done.stderr
    assert image.calls() == []


def test_spark_home_defaults_to_pysparks_installation(image: Image) -> None:
    python = Path(sys.executable).parent  # has pyspark (the test extra)
    done = image.run("executor", **EXECUTOR_ENV, SPARK_HOME="",
                     PATH=f"{image.path}:{python}")  # fmt: skip
    assert done.returncode == 0, done.stderr
    import pyspark

    classpath = image.calls()[0][image.calls()[0].index("-cp") + 1]
    assert f":{Path(pyspark.__file__).parent}/jars/*:" in classpath


@pytest.mark.parametrize(
    ("args", "call"),
    [
        ((), ["kto", "--help"]),  # the image's CMD
        (("--help",), ["kto", "--help"]),
        (("plan", "--zookeeper", "zk:2181"), ["kto", "plan", "--zookeeper", "zk:2181"]),
        # The kubernetes engine's Job sets its command; a pod's args may name one too.
        (("spark-submit", "--version"), ["spark-submit", "--version"]),
        (("kto", "run", "--help"), ["kto", "run", "--help"]),
    ],
)
def test_anything_else_is_a_command_or_a_kto_subcommand(
    image: Image, args: tuple[str, ...], call: list[str]
) -> None:
    done = image.run(*args)
    assert done.returncode == 0, done.stderr
    assert image.calls() == [call]


def test_tini_leads_when_the_image_has_it(image: Image) -> None:
    write_fake(image.bin / "tini", FAKE_TINI)
    done = image.run("driver", "--class", "x", SPARK_DRIVER_BIND_ADDRESS="10.1.0.7")
    assert done.returncode == 0, done.stderr
    tini, submit = image.calls()
    assert tini == ["tini", "-s", "--", str(image.spark_home / "bin" / "spark-submit"),
                    *submit[1:]]  # fmt: skip
    assert submit[0] == "spark-submit"


def test_the_spark_image_uses_it() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    spark = dockerfile.split("AS spark", 1)[1]
    assert re.search(r"^COPY --chmod=0755 scripts/spark-entrypoint\.sh "
                     r"/usr/local/bin/spark-entrypoint$", spark, re.MULTILINE)  # fmt: skip
    assert 'ENTRYPOINT ["spark-entrypoint"]' in spark
    assert "tini" in spark  # installed with the JRE
    home = re.search(r"SPARK_HOME=(\S+)", spark)
    assert home and home[1] == "/usr/local/lib/python3.11/site-packages/pyspark"
