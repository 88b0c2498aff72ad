"""OpenAPI documents: /openapi/v3 (index and one document per group-version) and /openapi/v2.

Every kind has paths whose PATCH takes `fieldValidation` (so kubectl validates server-side) and
no strategic merge patch (so kubectl's apply falls back to JSON merge patch for custom resources
and to its compiled-in patch metadata for built-ins). Custom resources are published with their
CRD schema, so `kubectl explain` works; built-in kinds carry no schemas. /openapi/v2 is JSON
only: a protobuf-only request gets 404, and kubectl then uses its compiled-in types.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .patch import deep_copy
from .resources import Registry, ResourceInfo

Obj = dict[str, Any]

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_OBJECT_META_SCHEMA: Obj = {
    "description": "ObjectMeta is metadata that all persisted resources must have, which "
    "includes all objects users must create.",
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Name must be unique within a namespace."},
        "namespace": {
            "type": "string",
            "description": "Namespace defines the space within which each name must be unique.",
        },
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
        "finalizers": {"type": "array", "items": {"type": "string"}},
        "generateName": {"type": "string"},
        "uid": {"type": "string"},
        "resourceVersion": {"type": "string"},
        "generation": {"type": "integer", "format": "int64"},
        "creationTimestamp": {"type": "string", "format": "date-time"},
        "deletionTimestamp": {"type": "string", "format": "date-time"},
    },
}
_PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
)


def definition_name(info: ResourceInfo) -> str:
    """The OpenAPI name of a kind: the group reversed, then version and kind."""
    reversed_group = ".".join(reversed(info.group.split("."))) if info.group else "io.k8s.api.core"
    return f"{reversed_group}.{info.version}.{info.kind}"


def _gvk(info: ResourceInfo) -> list[Obj]:
    return [{"group": info.group, "kind": info.kind, "version": info.version}]


def _kind_schema(info: ResourceInfo, meta_ref: str) -> Obj:
    schema: Obj = deep_copy(info.schema) if isinstance(info.schema, dict) else {"type": "object"}
    props: Obj = schema.setdefault("properties", {})
    props["apiVersion"] = {
        "type": "string",
        "description": "APIVersion defines the versioned schema of this representation of an "
        "object.",
    }
    props["kind"] = {
        "type": "string",
        "description": "Kind is a string value representing the REST resource this object "
        "represents.",
    }
    props["metadata"] = {
        "allOf": [{"$ref": meta_ref}],
        "description": "Standard object's metadata.",
    }
    schema["x-kubernetes-group-version-kind"] = _gvk(info)
    return schema


def _prefix(info: ResourceInfo) -> str:
    return f"/apis/{info.group}/{info.version}" if info.group else f"/api/{info.version}"


def _operation(info: ResourceInfo, action: str, body_types: tuple[str, ...] = ()) -> Obj:
    op: Obj = {
        "operationId": f"{action}{info.kind}",
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": _gvk(info)[0],
        "parameters": [
            {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
            {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
            {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
        ],
        "responses": {"200": {"description": "OK"}},
    }
    if body_types:
        op["requestBody"] = {
            "content": {
                t: {"schema": {"$ref": f"#/components/schemas/{definition_name(info)}"}}
                for t in body_types
            }
        }
    return op


def _paths(info: ResourceInfo) -> Obj:
    base = _prefix(info)
    collection = (
        f"{base}/namespaces/{{namespace}}/{info.plural}"
        if info.namespaced
        else (f"{base}/{info.plural}")
    )
    item = f"{collection}/{{name}}"
    return {
        collection: {"post": _operation(info, "post", ("application/json",))},
        item: {
            "put": _operation(info, "put", ("application/json",)),
            "patch": _operation(info, "patch", _PATCH_TYPES),
        },
    }


def v3_document(registry: Registry, path: str) -> Obj | None:
    parts = path.strip("/").split("/")
    if parts[0] == "api" and len(parts) == 2:
        group, version = "", parts[1]
    elif parts[0] == "apis" and len(parts) == 3:
        group, version = parts[1], parts[2]
    else:
        return None
    infos = registry.resources(group, version)
    if not infos:
        return None
    schemas: Obj = {OBJECT_META: _OBJECT_META_SCHEMA}
    paths: Obj = {}
    for info in infos:
        # Every kind gets paths: kubectl looks there for `fieldValidation` support (without
        # it, kubectl validates client-side against /openapi/v2 in protobuf).
        paths.update(_paths(info))
        if info.custom:
            schemas[definition_name(info)] = _kind_schema(
                info, f"#/components/schemas/{OBJECT_META}"
            )
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def v3_index(registry: Registry) -> Obj:
    paths: Obj = {}
    for group in registry.groups():
        for version in registry.versions(group):
            key = f"apis/{group}/{version}" if group else f"api/{version}"
            doc = v3_document(registry, key)
            digest = hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:64]
            paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest.upper()}"}
    return {"paths": paths}


def v2_document(registry: Registry) -> Obj:
    definitions: Obj = {OBJECT_META: _OBJECT_META_SCHEMA}
    for info in registry.all():
        if info.custom:
            definitions[definition_name(info)] = _kind_schema(info, f"#/definitions/{OBJECT_META}")
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": {},
        "definitions": definitions,
    }
