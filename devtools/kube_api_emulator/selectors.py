"""Label selectors (equality- and set-based) and field selectors, parsed as kube-apiserver does.

Mirrors k8s.io/apimachinery `pkg/labels` (Parse: `=`, `==`, `!=`, `in`, `notin`, `exists`,
`!exists`, `>`, `<`) and `pkg/fields` (`=`, `==`, `!=` with backslash escapes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ApiError, bad_request

Obj = dict[str, Any]


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


# -- label selectors: apimachinery's labels.Parse, lexer and parser, with its error messages --

_SPECIAL = "=!(),><"
_TOKENS = {")": ")", ",": ",", "!": "!", "==": "==", "=": "=", ">": ">", "in": "in", "<": "<",
           "!=": "!=", "notin": "notin", "(": "("}  # fmt: skip
_IDENT, _END, _ERROR = "identifier", "end", "error"
_OPERATORS = {"in": "in", "notin": "notin", "=": "=", "==": "=", "!=": "!=", ">": "gt", "<": "lt"}
_BINARY = "in, notin, =, ==, !=, gt, lt"

_QNAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_RE = re.compile(f"^{_QNAME}$")
_LABEL_VALUE = f"({_QNAME})?"
_LABEL_VALUE_RE = re.compile(f"^{_LABEL_VALUE}$")
_SUBDOMAIN = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_SUBDOMAIN_RE = re.compile(f"^{_SUBDOMAIN}$")


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    """validation.RegexError."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def _qualified_name_errors(value: str) -> list[str]:
    """validation.IsQualifiedName."""
    errs: list[str] = []
    parts = value.split("/")
    qname_error = _regex_error(
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character", _QNAME, "MyName", "my.name", "123-abc"
    )  # fmt: skip
    if len(parts) > 2:
        return [f"a qualified name {qname_error} with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]  # fmt: skip
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if len(prefix) > 253:
                errs.append("prefix part must be no more than 253 characters")
            if not _SUBDOMAIN_RE.match(prefix):
                errs.append("prefix part " + _regex_error(
                    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                    "characters, '-' or '.', and must start and end with an alphanumeric "
                    "character", _SUBDOMAIN, "example.com"))  # fmt: skip
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QNAME_RE.match(name):
        errs.append("name part " + qname_error)
    return errs


def _label_value_errors(value: str) -> list[str]:
    """validation.IsValidLabelValue."""
    errs: list[str] = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_VALUE_RE.match(value):
        errs.append(_regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', "
            "'_' or '.', and must start and end with an alphanumeric character", _LABEL_VALUE,
            "MyValue", "my_value", "12345"))  # fmt: skip
    return errs


def _lex(text: str) -> list[tuple[str, str]]:
    """labels.Lexer: the whole selector as (token, literal) pairs, ending with the end token."""
    items: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            items.append((_END, ""))
            return items
        if text[i] in _SPECIAL:
            buffer, last = "", ("", "")
            while i < n and text[i] in _SPECIAL:
                if buffer + text[i] in _TOKENS:
                    buffer += text[i]
                    last = (_TOKENS[buffer], buffer)
                elif last[0]:
                    break
                else:
                    buffer += text[i]
                i += 1
            items.append(last if last[0] else (_ERROR, f"error expected: keyword found '{buffer}'"))
            continue
        start = i
        while i < n and text[i] not in _SPECIAL and text[i] not in " \t\r\n":
            i += 1
        word = text[start:i]
        items.append(
            (_TOKENS.get(word, _IDENT), word) if word in ("in", "notin") else (_IDENT, word)
        )


class _SelectorError(Exception):
    pass


class _Parser:
    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.position = 0

    def lookahead(self, values: bool = True) -> tuple[str, str]:
        tok, lit = self.items[self.position]
        return (_IDENT if values and tok in ("in", "notin") else tok), lit

    def consume(self, values: bool = True) -> tuple[str, str]:
        item = self.lookahead(values)
        self.position += 1
        return item

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.lookahead()
            if tok in (_IDENT, "!"):
                try:
                    reqs.append(self.requirement())
                except _SelectorError as exc:
                    raise _SelectorError(f"unable to parse requirement: {exc}") from None
                tok, lit = self.consume()
                if tok == _END:
                    return reqs
                if tok != ",":
                    raise _SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
                tok2, lit2 = self.lookahead()
                if tok2 not in (_IDENT, "!"):
                    raise _SelectorError(f"found '{lit2}', expected: identifier after ','")
            elif tok == _END:
                return reqs
            else:
                raise _SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        operator = ""
        tok, key = self.consume()
        if tok == "!":
            operator = "!"
            tok, key = self.consume()
        if tok != _IDENT:
            raise _SelectorError(f"found '{key}', expected: identifier")
        errs = _qualified_name_errors(key)
        if errs:
            raise _SelectorError(f"<nil>: Invalid value: {json.dumps(key)}: {'; '.join(errs)}")
        if operator == "!" or self.lookahead()[0] in (_END, ","):
            return _new_requirement(key, operator or "exists", [])
        tok, lit = self.consume(values=False)
        if tok not in _OPERATORS:
            raise _SelectorError(f"found '{lit}', expected: {_BINARY}")
        operator = _OPERATORS[tok]
        values = self.values() if operator in ("in", "notin") else self.exact_value()
        return _new_requirement(key, operator, sorted(set(values)))

    def values(self) -> list[str]:
        tok, lit = self.consume()
        if tok != "(":
            raise _SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok == ")":
            self.consume()
            return [""]
        if tok not in (_IDENT, ","):
            raise _SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        found = self.identifiers()
        if self.consume()[0] != ")":
            raise _SelectorError(f"found '{lit}', expected: ')'")
        return found

    def identifiers(self) -> list[str]:
        found: list[str] = []
        while True:
            tok, lit = self.consume()
            if tok == _IDENT:
                found.append(lit)
                tok2, lit2 = self.lookahead()
                if tok2 == ")":
                    return found
                if tok2 != ",":
                    raise _SelectorError(f"found '{lit2}', expected: ',' or ')'")
            elif tok == ",":
                if not found:
                    found.append("")
                tok2, _ = self.lookahead()
                if tok2 == ")":
                    return [*found, ""]
                if tok2 == ",":
                    self.consume()
                    found.append("")
            else:
                raise _SelectorError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> list[str]:
        if self.lookahead()[0] in (_END, ","):
            return [""]
        tok, lit = self.consume()
        if tok == _IDENT:
            return [lit]
        raise _SelectorError(f"found '{lit}', expected: identifier")


def _new_requirement(key: str, operator: str, values: list[str]) -> Requirement:
    """labels.NewRequirement's checks on the values (the key was checked by the parser)."""
    errs: list[str] = []
    if operator in ("gt", "lt"):
        for i, value in enumerate(values):
            if not re.fullmatch(r"[-+]?[0-9]+", value):
                errs.append(f"values[{i}]: Invalid value: {json.dumps(value)}: for 'Gt', 'Lt' "
                            "operators, the value must be an integer")  # fmt: skip
    for i, value in enumerate(values):
        value_errs = _label_value_errors(value)
        if value_errs:
            errs.append(f"values[{i}][{key}]: Invalid value: {json.dumps(value)}: "
                        + "; ".join(value_errs))  # fmt: skip
    unique = list(dict.fromkeys(errs))
    if unique:
        raise _SelectorError(unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]")
    return Requirement(key, operator, tuple(values))


def parse_label_selector(text: str) -> list[Requirement]:
    """Parse a `labelSelector` query parameter; raises 400 BadRequest on a syntax error."""
    try:
        return _Parser(text).parse()
    except _SelectorError as exc:
        raise bad_request(str(exc)) from None


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


def check_field_paths(reqs: list[FieldRequirement], allowed: Callable[[str], bool]) -> None:
    for req in reqs:
        if not allowed(req.path):
            raise ApiError(400, "BadRequest", f"field label not supported: {req.path}")


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
