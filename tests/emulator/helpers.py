"""Helpers for the API emulator's tests: a test CRD and objects, a tiny HTTP client, kubectl."""

from __future__ import annotations

import json
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BIN_DIR = ROOT / ".kto" / "bin"

Obj = dict[str, Any]


def topic_crd(**version_extra: Any) -> Obj:
    """A KafkaTopic-like CRD exercising schemas, CEL rules, printer columns and status."""
    version: Obj = {
        "name": "v1",
        "served": True,
        "storage": True,
        "subresources": {"status": {}},
        "additionalPrinterColumns": [
            {"name": "Partitions", "type": "integer", "jsonPath": ".spec.partitions"},
            {
                "name": "Ready",
                "type": "string",
                "jsonPath": '.status.conditions[?(@.type=="Ready")].status',
            },
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ],
        "schema": {
            "openAPIV3Schema": {
                "type": "object",
                "description": "A Kafka topic.",
                "properties": {
                    "spec": {
                        "type": "object",
                        "description": "The desired topic.",
                        "required": ["partitions"],
                        "properties": {
                            "topicName": {
                                "type": "string",
                                "maxLength": 249,
                                "pattern": "^[a-zA-Z0-9._-]+$",
                                "x-kubernetes-validations": [
                                    {"rule": "self == oldSelf", "message": "topicName is immutable"}
                                ],
                            },
                            "partitions": {
                                "type": "integer",
                                "minimum": 1,
                                "description": "Number of partitions.",
                                "x-kubernetes-validations": [
                                    {
                                        "rule": "self >= oldSelf",
                                        "message": "partitions cannot be decreased",
                                    }
                                ],
                            },
                            "replicas": {
                                "type": "integer",
                                "minimum": 1,
                                "maximum": 32767,
                                "default": 1,
                            },
                            "cleanupPolicy": {"type": "string", "enum": ["delete", "compact"]},
                            "config": {
                                "type": "object",
                                "additionalProperties": {"x-kubernetes-int-or-string": True},
                            },
                        },
                    },
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
            }
        },
    }
    version.update(version_extra)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "kafkatopics.kto.dev"},
        "spec": {
            "group": "kto.dev",
            "scope": "Namespaced",
            "names": {
                "plural": "kafkatopics",
                "singular": "kafkatopic",
                "kind": "KafkaTopic",
                "shortNames": ["kt"],
                "categories": ["kto"],
            },
            "versions": [version],
        },
    }


def topic(name: str, partitions: int = 3, namespace: str = "default", **spec: Any) -> Obj:
    return {
        "apiVersion": "kto.dev/v1",
        "kind": "KafkaTopic",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"partitions": partitions, **spec},
    }


class Http:
    """Just enough HTTP for asserting on the emulator's answers."""

    def __init__(self, base: str) -> None:
        self.base = base

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        accept: str = "application/json",
        raw: bytes | None = None,
    ) -> tuple[int, Any, Any]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Accept", accept)
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                payload = resp.read()
                return resp.status, json.loads(payload) if payload else None, resp.headers
        except urllib.error.HTTPError as err:
            payload = err.read()
            return err.code, json.loads(payload) if payload else None, err.headers

    def get(self, path: str, **kw: Any) -> tuple[int, Any]:
        code, body, _ = self.request("GET", path, **kw)
        return code, body

    def post(self, path: str, body: Any, **kw: Any) -> tuple[int, Any]:
        code, out, _ = self.request("POST", path, body, **kw)
        return code, out

    def put(self, path: str, body: Any) -> tuple[int, Any]:
        code, out, _ = self.request("PUT", path, body)
        return code, out

    def patch(self, path: str, body: Any, content_type: str) -> tuple[int, Any]:
        code, out, _ = self.request("PATCH", path, body, content_type=content_type)
        return code, out

    def delete(self, path: str, body: Any = None) -> tuple[int, Any]:
        code, out, _ = self.request("DELETE", path, body)
        return code, out

    def watch_until(self, path: str, predicate: Any, timeout: float = 60) -> Obj:
        """Follow a watch stream until an event satisfies the predicate (no polling)."""
        sep = "&" if "?" in path else "?"
        url = f"{self.base}{path}{sep}watch=true&timeoutSeconds={int(timeout)}"
        with urllib.request.urlopen(url, timeout=timeout + 30) as resp:
            for line in resp:
                event: Obj = json.loads(line)
                if predicate(event):
                    return event
        raise AssertionError(f"no matching event on {path} within {timeout} s")

    def watch(self, path: str) -> list[Obj]:
        """Read a (bounded: use timeoutSeconds) watch stream to its end, one event per line."""
        with urllib.request.urlopen(self.base + path, timeout=60) as resp:
            assert resp.status == 200
            return [json.loads(line) for line in resp.read().splitlines() if line.strip()]


def eventually(predicate: Any, timeout: float = 30, what: str = "condition") -> None:
    """Wait for a condition that has no event to follow (e.g. a subprocess's state)."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout} s")
        pause.wait(0.02)


CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
TOPICS = "/apis/kto.dev/v1/namespaces/default/kafkatopics"


class Kubectl:
    def __init__(self, binary: Path, kubeconfig: Path, cache: Path) -> None:
        self.binary = binary
        self.kubeconfig = kubeconfig
        self.cache = cache

    def run(
        self, *args: str, check: bool = True, stdin: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        cmd = [
            str(self.binary),
            f"--kubeconfig={self.kubeconfig}",
            f"--cache-dir={self.cache}",
            *args,
        ]
        result = subprocess.run(
            cmd, input=stdin, capture_output=True, text=True, timeout=timeout, check=False
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({result.returncode}):\n"
                f"{result.stdout}\n{result.stderr}"
            )
        return result

    def popen(self, *args: str) -> subprocess.Popen[str]:
        cmd = [
            str(self.binary),
            f"--kubeconfig={self.kubeconfig}",
            f"--cache-dir={self.cache}",
            *args,
        ]
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
