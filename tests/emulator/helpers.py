"""Helpers for the API emulator's tests: a test CRD and objects, a tiny HTTP client, kubectl."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from kube_clients import Http, Kubectl

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


__all__ = ["Http", "Kubectl", "eventually", "topic", "topic_crd"]
