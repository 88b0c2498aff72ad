"""A PersistentVolume on the node and the claim bound to it: the work volume a KafkaRebalance's
planner pods and the operator share (the chart's rebalance.workVolume)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import yaml

from .launcher import KubernetesNode, KubernetesNodeError

# The images' user (the Dockerfile's USER 10001:10001): a hostPath volume keeps the folder's
# owner, which fsGroup does not change.
IMAGE_USER = 10001
BIND_TIMEOUT = 60.0


def work_volume(node: KubernetesNode, namespace: str, claim: str, size: str = "1Gi") -> Path:
    """A folder on the node as a ReadWriteMany volume, claimed as `claim` in `namespace` (created
    if missing); returns once the claim is bound. The folder, for reading what pods wrote."""
    folder = node.directory / "volumes" / f"{namespace}-{claim}"
    folder.mkdir(parents=True, exist_ok=True)
    os.chown(folder, IMAGE_USER, IMAGE_USER)
    volume = f"{namespace}-{claim}"
    documents = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": volume},
         "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteMany"],
                  "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
                  "hostPath": {"path": str(folder), "type": "Directory"},
                  "claimRef": {"namespace": namespace, "name": claim}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": claim, "namespace": namespace},
         "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": volume,
                  "resources": {"requests": {"storage": size}}}},
    ]  # fmt: skip
    node.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(documents))
    deadline = time.monotonic() + BIND_TIMEOUT
    while time.monotonic() < deadline:
        found = json.loads(node.kubectl("get", "pvc", claim, "-n", namespace, "-o", "json"))
        if found.get("status", {}).get("phase") == "Bound":
            return folder
        time.sleep(0.2)
    raise KubernetesNodeError(f"claim {namespace}/{claim} not bound within {BIND_TIMEOUT:.0f} s")
