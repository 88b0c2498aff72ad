"""A tool built once with the machine's Go toolchain into the cache shared by every clone.

kube-apiserver and etcd (`kube_apiserver.build`) and promtool (`promtool.build`) are built the
same way: find Go, take a per-cache lock, build into a fresh folder under the cache root, stamp
it (`.complete`: the versions, the Go that built them, how long it took) and rename it into
place. A second run finds the stamp and builds nothing, without Go. Each tool names its own
error class (a `GoBuildError`), the Go it needs and what `make` builds.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

COMPLETE = ".complete"

# Where Go's own installer puts it, for a shell whose PATH was never told.
GO_INSTALL = Path("/usr/local/go/bin/go")

# Builds into `out` with `go`, working in `work`; returns the stamp's own fields.
Make = Callable[[str, Path, Path], dict[str, object]]


class GoBuildError(RuntimeError):
    """A tool is missing or could not be built; the message says what to do."""


def find_go(requirement: str, error: type[GoBuildError] = GoBuildError) -> str:
    """The go command; `requirement` says which Go the tool needs."""
    go = shutil.which("go") or (str(GO_INSTALL) if GO_INSTALL.exists() else None)
    if go is None:
        raise error(
            f"the Go toolchain ({requirement}) was not found on PATH or in /usr/local/go: "
            "install Go"
        )
    return go


def go_env(**extra: str) -> dict[str, str]:
    # The machine's own Go, never a toolchain download; modules and build cache stay Go's own.
    return {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-buildvcs=false -mod=mod", **extra}


def run(
    args: list[str],
    cwd: Path,
    what: str,
    env: Mapping[str, str] | None = None,
    error: type[GoBuildError] = GoBuildError,
) -> str:
    """The command's output; on failure `error` names the command and the tail of its output."""
    done = subprocess.run(
        args, cwd=cwd, env=go_env() if env is None else env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise error(
            f"{what} failed (exit {done.returncode}): {' '.join(args)}\n"
            + (done.stderr or done.stdout).strip()[-2000:]
        )
    return done.stdout


@contextlib.contextmanager
def exclusive(root: Path) -> Iterator[None]:
    """One build at a time per machine: a second caller waits, then finds the work done."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def cache_root(env_var: str, name: str) -> Path:
    """`env_var` if set, else ~/.cache (or XDG_CACHE_HOME)/kafka-topic-operator/`name`."""
    configured = os.environ.get(env_var)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafka-topic-operator" / name


def is_complete(folder: Path) -> bool:
    return (folder / COMPLETE).exists()


def build_once(
    folder: Path,
    root: Path,
    requirement: str,
    make: Make,
    error: type[GoBuildError] = GoBuildError,
) -> None:
    """Builds `folder` with `make` unless its stamp is there; Go is looked for only then."""
    if is_complete(folder):
        return
    go = find_go(requirement, error)
    with exclusive(root):
        if is_complete(folder):
            return
        # Into a fresh folder, renamed into place only once complete: an interrupted build
        # leaves nothing that looks usable.
        work = Path(tempfile.mkdtemp(prefix="build-", dir=root))
        try:
            started = time.monotonic()
            out = work / "bin"
            out.mkdir()
            stamp = {**make(go, work, out),
                     "go": run([go, "env", "GOVERSION"], work, "go env", error=error).strip(),
                     "seconds": round(time.monotonic() - started)}  # fmt: skip
            (out / COMPLETE).write_text(json.dumps(stamp) + "\n")
            shutil.rmtree(folder, ignore_errors=True)
            out.rename(folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def build_record(folder: Path) -> dict[str, object]:
    """What the stamp says: versions, the Go that built them, how long the build took."""
    record: dict[str, object] = json.loads((folder / COMPLETE).read_text())
    return record


def main(built: Callable[[], Path]) -> int:
    """A build module's `python -m`: prints what `built` returns, or the error on one line."""
    try:
        path = built()
    except GoBuildError as e:
        print(f"kto: {e}", file=sys.stderr)
        return 1
    print(path)
    return 0
