"""Reading a chroot's whole znode tree, normalising what legitimately differs between two runs,
and listing the differences, each allowed or not by `docs/fidelity.md`.

Pure except `read_tree`. Data is compared as parsed JSON; a znode with no data is `None`, data
that is not JSON stays a string.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kafka_topic_operator.zk.client import ZkClient

Tree = dict[str, Any]

# Our own broker channel (requests, responses, controlled shutdown) replaces Kafka's RPCs: only
# the twin has it, and what it carries is compared through its effects on Kafka's znodes.
TWIN_ONLY_ROOT = "/kto"

MISSING = "<absent>"
_UUID = re.compile(r"[A-Za-z0-9_-]{22}")


def read_tree(zk: ZkClient, root: str = "/") -> Tree:
    """Every znode under `root` (the client's chroot by default) → its parsed data."""
    tree: Tree = {}
    level = [root]
    while level:
        nodes = zk.get_many(level)
        children = zk.children_many(level)
        next_level: list[str] = []
        for path, node, names in zip(level, nodes, children, strict=True):
            if node is None:  # deleted while we walked: absent, as a later read would find it
                continue
            tree[path] = _parse(node.data)
            base = "" if path == "/" else path
            next_level.extend(f"{base}/{name}" for name in sorted(names or []))
        level = next_level
    tree.pop("/", None)
    return tree


def _parse(data: bytes | None) -> Any:
    if not data:
        return None
    text = data.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


# ---- normalisation -------------------------------------------------------------------------


def normalise(tree: Mapping[str, Any]) -> Tree:
    """Only what is legitimately different replaced by a placeholder (never dropped, so a field
    present on one side only is still a difference): random ids, wall-clock times, the
    addresses brokers listen on, and the id of whichever broker won the controller election."""
    out: Tree = {}
    for path, value in tree.items():
        if path == TWIN_ONLY_ROOT or path.startswith(TWIN_ONLY_ROOT + "/"):
            continue
        out[path] = _normalise_one(path, value)
    return out


def _normalise_one(path: str, value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    value = dict(value)
    if path.startswith("/brokers/topics/") and path.count("/") == 3 and "topic_id" in value:
        value["topic_id"] = _placeholder(value["topic_id"], "<topic id>")
    elif path == "/cluster/id" and "id" in value:
        value["id"] = _placeholder(value["id"], "<cluster id>")
    elif path == "/controller":
        for key, placeholder in (("brokerid", "<controller>"), ("timestamp", "<time>")):
            if key in value:
                value[key] = placeholder
    elif path.endswith("/state") and path.startswith("/brokers/topics/"):
        # Kafka keeps the ISR as a set (Partition.partitionState.isr); the order written is how
        # followers happened to catch up, so replicas joining together may come in any order.
        if isinstance(value.get("isr"), list) and all(isinstance(r, int) for r in value["isr"]):
            value["isr"] = sorted(value["isr"])
    elif path.startswith("/brokers/ids/"):
        for key, placeholder in (
            ("host", "<host>"),
            ("port", "<port>"),
            ("timestamp", "<time>"),
        ):
            if key in value:
                value[key] = placeholder
        if isinstance(value.get("endpoints"), list):
            value["endpoints"] = [_listener_only(e) for e in value["endpoints"]]
    return value


def _placeholder(value: Any, placeholder: str) -> Any:
    """A well-formed random id is replaced; a malformed one stays, to show as a difference."""
    return placeholder if isinstance(value, str) and _UUID.fullmatch(value) else value


def _listener_only(endpoint: Any) -> Any:
    """`PLAINTEXT://127.0.0.1:9092` → `PLAINTEXT://<address>`."""
    if isinstance(endpoint, str) and "://" in endpoint:
        return endpoint.split("://", 1)[0] + "://<address>"
    return endpoint


# ---- differences ---------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Difference:
    """One znode (or one top-level field of a JSON object) that differs after a step."""

    step: str
    path: str
    field: str | None
    kafka: str
    twin: str

    def __str__(self) -> str:
        where = self.path if self.field is None else f"{self.path} [{self.field}]"
        return f"{self.step}: {where}: Kafka {self.kafka}, ours {self.twin}"


def _show(value: Any) -> str:
    return value if value is MISSING else json.dumps(value, sort_keys=True)


def differences(step: str, kafka: Mapping[str, Any], twin: Mapping[str, Any]) -> list[Difference]:
    """Every path whose normalised data differs; JSON objects field by field."""
    kafka, twin = normalise(kafka), normalise(twin)
    out: list[Difference] = []
    for path in sorted(kafka.keys() | twin.keys()):
        left, right = kafka.get(path, MISSING), twin.get(path, MISSING)
        if left == right and (path in kafka) == (path in twin):
            continue
        if isinstance(left, dict) and isinstance(right, dict):
            for key in sorted(left.keys() | right.keys()):
                a, b = left.get(key, MISSING), right.get(key, MISSING)
                if a != b:
                    out.append(Difference(step, path, key, _show(a), _show(b)))
        else:
            out.append(Difference(step, path, None, _show(left), _show(right)))
    return out


# ---- the allow list in docs/fidelity.md ------------------------------------------------------

ALLOW_FENCE = "```yaml differential-allow"


@dataclass(frozen=True)
class Allowed:
    """A documented difference: znodes matching one of `paths` (globs), `field` of them (or the
    whole znode when None, any field when "*"), in the steps listed (all steps when empty)."""

    id: str
    paths: tuple[str, ...]
    field: str | None
    steps: tuple[str, ...]
    reason: str

    def matches(self, difference: Difference) -> bool:
        if self.steps and difference.step not in self.steps:
            return False
        if not any(fnmatch.fnmatchcase(difference.path, path) for path in self.paths):
            return False
        return self.field == "*" or self.field == difference.field


class AllowListError(ValueError):
    pass


def load_allow_list(markdown: Path) -> list[Allowed]:
    """The YAML block fenced as ```yaml differential-allow in the document."""
    text = markdown.read_text()
    start = text.find(ALLOW_FENCE)
    if start < 0:
        raise AllowListError(f"{markdown.name}: no {ALLOW_FENCE} block")
    body_start = text.index("\n", start) + 1
    end = text.find("\n```", body_start)
    if end < 0:
        raise AllowListError(f"{markdown.name}: the {ALLOW_FENCE} block is not closed")
    entries = yaml.safe_load(text[body_start:end]) or []
    if not isinstance(entries, list):
        raise AllowListError(f"{markdown.name}: the allow list is not a YAML list")
    out: list[Allowed] = []
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not {"id", "path", "reason"} <= entry.keys():
            raise AllowListError(f"{markdown.name}: entry {number} needs id, path and reason")
        unknown = entry.keys() - {"id", "path", "field", "steps", "reason"}
        if unknown:
            raise AllowListError(f"{markdown.name}: entry {entry['id']}: unknown {sorted(unknown)}")
        paths = entry["path"] if isinstance(entry["path"], list) else [entry["path"]]
        out.append(
            Allowed(
                id=str(entry["id"]),
                paths=tuple(str(p) for p in paths),
                field=None if entry.get("field") is None else str(entry["field"]),
                steps=tuple(str(s) for s in entry.get("steps") or ()),
                reason=str(entry["reason"]),
            )
        )
    ids = [a.id for a in out]
    if len(ids) != len(set(ids)):
        raise AllowListError(f"{markdown.name}: duplicate ids in the allow list")
    return out


@dataclass(frozen=True)
class Verdict:
    unexplained: list[Difference]
    explained: dict[str, list[Difference]]
    unused: list[Allowed]


def judge(found: Iterable[Difference], allowed: Iterable[Allowed]) -> Verdict:
    """Which differences the allow list explains, which it does not, and which entries explain
    nothing (a fixed difference must leave the list too)."""
    allowed = list(allowed)
    explained: dict[str, list[Difference]] = {a.id: [] for a in allowed}
    unexplained: list[Difference] = []
    for difference in found:
        entry = next((a for a in allowed if a.matches(difference)), None)
        if entry is None:
            unexplained.append(difference)
        else:
            explained[entry.id].append(difference)
    unused = [a for a in allowed if not explained[a.id]]
    return Verdict(unexplained, {k: v for k, v in explained.items() if v}, unused)
