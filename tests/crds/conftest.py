"""The API emulator with one of the project's CRDs installed, as the CRD tests start from."""

from __future__ import annotations

from pathlib import Path

import yaml

from kube_api_emulator import Cluster

CRDS = Path(__file__).resolve().parents[2] / "crds"


def cluster_with(crd_file: str) -> Cluster:
    cluster = Cluster()
    crds = cluster.info("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    cluster.create(crds, None, yaml.safe_load((CRDS / crd_file).read_text()))
    return cluster
