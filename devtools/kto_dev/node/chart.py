"""The project's Helm chart installed on a node exactly as a user installs it: `helm install`
with a values file, the images the node imported (pulled if absent, never here)."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from .launcher import KubernetesNode, KubernetesNodeError

ROOT = Path(__file__).resolve().parents[3]
CHART = ROOT / "charts" / "kafka-topic-operator"
TIMEOUT = "180s"


def helm() -> str:
    """The project's helm (`make setup` fetches it), else whichever is on the PATH."""
    fetched = ROOT / ".kto" / "bin" / "helm"
    return str(fetched) if fetched.exists() else "helm"


def run_helm(node: KubernetesNode, *args: str) -> str:
    done = subprocess.run([helm(), f"--kubeconfig={node.kubeconfig}", *args],
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        raise KubernetesNodeError(f"helm {' '.join(args[:3])}: {done.stderr.strip()}")
    return done.stdout


def install(node: KubernetesNode, release: str, namespace: str, values: Mapping[str, Any]) -> str:
    """`helm install --wait`: returns once the operator's pods are Ready."""
    return _apply(node, "install", release, namespace, values)


def upgrade(node: KubernetesNode, release: str, namespace: str, values: Mapping[str, Any]) -> str:
    """`helm upgrade --wait` to exactly these values (not merged with the release's)."""
    return _apply(node, "upgrade", release, namespace, values)


def uninstall(node: KubernetesNode, release: str, namespace: str) -> str:
    return run_helm(node, "uninstall", release, "--namespace", namespace, "--wait")


def _apply(
    node: KubernetesNode, action: str, release: str, namespace: str, values: Mapping[str, Any]
) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as file:
        file.write(yaml.safe_dump(dict(values)))
        file.flush()
        return run_helm(node, action, release, str(CHART), "--namespace", namespace,
                        "--create-namespace", "--values", file.name, "--wait",
                        "--timeout", TIMEOUT)  # fmt: skip
