"""HTTP plumbing shared by the routes, and the watch stream: chunked JSON lines of ADDED,
MODIFIED, DELETED and BOOKMARK events, ended by `timeoutSeconds`, a 410 answered in-stream as
an ERROR event (as kube-apiserver does), or server shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections import OrderedDict
from typing import Any

from aiohttp import web

from . import tables
from .cluster import Cluster
from .errors import ApiError
from .resources import ResourceInfo

Obj = dict[str, Any]

CLUSTER_KEY: web.AppKey[Cluster] = web.AppKey("cluster", Cluster)
SETTINGS_KEY: web.AppKey[dict[str, float]] = web.AppKey("settings", dict)
# Watch event lines as JSON, by (type, storage, apiVersion, resourceVersion): encoded once for
# every watcher that receives them (a resourceVersion names one state of one object).
Encoded = OrderedDict[tuple[str, str, str, str], bytes]
ENCODED_KEY: web.AppKey[Encoded] = web.AppKey("encoded", OrderedDict)
ENCODED_LIMIT = 4096

# kube-apiserver ends a watch that asked for no timeout after a random 30-60 minutes.
_MIN_WATCH_TIMEOUT = 1800.0


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def respond(obj: Any, status: int = 200, warnings: list[str] | None = None) -> web.Response:
    resp = web.Response(body=dumps(obj), status=status, content_type="application/json")
    for warning in warnings or []:
        # The text is quoted like Go's strconv.Quote (embedded quotes escaped).
        resp.headers.add("Warning", f"299 - {json.dumps(warning)}")
    return resp


def accept_mode(request: web.Request) -> str:
    accept = request.headers.get("Accept", "")
    if "as=Table" in accept:
        return "table"
    if "as=PartialObjectMetadata" in accept:
        return "metadata"
    return "json"


def truthy(request: web.Request, name: str) -> bool:
    return request.query.get(name, "").lower() in ("true", "1")


def _timeout(request: web.Request) -> float:
    raw = request.query.get("timeoutSeconds", "")
    try:
        seconds = float(int(raw)) if raw else 0.0
    except ValueError as exc:
        raise ApiError(400, "BadRequest", f"timeoutSeconds: Invalid value: {raw!r}") from exc
    # kube-apiserver ends a watch that asked for no timeout after a random 30-60 minutes.
    return seconds if seconds > 0 else _MIN_WATCH_TIMEOUT * (1 + random.random())


async def serve_watch(
    request: web.Request, cluster: Cluster, info: ResourceInfo, namespace: str | None
) -> web.StreamResponse:
    settings = request.app[SETTINGS_KEY]
    bookmarks = truthy(request, "allowWatchBookmarks")
    timeout = _timeout(request)
    mode = accept_mode(request)
    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    response.enable_chunked_encoding()
    try:
        watcher = cluster.open_watch(
            info,
            namespace,
            label_selector=request.query.get("labelSelector", ""),
            field_selector=request.query.get("fieldSelector", ""),
            resource_version=request.query.get("resourceVersion", ""),
            send_initial_events=truthy(request, "sendInitialEvents"),
            bookmarks=bookmarks,
        )
    except ApiError as err:
        if err.code != 410:
            raise
        # kube-apiserver answers a too-old resourceVersion inside the stream, as an ERROR event.
        await response.prepare(request)
        await response.write(dumps({"type": "ERROR", "object": err.status()}) + b"\n")
        await response.write_eof()
        return response
    await response.prepare(request)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    interval = settings.get("bookmark_interval", 60.0)
    first_table = True
    encoded = request.app.get(ENCODED_KEY)

    def line(kind: str, obj: Obj) -> bytes:
        nonlocal first_table
        shown: Any = obj
        if kind in ("ADDED", "MODIFIED", "DELETED"):
            if mode == "table":
                shown = tables.to_table(
                    info,
                    [obj],
                    resource_version=obj["metadata"].get("resourceVersion", ""),
                    include_object=request.query.get("includeObject", "Metadata"),
                    with_columns=first_table,
                )
                first_table = False
            elif mode == "metadata":
                shown = tables.partial(obj)
            elif encoded is not None:
                rv = str(obj["metadata"].get("resourceVersion", ""))
                key = (kind, info.storage, info.api_version, rv)
                text = encoded.get(key)
                if text is None:
                    text = dumps({"type": kind, "object": cluster.render(info, obj)}) + b"\n"
                    encoded[key] = text
                    if len(encoded) > ENCODED_LIMIT:
                        encoded.popitem(last=False)
                return text
            else:
                shown = cluster.render(info, obj)
        return dumps({"type": kind, "object": shown}) + b"\n"

    try:
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            wait = min(remaining, interval) if bookmarks else remaining
            try:
                item = await asyncio.wait_for(watcher.queue.get(), wait)
            except TimeoutError:
                if bookmarks and loop.time() < deadline:
                    await response.write(line("BOOKMARK", cluster.bookmark(info)))
                continue
            if item is None:
                break
            chunk = [line(*item)]
            closed = False
            while not watcher.queue.empty() and len(chunk) < 500:
                more = watcher.queue.get_nowait()
                if more is None:
                    closed = True
                    break
                chunk.append(line(*more))
            await response.write(b"".join(chunk))
            if closed:
                break
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        cluster.close_watch(info, watcher)
    with contextlib.suppress(ConnectionResetError):
        await response.write_eof()
    return response
