"""Real helm (v4, from the same PyPI wheel as kubectl) installs, upgrades and uninstalls a chart
with a CRD against the emulator; its release records are Secrets written as protobuf."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from kube_api_emulator import ApiServer

from .helpers import Kubectl, topic_crd

pytestmark = pytest.mark.e2e

TEMPLATES = [
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "op"}},
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "op"},
        "rules": [{"apiGroups": ["kto.dev"], "resources": ["kafkatopics"], "verbs": ["*"]}],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "op"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "op"},
        "subjects": [{"kind": "ServiceAccount", "name": "op", "namespace": "kto"}],
    },
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "op"}, "data": {"a": "b"}},
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "op"},
        "spec": {
            "selector": {"matchLabels": {"app": "op"}},
            "template": {
                "metadata": {"labels": {"app": "op"}},
                "spec": {
                    "serviceAccountName": "op",
                    "containers": [{"name": "op", "image": "{{ .Values.image }}"}],
                },
            },
        },
    },
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "op"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "op"}}},
    },
]


def test_helm_install_upgrade_uninstall(
    api: ApiServer, kubectl: Kubectl, k8s_binaries: Path, tmp_path: Path
) -> None:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "crds").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: demo\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("image: op:1\n")
    (chart / "crds" / "crd.yaml").write_text(yaml.safe_dump(topic_crd()))
    (chart / "templates" / "all.yaml").write_text(yaml.safe_dump_all(TEMPLATES))
    env = {
        **os.environ,
        "KUBECONFIG": str(kubectl.kubeconfig),
        "HELM_CACHE_HOME": str(tmp_path / "helm-cache"),
        "HELM_CONFIG_HOME": str(tmp_path / "helm-config"),
        "HELM_DATA_HOME": str(tmp_path / "helm-data"),
    }

    def helm(*args: str) -> str:
        result = subprocess.run(
            [str(k8s_binaries / "helm"), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    assert "STATUS: deployed" in helm(
        "install", "demo", str(chart), "-n", "kto", "--create-namespace"
    )
    assert "REVISION: 2" in helm("upgrade", "demo", str(chart), "-n", "kto", "--set", "image=op:2")
    releases = json.loads(helm("list", "-n", "kto", "-o", "json"))
    assert [(r["name"], r["revision"], r["status"]) for r in releases] == [
        ("demo", "2", "deployed")
    ]
    deploy = json.loads(kubectl.run("get", "deploy", "op", "-n", "kto", "-o", "json").stdout)
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == "op:2"
    crd = kubectl.run("get", "crd", "kafkatopics.kto.dev", "-o", "name").stdout.strip()
    assert crd == "customresourcedefinition.apiextensions.k8s.io/kafkatopics.kto.dev"
    assert 'release "demo" uninstalled' in helm("uninstall", "demo", "-n", "kto")
    left = kubectl.run("get", "deploy,cm,secret,sa,pdb", "-n", "kto", "-o", "name").stdout
    assert left.split() == []
