"""The Prometheus Operator's own CRDs (monitoring.coreos.com), to check what the chart renders for
it (ServiceMonitor, PrometheusRule) the way a cluster running it would: against their schemas.

They ship in its Go module (`example/prometheus-operator-crd/`), which the Go module proxy
serves: `go mod download` puts the module in Go's module cache, shared by every clone on the
machine, so only the first call downloads. The version is pinned here and nowhere else.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

MODULE = "github.com/prometheus-operator/prometheus-operator"
VERSION = "v0.85.0"


class CrdsUnavailableError(RuntimeError):
    """The module could not be downloaded; the message says why."""


def crd_file(plural: str, version: str = VERSION) -> Path:
    """The CRD of `plural` (servicemonitors, prometheusrules) from the pinned release."""
    go = shutil.which("go")
    if go is None:
        raise CrdsUnavailableError("the Go toolchain was not found on PATH: install Go")
    done = subprocess.run(
        [go, "mod", "download", "-json", f"{MODULE}@{version}"],
        env={**os.environ, "GOFLAGS": "-mod=mod"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    found = json.loads(done.stdout) if done.stdout.strip() else {}
    if done.returncode != 0 or "Dir" not in found:
        raise CrdsUnavailableError(
            f"go mod download {MODULE}@{version} failed: {found.get('Error') or done.stderr}"
        )
    path = Path(found["Dir"]) / "example" / "prometheus-operator-crd"
    return path / f"monitoring.coreos.com_{plural}.yaml"
