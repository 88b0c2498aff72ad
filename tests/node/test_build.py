"""The node's binaries built once with Go and gcc: what the build renders, what each binary
reports, and a second build that builds nothing."""

from __future__ import annotations

import socket
import struct
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from kto_dev import go_build
from kto_dev.kube_apiserver import build as kube_build
from kto_dev.node import build as node_build
from kto_dev.node.build import (
    COREDNS_LINKED_ALONG,
    COREDNS_PLUGINS,
    COREDNS_VERSION,
    KUBERNETES_COMMANDS,
    KUBERNETES_VERSION,
    NodeBinaries,
    NodeBuildError,
)
from kto_dev.ports import free_port

# CoreDNS's plugin.cfg as it reads: comments, every plugin in query order, some from elsewhere.
PLUGIN_CFG = """# Directives are registered in the order they should be executed.
#
# <plugin-name>:<package-name>

root:root
cancel:cancel
reload:reload
ready:ready
health:health
prometheus:metrics
errors:errors
log:log
loadbalance:loadbalance
cache:cache
kubernetes:kubernetes
file:file
loop:loop
forward:forward
whoami:whoami
on:github.com/coredns/caddy/onevent
"""

QUERY_ORDER = ["reload", "ready", "health", "errors", "log", "loadbalance", "cache", "kubernetes",
               "loop", "forward", "whoami"]  # fmt: skip


def test_the_node_module_requires_kubernetes_with_its_staging_modules_at_their_release() -> None:
    go_mod = kube_build.kubernetes_go_mod("kto.dev/node-build", "1.33.5", ["k8s.io/kubelet"])
    assert go_mod.startswith("module kto.dev/node-build\n")
    assert "require k8s.io/kubernetes v1.33.5" in go_mod
    assert "\tk8s.io/kubelet => k8s.io/kubelet v0.33.5\n" in go_mod
    tools = kube_build.tools_go(KUBERNETES_COMMANDS)
    assert tools.startswith("//go:build tools\n")
    for command in ["kubelet", "kube-controller-manager", "kube-scheduler", "kube-proxy"]:
        assert f'\t_ "k8s.io/kubernetes/cmd/{command}"\n' in tools


def test_the_kube_apiserver_module_is_rendered_as_before() -> None:
    assert kube_build.kube_apiserver_go_mod("1.33.5", ["k8s.io/api"]).startswith(
        "module kto.dev/kube-apiserver-build\n\ngo 1.24.0\n\nrequire k8s.io/kubernetes v1.33.5\n"
    )
    assert '_ "k8s.io/kubernetes/cmd/kube-apiserver"' in kube_build.KUBE_APISERVER_TOOLS


def test_the_components_report_the_kubernetes_version_as_its_own_build_stamps_it() -> None:
    ldflags = kube_build.version_ldflags(KUBERNETES_VERSION).split()
    assert ldflags[:2] == ["-s", "-w"]
    assert "k8s.io/component-base/version.gitVersion=v1.33.5" in ldflags
    assert "k8s.io/component-base/version.gitMajor=1" in ldflags
    assert "k8s.io/component-base/version.gitMinor=33" in ldflags


def test_coredns_links_only_the_chosen_plugins_in_plugin_cfg_order() -> None:
    plugins = node_build.coredns_plugins(PLUGIN_CFG, COREDNS_PLUGINS)
    assert [name for name, _ in plugins] == QUERY_ORDER
    main = node_build.coredns_main(plugins)
    imports = [line.strip() for line in main.splitlines() if line.startswith('\t_ "')]
    assert imports == [f'_ "github.com/coredns/coredns/plugin/{name}"' for name in QUERY_ORDER]
    directives = main.split("dnsserver.Directives = []string{")[1].split("}")[0]
    assert [d.strip().strip('",') for d in directives.split()] == QUERY_ORDER
    assert main.rstrip().endswith("coremain.Run()\n}")
    assert '"github.com/coredns/coredns/core/plugin"' not in main  # every plugin, cloud SDKs too


def test_a_plugin_from_outside_coredns_is_imported_by_its_own_path() -> None:
    assert node_build.coredns_plugins(PLUGIN_CFG, ["on", "cache"]) == [
        ("cache", "github.com/coredns/coredns/plugin/cache"),
        ("on", "github.com/coredns/caddy/onevent"),
    ]
    with pytest.raises(NodeBuildError, match="names no plugin geoip"):
        node_build.coredns_plugins(PLUGIN_CFG, ["geoip", "cache"])


def test_pause_is_versioned_as_kubernetes_pause_makefile_versions_it() -> None:
    makefile = "REGISTRY ?= example\nTAG ?= 3.10.1\nREV = $(shell git describe)\n"
    version = node_build.pause_version(makefile, "1.33.5")
    assert version == "v3.10.1-v1.33.5"
    assert node_build.pause_cflags(version) == [
        "-Os", "-Wall", "-Werror", "-static", "-DVERSION=v3.10.1-v1.33.5"]  # fmt: skip
    with pytest.raises(NodeBuildError, match="no TAG"):
        node_build.pause_version("REV = x\n", "1.33.5")


def test_a_missing_build_is_named_with_the_command_that_makes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KTO_NODE_CACHE", str(tmp_path))
    assert node_build.install_dir() == tmp_path / f"kubernetes-v1.33.5-coredns-v{COREDNS_VERSION}"
    with pytest.raises(NodeBuildError, match="run `make node`") as raised:
        node_build.require_binaries()
    assert "\n" not in str(raised.value)
    assert isinstance(raised.value, go_build.GoBuildError)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(go_build, "GO_INSTALL", tmp_path / "go" / "bin" / "go")
    with pytest.raises(NodeBuildError, match="Go toolchain"):
        node_build.build()


# The binaries themselves: built by `make node` (or here, the first time).


@pytest.fixture(scope="module")
def node_binaries() -> NodeBinaries:
    return node_build.build()


def _output(*args: str | Path) -> str:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


PT_DYNAMIC, PT_INTERP = 2, 3


def program_header_types(binary: Path) -> set[int]:
    """The types of an ELF64 little-endian file's program headers (what `file` reads)."""
    data = binary.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1  # ELF64, little-endian
    (offset,) = struct.unpack_from("<Q", data, 0x20)
    size, count = struct.unpack_from("<HH", data, 0x36)
    return {struct.unpack_from("<I", data, offset + i * size)[0] for i in range(count)}


@pytest.mark.node
@pytest.mark.parametrize("command", KUBERNETES_COMMANDS)
def test_each_component_reports_the_pinned_kubernetes_version(
    node_binaries: NodeBinaries, command: str
) -> None:
    binary = node_binaries.kubelet.parent / command
    assert binary.name == command
    assert f"Kubernetes v{KUBERNETES_VERSION}" in _output(binary, "--version")
    assert node_build.build_record()["kubernetes"] == KUBERNETES_VERSION


@pytest.mark.node
def test_coredns_reports_its_version_and_links_only_the_chosen_plugins(
    node_binaries: NodeBinaries,
) -> None:
    assert f"CoreDNS-{COREDNS_VERSION}" in _output(node_binaries.coredns, "-version")
    # One registered plugin a line, alphabetically, the server type's "dns." prefix dropped.
    listed = _output(node_binaries.coredns, "-plugins").split()
    assert listed == sorted(COREDNS_PLUGINS + COREDNS_LINKED_ALONG)


def _dns_query(port: int, name: str) -> bytes:
    """One A query over UDP; the raw answer."""
    question = b"".join(bytes([len(label)]) + label.encode() for label in name.split(".") if label)
    query = struct.pack(">HHHHHH", 0x4B54, 0x0100, 1, 0, 0, 0) + question + b"\0\0\1\0\1"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(5)
        s.sendto(query, ("127.0.0.1", port))
        return s.recv(512)


@pytest.fixture
def coredns_serving(node_binaries: NodeBinaries, tmp_path: Path) -> Iterator[tuple[int, int]]:
    """CoreDNS on a Corefile of the chosen plugins that need no cluster: (DNS, ready) ports."""
    dns, health, ready = free_port(), free_port(), free_port()
    corefile = tmp_path / "Corefile"
    corefile.write_text(
        f".:{dns} {{\n errors\n log\n health 127.0.0.1:{health}\n ready 127.0.0.1:{ready}\n"
        " cache 30\n loadbalance\n reload\n whoami\n}\n"
    )
    server = subprocess.Popen([node_binaries.coredns, "-conf", corefile], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        yield dns, ready
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.node
def test_coredns_serves_a_corefile_of_the_chosen_plugins(coredns_serving: tuple[int, int]) -> None:
    dns, ready = coredns_serving
    deadline = time.monotonic() + 20
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ready}/ready", timeout=2) as answer:
                assert answer.status == 200
                break
        except OSError:
            assert time.monotonic() < deadline, "CoreDNS never reported ready"
            time.sleep(0.2)
    answer = _dns_query(dns, "example.org.")
    ident, flags = struct.unpack_from(">HH", answer)
    assert ident == 0x4B54 and flags & 0x8000 and flags & 0xF == 0  # a response, NOERROR


@pytest.mark.node
def test_a_linked_plugin_that_is_no_directive_is_refused(
    node_binaries: NodeBinaries, tmp_path: Path
) -> None:
    corefile = tmp_path / "Corefile"
    corefile.write_text(f".:{free_port()} {{\n prometheus\n}}\n")
    done = subprocess.run([node_binaries.coredns, "-conf", corefile], capture_output=True,
                          text=True, timeout=30)  # fmt: skip
    assert done.returncode != 0
    assert "Unknown directive 'prometheus'" in done.stdout + done.stderr


@pytest.mark.node
def test_pause_reports_its_version(node_binaries: NodeBinaries) -> None:
    version = node_build.build_record()["pause"]
    assert _output(node_binaries.pause, "-v").strip() == f"pause.c {version}"


@pytest.mark.node
def test_what_goes_into_an_image_alone_is_statically_linked(node_binaries: NodeBinaries) -> None:
    for binary in (node_binaries.pause, node_binaries.coredns):
        headers = program_header_types(binary)
        assert headers and not headers & {PT_INTERP, PT_DYNAMIC}, binary.name


@pytest.mark.node
def test_a_second_build_builds_nothing(
    node_binaries: NodeBinaries, monkeypatch: pytest.MonkeyPatch
) -> None:
    stamp = node_binaries.kubelet.parent / node_build.COMPLETE
    before = stamp.stat().st_mtime_ns
    # Without Go or gcc on PATH a build would fail at once: the cached binaries are all it uses.
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(go_build, "GO_INSTALL", Path("/nonexistent/go"))
    started = time.monotonic()
    assert node_build.build() == node_binaries
    assert time.monotonic() - started < 1
    assert stamp.stat().st_mtime_ns == before
    assert node_build.require_binaries() == node_binaries
