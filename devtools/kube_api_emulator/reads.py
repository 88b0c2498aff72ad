"""The emulated API server's state and its read verbs: resource lookups, get, list (selectors,
pagination) and watch setup; the base of the write and delete verbs.

Objects are stored once per resource, at the storage version, and served at the requested one
(conversion strategy None, as for CRDs without a webhook).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any

from . import builtins
from . import errors as fe
from .resources import Registry, ResourceInfo
from .selectors import (
    FieldRequirement,
    Requirement,
    check_field_paths,
    exact_name,
    exact_namespace,
    fields_match,
    labels_match,
    parse_field_selector,
    parse_label_selector,
)
from .store import Store
from .watch import DEFAULT_RING_CAPACITY, Watcher

Obj = dict[str, Any]

NAMESPACES = "/namespaces"
CRDS = "apiextensions.k8s.io/customresourcedefinitions"


def now() -> str:
    # time.gmtime() alone reads C's time(), a coarse clock that can lag time.time() by a tick:
    # a client that saw the second change could still be stamped with the previous one.
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time()))


@dataclass
class Result:
    """An object as the verb returns it, with the warnings to send in `Warning` headers."""

    obj: Obj
    warnings: list[str] = field(default_factory=list)
    created: bool = False
    # False when a delete only set deletionTimestamp (answered 202 Accepted).
    finished: bool = True


@dataclass(frozen=True)
class ListResult:
    items: list[Obj]
    resource_version: str
    continue_token: str = ""
    remaining: int | None = None


def ensure_metadata(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    obj["metadata"] = meta
    return meta


class ClusterState:
    """The registry of resources, the object store, and the read verbs over them."""

    def __init__(self, *, ring_capacity: int = DEFAULT_RING_CAPACITY) -> None:
        self.registry = Registry()
        self.registry.add(builtins.BUILTIN_RESOURCES)
        self.store = Store(ring_capacity)
        self.ips = builtins.ClusterIPs()
        self._rng = random.Random()

    # -- lookups -------------------------------------------------------------------------------

    def info(self, group: str, version: str, plural: str) -> ResourceInfo:
        found = self.registry.get(group, version, plural)
        if found is None:
            raise fe.path_not_found()
        return found

    def storage_info(self, storage: str) -> ResourceInfo | None:
        group, plural = storage.split("/", 1)
        return self.registry.preferred(group, plural)

    def render(self, info: ResourceInfo, obj: Obj) -> Obj:
        """The object as served at the requested version (stored once, at the storage one)."""
        if obj.get("apiVersion") == info.api_version:
            return obj
        return {**obj, "apiVersion": info.api_version}

    def get(self, info: ResourceInfo, namespace: str | None, name: str) -> Obj:
        obj = self.store.get(info.storage, namespace or "", name)
        if obj is None:
            raise fe.not_found(info.group, info.plural, name)
        return self.render(info, obj)

    # -- list and watch ------------------------------------------------------------------------

    def _filters(
        self, info: ResourceInfo, label_selector: str, field_selector: str
    ) -> tuple[list[Requirement], list[FieldRequirement]]:
        reqs = parse_label_selector(label_selector)
        freqs = parse_field_selector(field_selector)

        def allowed(path: str) -> bool:
            if path in ("metadata.name", "metadata.namespace"):
                return True
            return not info.custom or path in info.selectable_fields

        check_field_paths(freqs, allowed)
        return reqs, freqs

    def list_objects(
        self,
        info: ResourceInfo,
        namespace: str | None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str = "",
    ) -> ListResult:
        reqs, freqs = self._filters(info, label_selector, field_selector)
        if namespace is None and info.namespaced:
            namespace = exact_namespace(freqs)
        if not info.namespaced:
            namespace = None

        def keep(obj: Obj) -> bool:
            return (not reqs or labels_match(reqs, obj)) and (not freqs or fields_match(freqs, obj))

        rv = str(self.store.rv)
        name = exact_name(freqs)
        if name is not None:
            # metadata.name=X (kubectl wait/delete): direct lookups, no scan.
            if namespace is not None or not info.namespaced:
                namespaces = [namespace or ""]
            else:
                namespaces = self.store.namespaces_of(info.storage)
            found = []
            for ns in namespaces:
                obj = self.store.get(info.storage, ns, name)
                if obj is not None:
                    self.store.visits += 1
                    if keep(obj):
                        found.append(self.render(info, obj))
            return ListResult(found, rv)
        if limit <= 0 and not continue_token:
            items = [
                self.render(info, o)
                for o in self.store.iter_objects(info.storage, namespace)
                if keep(o)
            ]
            items.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
            return ListResult(items, rv)
        start: tuple[str, str] | None = None
        if continue_token:
            start = _decode_continue(continue_token)
        keys = self.store.sorted_keys(info.storage, namespace)
        begin = 0
        if start is not None:
            begin = bisect.bisect_right(keys, start)
        items = []
        position = begin
        while position < len(keys) and (limit <= 0 or len(items) < limit):
            ns, nm = keys[position]
            position += 1
            obj = self.store.get(info.storage, ns, nm)
            if obj is None:
                continue
            self.store.visits += 1
            if keep(obj):
                items.append(self.render(info, obj))
        token = ""
        remaining: int | None = None
        if position < len(keys):
            token = _encode_continue(rv, keys[position - 1])
            if not reqs and not freqs:
                remaining = len(keys) - position
        return ListResult(items, rv, token, remaining)

    def open_watch(
        self,
        info: ResourceInfo,
        namespace: str | None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        resource_version: str = "",
        send_initial_events: bool = False,
        bookmarks: bool = False,
    ) -> Watcher:
        """Subscribe a watcher and queue what it must see first (initial state or replay)."""
        reqs, freqs = self._filters(info, label_selector, field_selector)
        if not info.namespaced:
            namespace = None
        elif namespace is None:
            namespace = exact_namespace(freqs)

        def matches(obj: Obj) -> bool:
            return (not reqs or labels_match(reqs, obj)) and (not freqs or fields_match(freqs, obj))

        watcher = Watcher(namespace, matches if reqs or freqs else None)
        hub = self.store.hub(info.storage)
        if send_initial_events or resource_version in ("", "0"):
            snapshot = self.list_objects(
                info, namespace, label_selector=label_selector, field_selector=field_selector
            )
            for obj in snapshot.items:
                watcher.queue.put_nowait(("ADDED", obj))
            if send_initial_events and bookmarks:
                watcher.queue.put_nowait(
                    (
                        "BOOKMARK",
                        self.bookmark(info, {"k8s.io/initial-events-end": "true"}),
                    )
                )
        else:
            try:
                since = int(resource_version)
            except ValueError as exc:
                # An internal error, with Go's words, and no reason.
                raise fe.ApiError(
                    500,
                    "",
                    f'resourceVersion: Invalid value: "{resource_version}": strconv.ParseUint: '
                    f'parsing "{resource_version}": invalid syntax',
                ) from exc
            for event in hub.events_after(since):
                if namespace is None or event.namespace == namespace:
                    watcher.offer(event)
        hub.subscribe(watcher)
        return watcher

    def close_watch(self, info: ResourceInfo, watcher: Watcher) -> None:
        self.store.hub(info.storage).unsubscribe(watcher)

    def bookmark(self, info: ResourceInfo, annotations: dict[str, str] | None = None) -> Obj:
        meta: Obj = {"resourceVersion": str(self.store.rv)}
        if annotations:
            meta["annotations"] = annotations
        return {"kind": info.kind, "apiVersion": info.api_version, "metadata": meta}


def _encode_continue(rv: str, last: tuple[str, str]) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": int(rv), "start": list(last)})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        ns, name = data["start"]
        return (str(ns), str(name))
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise fe.bad_request(f"continue key is not valid: {exc}") from exc
