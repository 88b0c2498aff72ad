"""The remote planners' objects through the Kubernetes API: created once per proposal (or found,
when a restarted operator comes back to its proposal), read, and deleted in the background.

Jobs and SparkApplications alike go through the client's CustomObjectsApi: its paths
(/apis/GROUP/VERSION/namespaces/NS/PLURAL) are batch/v1's too, and it speaks plain dicts.
"""

from __future__ import annotations

import json
from typing import Any

from kafka_topic_operator.k8s.kubeclient import api_client
from kafka_topic_operator.rebalance.engines.remote import JOB, Planner, owned_by, refusal_message

Obj = dict[str, Any]


class PlannerRefused(Exception):
    """The API server refused the planner, or a same-named object is someone else's."""


def _custom(client: Any) -> Any:
    import kubernetes

    return kubernetes.client.CustomObjectsApi(client)


def _api_message(error: Any) -> str:
    try:
        return str(json.loads(error.body)["message"])
    except (TypeError, ValueError, KeyError):
        return str(error.reason)


def create(planner: Planner, body: Obj, owner_uid: str) -> Obj:
    """Creates the planner, or returns the one already there if it is the owner's: the name is
    the proposal's, so a second call for the same proposal never makes a second planner."""
    import kubernetes

    kind = planner.kind
    with api_client() as client:
        try:
            created: Obj = _custom(client).create_namespaced_custom_object(
                kind.group, kind.version, planner.namespace, kind.plural, body
            )
            return created
        except kubernetes.client.ApiException as e:
            if e.status != 409:
                raise PlannerRefused(refusal_message(planner, e.status, _api_message(e))) from e
    existing = read(planner)
    if existing is None or not owned_by(existing, owner_uid):
        raise PlannerRefused(f"{planner} exists and is not this KafkaRebalance's")
    return existing


def read(planner: Planner) -> Obj | None:
    import kubernetes

    kind = planner.kind
    with api_client() as client:
        try:
            found: Obj = _custom(client).get_namespaced_custom_object(
                kind.group, kind.version, planner.namespace, kind.plural, planner.name
            )
        except kubernetes.client.ApiException as e:
            if e.status == 404:
                return None
            raise
    return found


def delete(planner: Planner) -> None:
    """Deletes the planner and what it started. Background propagation: a batch/v1 Job's own
    default would orphan its pod. spark-submit's driver pod belongs to no Job, so it is deleted
    by its labels (its executors belong to it); the Spark operator's belongs to the app."""
    import kubernetes

    kind = planner.kind
    with api_client() as client:
        try:
            _custom(client).delete_namespaced_custom_object(
                kind.group, kind.version, planner.namespace, kind.plural, planner.name,
                propagation_policy="Background",
            )  # fmt: skip
        except kubernetes.client.ApiException as e:
            if e.status != 404:
                raise
        if kind == JOB:
            kubernetes.client.CoreV1Api(client).delete_collection_namespaced_pod(
                planner.namespace,
                label_selector=planner.driver_selector,
                propagation_policy="Background",
            )
