"""The topic claims of the watched KafkaTopics, listed once before kopf starts its handlers.

Handlers decide ownership from the claims (`topics.ownership`); the watch stream keeps them
current, but at startup a resource could be handled before an older one naming the same topic
has been seen. Listing them all first closes that gap, as an informer's initial sync does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from kafka_topic_operator.k8s.kubeclient import api_client
from kafka_topic_operator.topics.ownership import Claim, claim_of

GROUP, VERSION, PLURAL = "kto.dev", "v1", "kafkatopics"
PAGE = 500


def label_selector(selector: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))


def list_claims(namespaces: Sequence[str], selector: Mapping[str, str]) -> list[Claim]:
    """Claims of every selected KafkaTopic in `namespaces` (all namespaces when empty), with
    the credentials kopf uses: in-cluster, else the kubeconfig."""
    import kubernetes

    scopes: Sequence[str | None] = list(namespaces) or [None]
    with api_client() as client:
        api = kubernetes.client.CustomObjectsApi(client)
        claims = []
        for namespace in scopes:
            for item in _pages(api, namespace, label_selector(selector)):
                meta = item["metadata"]
                claims.append(
                    claim_of(meta.get("namespace"), meta["name"], item.get("spec") or {}, meta)
                )
        return claims


def _pages(api: Any, namespace: str | None, selector: str) -> Iterator[dict[str, Any]]:
    token = ""
    while True:
        page_args: dict[str, Any] = {"label_selector": selector, "limit": PAGE}
        if token:
            page_args["_continue"] = token
        if namespace is None:
            page = api.list_cluster_custom_object(GROUP, VERSION, PLURAL, **page_args)
        else:
            page = api.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL,
                                                     **page_args)  # fmt: skip
        yield from page.get("items") or []
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            return
