"""KafkaTopics and KafkaRebalances captured by the operator's own end-to-end tests, for the tests
of what other tools make of their status (tests/ecosystem: kstatus, Argo CD's health checks).

An end-to-end test that has just seen a resource in a state calls `capture(obj)` with the object
as it read it from the API. With KTO_CAPTURE_STATUS=1 the object is (re)written, normalized, to
tests/ecosystem/captured/<kind>-<label>.json: the Ready condition's reason for a KafkaTopic
(with -deleting when it is being deleted for another reason than a Deletion* one), the state
and its reason for a KafkaRebalance (ProposalReady-ProposalReady). Without it, the stored
capture must have the same shape as the object seen: the same status fields, the same
conditions (type, status, reason) in the same order, being deleted or not, and the generation
observed or not. Messages, ids and times may differ; the shape may not, so a stored capture
never drifts from what the operator writes.
"""

from __future__ import annotations

import json
import os
import re
import socket
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]  # tests/support/ -> the repository
CAPTURED = ROOT / "tests" / "ecosystem" / "captured"
ENV = "KTO_CAPTURE_STATUS"
KINDS = ("KafkaTopic", "KafkaRebalance")
# Every lastTransitionTime and deletionTimestamp: the times a test ran at mean nothing.
FIXED_TIME = "2026-01-01T00:00:00Z"
# A test's temporary directory (a KafkaRebalance's spec.engine.workDir, a message naming a
# file) is written as this directory, so no capture names the machine it was made on.
TEMPORARY = "/var/lib/kto"


def capture(obj: Mapping[str, Any] | None) -> None:
    """Writes `obj` (with KTO_CAPTURE_STATUS=1), or checks that its stored capture has its
    shape."""
    assert obj is not None, "nothing to capture: the resource is gone"
    found = normalized(obj)
    path = CAPTURED / f"{found['kind'].lower()}-{label(found)}.json"
    if os.environ.get(ENV) == "1":
        # Checked only when writing: a machine named like a word in a message (a host called
        # "orders") must not fail the end-to-end test that merely compares shapes.
        _assert_nothing_of_the_machine(json.dumps(found))
        CAPTURED.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(found, sort_keys=True, indent=2) + "\n")
        return
    again = f"{ENV}=1 and this test capture it again"
    assert path.is_file(), f"no capture {path.relative_to(ROOT)}: run with {again}"
    stored = json.loads(path.read_text())
    assert shape(stored) == shape(found), (
        f"{path.relative_to(ROOT)} no longer has the shape of what the operator writes: "
        f"stored {shape(stored)}, seen {shape(found)}; run with {again}"
    )


def normalized(obj: Mapping[str, Any]) -> dict[str, Any]:
    """apiVersion, kind, the metadata that says what the resource is (its kto.dev/ annotations
    only), spec, and status without kopf's bookkeeping; fixed times, no machine paths."""
    kind = obj.get("kind")
    assert kind in KINDS, f"not a KafkaTopic or KafkaRebalance: {kind}"
    meta = obj.get("metadata") or {}
    metadata: dict[str, Any] = {
        k: meta[k] for k in ("name", "namespace", "generation") if k in meta
    }
    annotations = {
        k: v for k, v in (meta.get("annotations") or {}).items() if k.startswith("kto.dev/")
    }
    if annotations:
        metadata["annotations"] = annotations
    if meta.get("deletionTimestamp"):
        metadata["deletionTimestamp"] = FIXED_TIME
    status = {k: v for k, v in (obj.get("status") or {}).items() if k != "kopf"}
    if "conditions" in status:
        status["conditions"] = [
            {**c, "lastTransitionTime": FIXED_TIME} if "lastTransitionTime" in c else dict(c)
            for c in status["conditions"]
        ]
    found: dict[str, Any] = {"apiVersion": obj.get("apiVersion"), "kind": kind,
                             "metadata": metadata, "spec": obj.get("spec") or {}}  # fmt: skip
    if status:
        found["status"] = status
    return _without_machine_paths(found)


def label(obj: Mapping[str, Any]) -> str:
    """The capture's name after its kind: what state it shows."""
    conditions = (obj.get("status") or {}).get("conditions") or []
    if obj["kind"] == "KafkaTopic":
        ready = [c for c in conditions if c.get("type") == "Ready"]
        assert ready, "a KafkaTopic without a Ready condition: nothing to capture yet"
        reason = str(ready[0]["reason"])
        deleting = bool((obj.get("metadata") or {}).get("deletionTimestamp"))
        return f"{reason}-deleting" if deleting and not reason.startswith("Deletion") else reason
    true = [c for c in conditions if c.get("status") == "True"]
    assert true, "a KafkaRebalance without a state: nothing to capture yet"
    return f"{true[0]['type']}-{true[0]['reason']}"


def shape(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What must not change between a stored capture and what the operator writes now."""
    status = obj.get("status") or {}
    meta = obj.get("metadata") or {}
    return {
        "status fields": sorted(status),
        "conditions": [
            [c.get("type"), c.get("status"), c.get("reason")]
            for c in status.get("conditions") or []
        ],
        "being deleted": "deletionTimestamp" in meta,
        "generation observed": status.get("observedGeneration") == meta.get("generation"),
    }


def _temporary_roots() -> list[str]:
    found = {tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir())}
    return sorted(found, key=len, reverse=True)


def _without_machine_paths(value: Any) -> Any:
    if isinstance(value, str):
        for root in _temporary_roots():
            # pytest's directory of one test (…/pytest-of-<user>/pytest-<n>/<test>0), else any
            # other directory under the temporary root.
            value = re.sub(re.escape(root) + r"/pytest-of-[^/]+/pytest-[^/]+/[^/\s'\"]+",
                           TEMPORARY, value)  # fmt: skip
            value = re.sub(re.escape(root) + r"/[^/\s'\"]+", TEMPORARY, value)
        return value
    if isinstance(value, list):
        return [_without_machine_paths(v) for v in value]
    if isinstance(value, dict):
        return {k: _without_machine_paths(v) for k, v in value.items()}
    return value


def _assert_nothing_of_the_machine(text: str) -> None:
    machine = [str(ROOT), *(f"{root}/" for root in _temporary_roots())]
    home = str(Path.home())
    if home != "/":
        machine.append(home + "/")
    host = socket.gethostname()
    if len(host) >= 4 and host != "localhost":
        machine.append(host)
    named = [m for m in machine if m in text]
    assert not named, f"a capture would name this machine ({named}): {text}"
