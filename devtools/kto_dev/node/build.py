"""A Kubernetes node's own binaries, built once with the Go toolchain (and gcc for pause).

- kubelet, kube-controller-manager, kube-scheduler and kube-proxy build from the same module set
  as kube-apiserver (`kube_apiserver.build`: `k8s.io/kubernetes` with its staging modules pinned
  to their release), one `go build` per `k8s.io/kubernetes/cmd/<name>`, with the same version
  stamped in. They run on the host, linked as kube-apiserver is.
- CoreDNS is a module of its own requiring `github.com/coredns/coredns`, with a small main that
  links only the plugins a cluster DNS needs (CoreDNS's own main links every plugin, cloud SDKs
  included). Static (no cgo): its image holds the binary alone.
- pause is Kubernetes' own `build/pause/linux/pause.c`, from the `k8s.io/kubernetes` module,
  compiled statically as Kubernetes' build/pause Makefile does: its image holds it alone.

The Kubernetes version is kube-apiserver's (one pin); CoreDNS's is pinned here. The binaries go
to a cache outside the checkout (`KTO_NODE_CACHE`, else `~/.cache/kafka-topic-operator/node`),
shared by every clone on the machine, built under the same lock-and-stamp rules as the other Go
tools (`go_build`).

`python -m kto_dev.node.build` builds what is missing and prints the folder.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kto_dev import go_build
from kto_dev.kube_apiserver import build as kube_build

KUBERNETES_VERSION = kube_build.KUBERNETES_VERSION
# The last CoreDNS release on client-go 0.32: one minor behind the Kubernetes above, inside
# client-go's supported version skew, and the release the node was measured with.
COREDNS_VERSION = "1.12.3"
GO_REQUIREMENT = kube_build.GO_REQUIREMENT

COMPLETE = go_build.COMPLETE
is_complete = go_build.is_complete

KUBERNETES_COMMANDS = ["kubelet", "kube-controller-manager", "kube-scheduler", "kube-proxy"]

# What a cluster DNS's Corefile uses (Kubernetes' default one, without its metrics endpoint)
# plus whoami, CoreDNS's own smoke test. No plugin that links a cloud SDK.
COREDNS_PLUGINS = ["cache", "errors", "forward", "health", "kubernetes", "loadbalance", "log",
                   "loop", "ready", "reload", "whoami"]  # fmt: skip

# Registered too, though never a directive here: the chosen plugins import them (cache the
# metrics plugin, "prometheus"; forward debug, dnstap and metadata; kubernetes metadata and
# transfer), and a plugin registers itself when its package is linked.
COREDNS_LINKED_ALONG = ["debug", "dnstap", "metadata", "prometheus", "transfer"]

COREDNS_MODULE = "github.com/coredns/coredns"
# "name:package" lines; a package without a slash is one of CoreDNS's own plugin folders.
PLUGIN_CFG_LINE = re.compile(r"^([\w-]+):(\S+)$", re.MULTILINE)
PAUSE_TAG = re.compile(r"^TAG \?= (\S+)$", re.MULTILINE)


class NodeBuildError(go_build.GoBuildError):
    """The node's binaries are missing or could not be built; the message says what to do."""


@dataclass(frozen=True)
class NodeBinaries:
    kubelet: Path
    kube_controller_manager: Path
    kube_scheduler: Path
    kube_proxy: Path
    coredns: Path
    pause: Path


def cache_root() -> Path:
    return go_build.cache_root("KTO_NODE_CACHE", "node")


def install_dir(kubernetes: str = KUBERNETES_VERSION, coredns: str = COREDNS_VERSION) -> Path:
    return cache_root() / f"kubernetes-v{kubernetes}-coredns-v{coredns}"


def binaries_in(folder: Path) -> NodeBinaries:
    return NodeBinaries(
        kubelet=folder / "kubelet",
        kube_controller_manager=folder / "kube-controller-manager",
        kube_scheduler=folder / "kube-scheduler",
        kube_proxy=folder / "kube-proxy",
        coredns=folder / "coredns",
        pause=folder / "pause",
    )


def require_binaries() -> NodeBinaries:
    """The built binaries, or one line saying how to get them."""
    folder = install_dir()
    if not is_complete(folder):
        raise NodeBuildError(
            f"the node's binaries (kubelet and the rest {KUBERNETES_VERSION}, CoreDNS "
            f"{COREDNS_VERSION}, pause) are not built in {folder}: run `make node` (or python "
            "-m kto_dev.node.build; about 4 minutes after `make kube-apiserver`, whose Go caches "
            "it shares, longer before)"
        )
    return binaries_in(folder)


# CoreDNS


def coredns_plugins(plugin_cfg: str, chosen: list[str]) -> list[tuple[str, str]]:
    """(directive, import path) of each chosen plugin, in plugin.cfg's order: the order a query
    passes through them, whatever order a Corefile lists them in."""
    entries = PLUGIN_CFG_LINE.findall(plugin_cfg)
    missing = set(chosen) - {name for name, _ in entries}
    if missing:
        raise NodeBuildError(f"CoreDNS's plugin.cfg names no plugin {', '.join(sorted(missing))}")
    return [(name, package if "/" in package else f"{COREDNS_MODULE}/plugin/{package}")
            for name, package in entries if name in chosen]  # fmt: skip


def coredns_main(plugins: list[tuple[str, str]]) -> str:
    """CoreDNS's own main with its own plugin list replaced: the chosen plugins' packages
    register them; Directives is the only list CoreDNS orders and accepts them from."""
    imports = "".join(f'\t_ "{package}"\n' for _, package in plugins)
    directives = "".join(f'\t\t"{name}",\n' for name, _ in plugins)
    return (
        "package main\n\nimport (\n"
        f'\t"{COREDNS_MODULE}/core/dnsserver"\n\t"{COREDNS_MODULE}/coremain"\n\n{imports})\n\n'
        f"func main() {{\n\tdnsserver.Directives = []string{{\n{directives}\t}}\n"
        "\tcoremain.Run()\n}\n"
    )


def coredns_go_mod(coredns: str) -> str:
    return f"module kto.dev/coredns-build\n\ngo 1.23.0\n\nrequire {COREDNS_MODULE} v{coredns}\n"


def _run(args: list[str], cwd: Path, what: str, **extra_env: str) -> str:
    return go_build.run(args, cwd, what, go_build.go_env(**extra_env), error=NodeBuildError)


def _coredns_plugin_cfg(go: str, coredns: str, cwd: Path) -> str:
    """CoreDNS's plugin.cfg, from its module's folder in Go's module cache."""
    module = f"{COREDNS_MODULE}@v{coredns}"
    described = json.loads(_run([go, "mod", "download", "-json", module], cwd,
                                f"fetching {module}"))  # fmt: skip
    return (Path(described["Dir"]) / "plugin.cfg").read_text()


def _build_coredns(go: str, coredns: str, work: Path, output: Path) -> None:
    module = work / "coredns"
    module.mkdir()
    (module / "go.mod").write_text(coredns_go_mod(coredns))
    plugins = coredns_plugins(_coredns_plugin_cfg(go, coredns, module), COREDNS_PLUGINS)
    (module / "main.go").write_text(coredns_main(plugins))
    _run([go, "mod", "tidy"], module, "go mod tidy (coredns)")
    _run([go, "build", "-trimpath", "-ldflags", "-s -w", "-o", str(output), "."], module,
         "building coredns", CGO_ENABLED="0")  # fmt: skip


# pause


def pause_version(pause_makefile: str, kubernetes: str) -> str:
    """What Kubernetes' build/pause Makefile passes as VERSION: v$(TAG)-$(REV), REV being git's
    name for the source commit, here the release's tag."""
    tag = PAUSE_TAG.search(pause_makefile)
    if tag is None:
        raise NodeBuildError("Kubernetes' build/pause/Makefile sets no TAG: unknown layout")
    return f"v{tag.group(1)}-v{kubernetes}"


def pause_cflags(version: str) -> list[str]:
    """The Makefile's CFLAGS: small, warnings fatal, static (the image holds nothing else)."""
    return ["-Os", "-Wall", "-Werror", "-static", f"-DVERSION={version}"]


def _require_c_toolchain() -> None:
    missing = [tool for tool in ("gcc", "strip") if shutil.which(tool) is None]
    if missing:
        raise NodeBuildError(
            f"{' and '.join(missing)} not found on PATH: pause is compiled from C "
            "(install gcc and libc6-dev)"
        )


def _build_pause(kubernetes: str, source: Path, work: Path, output: Path) -> str:
    pause = source / "build" / "pause"
    version = pause_version((pause / "Makefile").read_text(), kubernetes)
    _run(["gcc", *pause_cflags(version), "-o", str(output), str(pause / "linux" / "pause.c")],
         work, "compiling pause")  # fmt: skip
    _run(["strip", str(output)], work, "stripping pause")
    return version


# The whole build


@contextlib.contextmanager
def _timed(seconds: dict[str, int], name: str) -> Iterator[None]:
    started = time.monotonic()
    yield
    seconds[name] = round(time.monotonic() - started)


def build(kubernetes: str = KUBERNETES_VERSION, coredns: str = COREDNS_VERSION) -> NodeBinaries:
    """Builds what is missing; a second run finds the stamp and builds nothing."""
    folder = install_dir(kubernetes, coredns)

    def make(go: str, work: Path, out: Path) -> dict[str, object]:
        _require_c_toolchain()  # before minutes of Go, not after
        seconds: dict[str, int] = {}
        module = work / "node"
        source = kube_build.prepare_kubernetes_module(
            go, kubernetes, module, KUBERNETES_COMMANDS, NodeBuildError
        )
        pause = _build_pause(kubernetes, source, work, out / "pause")
        for command in KUBERNETES_COMMANDS:
            with _timed(seconds, command):
                kube_build.build_kubernetes_command(
                    go, kubernetes, module, command, out / command, NodeBuildError
                )
        with _timed(seconds, "coredns"):
            _build_coredns(go, coredns, work, out / "coredns")
        return {"kubernetes": kubernetes, "coredns": coredns, "pause": pause,
                "seconds_each": seconds}  # fmt: skip

    go_build.build_once(folder, cache_root(), GO_REQUIREMENT, make, NodeBuildError)
    return binaries_in(folder)


def build_record(folder: Path | None = None) -> dict[str, object]:
    """What the stamp says: versions, the Go that built them, how long the build took."""
    return go_build.build_record(folder or install_dir())


def main() -> int:
    return go_build.main(lambda: build().kubelet.parent)


if __name__ == "__main__":
    sys.exit(main())
