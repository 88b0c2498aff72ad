"""Class-data-sharing archives: a JVM maps the classes an earlier JVM of the same classpath
loaded instead of loading them again (a Kafka 3.9 broker starts on 3.0 CPU s instead of 5.3, a
local Spark session and its first job in 2.7 s instead of 5.5).

A JVM that records writes the classes it loaded into a dynamic archive as it exits
(`-XX:ArchiveClassesAtExit`); later JVMs map it (`-XX:SharedArchiveFile`). An archive serves only
the Java build that wrote it and the classpath it was written for, so its name carries the build
and it lives beside what it archives, in the download cache. Each recording JVM writes a file of
its own, adopted as the archive only once a JVM maps it whole (`-Xshare:on`): a truncated archive
crashes the JVM that maps it, and a file is truncated while its JVM is still exiting or when it
was killed mid-write.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

# Kept quiet: an archive that does not match (libs downloaded again, another Java) is skipped
# with a warning on stdout, where Kafka's tools print what the tests read.
QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
RECORDING = ".recording"
# A recording is a candidate once unchanged this long (its JVM is done writing it)...
SETTLED_AFTER = 5.0
# ...and one that no JVM can map after this long was cut short: it is removed.
ABANDONED_AFTER = 120.0


def java_build(java: str) -> str:
    """A short key of the Java build that runs `java` (its libjvm, else the launcher)."""
    launcher = Path(os.path.realpath(java))
    libjvm = launcher.parent.parent / "lib" / "server" / "libjvm.so"
    target = libjvm if libjvm.exists() else launcher
    stat = target.stat()
    return hashlib.sha256(f"{target}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:12]


def archive_path(directory: Path, java: str) -> Path:
    return directory / f"classes-{java_build(java)}.jsa"


def maps_whole(java: str, classpath: str, archive: Path) -> bool:
    """Whether a JVM on `classpath` maps the archive (a truncated one crashes it: in a scratch
    directory, where its crash report goes)."""
    with tempfile.TemporaryDirectory() as scratch:
        check = subprocess.run(
            [java, "-Xshare:on", f"-XX:SharedArchiveFile={archive}", *QUIET,
             "-cp", classpath, "-version"],
            cwd=scratch, capture_output=True, timeout=60, check=False,
        )  # fmt: skip
    return check.returncode == 0


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def tidy_recordings(java: str, classpath: str, archive: Path) -> None:
    """Adopts the largest whole recording when there is no archive yet; removes the ones left
    over (once no JVM can still be writing them)."""
    recordings = sorted(archive.parent.glob(f"{archive.stem}.*{RECORDING}"), key=_size,
                        reverse=True)  # fmt: skip
    for recording in recordings:
        with contextlib.suppress(FileNotFoundError):  # another process took it first
            age = time.time() - recording.stat().st_mtime
            if age < SETTLED_AFTER:
                continue
            if not archive.exists() and maps_whole(java, classpath, recording):
                os.replace(recording, archive)
            elif age > ABANDONED_AFTER:
                recording.unlink()


def recording_path(archive: Path) -> Path:
    """A file of its own for one recording JVM."""
    return archive.with_name(f"{archive.stem}.{uuid.uuid4().hex}{RECORDING}")


def archive_flags(java: str, classpath: str, archive: Path, *, record: bool = True) -> list[str]:
    """The JVM options that share classes for a JVM on `classpath`: map the archive, or
    (`record`) record one as it exits."""
    tidy_recordings(java, classpath, archive)
    if archive.exists():
        return [f"-XX:SharedArchiveFile={archive}", *QUIET]
    if not record:
        return []
    return [f"-XX:ArchiveClassesAtExit={recording_path(archive)}", *QUIET]


def kafka_archive_flags(java: str, libs: Path, *, record: bool = True) -> list[str]:
    """For a JVM on a Kafka distribution's `libs/*`, its archive beside the libs. A broker's or
    node's JVM records (it loads most of Kafka's classes), a tool's only maps."""
    return archive_flags(java, f"{libs}/*", archive_path(libs.parent, java), record=record)
