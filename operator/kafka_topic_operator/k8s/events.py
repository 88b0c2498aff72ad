"""Kubernetes events posted outside kopf's handlers (kopf's own poster only works inside
them): what the status follower did about a topic changed behind the operator's back."""

from __future__ import annotations

import datetime
import logging
from collections.abc import Mapping
from typing import Any

log = logging.getLogger(__name__)

COMPONENT = "kafka-topic-operator"


def post(client: Any, resource: Mapping[str, Any], kind: str, reason: str, message: str) -> None:
    """A core/v1 Event about `resource` (as read from the API); a failure is logged, not
    raised: the status already says it."""
    import kubernetes
    from kubernetes.client.exceptions import ApiException

    meta = resource["metadata"]
    namespace = meta.get("namespace") or "default"
    now = datetime.datetime.now(datetime.UTC)
    event = {
        "metadata": {"generateName": f"{meta['name']}.", "namespace": namespace},
        "involvedObject": {
            "apiVersion": resource.get("apiVersion"),
            "kind": resource.get("kind"),
            "name": meta["name"],
            "namespace": namespace,
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
        },
        "type": kind,
        "reason": reason,
        "message": message[:1024],
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT,
        "firstTimestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "lastTimestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "count": 1,
    }
    try:
        api: Any = kubernetes.client.CoreV1Api(client)
        api.create_namespaced_event(namespace, event)
    except ApiException as e:
        log.warning("could not post event %s for %s/%s: %s", reason, namespace, meta["name"], e)
