"""The deletion finalizer, put on a KafkaTopic by its reconcile before anything is written.

kopf would add it in a cycle of its own (a patch, then the handler only when that patch comes
back on the watch): one of its three cycles per new resource (ADDED, the finalizer's
MODIFIED, the status's MODIFIED), ten thousand of them applied at once.
Here the reconcile adds it itself and goes on: the delete handler is registered for resources
that carry it (kopf then neither adds nor removes it before that), and kopf removes it, as
before, once the delete handler is done. Added before the topic is written, so a resource
deleted at any moment either has it (the delete handler runs) or never got a topic.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import kopf

FINALIZER = "kto.dev/topic-deletion"

# Sends a JSON patch of the resource (kopf's own client, in the operator).
JsonPatcher = Callable[[list[dict[str, Any]]], Awaitable[object]]


class ChangedMeanwhile(Exception):
    """The resource changed after the version this cycle read: its new version comes next."""


def finalized(meta: Mapping[str, Any], **_: Any) -> bool:
    """Whether the resource carries the finalizer (the delete handler's filter)."""
    return FINALIZER in (meta.get("finalizers") or [])


def finalizer_patch(meta: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The JSON patch adding the finalizer to the version read, as kopf's own: guarded by the
    resourceVersion, appended to the finalizers others put there."""
    ops: list[dict[str, Any]] = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": meta["resourceVersion"]}
    ]
    if meta.get("finalizers") is None:
        ops.append({"op": "add", "path": "/metadata/finalizers", "value": [FINALIZER]})
    else:
        ops.append({"op": "add", "path": "/metadata/finalizers/-", "value": FINALIZER})
    return ops


async def add_finalizer(meta: Mapping[str, Any], send: JsonPatcher) -> bool:
    """Adds the finalizer; False when the resource is gone (nothing is to be written for it).
    Raises ChangedMeanwhile when the resource changed since `meta` was read."""
    from kopf._cogs.clients import errors

    try:
        await send(finalizer_patch(meta))
    except errors.APINotFoundError:
        return False
    except errors.APIUnprocessableEntityError as e:  # the resourceVersion test failed
        raise ChangedMeanwhile(str(e)) from e
    return True


def kopf_patcher(
    settings: kopf.OperatorSettings,
    resource: kopf.Resource,
    namespace: str | None,
    name: str,
    logger: logging.Logger | logging.LoggerAdapter[logging.Logger],
) -> JsonPatcher:
    """A JSON patch of one resource through kopf's client: its credentials, connection pool,
    timeouts and retries, as kopf patches its finalizer."""
    from kopf._cogs.clients import api
    from kopf._cogs.structs.references import NamespaceName

    url = resource.get_url(namespace=None if namespace is None else NamespaceName(namespace),
                           name=name)  # fmt: skip

    async def send(ops: list[dict[str, Any]]) -> object:
        return await api.patch(
            url=url,
            headers={"Content-Type": "application/json-patch+json"},
            payload=ops,
            settings=settings,
            logger=logger,
        )

    return send
