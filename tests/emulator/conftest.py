"""Fixtures for the API emulator's tests: a cluster (no HTTP), a server on a thread with an
HTTP client, and real kubectl (fetched by scripts/fetch-k8s-binaries.sh into .kto/bin/)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kube_api_emulator import ApiServer, Cluster

from .helpers import CRD_PATH, Http, Kubectl, topic_crd


@pytest.fixture
def cluster() -> Cluster:
    """A cluster with the test CRD registered (no HTTP)."""
    c = Cluster()
    c.create(c.info("apiextensions.k8s.io", "v1", "customresourcedefinitions"), None, topic_crd())
    return c


@pytest.fixture
def api() -> Iterator[ApiServer]:
    with ApiServer(bookmark_interval=0.2) as server:
        yield server


@pytest.fixture
def http(api: ApiServer) -> Http:
    return Http(api.url)


@pytest.fixture
def http_crd(http: Http) -> Http:
    code, _ = http.post(CRD_PATH, topic_crd())
    assert code == 201
    return http


@pytest.fixture
def kubectl(api: ApiServer, k8s_binaries: Path, tmp_path: Path) -> Kubectl:
    config = api.write_kubeconfig(tmp_path / "kubeconfig")
    return Kubectl(k8s_binaries / "kubectl", config, tmp_path / "kube-cache")
