"""The patch formats kube-apiserver accepts: JSON merge patch (RFC 7386), JSON patch (RFC 6902),
strategic merge patch (apimachinery `strategicpatch`, for built-in types) and server-side apply
(here a merge of the applied object).

All functions are pure: they return a new document and never mutate their inputs.
"""

from __future__ import annotations

import marshal
from typing import Any

from .errors import go_json_type

Obj = dict[str, Any]


class PatchError(Exception):
    """The patch cannot be applied (answered as 422), or is malformed (`malformed`: 400)."""

    def __init__(self, message: str, *, malformed: bool = False) -> None:
        super().__init__(message)
        self.malformed = malformed


def deep_copy(value: Any) -> Any:
    """A copy of a JSON value. marshal's round trip copies plain dicts, lists, strings and
    numbers in C, twice as fast as a walk in Python (version 2: no shared references, so
    a value that occurs twice is copied twice, as the walk does)."""
    try:
        return marshal.loads(marshal.dumps(value, 2))
    except ValueError:  # not plain data (a subclass of dict, say)
        return _walk_copy(value)


def _walk_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _walk_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk_copy(v) for v in value]
    return value


# -- JSON merge patch ----------------------------------------------------------------------------


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, everything else replaces."""
    if not isinstance(patch, dict):
        return deep_copy(patch)
    result: Obj = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# -- JSON patch ----------------------------------------------------------------------------------


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f'invalid JSON pointer "{path}"', malformed=True)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(container: list[Any], token: str, path: str, *, for_add: bool) -> int:
    if for_add and token == "-":
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise PatchError(f"invalid array index {token!r} in {path}")
    idx = int(token)
    limit = len(container) if for_add else len(container) - 1
    if idx > limit:
        raise PatchError(f"index out of range: {path}")
    return idx


def _parent(doc: Any, parts: list[str], path: str) -> Any:
    cur = doc
    for token in parts[:-1]:
        if isinstance(cur, dict):
            if token not in cur:
                raise PatchError(f"doc is missing path: {path}: missing value")
            cur = cur[token]
        elif isinstance(cur, list):
            cur = cur[_index(cur, token, path, for_add=False)]
        else:
            raise PatchError(f"doc is missing path: {path}: missing value")
    return cur


def _get(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    if not parts:
        return doc
    parent = _parent(doc, parts, path)
    token = parts[-1]
    if isinstance(parent, dict):
        if token not in parent:
            raise PatchError(f"doc is missing path: {path}: missing value")
        return parent[token]
    if isinstance(parent, list):
        return parent[_index(parent, token, path, for_add=False)]
    raise PatchError(f"doc is missing path: {path}: missing value")


def _add(doc: Any, path: str, value: Any) -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    parent = _parent(doc, parts, path)
    token = parts[-1]
    if isinstance(parent, dict):
        parent[token] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, token, path, for_add=True), value)
    else:
        raise PatchError(f"doc is missing path: {path}: missing value")
    return doc


def _remove(doc: Any, path: str) -> tuple[Any, Any]:
    parts = _pointer(path)
    if not parts:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, parts, path)
    token = parts[-1]
    if isinstance(parent, dict):
        if token not in parent:
            raise PatchError(f"unable to remove nonexistent key: {token}: missing value")
        return doc, parent.pop(token)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, token, path, for_add=False))
    raise PatchError(f"doc is missing path: {path}: missing value")


def json_patch(doc: Any, operations: Any) -> Any:
    """RFC 6902 with every operation, `test` included (kopf guards writes with it)."""
    if not isinstance(operations, list):
        raise PatchError(
            "error decoding patch: json: cannot unmarshal "
            f"{go_json_type(operations)} into Go value of type []handlers.jsonPatchOp",
            malformed=True,
        )
    result = deep_copy(doc)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"invalid JSON patch operation: {op!r}", malformed=True)
        kind, path = op["op"], op["path"]
        if kind in ("add", "replace", "test") and "value" not in op:
            raise PatchError(f"missing value in {kind} operation at {path}", malformed=True)
        if kind == "add":
            result = _add(result, path, deep_copy(op["value"]))
        elif kind == "remove":
            result, _ = _remove(result, path)
        elif kind == "replace":
            _get(result, path)  # must exist
            if _pointer(path):
                result, _ = _remove(result, path)
            result = _add(result, path, deep_copy(op["value"]))
        elif kind == "move":
            result, value = _remove(result, op["from"])
            result = _add(result, path, value)
        elif kind == "copy":
            result = _add(result, path, deep_copy(_get(result, op["from"])))
        elif kind == "test":
            try:
                have = _get(result, path)
            except PatchError:
                have = None
            if have != op["value"] or type(have) is not type(op["value"]):
                raise PatchError(
                    f"testing value {path} failed: test operation does not apply: "
                    "doc is not equal to value"
                )
        else:
            raise PatchError(f"unexpected kind: {kind}", malformed=True)
    return result


# -- strategic merge patch -----------------------------------------------------------------------

# Lists that built-in types merge by a key instead of replacing (their patchMergeKey tags).
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "conditions": "type",
    "ownerReferences": "uid",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
    "readinessGates": "conditionType",
}
# Lists of scalars merged as sets (patchStrategy "merge" on a primitive list).
MERGED_SCALAR_LISTS = frozenset({"finalizers"})


def _merge_key(field: str, items: list[Any]) -> str | None:
    if field == "ports":
        # Container ports merge by containerPort, service ports by port.
        sample = next((i for i in items if isinstance(i, dict)), None)
        if sample is None:
            return None
        return "containerPort" if "containerPort" in sample else "port"
    return MERGE_KEYS.get(field)


def strategic_merge_patch(target: Any, patch: Any, *, directives: bool = True) -> Any:
    """Apply a strategic merge patch (with `$patch`, `$retainKeys`, `$setElementOrder/...` and
    `$deleteFromPrimitiveList/...` directives) to a built-in object."""
    if not isinstance(patch, dict):
        return deep_copy(patch)
    if directives and patch.get("$patch") == "replace":
        return {k: deep_copy(v) for k, v in patch.items() if k != "$patch"}
    if directives and patch.get("$patch") == "delete":
        return None
    result: Obj = dict(target) if isinstance(target, dict) else {}
    retain = patch.get("$retainKeys") if directives else None
    orders: dict[str, list[Any]] = {}
    for key, value in patch.items():
        if directives and key.startswith("$setElementOrder/"):
            if isinstance(value, list):
                orders[key.split("/", 1)[1]] = value
            continue
        if directives and key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            if isinstance(result.get(field), list) and isinstance(value, list):
                result[field] = [v for v in result[field] if v not in value]
            continue
        if directives and key in ("$patch", "$retainKeys"):
            continue
        if value is None:
            result.pop(key, None)
            continue
        current = result.get(key)
        if isinstance(value, dict):
            merged = strategic_merge_patch(current, value, directives=directives)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list) and isinstance(current, list):
            result[key] = _merge_list(key, current, value, directives)
        else:
            result[key] = _strip_directives(value) if directives else deep_copy(value)
    if isinstance(retain, list):
        keep = set(retain)
        result = {k: v for k, v in result.items() if k in keep}
    for field, order in orders.items():
        if isinstance(result.get(field), list):
            result[field] = _reorder(field, result[field], order)
    return result


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _strip_directives(v)
            for k, v in value.items()
            if not (k.startswith("$setElementOrder/") or k.startswith("$deleteFromPrimitiveList/"))
            and k not in ("$patch", "$retainKeys")
        }
    if isinstance(value, list):
        return [
            _strip_directives(v)
            for v in value
            if not (isinstance(v, dict) and v.get("$patch") == "delete")
        ]
    return value


def _merge_list(field: str, current: list[Any], patch: list[Any], directives: bool) -> list[Any]:
    if field in MERGED_SCALAR_LISTS:
        merged = list(current)
        for item in patch:
            if item not in merged:
                merged.append(deep_copy(item))
        return merged
    key = _merge_key(field, current + patch)
    if key is None:
        if directives and any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
            return [_strip_directives(i) for i in patch if i.get("$patch") != "replace"]
        return [_strip_directives(i) if directives else deep_copy(i) for i in patch]
    result = list(current)
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            result.append(deep_copy(item))
            continue
        idx = next(
            (
                i
                for i, cur in enumerate(result)
                if isinstance(cur, dict) and cur.get(key) == item[key]
            ),
            None,
        )
        if directives and item.get("$patch") == "delete":
            if idx is not None:
                result.pop(idx)
            continue
        if idx is None:
            result.append(_strip_directives(item) if directives else deep_copy(item))
        else:
            result[idx] = strategic_merge_patch(result[idx], item, directives=directives)
    return result


def _reorder(field: str, items: list[Any], order: list[Any]) -> list[Any]:
    key = _merge_key(field, items)

    def ident(item: Any) -> Any:
        return item.get(key) if key is not None and isinstance(item, dict) else item

    rank = {repr(ident(o)): i for i, o in enumerate(order)}
    return sorted(items, key=lambda item: rank.get(repr(ident(item)), len(rank)))


def apply_merge(current: Any, applied: Obj, *, builtin: bool) -> Any:
    """Server-side apply, simplified: the applied configuration merged onto the live object
    (lists merge by key on built-in types, replace otherwise)."""
    if builtin:
        return strategic_merge_patch(current, applied, directives=False)
    return merge_patch(current, applied)
