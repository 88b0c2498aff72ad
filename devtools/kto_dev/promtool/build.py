"""promtool, built once with the Go toolchain from Prometheus' own Go module.

Prometheus ships promtool in its release archives, on no package registry, but its Go module
is on the module proxy: `go install github.com/prometheus/prometheus/cmd/promtool@v0.3XX.Y`
builds the command (Prometheus 3.XX.Y is tagged v0.3XX.Y for Go; its go.mod has no replace
directive, so no module of our own is needed). The version is pinned here and nowhere else.

The binary goes to a cache outside the checkout (`KTO_PROMTOOL_CACHE`, else
`~/.cache/kafka-topic-operator/promtool`), so every clone on a machine shares one build.

`python -m kto_dev.promtool.build` builds it if missing and prints its path.
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
from collections.abc import Iterator
from pathlib import Path

# The one place the version is pinned: Prometheus 3.16.0, whose Go module is v0.316.0.
PROMETHEUS_VERSION = "3.16.0"
PACKAGE = "github.com/prometheus/prometheus/cmd/promtool"

COMPLETE = ".complete"


class PromtoolBuildError(RuntimeError):
    """promtool is missing or could not be built; the message says what to do."""


def module_version(prometheus: str) -> str:
    """Prometheus X.Y.Z is tagged v0.(X*100+Y).Z for Go: 3.16.0 is v0.316.0."""
    major, minor, patch = (int(part) for part in prometheus.split("."))
    return f"v0.{major * 100 + minor}.{patch}"


def cache_root() -> Path:
    configured = os.environ.get("KTO_PROMTOOL_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafka-topic-operator" / "promtool"


def install_dir(prometheus: str = PROMETHEUS_VERSION) -> Path:
    return cache_root() / f"prometheus-v{prometheus}"


def binary_in(folder: Path) -> Path:
    return folder / "promtool"


def is_complete(folder: Path) -> bool:
    return (folder / COMPLETE).exists()


def version_ldflags(prometheus: str) -> str:
    """What Prometheus' own build stamps in, so `promtool --version` names its release."""
    return f"-s -w -X github.com/prometheus/common/version.Version={prometheus}"


# Where Go's own installer puts it, for a shell whose PATH was never told.
GO_INSTALL = Path("/usr/local/go/bin/go")


def _go() -> str:
    go = shutil.which("go") or (str(GO_INSTALL) if GO_INSTALL.exists() else None)
    if go is None:
        raise PromtoolBuildError(
            "the Go toolchain (the go Prometheus' go.mod names, or newer) was not found on PATH "
            "or in /usr/local/go: install Go"
        )
    return go


def _go_env(gobin: Path) -> dict[str, str]:
    # The machine's own Go, never a toolchain download; modules and build cache stay Go's own.
    return {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-buildvcs=false -mod=mod",
            "GOBIN": str(gobin), "CGO_ENABLED": "0"}  # fmt: skip


def _run(args: list[str], cwd: Path, gobin: Path, what: str) -> str:
    done = subprocess.run(args, cwd=cwd, env=_go_env(gobin), capture_output=True, text=True)
    if done.returncode != 0:
        raise PromtoolBuildError(
            f"{what} failed (exit {done.returncode}): {' '.join(args)}\n"
            + (done.stderr or done.stdout).strip()[-2000:]
        )
    return done.stdout


@contextlib.contextmanager
def _exclusive(root: Path) -> Iterator[None]:
    """One build at a time per machine: a second caller waits, then finds the work done."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build(prometheus: str = PROMETHEUS_VERSION) -> Path:
    """promtool's path, built if missing; a second run finds the stamp and builds nothing."""
    folder = install_dir(prometheus)
    if is_complete(folder):
        return binary_in(folder)
    go = _go()
    with _exclusive(cache_root()):
        if is_complete(folder):
            return binary_in(folder)
        # Into a fresh folder, renamed into place only once complete: an interrupted build
        # leaves nothing that looks usable.
        work = Path(tempfile.mkdtemp(prefix="build-", dir=cache_root()))
        try:
            started = time.monotonic()
            out = work / "bin"
            out.mkdir()
            package = f"{PACKAGE}@{module_version(prometheus)}"
            _run([go, "install", "-trimpath", "-ldflags", version_ldflags(prometheus), package],
                 work, out, f"building {package}")  # fmt: skip
            stamp = {"prometheus": prometheus, "module": module_version(prometheus),
                     "go": _run([go, "env", "GOVERSION"], work, out, "go env").strip(),
                     "seconds": round(time.monotonic() - started)}  # fmt: skip
            (out / COMPLETE).write_text(json.dumps(stamp) + "\n")
            shutil.rmtree(folder, ignore_errors=True)
            out.rename(folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return binary_in(folder)


def build_record(folder: Path | None = None) -> dict[str, object]:
    """What the stamp says: the version, the Go that built it, how long the build took."""
    record: dict[str, object] = json.loads(((folder or install_dir()) / COMPLETE).read_text())
    return record


def main() -> int:
    try:
        promtool = build()
    except PromtoolBuildError as e:
        print(f"kto: {e}", file=sys.stderr)
        return 1
    print(promtool)
    return 0


if __name__ == "__main__":
    sys.exit(main())
