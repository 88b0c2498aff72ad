"""A class-data-sharing archive per Kafka distribution: Kafka's JVMs start on about 60% of the
CPU (a broker of 3.9: 3.2 CPU s instead of 5.3).

The first JVM of a distribution writes the classes it loaded into a dynamic archive as it exits
(`-XX:ArchiveClassesAtExit`); later JVMs map it (`-XX:SharedArchiveFile`). The archive lives
beside the distribution's libs, in the download cache, one per Java build (an archive serves only
the JVM that wrote it). Each recording JVM writes a file of its own, adopted as the archive only
once a JVM maps it whole (`-Xshare:on`): a truncated archive crashes the JVM that maps it, and a
file is truncated while its JVM is still exiting or when it was killed mid-write.
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
# A recording that no JVM can map after this long was cut short: it is removed.
ABANDONED_AFTER = 120.0


def java_build(java: str) -> str:
    """A short key of the Java build that runs `java` (its libjvm, else the launcher)."""
    launcher = Path(os.path.realpath(java))
    libjvm = launcher.parent.parent / "lib" / "server" / "libjvm.so"
    target = libjvm if libjvm.exists() else launcher
    stat = target.stat()
    return hashlib.sha256(f"{target}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:12]


def archive_path(libs: Path, java: str) -> Path:
    return libs.parent / f"classes-{java_build(java)}.jsa"


def maps_whole(java: str, libs: Path, archive: Path) -> bool:
    """Whether a JVM on `libs` maps the archive (a truncated one crashes it: in a scratch
    directory, where its crash report goes)."""
    with tempfile.TemporaryDirectory() as scratch:
        check = subprocess.run(
            [java, "-Xshare:on", f"-XX:SharedArchiveFile={archive}", *QUIET,
             "-cp", f"{libs}/*", "-version"],
            cwd=scratch, capture_output=True, timeout=60, check=False,
        )  # fmt: skip
    return check.returncode == 0


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _tidy_recordings(java: str, libs: Path, archive: Path) -> None:
    """Adopts the largest whole recording when there is no archive yet; removes the ones left
    over (once no JVM can still be writing them)."""
    recordings = sorted(archive.parent.glob(f"{archive.stem}.*{RECORDING}"), key=_size,
                        reverse=True)  # fmt: skip
    for recording in recordings:
        with contextlib.suppress(FileNotFoundError):  # another process took it first
            if not archive.exists() and maps_whole(java, libs, recording):
                os.replace(recording, archive)
            elif time.time() - recording.stat().st_mtime > ABANDONED_AFTER:
                recording.unlink()


def archive_flags(java: str, libs: Path, *, record: bool = True) -> list[str]:
    """The JVM options that share classes for a JVM on `libs`: map the archive, or (`record`:
    a broker's JVM, which loads most of Kafka's classes) record one as it exits."""
    archive = archive_path(libs, java)
    _tidy_recordings(java, libs, archive)
    if archive.exists():
        return [f"-XX:SharedArchiveFile={archive}", *QUIET]
    if not record:
        return []
    recording = archive.with_name(f"{archive.stem}.{uuid.uuid4().hex}{RECORDING}")
    return [f"-XX:ArchiveClassesAtExit={recording}", *QUIET]
