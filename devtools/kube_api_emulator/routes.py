"""aiohttp routes of the emulated API server: REST paths to Cluster verbs, content negotiation
(JSON, YAML, Table, PartialObjectMetadata), chunked watch streams, and Status errors.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import yaml
from aiohttp import web

from . import discovery, openapi, protobuf, tables
from . import errors as fe
from .cluster import Cluster, ListResult
from .errors import ApiError
from .protobuf import ProtobufError
from .resources import ResourceInfo
from .streaming import (
    CLUSTER_KEY,
    ENCODED_KEY,
    SETTINGS_KEY,
    accept_mode,
    respond,
    serve_watch,
    truthy,
)
from .writes import APPLY_PATCH, PATCH_TYPES, STRATEGIC_PATCH

Obj = dict[str, Any]
PROTOBUF = "application/vnd.kubernetes.protobuf"
JSON = "application/json"
log = logging.getLogger(__name__)


def error_response(err: ApiError) -> web.Response:
    return respond(err.status(), err.code)


@web.middleware
async def status_errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Every error leaves as a Status object."""
    try:
        return await handler(request)
    except ApiError as err:
        return error_response(err)
    except web.HTTPException as exc:
        if exc.status >= 400:
            reason = {404: "NotFound", 405: "MethodNotAllowed"}.get(exc.status, exc.reason)
            message = (
                "the server could not find the requested resource"
                if exc.status == 404
                else exc.reason
            )
            return respond(ApiError(exc.status, reason, message).status(), exc.status)
        raise
    except Exception as exc:
        log.exception("internal error serving %s %s", request.method, request.path)
        return error_response(ApiError(500, "InternalError", f"Internal error occurred: {exc}"))


# -- request parsing -----------------------------------------------------------------------------


async def _body(request: web.Request) -> Any:
    raw = await request.read()
    if not raw:
        raise fe.bad_request("the request body is empty")
    ctype = request.content_type
    if ctype == PROTOBUF:
        try:
            return protobuf.decode(raw)
        except ProtobufError as exc:
            raise fe.unsupported_media_type(
                ctype, ["application/json", "application/yaml"]
            ) from exc
    if "protobuf" in ctype or "cbor" in ctype:
        raise fe.unsupported_media_type(ctype, ["application/json", "application/yaml"])
    try:
        if ctype in ("application/yaml", APPLY_PATCH) or ctype.endswith("+yaml"):
            return yaml.safe_load(raw)
        return json.loads(raw)
    except (ValueError, yaml.YAMLError) as exc:
        raise fe.bad_request(f"couldn't get version/kind; json parse error: {exc}") from exc


def _dry_run(request: web.Request) -> bool:
    values = request.query.getall("dryRun", [])
    for value in values:
        if value != "All":
            raise fe.bad_request(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    return bool(values)


_OPTIONS_KIND = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions"}


def _field_validation(request: web.Request) -> str:
    value = request.query.get("fieldValidation", "")
    if value not in ("", "Ignore", "Warn", "Strict"):
        raise fe.invalid_options(
            _OPTIONS_KIND.get(request.method, "CreateOptions"),
            [fe.not_supported("fieldValidation", value, ["", "Ignore", "Strict", "Warn"])],
        )
    return value


def _int_param(request: web.Request, name: str, default: int = 0) -> int:
    raw = request.query.get(name)
    if raw in (None, ""):
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise fe.bad_request(f"{name}: Invalid value: {raw!r}: must be an integer") from exc


class Target:
    """A parsed resource path: the resource, and the namespace/name/subresource if given."""

    def __init__(
        self, info: ResourceInfo, namespace: str | None, name: str, subresource: str
    ) -> None:
        self.info = info
        self.namespace = namespace
        self.name = name
        self.subresource = subresource


def _parse_target(cluster: Cluster, group: str, version: str, parts: list[str]) -> Target:
    if not parts or not cluster.registry.has_group_version(group, version):
        raise fe.path_not_found()
    namespace: str | None = None
    if parts[0] == "namespaces" and len(parts) >= 3:
        second = cluster.registry.get(group, version, parts[2])
        if group == "" and version == "v1" and (second is None or not second.namespaced):
            # /api/v1/namespaces/{name}/{status|finalize}
            parts = ["namespaces", parts[1], *parts[2:]]
        else:
            namespace = parts[1]
            parts = parts[2:]
    info = cluster.registry.get(group, version, parts[0])
    if info is None or len(parts) > 3:
        raise fe.path_not_found()
    name = parts[1] if len(parts) > 1 else ""
    subresource = parts[2] if len(parts) > 2 else ""
    if namespace is not None and not info.namespaced:
        raise fe.path_not_found()
    if subresource == "finalize" and info.plural == "namespaces":
        subresource = "status"
    return Target(info, namespace, name, subresource)


# -- handlers ------------------------------------------------------------------------------------


async def handle_version(request: web.Request) -> web.Response:
    return respond(discovery.version())


async def handle_health(request: web.Request) -> web.Response:
    return web.Response(text="ok")


async def handle_core(request: web.Request) -> web.Response:
    host = request.host or "127.0.0.1"
    return respond(discovery.core_versions(host))


async def handle_groups(request: web.Request) -> web.Response:
    return respond(discovery.group_list(request.app[CLUSTER_KEY].registry))


async def handle_openapi_v2(request: web.Request) -> web.Response:
    accept = request.headers.get("Accept", "")
    if "protobuf" in accept and "json" not in accept:
        raise fe.path_not_found()
    return respond(openapi.v2_document(request.app[CLUSTER_KEY].registry))


async def handle_openapi_v3(request: web.Request) -> web.Response:
    registry = request.app[CLUSTER_KEY].registry
    tail = request.match_info.get("tail", "")
    if not tail:
        return respond(openapi.v3_index(registry))
    doc = openapi.v3_document(registry, tail)
    if doc is None:
        raise fe.path_not_found()
    return respond(doc)


async def handle_api(request: web.Request) -> web.StreamResponse:
    """Everything under /api/v1 (the core group)."""
    tail = request.match_info["tail"].strip("/")
    parts = [p for p in tail.split("/") if p]
    if not parts:
        raise fe.path_not_found()
    version, rest = parts[0], parts[1:]
    if not rest:
        if request.method != "GET":
            raise fe.method_not_allowed()
        doc = discovery.resource_list(request.app[CLUSTER_KEY].registry, "", version)
        if doc is None:
            raise fe.path_not_found()
        return respond(doc)
    return await _resource(request, "", version, rest)


async def handle_apis(request: web.Request) -> web.StreamResponse:
    """Everything under /apis/<group>/<version>."""
    tail = request.match_info["tail"].strip("/")
    parts = [p for p in tail.split("/") if p]
    registry = request.app[CLUSTER_KEY].registry
    if len(parts) == 1:
        doc = discovery.group(registry, parts[0])
        if doc is None:
            raise fe.path_not_found()
        return respond(doc)
    if len(parts) == 2:
        if request.method != "GET":
            raise fe.method_not_allowed()
        doc = discovery.resource_list(registry, parts[0], parts[1])
        if doc is None:
            raise fe.path_not_found()
        return respond(doc)
    return await _resource(request, parts[0], parts[1], parts[2:])


async def _resource(
    request: web.Request, group: str, version: str, parts: list[str]
) -> web.StreamResponse:
    cluster = request.app[CLUSTER_KEY]
    target = _parse_target(cluster, group, version, parts)
    info = target.info
    method = request.method
    if info.namespaced and target.name and target.namespace is None:
        raise fe.path_not_found()
    if not target.name:
        if target.subresource:
            raise fe.path_not_found()
        if method == "GET":
            if truthy(request, "watch"):
                return await serve_watch(request, cluster, info, target.namespace)
            return _list(request, cluster, info, target.namespace)
        if method == "POST":
            result = cluster.create(
                info,
                target.namespace,
                await _body(request),
                dry_run=_dry_run(request),
                field_validation=_field_validation(request),
            )
            return respond(result.obj, 201, result.warnings)
        if method == "DELETE":
            return await _delete_collection(request, cluster, info, target.namespace)
        raise fe.method_not_allowed()
    if target.subresource and target.subresource not in info.subresources:
        if info.custom:
            raise fe.not_found(info.group, info.plural, target.name)
        raise fe.path_not_found()
    if method == "GET":
        obj = cluster.get(info, target.namespace, target.name)
        return _render_one(request, info, obj)
    if method == "PUT":
        result = cluster.update(
            info,
            target.namespace,
            target.name,
            await _body(request),
            subresource=target.subresource,
            dry_run=_dry_run(request),
            field_validation=_field_validation(request),
        )
        return respond(result.obj, 201 if result.created else 200, result.warnings)
    if method == "PATCH":
        ctype = request.content_type
        accepted = [t for t in PATCH_TYPES if not (info.custom and t == STRATEGIC_PATCH)]
        if ctype not in accepted:
            raise fe.unsupported_media_type(ctype, accepted)
        if ctype == APPLY_PATCH and not request.query.get("fieldManager"):
            raise fe.invalid_options(
                "PatchOptions", [fe.required("fieldManager", "is required for apply patch")]
            )
        result = cluster.patch(
            info,
            target.namespace,
            target.name,
            ctype,
            await _body(request),
            subresource=target.subresource,
            dry_run=_dry_run(request),
            field_validation=_field_validation(request),
        )
        return respond(result.obj, 201 if result.created else 200, result.warnings)
    if method == "DELETE":
        if target.subresource:
            raise fe.method_not_allowed()
        options = await _delete_options(request)
        result = cluster.delete(
            info, target.namespace, target.name, options, dry_run=_dry_run(request)
        )
        if result.finished and info.custom:
            # A custom resource's store answers a finished deletion with a Status, not the object.
            details = {"name": target.name, "group": info.group, "kind": info.plural,
                       "uid": result.obj["metadata"]["uid"]}  # fmt: skip
            status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                      "details": details}  # fmt: skip
            return respond(status, 200)
        # 202 only while a foreground deletion waits for dependents (rest/delete.go).
        foreground = options.get("propagationPolicy") == "Foreground" or (
            options.get("orphanDependents") is False
        )
        return respond(result.obj, 202 if foreground and not result.finished else 200)
    raise fe.method_not_allowed()


async def _delete_options(request: web.Request) -> Obj:
    options: Obj = {}
    if request.can_read_body:
        raw = await request.read()
        if raw.strip():
            try:
                if request.content_type == PROTOBUF:
                    parsed: Any = protobuf.decode(raw)
                else:
                    parsed = json.loads(raw)
            except (ValueError, ProtobufError) as exc:
                raise fe.bad_request(f"invalid DeleteOptions: {exc}") from exc
            if isinstance(parsed, dict):
                options = parsed
    if "propagationPolicy" in request.query:
        options["propagationPolicy"] = request.query["propagationPolicy"]
    policy = options.get("propagationPolicy")
    if policy is not None and policy not in ("Foreground", "Background", "Orphan"):
        supported = ["Foreground", "Background", "Orphan", "nil"]
        raise fe.invalid_options(
            "DeleteOptions", [fe.not_supported("propagationPolicy", policy, supported)]
        )
    return options


def _render_one(request: web.Request, info: ResourceInfo, obj: Obj) -> web.Response:
    mode = accept_mode(request)
    if mode == "table":
        rv = obj["metadata"].get("resourceVersion", "")
        include = request.query.get("includeObject", "Metadata")
        return respond(tables.to_table(info, [obj], resource_version=rv, include_object=include))
    if mode == "metadata":
        return respond(tables.partial(obj))
    return respond(obj)


def _list(
    request: web.Request, cluster: Cluster, info: ResourceInfo, namespace: str | None
) -> web.Response:
    result: ListResult = cluster.list_objects(
        info,
        namespace,
        label_selector=request.query.get("labelSelector", ""),
        field_selector=request.query.get("fieldSelector", ""),
        limit=_int_param(request, "limit"),
        continue_token=request.query.get("continue", ""),
    )
    mode = accept_mode(request)
    if mode == "table":
        return respond(
            tables.to_table(
                info,
                result.items,
                resource_version=result.resource_version,
                include_object=request.query.get("includeObject", "Metadata"),
                continue_token=result.continue_token,
            )
        )
    meta: Obj = {"resourceVersion": result.resource_version}
    if result.continue_token or (info.custom and mode != "metadata"):
        # A custom resource's list (unstructured) keeps an empty continue.
        meta["continue"] = result.continue_token
    if result.remaining is not None:
        meta["remainingItemCount"] = result.remaining
    if mode == "metadata":
        alternatives = request.headers.get("Accept", "").split(",")
        if info.custom and not any(
            "as=PartialObjectMetadataList" in a or "as=" not in a for a in alternatives
        ):
            raise ApiError(
                406,
                "NotAcceptable",
                "you requested PartialObjectMetadata, but the requested object is a list "
                "(*unstructured.UnstructuredList)",
            )
        return respond(
            {
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
                # A Go slice left nil: an empty list's items are null.
                "items": [tables.partial(o) for o in result.items] or None,
            }
        )
    return respond(
        {
            "kind": info.list_kind_name,
            "apiVersion": info.api_version,
            "metadata": meta,
            "items": result.items,
        }
    )


async def _delete_collection(
    request: web.Request, cluster: Cluster, info: ResourceInfo, namespace: str | None
) -> web.Response:
    options = await _delete_options(request)
    deleted = cluster.delete_collection(
        info,
        namespace,
        label_selector=request.query.get("labelSelector", ""),
        field_selector=request.query.get("fieldSelector", ""),
        options=options,
        dry_run=_dry_run(request),
    )
    return respond(
        {
            "kind": info.list_kind_name,
            "apiVersion": info.api_version,
            "metadata": {"continue": "", "resourceVersion": str(cluster.store.rv)}
            if info.custom
            else {"resourceVersion": str(cluster.store.rv)},
            "items": deleted,
        }
    )


def build_app(cluster: Cluster, *, bookmark_interval: float = 60.0) -> web.Application:
    app = web.Application(middlewares=[status_errors], client_max_size=16 * 1024 * 1024)
    app[CLUSTER_KEY] = cluster
    app[SETTINGS_KEY] = {"bookmark_interval": bookmark_interval}
    app[ENCODED_KEY] = OrderedDict()
    app.router.add_get("/version", handle_version)
    for path in ("/healthz", "/livez", "/readyz"):
        app.router.add_get(path, handle_health)
    app.router.add_get("/api", handle_core)
    app.router.add_get("/apis", handle_groups)
    app.router.add_get("/openapi/v2", handle_openapi_v2)
    app.router.add_get("/openapi/v3", handle_openapi_v3)
    app.router.add_get("/openapi/v3/{tail:.+}", handle_openapi_v3)
    app.router.add_route("*", "/api/{tail:.+}", handle_api)
    app.router.add_route("*", "/apis/{tail:.+}", handle_apis)

    async def close_watches(app: web.Application) -> None:
        for hub in cluster.store.hubs():
            for watcher in hub.watchers():
                watcher.close()

    app.on_shutdown.append(close_watches)
    return app
