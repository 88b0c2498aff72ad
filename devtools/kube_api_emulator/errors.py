"""API errors as Kubernetes `Status` objects, and field errors formatted like apimachinery's.

Mirrors k8s.io/apimachinery `pkg/api/errors` (NewNotFound, NewInvalid, ...) and
`pkg/util/validation/field` (ErrorBody), so clients read the same messages as from kube-apiserver.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final


class _Omit:
    """Marker for a field error that shows no value (apimachinery's omitValue)."""

    def __repr__(self) -> str:
        return "<omit>"


OMIT: Final = _Omit()

# ErrorType values (the cause `reason`) and their canonical texts.
REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
TYPE_INVALID = "FieldValueTypeInvalid"
NOT_SUPPORTED = "FieldValueNotSupported"
FORBIDDEN = "FieldValueForbidden"
TOO_LONG = "FieldValueTooLong"
TOO_MANY = "FieldValueTooMany"
DUPLICATE = "FieldValueDuplicate"
NOT_FOUND = "FieldValueNotFound"
INTERNAL = "InternalError"

_TYPE_TEXT: Final = {
    REQUIRED: "Required value",
    INVALID: "Invalid value",
    TYPE_INVALID: "Invalid value",
    NOT_SUPPORTED: "Unsupported value",
    FORBIDDEN: "Forbidden",
    TOO_LONG: "Too long",
    TOO_MANY: "Too many",
    DUPLICATE: "Duplicate value",
    NOT_FOUND: "Not found",
    INTERNAL: "Internal error",
}
# These types never print their value (ErrorBody's first cases).
_VALUELESS: Final = frozenset({REQUIRED, FORBIDDEN, TOO_LONG, INTERNAL})


def go_value(value: Any) -> str:
    """A value as Go's `%v`/`%q` prints it inside a field error."""
    if value is None:
        # ErrorBody turns a nil value into the string "null", then quotes it.
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


@dataclass(frozen=True)
class FieldError:
    """One field-level validation error (apimachinery's field.Error)."""

    type: str
    field: str
    value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        text = _TYPE_TEXT[self.type]
        if self.type not in _VALUELESS and self.value is not OMIT:
            text = f"{text}: {go_value(self.value)}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(REQUIRED, path, OMIT, detail)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(INVALID, path, value, detail)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(FORBIDDEN, path, OMIT, detail)


def not_supported(path: str, value: Any, valid: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(json.dumps(v) for v in valid) if valid else ""
    return FieldError(NOT_SUPPORTED, path, value, detail)


def too_long(path: str, max_length: int) -> FieldError:
    detail = f"may not be more than {max_length} bytes" if max_length >= 0 else "value is too long"
    return FieldError(TOO_LONG, path, OMIT, detail)


def too_many(path: str, actual: int, maximum: int) -> FieldError:
    detail = f"must have at most {maximum} items" if maximum >= 0 else "has too many items"
    return FieldError(TOO_MANY, path, actual if actual >= 0 else OMIT, detail)


@dataclass
class ApiError(Exception):
    """An error answered as a `Status` object with an HTTP code."""

    code: int
    reason: str
    message: str
    details: dict[str, Any] | None = None

    def __str__(self) -> str:
        return f"{self.code} {self.reason}: {self.message}"

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if not self.reason:
            del body["reason"]
        if self.details is not None:
            body["details"] = self.details
        return body


def qualified(plural: str, group: str) -> str:
    """`GroupResource.String()`: `plural.group`, or `plural` for the core group."""
    return f"{plural}.{group}" if group else plural


def _resource_details(group: str, plural: str, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name, "kind": plural}
    if group:
        details["group"] = group
    return details


def not_found(group: str, plural: str, name: str) -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f"{qualified(plural, group)} {json.dumps(name)} not found",
        _resource_details(group, plural, name),
    )


def already_exists(group: str, plural: str, name: str) -> ApiError:
    return ApiError(
        409,
        "AlreadyExists",
        f"{qualified(plural, group)} {json.dumps(name)} already exists",
        _resource_details(group, plural, name),
    )


MODIFIED_MESSAGE: Final = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def conflict(group: str, plural: str, name: str, why: str = MODIFIED_MESSAGE) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f"Operation cannot be fulfilled on {qualified(plural, group)} {json.dumps(name)}: {why}",
        _resource_details(group, plural, name),
    )


def invalid_object(group: str, kind: str, name: str, errors: list[FieldError]) -> ApiError:
    """NewInvalid: one message listing every distinct error, and one cause per error."""
    unique: list[FieldError] = []
    seen: set[str] = set()
    for err in errors:
        if str(err) not in seen:
            seen.add(str(err))
            unique.append(err)
    gk = f"{kind}.{group}" if group else kind
    joined = str(unique[0]) if len(unique) == 1 else "[" + ", ".join(map(str, unique)) + "]"
    details: dict[str, Any] = {"name": name} if name else {}
    details["kind"] = kind
    if group:
        details["group"] = group
    details["causes"] = [
        {"reason": err.type, "message": err.body(), "field": err.field} for err in errors
    ]
    return ApiError(422, "Invalid", f"{gk} {json.dumps(name)} is invalid: {joined}", details)


def go_json_type(value: Any) -> str:
    """What Go's encoding/json calls a JSON value's type in an UnmarshalTypeError."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def unrecognized(kind: str, body: Any) -> ApiError:
    """A body that is JSON but not an object: the words of the decoder looking for its kind, with
    the body in hex as it quotes it."""
    raw = json.dumps(body, separators=(",", ":")).encode()
    return bad_request(
        f"the object provided is unrecognized (must be of type {kind}): couldn't get "
        f"version/kind; json parse error: json: cannot unmarshal {go_json_type(body)} into Go "
        'value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind '
        f'string "json:\\"kind,omitempty\\"" }} ({raw.hex()})'
    )


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def unprocessable(detail: str) -> ApiError:
    """A patch that cannot be applied (NewGenericServerResponse with 422): kube-apiserver 1.33
    says why in its log only; the answer's details are empty."""
    del detail
    return ApiError(
        422, "Invalid", "the server rejected our request due to an error in our request", {}
    )


def invalid_options(kind: str, errors: list[FieldError]) -> ApiError:
    """Invalid request options (CreateOptions, PatchOptions, DeleteOptions...)."""
    return invalid_object("meta.k8s.io", kind, "", errors)


def method_not_allowed(message: str = "") -> ApiError:
    return ApiError(
        405,
        "MethodNotAllowed",
        message or "the server does not allow this method on the requested resource",
    )


def unsupported_media_type(content_type: str, accepted: list[str]) -> ApiError:
    return ApiError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: "
        f"{', '.join(accepted)}",
    )


def path_not_found() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource")


def forbidden_request(message: str) -> ApiError:
    return ApiError(403, "Forbidden", message)


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)
