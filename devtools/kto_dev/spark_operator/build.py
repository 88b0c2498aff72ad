"""The Kubeflow Spark operator's command, built once with the Go toolchain from its Go module.

The project publishes the operator as an image and a Helm chart, but its Go module is on the
module proxy (exact versions only: the proxy refuses to list them). A small module of our own
requires `github.com/kubeflow/spark-operator/v2` and builds its `cmd/operator` (`spark-operator
controller start`, `spark-operator webhook start`). The operator's go.mod pins the `k8s.io/*`
modules below what it requires with replace directives, which Go applies only in the main
module: they are read from the downloaded go.mod (by `go mod edit -json`, Go's own parser) and
copied into ours, so a version bump brings its own. The CRDs (`config/crd/bases`) are copied
from the same download beside the binary.

The version is pinned here and nowhere else. The build goes to a cache outside the checkout
(`KTO_SPARK_OPERATOR_CACHE`, else `~/.cache/kafka-topic-operator/spark-operator`), shared by
every clone on the machine, under the same lock-and-stamp rules as the other Go tools
(`go_build`).

`python -m kto_dev.spark_operator.build` builds it if missing and prints the folder.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kto_dev import go_build

# The one place the version is pinned.
SPARK_OPERATOR_VERSION = "2.4.0"
MODULE = "github.com/kubeflow/spark-operator/v2"
PACKAGE = f"{MODULE}/cmd/operator"
GO_REQUIREMENT = "the go the Spark operator's go.mod names, or newer"
BUILD_MODULE = "kto.dev/spark-operator-build"
CRD_FOLDER = "config/crd/bases"

COMPLETE = go_build.COMPLETE
is_complete = go_build.is_complete

GO_VERSION = re.compile(r"go(\d+(?:\.\d+){1,2})")


class SparkOperatorBuildError(go_build.GoBuildError):
    """The Spark operator is missing or could not be built; the message says what to do."""


@dataclass(frozen=True)
class SparkOperator:
    binary: Path
    crds: list[Path]


def cache_root() -> Path:
    return go_build.cache_root("KTO_SPARK_OPERATOR_CACHE", "spark-operator")


def install_dir(version: str = SPARK_OPERATOR_VERSION) -> Path:
    return cache_root() / f"spark-operator-v{version}"


def built_in(folder: Path) -> SparkOperator:
    return SparkOperator(folder / "spark-operator", sorted((folder / "crds").glob("*.yaml")))


def require_built() -> SparkOperator:
    """The built operator, or one line saying how to get it."""
    folder = install_dir()
    if not is_complete(folder):
        raise SparkOperatorBuildError(
            f"the Spark operator {SPARK_OPERATOR_VERSION} is not built in {folder}: run `make "
            "spark-operator` (or python -m kto_dev.spark_operator.build)"
        )
    return built_in(folder)


# go.mod, as `go mod edit -json` gives it


def go_directive(go_mod: Mapping[str, Any]) -> str:
    """The Go version a go.mod's `go` line asks for."""
    go = go_mod.get("Go")
    if not go:
        raise SparkOperatorBuildError("the Spark operator's go.mod has no go line")
    return str(go)


def _module_version(module: Mapping[str, str]) -> str:
    return " ".join(filter(None, (module.get("Path"), module.get("Version"))))


def replace_directives(go_mod: Mapping[str, Any]) -> list[str]:
    """A go.mod's replace directives, one `old [version] => new version` each, in its order. A
    replacement by a local folder (no version) cannot be carried into another module."""
    replaces = go_mod.get("Replace") or []
    directives = [f"{_module_version(r['Old'])} => {_module_version(r['New'])}" for r in replaces]
    local = [d for r, d in zip(replaces, directives, strict=True) if not r["New"].get("Version")]
    if local:
        raise SparkOperatorBuildError(
            f"the Spark operator's go.mod replaces modules with local folders: {'; '.join(local)}"
        )
    return directives


def build_go_mod(version: str, go: str, replaces: list[str]) -> str:
    """Our module: requires the operator at `version` and applies its replace directives."""
    block = "".join(f"\t{r}\n" for r in replaces)
    return f"module {BUILD_MODULE}\n\ngo {go}\n\nrequire {MODULE} v{version}\n" + (
        f"\nreplace (\n{block})\n" if replaces else ""
    )


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def go_is_new_enough(required: str, goversion: str) -> bool:
    """Whether `go env GOVERSION` (go1.26.8) is at least a go.mod's `go` line (1.24.1)."""
    found = GO_VERSION.match(goversion)
    if found is None:  # a development toolchain (devel ...): let the build decide
        return True
    return version_tuple(found.group(1)) >= version_tuple(required)


def version_ldflags(version: str, commit: str | None) -> str:
    """What the operator's own Makefile stamps in, so `spark-operator version` names the release
    (it reports the tag only with the tag's commit and a clean tree)."""
    stamps = {"version": f"v{version}"}
    if commit:
        stamps |= {"gitCommit": commit, "gitTag": f"v{version}", "gitTreeState": "clean"}
    return "-s -w " + " ".join(f"-X {MODULE}.{name}={value}" for name, value in stamps.items())


# The build


def _run(args: list[str], cwd: Path, what: str, **extra_env: str) -> str:
    env = go_build.go_env(**extra_env)
    return go_build.run(args, cwd, what, env, SparkOperatorBuildError)


def _download(go: str, version: str, cwd: Path) -> tuple[Path, str | None]:
    """The operator's source folder in Go's module cache, and its tag's commit if the proxy
    says (`Origin`)."""
    module = f"{MODULE}@v{version}"
    described = json.loads(_run([go, "mod", "download", "-json", module], cwd,
                                f"fetching {module}"))  # fmt: skip
    commit = (described.get("Origin") or {}).get("Hash")
    return Path(described["Dir"]), str(commit) if commit else None


def build(version: str = SPARK_OPERATOR_VERSION) -> SparkOperator:
    """Builds what is missing; a second run finds the stamp and builds nothing."""

    def make(go: str, work: Path, out: Path) -> dict[str, object]:
        module = work / "spark-operator"
        module.mkdir()
        (module / "go.mod").write_text(f"module {BUILD_MODULE}\n")
        source, commit = _download(go, version, module)
        upstream = json.loads(_run([go, "mod", "edit", "-json", str(source / "go.mod")],
                                   module, "reading the Spark operator's go.mod"))  # fmt: skip
        required = go_directive(upstream)
        have = _run([go, "env", "GOVERSION"], module, "go env").strip()
        if not go_is_new_enough(required, have):
            raise SparkOperatorBuildError(
                f"the Spark operator v{version} needs go {required} or newer; this machine has "
                f"{have} (toolchains are never downloaded: install a newer Go)"
            )
        (module / "go.mod").write_text(
            build_go_mod(version, required, replace_directives(upstream))
        )
        _run([go, "build", "-trimpath", "-ldflags", version_ldflags(version, commit), "-o",
              str(out / "spark-operator"), PACKAGE], module, f"building {PACKAGE}",
             CGO_ENABLED="0")  # fmt: skip
        crds = sorted((source / CRD_FOLDER).glob("*.yaml"))
        if not crds:
            raise SparkOperatorBuildError(f"the Spark operator v{version} has no {CRD_FOLDER}")
        (out / "crds").mkdir()
        for crd in crds:
            shutil.copyfile(crd, out / "crds" / crd.name)
        return {"spark_operator": version, "commit": commit, "module_go": required,
                "crds": [crd.name for crd in crds]}  # fmt: skip

    folder = install_dir(version)
    go_build.build_once(folder, cache_root(), GO_REQUIREMENT, make, SparkOperatorBuildError)
    return built_in(folder)


def build_record(folder: Path | None = None) -> dict[str, object]:
    """What the stamp says: the version, the Go that built it, how long the build took."""
    return go_build.build_record(folder or install_dir())


def main() -> int:
    return go_build.main(lambda: build().binary.parent)


if __name__ == "__main__":
    sys.exit(main())
