"""Decoding of Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`) for the
few kinds that kubectl and helm write through typed clients: Namespace, ConfigMap, Secret,
ServiceAccount and DeleteOptions (helm keeps its releases in Secrets; `kubectl create
ns|cm|secret|sa`).

The envelope is apimachinery's: the magic `k8s\\0` then a `runtime.Unknown` (typeMeta, raw);
field numbers are those of k8s.io/api's and apimachinery's generated.proto. Responses are always
JSON, which these clients accept too.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any

Obj = dict[str, Any]
MAGIC = b"k8s\x00"


class ProtobufError(Exception):
    """A body this decoder cannot read (malformed, or a kind it does not know)."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) pairs: ints for varints, bytes for length-delimited fields."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            yield number, value
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ProtobufError("truncated field")
            yield number, data[pos : pos + length]
            pos += length
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")


# A schema maps field numbers to (JSON name, type). Types: "string", "bytes" (base64 in JSON),
# "int", "bool", "time", "strings" (repeated), "map" (string->string), "bytesmap"
# (string->base64), or another schema's name ("[]name" when repeated).
Schema = dict[int, tuple[str, str]]

SCHEMAS: dict[str, Schema] = {
    "ObjectMeta": {
        1: ("name", "string"),
        2: ("generateName", "string"),
        3: ("namespace", "string"),
        5: ("uid", "string"),
        6: ("resourceVersion", "string"),
        7: ("generation", "int"),
        8: ("creationTimestamp", "time"),
        9: ("deletionTimestamp", "time"),
        10: ("deletionGracePeriodSeconds", "int"),
        11: ("labels", "map"),
        12: ("annotations", "map"),
        13: ("ownerReferences", "[]OwnerReference"),
        14: ("finalizers", "strings"),
    },
    "OwnerReference": {
        1: ("kind", "string"),
        3: ("name", "string"),
        4: ("uid", "string"),
        5: ("apiVersion", "string"),
        6: ("controller", "bool"),
        7: ("blockOwnerDeletion", "bool"),
    },
    "ObjectReference": {
        1: ("kind", "string"),
        2: ("namespace", "string"),
        3: ("name", "string"),
        4: ("uid", "string"),
        5: ("apiVersion", "string"),
        6: ("resourceVersion", "string"),
        7: ("fieldPath", "string"),
    },
    "LocalObjectReference": {1: ("name", "string")},
    "Namespace": {1: ("metadata", "ObjectMeta"), 2: ("spec", "NamespaceSpec")},
    "NamespaceSpec": {1: ("finalizers", "strings")},
    "ConfigMap": {
        1: ("metadata", "ObjectMeta"),
        2: ("data", "map"),
        3: ("binaryData", "bytesmap"),
        4: ("immutable", "bool"),
    },
    "Secret": {
        1: ("metadata", "ObjectMeta"),
        2: ("data", "bytesmap"),
        3: ("type", "string"),
        4: ("stringData", "map"),
        5: ("immutable", "bool"),
    },
    "ServiceAccount": {
        1: ("metadata", "ObjectMeta"),
        2: ("secrets", "[]ObjectReference"),
        3: ("imagePullSecrets", "[]LocalObjectReference"),
        4: ("automountServiceAccountToken", "bool"),
    },
}
SCHEMAS["DeleteOptions"] = {
    1: ("gracePeriodSeconds", "int"),
    2: ("preconditions", "Preconditions"),
    3: ("orphanDependents", "bool"),
    4: ("propagationPolicy", "string"),
    5: ("dryRun", "strings"),
}
SCHEMAS["Preconditions"] = {1: ("uid", "string"), 2: ("resourceVersion", "string")}
KINDS = frozenset({"Namespace", "ConfigMap", "Secret", "ServiceAccount", "DeleteOptions"})


def _text(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a length-delimited field")
    return value.decode()


def _time(value: int | bytes) -> str | None:
    seconds = 0
    for number, item in fields(_bytes(value)):
        if number == 1 and isinstance(item, int):
            seconds = item
    if not seconds:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a length-delimited field")
    return value


def _entry(value: int | bytes) -> tuple[str, bytes]:
    key, item = "", b""
    for number, part in fields(_bytes(value)):
        if number == 1:
            key = _text(part)
        elif number == 2:
            item = _bytes(part)
    return key, item


def decode_message(data: bytes, schema_name: str) -> Obj:
    schema = SCHEMAS[schema_name]
    out: Obj = {}
    for number, value in fields(data):
        if number not in schema:
            continue  # fields this emulator does not keep (managedFields, status, ...)
        name, kind = schema[number]
        if value in (b"", 0) and kind in ("string", "int", "time"):
            continue  # Go's zero values, which its JSON leaves out (omitempty)
        if kind == "string":
            out[name] = _text(value)
        elif kind == "bytes":
            out[name] = base64.b64encode(_bytes(value)).decode()
        elif kind in ("int", "bool"):
            if not isinstance(value, int):
                raise ProtobufError(f"{name}: expected a varint")
            out[name] = bool(value) if kind == "bool" else value
        elif kind == "time":
            stamp = _time(value)
            if stamp is not None:
                out[name] = stamp
        elif kind == "strings":
            out.setdefault(name, []).append(_text(value))
        elif kind in ("map", "bytesmap"):
            key, item = _entry(value)
            text = item.decode() if kind == "map" else base64.b64encode(item).decode()
            out.setdefault(name, {})[key] = text
        elif kind.startswith("[]"):
            out.setdefault(name, []).append(decode_message(_bytes(value), kind[2:]))
        else:
            out[name] = decode_message(_bytes(value), kind)
    return out


def decode(body: bytes) -> Obj:
    """A protobuf-encoded object as the JSON object it stands for."""
    if not body.startswith(MAGIC):
        raise ProtobufError("missing the k8s protobuf envelope")
    api_version = kind = ""
    raw = b""
    for number, value in fields(body[len(MAGIC) :]):
        if number == 1:
            for sub, item in fields(_bytes(value)):
                if sub == 1:
                    api_version = _text(item)
                elif sub == 2:
                    kind = _text(item)
        elif number == 2:
            raw = _bytes(value)
    if api_version not in ("v1", "meta.k8s.io/v1") or kind not in KINDS:
        raise ProtobufError(f"protobuf is not supported for {api_version} {kind}")
    obj = decode_message(raw, kind)
    return {"apiVersion": api_version, "kind": kind, **obj}
