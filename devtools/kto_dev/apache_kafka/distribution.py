"""The Apache Kafka jars the project runs: one pinned version, fetched once through Maven.

Maven Central ships Kafka's jars, not its `bin/` scripts: the broker (`kafka.Kafka`), the Java
clients and the tools (console consumer, consumer-group command) all run from one classpath of
`kafka_2.13`, `kafka-tools` and their runtime dependencies, plus reload4j so the brokers' log4j
configuration is honoured. `mvn dependency:copy-dependencies` on a small pom copies them out of
the local Maven repository (`~/.m2`), which keeps every download for later runs; the copy itself
is skipped when the folder is already complete.

`python -m kto_dev.apache_kafka.distribution` fetches both pinned versions (3.9 for ZooKeeper
mode, 4.x for KRaft) and prints their folders.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The one place the versions are pinned: 3.9 is the last line with ZooKeeper mode; 4.x runs
# KRaft only.
KAFKA_VERSION = "3.9.2"
KRAFT_KAFKA_VERSION = "4.1.1"
SCALA_VERSION = "2.13"
SLF4J_VERSION = "1.7.36"  # the slf4j line Kafka 3.9 itself is built with
LOG4J2_VERSION = "2.24.3"  # the log4j 2 line Kafka 4.1 is built with

ROOT = Path(__file__).resolve().parents[3]
COMPLETE = ".complete"


class KafkaDistributionError(RuntimeError):
    """The jars are missing or could not be fetched; the message says what to do."""


def is_kraft_only(version: str) -> bool:
    """Kafka 4.0 removed ZooKeeper mode (and moved from log4j 1 to log4j 2)."""
    return int(version.split(".")[0]) >= 4


def artifacts(version: str = KAFKA_VERSION) -> list[tuple[str, str, str]]:
    """(groupId, artifactId, version) of what the classpath is built from: Kafka, its tools and
    the slf4j binding to the log4j line that version configures."""
    if is_kraft_only(version):
        binding = ("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J2_VERSION)
    else:
        binding = ("org.slf4j", "slf4j-reload4j", SLF4J_VERSION)
    return [
        ("org.apache.kafka", f"kafka_{SCALA_VERSION}", version),
        ("org.apache.kafka", "kafka-tools", version),
        binding,
    ]


def pom(version: str = KAFKA_VERSION) -> str:
    dependencies = "".join(
        f"<dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
        f"<version>{v}</version></dependency>"
        for g, a, v in artifacts(version)
    )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>dev.kto</groupId><artifactId>kafka-classpath</artifactId>"
        f"<version>{version}</version><packaging>pom</packaging>"
        f"<dependencies>{dependencies}</dependencies></project>\n"
    )


def cache_root() -> Path:
    """`KTO_KAFKA_CACHE`, else `.kto/kafka` in the project."""
    return Path(os.environ.get("KTO_KAFKA_CACHE") or ROOT / ".kto" / "kafka")


def libs_dir(version: str = KAFKA_VERSION) -> Path:
    return cache_root() / version / "libs"


def is_complete(libs: Path) -> bool:
    return (libs / COMPLETE).exists()


def require_libs(version: str = KAFKA_VERSION) -> Path:
    """The classpath folder, or one line saying how to get it."""
    libs = libs_dir(version)
    if not is_complete(libs):
        raise KafkaDistributionError(
            f"Kafka {version} jars not found in {libs}: run `make setup` "
            "(or python -m kto_dev.apache_kafka.distribution)"
        )
    return libs


def fetch(version: str = KAFKA_VERSION) -> Path:
    """Copies the jars into `libs_dir(version)` unless they are there already."""
    libs = libs_dir(version)
    if is_complete(libs):
        return libs
    mvn = shutil.which("mvn")
    if mvn is None:
        raise KafkaDistributionError("Maven (mvn) not found: install it (apt-get install maven)")
    libs.parent.mkdir(parents=True, exist_ok=True)
    # Into a fresh folder, renamed into place only once complete: an interrupted fetch leaves
    # nothing that looks usable.
    work = Path(tempfile.mkdtemp(prefix="fetch-", dir=libs.parent))
    try:
        (work / "pom.xml").write_text(pom(version))
        done = subprocess.run(
            [mvn, "-q", "-B", "-f", str(work / "pom.xml"), "dependency:copy-dependencies",
             "-DincludeScope=runtime", f"-DoutputDirectory={work / 'libs'}"],
            capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode != 0:
            errors = [line for line in done.stdout.splitlines() if "[ERROR]" in line]
            raise KafkaDistributionError(
                f"fetching Kafka {version} through Maven failed: "
                + (errors[0] if errors else (done.stdout + done.stderr).strip()[-500:])
            )
        (work / "libs" / COMPLETE).write_text(version + "\n")
        shutil.rmtree(libs, ignore_errors=True)
        (work / "libs").rename(libs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return libs


def main() -> int:
    try:
        for version in (KAFKA_VERSION, KRAFT_KAFKA_VERSION):
            print(fetch(version))
    except KafkaDistributionError as e:
        print(f"kto: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
