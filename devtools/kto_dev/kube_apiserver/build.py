"""kube-apiserver and etcd, built once with the Go toolchain from their own Go modules.

Kubernetes publishes no kube-apiserver binary this machine can fetch, but its Go modules are on
the module proxy: a small module that requires `k8s.io/kubernetes` builds
`k8s.io/kubernetes/cmd/kube-apiserver`, once its `k8s.io/*` staging modules (which
`k8s.io/kubernetes` replaces with `./staging/...` in its own go.mod, invisible to a module
depending on it) are pinned to the matching `v0.x` release. etcd is built the same way from
`go.etcd.io/etcd/server/v3`. The versions are pinned here and nowhere else.

The binaries go to a cache outside the checkout (`KTO_KUBE_CACHE`, else
`~/.cache/kafka-topic-operator/kube-apiserver`), so every clone on a machine shares one build;
Go's own module and build caches make a rebuild after a version bump cheaper still.

`python -m kto_dev.kube_apiserver.build` builds what is missing and prints the folder.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from kto_dev import go_build

# The one place the versions are pinned. Kubernetes is the minor release of the kubectl the
# project fetches (scripts/fetch-k8s-binaries.sh: 1.33.9, whose staging modules the module proxy
# here refuses; 1.33.5's it serves); etcd is the 3.5 line Kubernetes 1.33 is released with.
KUBERNETES_VERSION = "1.33.5"
ETCD_VERSION = "3.5.21"
GO_REQUIREMENT = "go 1.24 or newer"

COMPLETE = go_build.COMPLETE
is_complete = go_build.is_complete


class KubeApiServerBuildError(go_build.GoBuildError):
    """The binaries are missing or could not be built; the message says what to do."""


@dataclass(frozen=True)
class Binaries:
    kube_apiserver: Path
    etcd: Path


def cache_root() -> Path:
    return go_build.cache_root("KTO_KUBE_CACHE", "kube-apiserver")


def install_dir(kubernetes: str = KUBERNETES_VERSION, etcd: str = ETCD_VERSION) -> Path:
    return cache_root() / f"kubernetes-v{kubernetes}-etcd-v{etcd}"


def binaries_in(folder: Path) -> Binaries:
    return Binaries(folder / "kube-apiserver", folder / "etcd")


def require_binaries() -> Binaries:
    """The built binaries, or one line saying how to get them."""
    folder = install_dir()
    if not is_complete(folder):
        raise KubeApiServerBuildError(
            f"kube-apiserver {KUBERNETES_VERSION} and etcd {ETCD_VERSION} are not built in "
            f"{folder}: run `make kube-apiserver` (or python -m kto_dev.kube_apiserver.build; "
            "about 7 minutes the first time)"
        )
    return binaries_in(folder)


def staging_version(kubernetes: str) -> str:
    """k8s.io/kubernetes v1.X.Y publishes its staging modules (k8s.io/api, ...) as v0.X.Y."""
    return "v0." + kubernetes.split(".", 1)[1]


STAGING_REPLACE = re.compile(
    r"^\s*(?:replace\s+)?(k8s\.io/[\w.-]+)\s+=>\s+\./staging/", re.MULTILINE
)


def staging_modules(kubernetes_go_mod: str) -> list[str]:
    """The modules k8s.io/kubernetes' own go.mod replaces with its staging folders."""
    return sorted(set(STAGING_REPLACE.findall(kubernetes_go_mod)))


def kubernetes_go_mod(module: str, kubernetes: str, staging: list[str]) -> str:
    """A module `module` requiring k8s.io/kubernetes, its staging modules at their release."""
    replaces = "".join(f"\t{m} => {m} {staging_version(kubernetes)}\n" for m in staging)
    return (
        f"module {module}\n\ngo 1.24.0\n\n"
        f"require k8s.io/kubernetes v{kubernetes}\n\nreplace (\n{replaces})\n"
    )


def kube_apiserver_go_mod(kubernetes: str, staging: list[str]) -> str:
    return kubernetes_go_mod("kto.dev/kube-apiserver-build", kubernetes, staging)


def command_package(command: str) -> str:
    return f"k8s.io/kubernetes/cmd/{command}"


def tools_go(commands: list[str]) -> str:
    """A build-tagged file that keeps the commands' packages in the module graph for
    `go mod tidy`."""
    imports = "".join(f'\t_ "{command_package(c)}"\n' for c in commands)
    return f"//go:build tools\n\npackage tools\n\nimport (\n{imports})\n"


KUBE_APISERVER_TOOLS = tools_go(["kube-apiserver"])

ETCD_MAIN = (
    'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\n'
    "func main() { etcdmain.Main(os.Args) }\n"
)


def etcd_go_mod(etcd: str) -> str:
    return f"module kto.dev/etcd-build\n\ngo 1.23.0\n\nrequire go.etcd.io/etcd/server/v3 v{etcd}\n"


def version_ldflags(kubernetes: str) -> str:
    """What Kubernetes' own build stamps in: the server reports, and emulates, this version."""
    major, minor, _ = kubernetes.split(".")
    variables = {"gitVersion": f"v{kubernetes}", "gitMajor": major, "gitMinor": minor,
                 "gitTreeState": "clean"}  # fmt: skip
    stamps = " ".join(
        f"-X k8s.io/component-base/version.{name}={value}" for name, value in variables.items()
    )
    return f"-s -w {stamps}"


def _run(args: list[str], cwd: Path, what: str) -> str:
    return go_build.run(args, cwd, what, error=KubeApiServerBuildError)


def kubernetes_module(
    go: str, kubernetes: str, cwd: Path, error: type[go_build.GoBuildError]
) -> dict[str, object]:
    """`go mod download -json` of k8s.io/kubernetes: its source folder ("Dir"), its go.mod
    ("GoMod")."""
    module = f"k8s.io/kubernetes@v{kubernetes}"
    fetched = go_build.run([go, "mod", "download", "-json", module], cwd, f"fetching {module}",
                           error=error)  # fmt: skip
    described: dict[str, object] = json.loads(fetched)
    return described


def prepare_kubernetes_module(
    go: str,
    kubernetes: str,
    module: Path,
    commands: list[str],
    error: type[go_build.GoBuildError],
) -> Path:
    """A tidy module in folder `module` (created) from which `commands` build; returns
    k8s.io/kubernetes' source folder (in Go's module cache)."""
    module.mkdir()
    described = kubernetes_module(go, kubernetes, module, error)
    staging = staging_modules(Path(str(described["GoMod"])).read_text())
    if not staging:
        raise error(
            f"k8s.io/kubernetes v{kubernetes}'s go.mod names no staging module: unknown layout"
        )
    name = f"kto.dev/{module.name}-build"
    (module / "go.mod").write_text(kubernetes_go_mod(name, kubernetes, staging))
    (module / "tools.go").write_text(tools_go(commands))
    go_build.run([go, "mod", "tidy"], module, f"go mod tidy ({module.name})", error=error)
    return Path(str(described["Dir"]))


def build_kubernetes_command(
    go: str,
    kubernetes: str,
    module: Path,
    command: str,
    output: Path,
    error: type[go_build.GoBuildError],
) -> None:
    """`command` built from the module `prepare_kubernetes_module` made, with the version
    stamped in."""
    go_build.run([go, "build", "-trimpath", "-ldflags", version_ldflags(kubernetes), "-o",
                  str(output), command_package(command)], module, f"building {command}",
                 error=error)  # fmt: skip


def _build_kube_apiserver(go: str, kubernetes: str, work: Path, output: Path) -> None:
    module = work / "kube-apiserver"
    prepare_kubernetes_module(go, kubernetes, module, ["kube-apiserver"], KubeApiServerBuildError)
    build_kubernetes_command(go, kubernetes, module, "kube-apiserver", output,
                             KubeApiServerBuildError)  # fmt: skip


def _build_etcd(go: str, etcd: str, work: Path, output: Path) -> None:
    module = work / "etcd"
    module.mkdir()
    (module / "go.mod").write_text(etcd_go_mod(etcd))
    (module / "main.go").write_text(ETCD_MAIN)
    _run([go, "mod", "tidy"], module, "go mod tidy (etcd)")
    _run([go, "build", "-trimpath", "-ldflags", "-s -w", "-o", str(output), "."], module,
         "building etcd")  # fmt: skip


def build(kubernetes: str = KUBERNETES_VERSION, etcd: str = ETCD_VERSION) -> Binaries:
    """Builds what is missing; a second run finds the stamp and builds nothing."""

    def make(go: str, work: Path, out: Path) -> dict[str, object]:
        _build_etcd(go, etcd, work, out / "etcd")
        _build_kube_apiserver(go, kubernetes, work, out / "kube-apiserver")
        return {"kubernetes": kubernetes, "etcd": etcd}

    folder = install_dir(kubernetes, etcd)
    go_build.build_once(folder, cache_root(), GO_REQUIREMENT, make, KubeApiServerBuildError)
    return binaries_in(folder)


def build_record(folder: Path | None = None) -> dict[str, object]:
    """What the stamp says: versions, the Go that built them, how long the build took."""
    return go_build.build_record(folder or install_dir())


def main() -> int:
    return go_build.main(lambda: build().kube_apiserver.parent)


if __name__ == "__main__":
    sys.exit(main())
