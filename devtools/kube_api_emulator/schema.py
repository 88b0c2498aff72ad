"""Structural-schema semantics of a CRD version's `openAPIV3Schema`: pruning, defaulting and
value validation, with kube-apiserver's messages.

Mirrors apiextensions-apiserver (`pkg/apiserver/schema/pruning`, `.../defaulting`) and
kube-openapi's validator (`pkg/validation/validate`, `pkg/validation/errors`), whose errors are
converted to field errors as apiextensions-apiserver's `validation.go` does.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from . import errors as fe
from .errors import FieldError
from .patch import deep_copy

Obj = dict[str, Any]
Schema = dict[str, Any]

# ObjectMeta's fields: the only ones kept under a resource's (or embedded resource's) metadata.
OBJECT_META_FIELDS = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)
_EMBEDDED = ("apiVersion", "kind", "metadata")


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


# -- pruning -------------------------------------------------------------------------------------


def prune(obj: Obj, schema: Schema) -> list[str]:
    """Drop, in place, every field the schema does not specify; return their paths.

    The resource root keeps apiVersion, kind and metadata (reduced to ObjectMeta's fields).
    """
    unknown: list[str] = []
    _prune_embedded(obj, "", unknown)
    pruned: list[str] = []
    _prune_object(obj, schema, "", pruned, skip=_EMBEDDED)
    # As kube-apiserver lists them: metadata's (decoding ObjectMeta) first, then the pruned
    # paths sorted.
    return unknown + sorted(pruned)


def _prune_embedded(obj: Obj, path: str, unknown: list[str]) -> None:
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        for key in [k for k in meta if k not in OBJECT_META_FIELDS]:
            del meta[key]
            unknown.append(child(child(path, "metadata"), key))


def _prune(value: Any, schema: Schema, path: str, unknown: list[str]) -> None:
    if isinstance(value, dict):
        skip: tuple[str, ...] = ()
        if schema.get("x-kubernetes-embedded-resource"):
            _prune_embedded(value, path, unknown)
            skip = _EMBEDDED
        _prune_object(value, schema, path, unknown, skip=skip)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                _prune(item, items, index(path, i), unknown)


def _prune_object(
    value: Obj, schema: Schema, path: str, unknown: list[str], *, skip: tuple[str, ...]
) -> None:
    props: dict[str, Schema] = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields")) or additional is True
    for key in list(value):
        if key in skip:
            continue
        sub = props.get(key)
        if sub is not None:
            _prune(value[key], sub, child(path, key), unknown)
        elif isinstance(additional, dict):
            _prune(value[key], additional, child(path, key), unknown)
        elif not preserve:
            del value[key]
            unknown.append(child(path, key))


# -- defaulting ----------------------------------------------------------------------------------


def apply_defaults(value: Any, schema: Schema) -> None:
    """Set, in place, each absent (or non-nullable null) property that has a default; drop a
    non-nullable null property that has none (PruneNonNullableNullsWithoutDefaults)."""
    if isinstance(value, dict):
        props: dict[str, Schema] = schema.get("properties") or {}
        for key, sub in props.items():
            if "default" in sub and (
                key not in value or (value[key] is None and not sub.get("nullable"))
            ):
                value[key] = deep_copy(sub["default"])
            elif key in value and value[key] is None and not sub.get("nullable"):
                del value[key]
            if key in value:
                apply_defaults(value[key], sub)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key in value:
                if key not in props:
                    apply_defaults(value[key], additional)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in value:
                apply_defaults(item, items)


# -- validation ----------------------------------------------------------------------------------


def json_type(value: Any) -> str:
    """The JSON type name kube-openapi reports for a value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_ok(expected: str, value: Any) -> bool:
    if expected == "object":
        return isinstance(value, dict)
    if expected == "array":
        return isinstance(value, list)
    if expected == "string":
        return isinstance(value, str)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if expected == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return True


@functools.lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern[str]:
    # ECMA-262 and Go RE2 syntax agree with Python's for what CRD patterns use in practice, but
    # for `$`: RE2's matches only at the end of the text, Python's before a final newline too.
    return re.compile(_END_OF_TEXT.sub(lambda m: m.group(1) + r"\Z", pattern))


# An unescaped `$` outside a character class (classes and escapes consumed whole, kept).
_END_OF_TEXT = re.compile(r"((?:\\.|\[(?:\\.|[^\]])*\]|[^\\\[$])*)\$")


def _msg(path: str, text: str) -> str:
    return f"{path} in body {text}"


def validate(value: Any, schema: Schema, path: str = "") -> list[FieldError]:
    """Validate a value (the whole object at the root) against a structural schema."""
    errs: list[FieldError] = []
    _validate(value, schema, path, errs, root=not path)
    return errs


def _validate(value: Any, schema: Schema, path: str, errs: list[FieldError], *, root: bool) -> None:
    name = path or "."
    if value is None:
        if schema.get("nullable") or not schema.get("type"):
            return
        errs.append(
            FieldError(
                fe.TYPE_INVALID,
                path,
                "null",
                _msg(name, f'must be of type {schema["type"]}: "null"'),
            )
        )
        return
    if schema.get("x-kubernetes-int-or-string"):
        if not (isinstance(value, str) or _type_ok("integer", value)):
            actual = json_type(value)
            errs.append(
                FieldError(
                    fe.TYPE_INVALID,
                    path,
                    actual,
                    _msg(name, f"must be of type integer,string: {json.dumps(actual)}"),
                )
            )
            return
    elif schema.get("type") and not _type_ok(schema["type"], value):
        actual = json_type(value)
        errs.append(
            FieldError(
                fe.TYPE_INVALID,
                path,
                actual,
                _msg(name, f"must be of type {schema['type']}: {json.dumps(actual)}"),
            )
        )
        return
    if "enum" in schema and value not in schema["enum"]:
        valid = [v if isinstance(v, str) else json.dumps(v) for v in schema["enum"]]
        errs.append(fe.not_supported(path, value, valid))
    if isinstance(value, str):
        _validate_string(value, schema, path, errs)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        _validate_number(value, schema, path, errs)
    elif isinstance(value, list):
        _validate_array(value, schema, path, errs)
    elif isinstance(value, dict):
        _validate_object(value, schema, path, errs, root=root)
    for sub in schema.get("allOf") or []:
        _validate(value, sub, path, errs, root=root)
    for key, text in (("anyOf", "at least one"), ("oneOf", "one and only one")):
        options = schema.get(key)
        if options:
            passing = sum(1 for sub in options if not validate(value, sub, path))
            if passing == 0 or (key == "oneOf" and passing > 1):
                errs.append(
                    fe.invalid(path, fe.OMIT, _msg(name, f"must validate {text} schema ({key})"))
                )
    negated = schema.get("not")
    if isinstance(negated, dict) and not validate(value, negated, path):
        errs.append(fe.invalid(path, fe.OMIT, _msg(name, "must not validate the schema (not)")))


def _validate_string(value: str, schema: Schema, path: str, errs: list[FieldError]) -> None:
    name = path or "."
    # kube-openapi's string validator stops at the first failure: maxLength, minLength, pattern.
    max_length = schema.get("maxLength")
    if max_length is not None and len(value) > max_length:
        errs.append(fe.too_long(path, int(max_length)))
        return
    min_length = schema.get("minLength")
    if min_length is not None and len(value) < min_length:
        errs.append(
            fe.invalid(path, value, _msg(name, f"should be at least {min_length} chars long"))
        )
        return
    pattern = schema.get("pattern")
    if pattern is not None and not _regex(pattern).search(value):
        errs.append(fe.invalid(path, value, _msg(name, f"should match '{pattern}'")))


def _num(limit: Any) -> str:
    return fe.go_value(limit)


def _validate_number(value: float, schema: Schema, path: str, errs: list[FieldError]) -> None:
    name = path or "."
    maximum = schema.get("maximum")
    if maximum is not None:
        exclusive = bool(schema.get("exclusiveMaximum"))
        if value > maximum or (exclusive and value == maximum):
            text = "less than" if exclusive else "less than or equal to"
            errs.append(fe.invalid(path, value, _msg(name, f"should be {text} {_num(maximum)}")))
    minimum = schema.get("minimum")
    if minimum is not None:
        exclusive = bool(schema.get("exclusiveMinimum"))
        if value < minimum or (exclusive and value == minimum):
            text = "greater than" if exclusive else "greater than or equal to"
            errs.append(fe.invalid(path, value, _msg(name, f"should be {text} {_num(minimum)}")))
    multiple = schema.get("multipleOf")
    if multiple and (value / multiple) != int(value / multiple):
        errs.append(
            fe.invalid(path, value, _msg(name, f"should be a multiple of {_num(multiple)}"))
        )


def _validate_array(value: list[Any], schema: Schema, path: str, errs: list[FieldError]) -> None:
    name = path or "."
    max_items = schema.get("maxItems")
    if max_items is not None and len(value) > max_items:
        errs.append(fe.too_many(path, len(value), int(max_items)))
    min_items = schema.get("minItems")
    if min_items is not None and len(value) < min_items:
        errs.append(
            fe.invalid(path, len(value), _msg(name, f"should have at least {min_items} items"))
        )
    if schema.get("uniqueItems") and _has_duplicates(value):
        errs.append(fe.invalid(path, fe.OMIT, _msg(name, "shouldn't contain duplicates")))
    list_type = schema.get("x-kubernetes-list-type")
    if list_type in ("set", "map"):
        keys = schema.get("x-kubernetes-list-map-keys") or []
        seen: set[str] = set()
        for i, item in enumerate(value):
            ident = item if list_type == "set" else _map_key(item, keys)
            marker = json.dumps(ident, sort_keys=True)
            if marker in seen:
                errs.append(fe.FieldError(fe.DUPLICATE, index(path, i), ident))
            seen.add(marker)
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            _validate(item, items, index(path, i), errs, root=False)


def _map_key(item: Any, keys: list[str]) -> Any:
    if not isinstance(item, dict):
        return item
    return {k: item.get(k) for k in keys}


def _has_duplicates(value: list[Any]) -> bool:
    markers = [json.dumps(v, sort_keys=True) for v in value]
    return len(set(markers)) != len(markers)


def _validate_object(
    value: Obj, schema: Schema, path: str, errs: list[FieldError], *, root: bool
) -> None:
    name = path or "."
    for key in schema.get("required") or []:
        if key not in value or (value[key] is None and not _nullable(schema, key)):
            errs.append(fe.required(child(path, key)))
    max_props = schema.get("maxProperties")
    if max_props is not None and len(value) > max_props:
        errs.append(fe.too_many(path, len(value), int(max_props)))
    min_props = schema.get("minProperties")
    if min_props is not None and len(value) < min_props:
        errs.append(
            fe.invalid(path, len(value), _msg(name, f"should have at least {min_props} properties"))
        )
    props: dict[str, Schema] = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    for key, item in value.items():
        if root and key in _EMBEDDED:
            continue
        sub = props.get(key)
        if sub is not None:
            if key in value and not (item is None and key in (schema.get("required") or [])):
                _validate(item, sub, child(path, key), errs, root=False)
        elif isinstance(additional, dict):
            _validate(item, additional, child(path, key), errs, root=False)


def _nullable(schema: Schema, key: str) -> bool:
    sub = (schema.get("properties") or {}).get(key) or {}
    return bool(sub.get("nullable"))


def schema_at(schema: Schema, path: list[str]) -> Schema | None:
    """The sub-schema of a property path (through properties and additionalProperties)."""
    cur: Schema | None = schema
    for part in path:
        if cur is None:
            return None
        props = cur.get("properties") or {}
        if part in props:
            cur = props[part]
        elif isinstance(cur.get("additionalProperties"), dict):
            cur = cur["additionalProperties"]
        else:
            return None
    return cur
