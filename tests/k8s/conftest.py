"""The API emulator with the kubernetes client configured for it, for tests that call the
operator's own Kubernetes code in-process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kube_api_emulator import ApiServer

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def emulator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ApiServer]:
    """An emulator whose kubeconfig every kubernetes client of this process uses."""
    from kubernetes import config

    with ApiServer() as api:
        kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig")
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        config.load_kube_config(str(kubeconfig))
        yield api


def install_crd(file: str) -> None:
    from kubernetes import client

    with client.ApiClient() as c:
        crd = yaml.safe_load((ROOT / "crds" / file).read_text())
        client.ApiextensionsV1Api(c).create_custom_resource_definition(crd)
