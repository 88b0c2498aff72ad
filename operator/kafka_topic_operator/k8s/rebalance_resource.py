"""A KafkaRebalance as its daemon sees it (pure of planning): the live body, the status it
writes (as merge patches, only when they change something), and the plan ConfigMaps it saves and
loads back."""

from __future__ import annotations

import contextlib
import datetime
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kafka_topic_operator.k8s import metrics
from kafka_topic_operator.k8s.kubeclient import api_client
from kafka_topic_operator.rebalance import job
from kafka_topic_operator.rebalance.execution.workflow import (
    ANNOTATION,
    State,
    conditions,
)
from kafka_topic_operator.rebalance.results import plan_parts

log = logging.getLogger(__name__)

GROUP, VERSION, PLURAL = "kto.dev", "v1", "kafkarebalances"
POLL = 1.0  # seconds between looks at the live resource while waiting on a person


def merge_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) that turns `old` into `new`: what `new` drops is null."""
    patch: dict[str, Any] = {k: None for k in old if k not in new}
    for key, value in new.items():
        before = old.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            patch[key] = merge_patch(before, value)
        elif before != value:
            patch[key] = value
    return patch


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Resource:
    """One KafkaRebalance as its daemon sees it: the live body, and the writes it makes."""

    def __init__(self, body: Any, namespace: str, name: str) -> None:
        self.body, self.namespace, self.name = body, namespace, name
        # What this daemon wrote, until the live body (read-only, updated by kopf's watch)
        # moves past the version it had when the write was made.
        self._status: tuple[str, Mapping[str, Any]] | None = None
        self._cleared: str | None = None

    @property
    def _version(self) -> str:
        return str(self.body.get("metadata", {}).get("resourceVersion"))

    @property
    def status(self) -> Mapping[str, Any]:
        if self._status is not None and self._status[0] == self._version:
            return self._status[1]
        self._status = None
        return self.body.get("status") or {}

    @property
    def annotations(self) -> Mapping[str, str]:
        live = self.body.get("metadata", {}).get("annotations") or {}
        if self._cleared == self._version:
            return {k: v for k, v in live.items() if k != ANNOTATION}
        return live

    @property
    def generation(self) -> int:
        return int(self.body.get("metadata", {}).get("generation") or 0)

    def write_status(self, state: State, reason: str, message: str, **fields: Any) -> None:
        import kubernetes

        old = dict(self.status)
        status = {**{k: v for k, v in old.items() if k not in ("conditions", "progress")},
                  **fields, "conditions": conditions(state, reason, message, _now())}  # fmt: skip
        with api_client() as client:
            kubernetes.client.CustomObjectsApi(client).patch_namespaced_custom_object_status(
                GROUP, VERSION, self.namespace, PLURAL, self.name,
                {"status": merge_patch(old, status)},
            )  # fmt: skip
        self._status = (self._version, status)
        metrics.REBALANCE_STATES.record(self.namespace, self.name, state, status)

    def clear_annotation(self) -> None:
        import kubernetes

        with api_client() as client:
            kubernetes.client.CustomObjectsApi(client).patch_namespaced_custom_object(
                GROUP, VERSION, self.namespace, PLURAL, self.name,
                {"metadata": {"annotations": {ANNOTATION: None}}},
            )  # fmt: skip
        self._cleared = self._version

    def save_plan(self, proposal: str, directory: Path) -> list[str]:
        """The proposal's ConfigMaps, owned by the resource: `<name>-plan`, and `-plan-1`,
        `-plan-2`... when the plan exceeds one ConfigMap, each with its part of Kafka's
        reassignment JSON and of the partitions' replicas before and after. The first is
        written last: a reader that finds it with this proposal finds every part."""
        import kubernetes

        parts = plan_parts.split_plan(job.read_changes(directory))
        names = [self._plan_name(i) for i in range(len(parts))]
        with api_client() as client:
            core = kubernetes.client.CoreV1Api(client)
            for index in [*range(1, len(parts)), 0]:
                body = self._plan_config_map(names[index], proposal, index, parts)
                try:
                    core.replace_namespaced_config_map(names[index], self.namespace, body)
                except kubernetes.client.ApiException as e:
                    if e.status != 404:
                        raise
                    core.create_namespaced_config_map(self.namespace, body)
            # Parts of an earlier, larger proposal.
            found = core.list_namespaced_config_map(
                self.namespace, label_selector=f"kto.dev/rebalance={self.name}"
            )
            uid = self.body["metadata"]["uid"]
            item: Any
            for item in found.items:
                owned = any(r.uid == uid for r in item.metadata.owner_references or [])
                if owned and item.metadata.name not in names:
                    with contextlib.suppress(kubernetes.client.ApiException):
                        core.delete_namespaced_config_map(item.metadata.name, self.namespace)
        return names

    def _plan_name(self, index: int) -> str:
        return f"{self.name}-plan" if index == 0 else f"{self.name}-plan-{index}"

    def _plan_config_map(
        self, name: str, proposal: str, index: int, parts: list[plan_parts.PlanPart]
    ) -> Any:  # the kubernetes client takes a dict where its types say V1ConfigMap
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": name,
                "namespace": self.namespace,
                "labels": {
                    "app.kubernetes.io/name": "kafka-topic-operator",
                    "kto.dev/rebalance": self.name,
                },
                "annotations": {
                    "kto.dev/proposal": proposal,
                    "kto.dev/plan-part": str(index),
                    "kto.dev/plan-parts": str(len(parts)),
                },
                "ownerReferences": [
                    {
                        "apiVersion": f"{GROUP}/{VERSION}",
                        "kind": "KafkaRebalance",
                        "name": self.name,
                        "uid": self.body["metadata"]["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "data": {
                "plan.json": parts[index].plan_json,
                "changes.json": parts[index].changes_json,
            },
        }

    def load_plan(self) -> tuple[str, list[Any]] | None:
        """(proposal, changes) from the ConfigMaps, when every part holds the proposal status
        shows; None if one is missing or holds another."""
        import kubernetes

        if not self.status.get("planConfigMap"):
            return None
        proposal = self.status.get("proposalId")
        changes: list[Any] = []
        with api_client() as client:
            core = kubernetes.client.CoreV1Api(client)
            count = 1
            index = 0
            while index < count:
                found: Any
                try:
                    found = core.read_namespaced_config_map(self._plan_name(index), self.namespace)
                except kubernetes.client.ApiException as e:
                    if e.status == 404:
                        return None
                    raise
                annotations = found.metadata.annotations or {}
                if annotations.get("kto.dev/proposal") != proposal or (
                    annotations.get("kto.dev/plan-part", "0") != str(index)
                ):
                    return None
                if index == 0:
                    count = int(annotations.get("kto.dev/plan-parts", "1"))
                changes += job.parse_changes((found.data or {}).get("changes.json") or "[]")
                index += 1
        return str(proposal), changes
