"""Label selectors (equality- and set-based) and field selectors, parsed as kube-apiserver does.

Mirrors k8s.io/apimachinery `pkg/labels` (Parse: `=`, `==`, `!=`, `in`, `notin`, `exists`,
`!exists`, `>`, `<`) and `pkg/fields` (`=`, `==`, `!=` with backslash escapes).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ApiError, bad_request

Obj = dict[str, Any]

_KEY_RE = re.compile(
    r"^([a-z0-9A-Z]([-a-z0-9A-Z.]*[a-z0-9A-Z])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", "gt", "lt"
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        op = self.op
        if op == "exists":
            return self.key in labels
        if op == "!":
            return self.key not in labels
        if op in ("=", "in"):
            return self.key in labels and labels[self.key] in self.values
        if op in ("!=", "notin"):
            return self.key not in labels or labels[self.key] not in self.values
        if self.key not in labels:
            return False
        try:
            have = int(labels[self.key])
        except ValueError:
            return False
        limit = int(self.values[0])
        return have > limit if op == "gt" else have < limit


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _check_key(key: str) -> str:
    if not _KEY_RE.match(key):
        raise bad_request(f"unable to parse requirement: invalid label key {key!r}")
    return key


def _check_value(value: str) -> str:
    if len(value) > 63 or not _VALUE_RE.match(value):
        raise bad_request(f"unable to parse requirement: invalid label value: {value!r}")
    return value


_SET_RE = re.compile(r"^\s*(\S+?)\s+(in|notin)\s*\((.*)\)\s*$")
_CMP_RE = re.compile(r"^\s*([^=!<>\s]+)\s*(==|=|!=|>|<)\s*(.*?)\s*$")


def parse_label_selector(text: str) -> list[Requirement]:
    """Parse a `labelSelector` query parameter; raises 400 BadRequest on a syntax error."""
    reqs: list[Requirement] = []
    if not text.strip():
        return reqs
    for raw in _split_top_level(text):
        part = raw.strip()
        if not part:
            raise bad_request(f"unable to parse requirement: found '', in selector {text!r}")
        m = _SET_RE.match(part)
        if m:
            values = tuple(_check_value(v.strip()) for v in m.group(3).split(",") if v.strip())
            reqs.append(Requirement(_check_key(m.group(1)), m.group(2), values))
            continue
        m = _CMP_RE.match(part)
        if m:
            key, op, value = m.group(1), m.group(2), m.group(3)
            if op in (">", "<"):
                try:
                    int(value)
                except ValueError as exc:
                    raise bad_request(
                        f"unable to parse requirement: for 'Gt', 'Lt' operators, the value "
                        f"must be an integer: {value!r}"
                    ) from exc
                reqs.append(Requirement(_check_key(key), "gt" if op == ">" else "lt", (value,)))
            else:
                reqs.append(
                    Requirement(
                        _check_key(key), "!=" if op == "!=" else "=", (_check_value(value),)
                    )
                )
            continue
        if part.startswith("!"):
            reqs.append(Requirement(_check_key(part[1:].strip()), "!"))
            continue
        reqs.append(Requirement(_check_key(part), "exists"))
    return reqs


def labels_match(reqs: list[Requirement], obj: Obj) -> bool:
    labels = obj.get("metadata", {}).get("labels") or {}
    return all(req.matches(labels) for req in reqs)


@dataclass(frozen=True)
class FieldRequirement:
    path: str
    negated: bool
    value: str


def _unescape_split(text: str, sep: str) -> list[str]:
    """Split on an unescaped separator, keeping escapes for a second pass."""
    parts: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
            continue
        if ch == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def parse_field_selector(text: str) -> list[FieldRequirement]:
    reqs: list[FieldRequirement] = []
    if not text.strip():
        return reqs
    for part in _unescape_split(text, ","):
        m = re.match(r"^([^=!]+?)\s*(!=|==|=)(.*)$", part.strip())
        if not m:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        reqs.append(FieldRequirement(m.group(1).strip(), m.group(2) == "!=", _unescape(m.group(3))))
    return reqs


def field_value(obj: Obj, path: str) -> str | None:
    """The field's value as a selector compares it (a string), or None if absent."""
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    if isinstance(cur, bool):
        return "true" if cur else "false"
    if cur is None or isinstance(cur, dict | list):
        return None
    return str(cur)


def check_field_paths(
    reqs: list[FieldRequirement], allowed: Callable[[str], bool], kind: str
) -> None:
    for req in reqs:
        if not allowed(req.path):
            raise ApiError(
                400,
                "BadRequest",
                f'Unable to find "{kind}" that match label selector "", field selector '
                f'"{req.path}": field label not supported: {req.path}',
            )


def fields_match(reqs: list[FieldRequirement], obj: Obj) -> bool:
    for req in reqs:
        have = field_value(obj, req.path) or ""
        if (have == req.value) == req.negated:
            return False
    return True


def exact_name(reqs: list[FieldRequirement]) -> str | None:
    """`metadata.name=X` among the requirements, which lets a list skip scanning."""
    for req in reqs:
        if req.path == "metadata.name" and not req.negated:
            return req.value
    return None


def exact_namespace(reqs: list[FieldRequirement]) -> str | None:
    for req in reqs:
        if req.path == "metadata.namespace" and not req.negated:
            return req.value
    return None
