"""Rendering the Helm chart with the real helm binary, for the chart tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]  # tests/support/ -> the repository
CHART = ROOT / "charts" / "kafka-topic-operator"
VALUES_FILES = sorted((CHART / "ci").glob("*-values.yaml"))
HELM = ROOT / ".kto" / "bin" / "helm"
KUBECTL = ROOT / ".kto" / "bin" / "kubectl"
NAMESPACE = "kto-system"


def ensure_binaries() -> None:
    subprocess.run(["bash", str(ROOT / "scripts" / "fetch-k8s-binaries.sh")], check=True)


def kubectl(*args: str, kubeconfig: Path | None = None, stdin: str | None = None) -> str:
    """Real kubectl, against `kubeconfig` when given; its output, after asserting success."""
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)} if kubeconfig else None
    done = subprocess.run([str(KUBECTL), *args], input=stdin, env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(HELM), *args], capture_output=True, text=True, timeout=120)


def render(*args: str, crds: bool = False) -> list[dict[str, Any]]:
    """`helm template` of the chart with these extra arguments, as parsed documents."""
    extra = ["--include-crds"] if crds else []
    done = helm("template", "kto", str(CHART), "--namespace", NAMESPACE, *extra, *args)
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def of_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = of_kind(docs, kind)
    assert len(found) == 1, f"{len(found)} {kind} rendered"
    return found[0]


def container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    containers = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return dict(containers[0])


def flag(args: list[str], name: str) -> str | None:
    """The value of `--name=value` in a container's args, None when absent."""
    values = [a.split("=", 1)[1] for a in args if a.startswith(f"--{name}=")]
    assert len(values) <= 1
    return values[0] if values else None
