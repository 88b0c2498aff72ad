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

import sys
from pathlib import Path

from kto_dev import go_build

# The one place the version is pinned: Prometheus 3.16.0, whose Go module is v0.316.0.
PROMETHEUS_VERSION = "3.16.0"
PACKAGE = "github.com/prometheus/prometheus/cmd/promtool"
GO_REQUIREMENT = "the go Prometheus' go.mod names, or newer"

COMPLETE = go_build.COMPLETE
is_complete = go_build.is_complete


class PromtoolBuildError(go_build.GoBuildError):
    """promtool is missing or could not be built; the message says what to do."""


def module_version(prometheus: str) -> str:
    """Prometheus X.Y.Z is tagged v0.(X*100+Y).Z for Go: 3.16.0 is v0.316.0."""
    major, minor, patch = (int(part) for part in prometheus.split("."))
    return f"v0.{major * 100 + minor}.{patch}"


def cache_root() -> Path:
    return go_build.cache_root("KTO_PROMTOOL_CACHE", "promtool")


def install_dir(prometheus: str = PROMETHEUS_VERSION) -> Path:
    return cache_root() / f"prometheus-v{prometheus}"


def binary_in(folder: Path) -> Path:
    return folder / "promtool"


def version_ldflags(prometheus: str) -> str:
    """What Prometheus' own build stamps in, so `promtool --version` names its release."""
    return f"-s -w -X github.com/prometheus/common/version.Version={prometheus}"


def build(prometheus: str = PROMETHEUS_VERSION) -> Path:
    """promtool's path, built if missing; a second run finds the stamp and builds nothing."""

    def make(go: str, work: Path, out: Path) -> dict[str, object]:
        package = f"{PACKAGE}@{module_version(prometheus)}"
        env = go_build.go_env(GOBIN=str(out), CGO_ENABLED="0")
        go_build.run([go, "install", "-trimpath", "-ldflags", version_ldflags(prometheus), package],
                     work, f"building {package}", env, PromtoolBuildError)  # fmt: skip
        return {"prometheus": prometheus, "module": module_version(prometheus)}

    folder = install_dir(prometheus)
    go_build.build_once(folder, cache_root(), GO_REQUIREMENT, make, PromtoolBuildError)
    return binary_in(folder)


def build_record(folder: Path | None = None) -> dict[str, object]:
    """What the stamp says: the version, the Go that built it, how long the build took."""
    return go_build.build_record(folder or install_dir())


def main() -> int:
    return go_build.main(build)


if __name__ == "__main__":
    sys.exit(main())
