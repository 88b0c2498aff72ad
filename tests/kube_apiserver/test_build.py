"""kube-apiserver and etcd built from their Go modules: the pinned versions, what the binaries
report, and a second build that builds nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kto_dev import go_build
from kto_dev.kube_apiserver import build as kube_build
from kto_dev.kube_apiserver.build import (
    ETCD_VERSION,
    KUBERNETES_VERSION,
    Binaries,
    kube_apiserver_go_mod,
    staging_modules,
)
from kto_dev.kube_apiserver.launcher import KubeApiServer

pytestmark = pytest.mark.apiserver

KUBERNETES_GO_MOD = """module k8s.io/kubernetes

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/apiextensions-apiserver => ./staging/src/k8s.io/apiextensions-apiserver
\tgithub.com/example/other => github.com/example/other v1.2.3
)

replace k8s.io/kms => ./staging/src/k8s.io/kms
"""


def test_the_staging_modules_are_read_from_kubernetes_own_go_mod() -> None:
    assert staging_modules(KUBERNETES_GO_MOD) == [
        "k8s.io/api", "k8s.io/apiextensions-apiserver", "k8s.io/kms"]  # fmt: skip
    go_mod = kube_apiserver_go_mod("1.33.5", ["k8s.io/api", "k8s.io/kms"])
    assert "require k8s.io/kubernetes v1.33.5" in go_mod
    assert "\tk8s.io/api => k8s.io/api v0.33.5\n" in go_mod
    assert "\tk8s.io/kms => k8s.io/kms v0.33.5\n" in go_mod


def test_the_server_is_the_minor_release_of_the_kubectl_the_project_uses(
    k8s_binaries: Path,
) -> None:
    client = json.loads(subprocess.run(
        [str(k8s_binaries / "kubectl"), "version", "--client", "-o", "json"],
        capture_output=True, text=True, check=True).stdout)["clientVersion"]  # fmt: skip
    major, minor, _ = KUBERNETES_VERSION.split(".")
    assert (client["major"], client["minor"]) == (major, minor)


def test_the_binaries_report_the_pinned_versions(
    kube_binaries: Binaries, kube_api: KubeApiServer
) -> None:
    etcd = subprocess.run([str(kube_binaries.etcd), "--version"], capture_output=True,
                          text=True, check=True).stdout  # fmt: skip
    assert f"etcd Version: {ETCD_VERSION}" in etcd
    version = kube_api.get("/version")
    assert version["gitVersion"] == f"v{KUBERNETES_VERSION}"
    assert kube_build.build_record()["kubernetes"] == KUBERNETES_VERSION


def test_a_second_build_builds_nothing(
    kube_binaries: Binaries, monkeypatch: pytest.MonkeyPatch
) -> None:
    stamp = kube_binaries.kube_apiserver.parent / kube_build.COMPLETE
    before = stamp.stat().st_mtime_ns
    # Without Go on PATH a build would fail at once: the cached binaries are all it may use.
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(go_build, "GO_INSTALL", Path("/nonexistent/go"))
    assert kube_build.build() == kube_binaries
    assert stamp.stat().st_mtime_ns == before


def test_a_missing_build_is_named_with_the_command_that_makes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KTO_KUBE_CACHE", str(tmp_path))
    with pytest.raises(kube_build.KubeApiServerBuildError, match="run `make kube-apiserver`"):
        kube_build.require_binaries()
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(go_build, "GO_INSTALL", tmp_path / "go" / "bin" / "go")
    with pytest.raises(kube_build.KubeApiServerBuildError, match="Go toolchain"):
        kube_build.build()
