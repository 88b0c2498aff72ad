"""`x-kubernetes-validations` CEL rules of a CRD schema, evaluated with `self` and `oldSelf`.

Mirrors apiextensions-apiserver `pkg/apiserver/schema/cel/validation.go`: rules run where the
value is present and non-null; transition rules (those using `oldSelf`) only where an old value
correlates (properties, map values, items of `x-kubernetes-list-type: map` lists); unchanged
values skip non-transition rules (validation ratcheting); failures become field errors with
the rule's message, messageExpression, reason and fieldPath. Expressions run on the
`common-expression-language` package (cel-rust), with the Kubernetes string/list helpers that
CRDs commonly use added as functions.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cel

from . import errors as fe
from .errors import FieldError
from .schema import Schema, child, index


def _split(s: str, sep: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    return s.split(sep, limit - 1) if limit > 0 else s.split(sep)


def _index_of(value: Any, sub: Any) -> int:
    try:
        return int(value.index(sub))
    except ValueError:
        return -1


def _last_index_of(value: Any, sub: Any) -> int:
    if isinstance(value, str):
        return value.rfind(sub)
    for i in range(len(value) - 1, -1, -1):
        if value[i] == sub:
            return i
    return -1


# Kubernetes' CEL libraries (strings ext, lists) that cel-rust lacks, as plain functions.
EXTRA_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "lowerAscii": lambda s: s.lower(),
    "upperAscii": lambda s: s.upper(),
    "trim": lambda s: s.strip(),
    "split": _split,
    "replace": lambda s, old, new, n=-1: s.replace(old, new, n),
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "join": lambda items, sep="": sep.join(items),
    "isSorted": lambda items: list(items) == sorted(items),
    "sum": lambda items: sum(items),
    "find": lambda s, pattern: m.group(0) if (m := re.search(pattern, s)) else "",
    "findAll": lambda s, pattern, n=-1: re.findall(pattern, s)[: n if n >= 0 else None],
}


class RuleCompileError(Exception):
    """A rule or messageExpression that does not compile (the CRD is then invalid)."""


@dataclass(frozen=True)
class CompiledRule:
    rule: str
    program: Any
    uses_old_self: bool
    functions: frozenset[str]
    message: str
    message_expression: Any
    reason: str
    field_path: str
    optional_old_self: bool


@functools.lru_cache(maxsize=4096)
def _compile(expression: str) -> tuple[Any, frozenset[str], frozenset[str]]:
    try:
        program = cel.compile(expression)
    except Exception as exc:  # the library raises ValueError with the parser's text
        raise RuleCompileError(str(exc)) from exc
    refs = program.references()
    return program, frozenset(refs["variables"]), frozenset(refs["functions"])


def compile_rule(spec: dict[str, Any]) -> CompiledRule:
    rule = str(spec.get("rule", ""))
    program, variables, functions = _compile(rule)
    message_expression = None
    if spec.get("messageExpression"):
        message_expression, _, more = _compile(str(spec["messageExpression"]))
        functions = functions | more
    return CompiledRule(
        rule=rule,
        program=program,
        uses_old_self="oldSelf" in variables,
        functions=frozenset(f for f in functions if f in EXTRA_FUNCTIONS),
        message=str(spec.get("message", "")),
        message_expression=message_expression,
        reason=str(spec.get("reason", "")),
        field_path=str(spec.get("fieldPath", "")),
        optional_old_self=bool(spec.get("optionalOldSelf", False)),
    )


def compile_schema(schema: Schema, path: str = "openAPIV3Schema") -> list[FieldError]:
    """Compile every rule of a schema (cached), returning CRD validation errors for bad ones."""
    errs: list[FieldError] = []
    for i, spec in enumerate(schema.get("x-kubernetes-validations") or []):
        try:
            compile_rule(spec)
        except RuleCompileError as exc:
            errs.append(
                fe.invalid(
                    f"{path}.x-kubernetes-validations[{i}].rule",
                    spec.get("rule", ""),
                    f"compilation failed: {exc}",
                )
            )
    for key, sub in (schema.get("properties") or {}).items():
        errs += compile_schema(sub, f"{path}.properties[{key}]")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            errs += compile_schema(schema[key], f"{path}.{key}")
    return errs


@functools.lru_cache(maxsize=4096)
def _compile_cached(key: tuple[tuple[str, Any], ...]) -> CompiledRule:
    return compile_rule(dict(key))


# Per schema node, kept with the node itself so that its id is not reused while cached: the
# rules compiled and whether any node below has rules. Schemas live as long as their CRD.
_NODE_CACHE: dict[int, tuple[Schema, list[CompiledRule], bool]] = {}
_NODE_CACHE_LIMIT = 100_000


def _node(schema: Schema) -> tuple[Schema, list[CompiledRule], bool]:
    cached = _NODE_CACHE.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached
    rules = [
        _compile_cached(tuple(sorted(spec.items())))
        for spec in schema.get("x-kubernetes-validations") or []
    ]
    below = [*(schema.get("properties") or {}).values()]
    below += [schema.get(k) for k in ("items", "additionalProperties")]
    entry = (
        schema,
        rules,
        bool(rules) or any(_node(sub)[2] for sub in below if isinstance(sub, dict)),
    )
    if len(_NODE_CACHE) >= _NODE_CACHE_LIMIT:
        _NODE_CACHE.clear()
    _NODE_CACHE[id(schema)] = entry
    return entry


def _rules(schema: Schema) -> list[CompiledRule]:
    return _node(schema)[1]


def _to_cel(value: Any, schema: Schema) -> Any:
    """JSON value to what CEL sees: schema type `number` is always a double."""
    if schema.get("type") == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _root_self(value: dict[str, Any]) -> dict[str, Any]:
    """At the resource root, `self.metadata` exposes only name and generateName."""
    meta = value.get("metadata") or {}
    shown = {k: meta[k] for k in ("name", "generateName") if k in meta}
    return {**value, "metadata": shown}


def _field_path(path: str, rule_path: str) -> str:
    if not rule_path:
        return path
    return path + rule_path if rule_path.startswith((".", "[")) else child(path, rule_path)


def _evaluate(program: Any, variables: dict[str, Any], functions: frozenset[str]) -> Any:
    if not functions:
        return program.execute(variables)
    context = cel.Context(variables)
    for name in functions:
        context.add_function(name, EXTRA_FUNCTIONS[name])
    return program.execute(context)


def _check(
    value: Any,
    old: Any,
    has_old: bool,
    schema: Schema,
    path: str,
    errs: list[FieldError],
    *,
    root: bool,
) -> None:
    rules = _rules(schema)
    if not rules:
        return
    # Ratcheting: an unchanged value is not re-judged by rules that ignore oldSelf.
    unchanged = has_old and old == value
    schema_type = str(schema.get("type") or "")
    self_value = _to_cel(_root_self(value) if root and isinstance(value, dict) else value, schema)
    old_value = None
    if has_old:
        old_value = _to_cel(_root_self(old) if root and isinstance(old, dict) else old, schema)
    for rule in rules:
        if rule.uses_old_self and not has_old and not rule.optional_old_self:
            continue
        if unchanged and not rule.uses_old_self:
            continue
        variables: dict[str, Any] = {"self": self_value}
        if rule.uses_old_self:
            if rule.optional_old_self:
                variables["oldSelf"] = (
                    cel.OptionalValue.of(old_value) if has_old else cel.OptionalValue.none()
                )
            else:
                variables["oldSelf"] = old_value
        try:
            result = _evaluate(rule.program, variables, rule.functions)
        except Exception as exc:
            errs.append(
                fe.invalid(
                    path or "<nil>",
                    schema_type,
                    f"{exc} evaluating rule: {rule.message or rule.rule}",
                )
            )
            continue
        if result is True:
            continue
        detail = ""
        if rule.message_expression is not None:
            try:
                text = _evaluate(rule.message_expression, variables, rule.functions)
                if isinstance(text, str) and text.strip() and "\n" not in text.strip():
                    detail = text.strip()
            except Exception:
                detail = ""
        if not detail:
            detail = rule.message.strip() or f"failed rule: {rule.rule.strip()}"
        # The resource root is a nil field path, printed "<nil>" like apimachinery does.
        where = _field_path(path, rule.field_path) or "<nil>"
        # kube-apiserver 1.33 shows the schema's type as the value (fieldErrorForReason(fldPath,
        # sts.Type, ...)), never the value itself: `spec: Invalid value: "object": ...`.
        shown = schema_type
        if rule.reason == fe.FORBIDDEN:
            errs.append(fe.forbidden(where, detail))
        elif rule.reason == fe.REQUIRED:
            errs.append(fe.required(where, detail))
        elif rule.reason == fe.DUPLICATE:
            errs.append(fe.FieldError(fe.DUPLICATE, where, shown))
        else:
            errs.append(fe.invalid(where, shown, detail))


def validate_rules(value: Any, old: Any, schema: Schema, *, has_old: bool) -> list[FieldError]:
    """Evaluate every rule in the schema tree against the object (and its previous state)."""
    errs: list[FieldError] = []
    _walk(value, old, has_old, schema, "", errs, root=True)
    return errs


def _walk(
    value: Any,
    old: Any,
    has_old: bool,
    schema: Schema,
    path: str,
    errs: list[FieldError],
    *,
    root: bool = False,
) -> None:
    if value is None or not has_rules(schema):
        return  # no rule here or below (a status without rules is not walked)
    _check(value, old, has_old, schema, path, errs, root=root)
    if isinstance(value, dict):
        props: dict[str, Schema] = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        old_map = old if has_old and isinstance(old, dict) else {}
        for key, item in value.items():
            if root and key in ("apiVersion", "kind", "metadata"):
                continue
            sub = props.get(key)
            if sub is not None:
                _walk(item, old_map.get(key), key in old_map, sub, child(path, key), errs)
            elif isinstance(additional, dict):
                _walk(
                    item,
                    old_map.get(key),
                    key in old_map,
                    additional,
                    f"{path}[{key}]",
                    errs,
                )
    elif isinstance(value, list):
        items = schema.get("items")
        if not isinstance(items, dict):
            return
        old_by_key: dict[str, Any] = {}
        keys = schema.get("x-kubernetes-list-map-keys") or []
        correlate = schema.get("x-kubernetes-list-type") == "map" and has_old
        if correlate and isinstance(old, list):
            for item in old:
                if isinstance(item, dict):
                    old_by_key[repr([item.get(k) for k in keys])] = item
        for i, item in enumerate(value):
            marker = repr([item.get(k) for k in keys]) if isinstance(item, dict) else ""
            found = correlate and marker in old_by_key
            _walk(item, old_by_key.get(marker), found, items, index(path, i), errs)


def has_rules(schema: Schema) -> bool:
    """Whether any node of the schema carries x-kubernetes-validations (skip the walk if not)."""
    return _node(schema)[2]
