"""The tests' Spark JVMs share classes (`kto_dev.class_archive`): a local Spark session and its
first job take 2.7 s instead of 5.5. A training run in the background records the archive once
per checkout while the first tests run; every driver (local sessions, spark-submit, `kto plan`,
the operator's local engine) and standalone daemon started after it is in place maps it (one
started before finds no file and loads its classes as usual)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

from kto_dev.apache_kafka.broker import java_executable
from kto_dev.class_archive import QUIET, archive_path, recording_path, tidy_recordings

ROOT = Path(__file__).resolve().parents[2]
DIRECTORY = ROOT / ".kto" / "spark"

# What a planner's session loads: a local session, a shuffle, a window, a join, a collect.
TRAINING = """
from pyspark.sql import SparkSession, Window, functions as F
spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
frame = spark.range(1000).select((F.col("id") % 7).alias("k"), F.col("id").alias("v"))
ranked = frame.withColumn("r", F.row_number().over(Window.partitionBy("k").orderBy("v")))
ranked.join(frame.groupBy("k").count(), "k").where("r < 3").localCheckpoint().collect()
spark.stop()
"""


def spark_classpath() -> str:
    """The classpath PySpark's launcher gives its JVMs (the conf directory, then the jars)."""
    import pyspark

    home = Path(pyspark.__file__).parent
    return f"{home / 'conf'}:{home / 'jars'}/*"


def _archive() -> Path:
    return archive_path(DIRECTORY, java_executable())


def record(jvm_options: str) -> None:
    """Records the archive with a training session and adopts it, unless there is one."""
    java, classpath, archive = java_executable(), spark_classpath(), _archive()
    DIRECTORY.mkdir(parents=True, exist_ok=True)
    with (DIRECTORY / "archive.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one training at a time
        tidy_recordings(java, classpath, archive)
        if archive.exists():
            return
        recording = recording_path(archive)
        options = f"{jvm_options} -XX:ArchiveClassesAtExit={recording} {' '.join(QUIET)}"
        subprocess.run(
            [sys.executable, "-c", TRAINING],
            env={**os.environ, "SPARK_SUBMIT_OPTS": options},
            capture_output=True, timeout=300, check=False,
        )  # fmt: skip
        # Adopted once settled (`class_archive.SETTLED_AFTER`); a failed training leaves none.
        deadline = time.monotonic() + 60
        while recording.exists() and not archive.exists() and time.monotonic() < deadline:
            time.sleep(1)
            tidy_recordings(java, classpath, archive)


def spark_archive_flags(jvm_options: str) -> str:
    """The options for the tests' Spark JVMs with the archive mapped; when there is none yet,
    its training starts in the background."""
    archive = _archive()
    if not archive.exists():
        # Through a shell that leaves it running in the background: nothing here waits for it.
        subprocess.run(
            ["sh", "-c", '"$@" < /dev/null > /dev/null 2>&1 &', "sh",
             sys.executable, __file__, jvm_options],
            check=True, start_new_session=True,
        )  # fmt: skip
    return f"{jvm_options} -XX:SharedArchiveFile={archive} {' '.join(QUIET)}"


if __name__ == "__main__":
    record(sys.argv[1])
