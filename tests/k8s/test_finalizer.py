"""The deletion finalizer the reconcile adds before writing (`k8s.finalizer`): its JSON patch,
applied as the API server applies one (the emulator's RFC 6902, held to kube-apiserver), and
what the reconcile is told when the resource is gone or changed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kopf._cogs.clients import errors

from kafka_topic_operator.k8s.finalizer import (
    FINALIZER,
    ChangedMeanwhile,
    add_finalizer,
    finalized,
    finalizer_patch,
)
from kube_api_emulator.patch import PatchError, json_patch


def resource(version: str, finalizers: list[str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "orders", "resourceVersion": version}
    if finalizers is not None:
        meta["finalizers"] = finalizers
    return {"metadata": meta, "spec": {"partitions": 3}}


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (None, [FINALIZER]),
        ([], [FINALIZER]),
        (["example.com/backup"], ["example.com/backup", FINALIZER]),
    ],
)
def test_the_patch_adds_the_finalizer_beside_the_others(
    before: list[str] | None, after: list[str]
) -> None:
    read = resource("7", before)
    patched = json_patch(read, finalizer_patch(read["metadata"]))
    assert patched["metadata"]["finalizers"] == after
    assert finalized(patched["metadata"]) and not finalized(read["metadata"])


def test_the_patch_applies_only_to_the_version_read() -> None:
    read = resource("7", ["example.com/backup"])
    newer = resource("8", [])  # someone removed the other finalizer meanwhile
    with pytest.raises(PatchError, match="testing value /metadata/resourceVersion failed"):
        json_patch(newer, finalizer_patch(read["metadata"]))


def test_the_reconcile_learns_whether_to_go_on() -> None:
    sent: list[list[dict[str, Any]]] = []

    async def accepted(ops: list[dict[str, Any]]) -> object:
        sent.append(ops)
        return {}

    meta = resource("7")["metadata"]
    assert asyncio.run(add_finalizer(meta, accepted)) is True
    assert sent == [finalizer_patch(meta)]

    async def gone(ops: list[dict[str, Any]]) -> object:
        raise errors.APINotFoundError({"code": 404, "message": "not found"}, status=404,
                                      headers={})  # fmt: skip

    assert asyncio.run(add_finalizer(meta, gone)) is False  # deleted: nothing is written for it

    async def changed(ops: list[dict[str, Any]]) -> object:
        raise errors.APIUnprocessableEntityError(
            {"code": 422, "message": "testing value /metadata/resourceVersion failed"},
            status=422, headers={},
        )  # fmt: skip

    with pytest.raises(ChangedMeanwhile, match="resourceVersion"):
        asyncio.run(add_finalizer(meta, changed))
