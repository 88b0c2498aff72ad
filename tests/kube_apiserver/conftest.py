"""A real kube-apiserver with etcd (built by `make kube-apiserver`, started per test on loopback),
and real kubectl and helm against it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kto_dev.kube_apiserver.build import Binaries, build
from kto_dev.kube_apiserver.launcher import KubeApiServer


@pytest.fixture(scope="session")
def kube_binaries() -> Binaries:
    """Built once per machine (make kube-apiserver); found in the cache every later time."""
    return build()


@pytest.fixture
def kube_api(kube_binaries: Binaries, tmp_path: Path) -> Iterator[KubeApiServer]:
    with KubeApiServer(tmp_path / "kube-apiserver", binaries=kube_binaries, audit=True) as api:
        yield api
