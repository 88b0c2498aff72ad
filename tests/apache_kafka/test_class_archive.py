"""The class-data-sharing archive Kafka's JVMs record once and map afterwards."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from kto_dev import class_archive
from kto_dev.apache_kafka import distribution
from kto_dev.apache_kafka.broker import java_executable

pytestmark = pytest.mark.kafka


@pytest.fixture
def libs(tmp_path: Path) -> Path:
    """Kafka's libs seen from a directory of the test's own, where the archive goes."""
    link = tmp_path / "3.9" / "libs"
    link.parent.mkdir()
    link.symlink_to(distribution.require_libs(distribution.KAFKA_VERSION))
    return link


def run_kafka(flags: list[str], libs: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Kafka's own `--version`: loads Kafka's classes and exits."""
    return subprocess.run(
        [java_executable(), *flags, "-cp", f"{libs}/*", "kafka.Kafka", "--version"],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def option(flags: list[str], name: str) -> Path | None:
    found = [f.split("=", 1)[1] for f in flags if f.startswith(f"-XX:{name}=")]
    return Path(found[0]) if found else None


def test_the_first_jvm_records_the_archive_and_the_next_ones_map_it(
    libs: Path, tmp_path: Path
) -> None:
    java = java_executable()
    first = class_archive.kafka_archive_flags(java, libs)
    recording = option(first, "ArchiveClassesAtExit")
    assert recording is not None and recording.parent == libs.parent
    assert not recording.exists()
    # A tool's JVM, while there is no archive, neither records nor maps one.
    assert class_archive.kafka_archive_flags(java, libs, record=False) == []

    ran = run_kafka(first, libs, tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip().startswith(distribution.KAFKA_VERSION)  # nothing else on stdout
    assert recording.exists()
    # Not adopted while it may still be being written...
    assert class_archive.kafka_archive_flags(java, libs, record=False) == []
    age(recording, class_archive.SETTLED_AFTER + 1)  # ...but once it has settled

    later = class_archive.kafka_archive_flags(java, libs, record=False)
    archive = option(later, "SharedArchiveFile")
    assert archive == class_archive.archive_path(libs.parent, java) and archive.exists()
    assert not recording.exists()  # adopted: renamed into place
    again = run_kafka(later, libs, tmp_path)
    assert (again.returncode, again.stdout) == (0, ran.stdout), again.stderr


def test_a_truncated_recording_is_never_mapped_and_goes_once_abandoned(
    libs: Path, tmp_path: Path
) -> None:
    java = java_executable()
    recording = option(class_archive.kafka_archive_flags(java, libs), "ArchiveClassesAtExit")
    assert recording is not None
    ran = run_kafka([f"-XX:ArchiveClassesAtExit={recording}"], libs, tmp_path)
    assert ran.returncode == 0, ran.stderr
    # Cut short as by a JVM killed while writing it: mapping it would crash the JVM.
    whole = recording.read_bytes()
    recording.chmod(0o644)
    recording.write_bytes(whole[: len(whole) // 3])
    assert not class_archive.maps_whole(java, f"{libs}/*", recording)

    age(recording, class_archive.SETTLED_AFTER + 1)
    flags = class_archive.kafka_archive_flags(java, libs)
    assert option(flags, "ArchiveClassesAtExit") is not None  # records anew, adopts nothing
    assert recording.exists()  # its JVM might still be writing it
    age(recording, class_archive.ABANDONED_AFTER + 1)
    class_archive.kafka_archive_flags(java, libs)
    assert not recording.exists()
    assert not class_archive.archive_path(libs.parent, java).exists()


def test_the_archive_is_kept_per_java_build(tmp_path: Path) -> None:
    java = java_executable()
    key = class_archive.java_build(java)
    assert class_archive.archive_path(tmp_path, java) == tmp_path / f"classes-{key}.jsa"
    other = tmp_path / "bin" / "java"
    other.parent.mkdir()
    other.write_text("#!/bin/sh\n")
    assert class_archive.java_build(str(other)) != key
