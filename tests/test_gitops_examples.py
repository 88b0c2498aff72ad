"""examples/gitops/: the paths they name exist, the chart values they carry pass the chart's schema,
the ordering puts the CRDs first, the topics are what the operator they install manages, and the
topics are accepted by the CRD (real kubectl's kustomize, the API emulator)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_testing import CHART, ROOT, ensure_binaries, kubectl, render

from kube_api_emulator import ApiServer

GITOPS = ROOT / "examples" / "gitops"
REPO_URL = "https://git.example.com/platform/kafka-topic-operator.git"


@pytest.fixture(scope="module", autouse=True)
def binaries() -> Iterator[None]:
    ensure_binaries()
    yield


def docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def kustomize(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(kubectl("kustomize", str(path))) if d]


def argo_apps() -> dict[str, dict[str, Any]]:
    return {
        d["metadata"]["name"]: d
        for p in (GITOPS / "argocd" / "apps").glob("*.yaml")
        for d in docs(p)
        if d["kind"] == "Application"
    }


def wave(doc: dict[str, Any]) -> int:
    return int(doc["metadata"].get("annotations", {}).get("argocd.argoproj.io/sync-wave", "0"))


def flux_kustomizations() -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs(GITOPS / "flux" / "kustomizations.yaml")}


def helm_release() -> dict[str, Any]:
    (release,) = docs(GITOPS / "flux" / "operator" / "helmrelease.yaml")
    return release


def chart_values() -> list[dict[str, Any]]:
    """The chart values each tool passes."""
    argo = argo_apps()["kafka-topic-operator"]["spec"]["source"]["helm"]["valuesObject"]
    return [argo, helm_release()["spec"]["values"]]


def test_every_path_named_exists_in_this_repository() -> None:
    root = docs(GITOPS / "argocd" / "root.yaml")[0]["spec"]["source"]
    assert (ROOT / root["path"]).is_dir() and root["repoURL"] == REPO_URL
    for app in argo_apps().values():
        source = app["spec"]["source"]
        assert source["repoURL"] == REPO_URL
        assert (ROOT / source["path"]).is_dir(), source["path"]
    for kustomization in flux_kustomizations().values():
        assert (ROOT / kustomization["spec"]["path"]).is_dir()
        assert kustomization["spec"]["sourceRef"]["name"] == "kafka-topic-operator"
    (repository,) = docs(GITOPS / "flux" / "gitrepository.yaml")
    assert repository["spec"]["url"] == REPO_URL
    chart = helm_release()["spec"]["chart"]["spec"]["chart"]
    assert (ROOT / chart).resolve() == CHART


def test_the_crds_land_before_the_topics() -> None:
    apps = argo_apps()
    (namespace,) = docs(GITOPS / "argocd" / "apps" / "namespaces.yaml")
    assert wave(namespace) < wave(apps["kafka-topic-operator"]) < wave(apps["kafka-topics"])
    assert (
        "SkipDryRunOnMissingResource=true"
        in apps["kafka-topics"]["spec"]["syncPolicy"]["syncOptions"]
    )
    flux = flux_kustomizations()
    assert flux["kafka-topics"]["spec"]["dependsOn"] == [{"name": "kafka-topic-operator"}]
    assert flux["kafka-topic-operator"]["spec"]["wait"] is True
    release = helm_release()["spec"]
    assert release["install"]["crds"] == release["upgrade"]["crds"] == "CreateReplace"


@pytest.mark.parametrize("values", chart_values(), ids=["argocd", "flux"])
def test_the_chart_values_pass_the_schema_and_render(
    values: dict[str, Any], tmp_path: Path
) -> None:
    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(values))
    rendered = render("-f", str(values_file))
    roles = [d for d in rendered if d["kind"] == "Role"]
    assert [r["metadata"]["namespace"] for r in roles] == ["streaming"]


def test_the_topics_are_the_ones_the_installed_operator_manages() -> None:
    topics = kustomize(GITOPS / "topics")
    assert len(topics) == 3 and {t["kind"] for t in topics} == {"KafkaTopic"}
    for values in chart_values():
        selector = dict(term.split("=") for term in values["watch"]["selector"].split(","))
        for topic in topics:
            assert topic["metadata"]["namespace"] in values["watch"]["namespaces"]
            assert selector.items() <= topic["metadata"]["labels"].items()
    namespaces = {
        d["metadata"]["name"] for d in kustomize(GITOPS / "flux" / "operator")
        if d["kind"] == "Namespace"
    }  # fmt: skip
    assert {"kto-system", "streaming"} <= namespaces


def test_the_topics_are_accepted_by_the_crd(tmp_path: Path) -> None:
    with ApiServer() as api:
        config = api.write_kubeconfig(tmp_path / "kubeconfig")
        kubectl("apply", "-f", str(CHART / "crds"), kubeconfig=config)
        kubectl("create", "namespace", "streaming", kubeconfig=config)
        kubectl("apply", "-k", str(GITOPS / "topics"), kubeconfig=config)
        listed = json.loads(
            kubectl("get", "kafkatopics", "-n", "streaming", "-o", "json", kubeconfig=config)
        )
        assert sorted(t["metadata"]["name"] for t in listed["items"]) == [
            "audit-log",
            "orders",
            "payments",
        ]
