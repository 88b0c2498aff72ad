"""The object store: objects indexed by (storage key, namespace, name), no history kept.

One global, monotonically increasing resourceVersion is stamped on every write, as etcd's
revision is in kube-apiserver. Listing one namespace of one resource visits only those objects;
`visits` counts every object handed out by iteration so tests can assert it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from .watch import ADDED, DEFAULT_RING_CAPACITY, DELETED, MODIFIED, Event, WatchHub

Obj = dict[str, Any]
ObjKey = tuple[str, str, str]  # (storage, namespace, name); namespace "" when cluster-scoped


def owner_uids(obj: Obj) -> set[str]:
    refs = obj.get("metadata", {}).get("ownerReferences") or []
    return {ref["uid"] for ref in refs if isinstance(ref, dict) and isinstance(ref.get("uid"), str)}


class Store:
    """In-memory objects, their watch hubs, and the indexes the API needs."""

    def __init__(self, ring_capacity: int = DEFAULT_RING_CAPACITY) -> None:
        self.rv = 0
        self.ring_capacity = ring_capacity
        # Watches may not resume from before this revision (e.g. before a restart).
        self.history_floor = 0
        self._data: dict[str, dict[str, dict[str, Obj]]] = {}
        self._hubs: dict[str, WatchHub] = {}
        # Objects per namespace across all resources (namespace deletion waits for zero).
        self.namespace_counts: Counter[str] = Counter()
        # Owner uid -> dependents, for garbage collection by ownerReferences.
        self._dependents: dict[str, set[ObjKey]] = {}
        self._uids: dict[str, ObjKey] = {}
        self.visits = 0

    # -- reads ---------------------------------------------------------------------------------

    def get(self, storage: str, namespace: str, name: str) -> Obj | None:
        return self._data.get(storage, {}).get(namespace, {}).get(name)

    def iter_objects(self, storage: str, namespace: str | None) -> Iterator[Obj]:
        """Objects of one resource, in one namespace or (None) in all of them."""
        by_ns = self._data.get(storage)
        if not by_ns:
            return
        if namespace is not None:
            for obj in list(by_ns.get(namespace, {}).values()):
                self.visits += 1
                yield obj
            return
        for objs in list(by_ns.values()):
            for obj in list(objs.values()):
                self.visits += 1
                yield obj

    def sorted_keys(self, storage: str, namespace: str | None) -> list[tuple[str, str]]:
        """(namespace, name) of every object, in list order, without visiting the objects."""
        by_ns = self._data.get(storage, {})
        if namespace is not None:
            return [(namespace, name) for name in sorted(by_ns.get(namespace, {}))]
        return sorted((ns, name) for ns, objs in by_ns.items() for name in objs)

    def count(self, storage: str, namespace: str | None = None) -> int:
        by_ns = self._data.get(storage, {})
        if namespace is not None:
            return len(by_ns.get(namespace, {}))
        return sum(len(objs) for objs in by_ns.values())

    def namespaces_of(self, storage: str) -> list[str]:
        """Namespaces holding objects of one resource."""
        return sorted(self._data.get(storage, {}))

    def has_uid(self, uid: str) -> bool:
        return uid in self._uids

    def storages(self) -> list[str]:
        return list(self._data)

    def dependents(self, owner_uid: str) -> list[ObjKey]:
        return sorted(self._dependents.get(owner_uid, ()))

    def hub(self, storage: str) -> WatchHub:
        hub = self._hubs.get(storage)
        if hub is None:
            hub = self._hubs[storage] = WatchHub(self.ring_capacity, floor=self.history_floor)
        return hub

    def start_history(self, storage: str) -> None:
        """A resource's watch history starts now, if it had none: kube-apiserver's watch cache
        for a custom resource starts when its CRD is established, and a watch from an earlier
        resourceVersion is too old."""
        if storage not in self._hubs:
            self.hub(storage).floor = max(self.history_floor, self.rv)

    def hubs(self) -> list[WatchHub]:
        return list(self._hubs.values())

    # -- writes --------------------------------------------------------------------------------

    def put(self, storage: str, obj: Obj, old: Obj | None) -> Obj:
        """Store a new object state (created if `old` is None), stamping a new resourceVersion.

        `obj` must be a fresh dict that nobody else holds: stored objects are never mutated.
        """
        meta = obj["metadata"]
        namespace = meta.get("namespace", "")
        name = meta["name"]
        self.rv += 1
        meta["resourceVersion"] = str(self.rv)
        objs = self._data.setdefault(storage, {}).setdefault(namespace, {})
        if old is None:
            self.namespace_counts[namespace] += 1
        objs[name] = obj
        self._reindex_owners((storage, namespace, name), old, obj)
        self.hub(storage).publish(
            Event(ADDED if old is None else MODIFIED, obj, old, self.rv, namespace)
        )
        return obj

    def remove(self, storage: str, final: Obj) -> Obj:
        """Remove an object; `final` (a fresh dict) is its last state, sent in the DELETED event."""
        meta = final["metadata"]
        namespace = meta.get("namespace", "")
        name = meta["name"]
        by_ns = self._data.get(storage, {})
        objs = by_ns.get(namespace, {})
        old = objs.pop(name)
        if not objs:
            by_ns.pop(namespace, None)
        self.namespace_counts[namespace] -= 1
        if self.namespace_counts[namespace] <= 0:
            del self.namespace_counts[namespace]
        self._reindex_owners((storage, namespace, name), old, None)
        self.rv += 1
        meta["resourceVersion"] = str(self.rv)
        self.hub(storage).publish(Event(DELETED, final, old, self.rv, namespace))
        return final

    def drop_storage(self, storage: str) -> None:
        """Forget an (empty) resource entirely, e.g. when its CRD goes."""
        self._data.pop(storage, None)
        hub = self._hubs.pop(storage, None)
        if hub is not None:
            for watcher in hub.watchers():
                watcher.close()

    def load(self, storage: str, obj: Obj) -> None:
        """Put a restored object back as it was, without an event or a new resourceVersion."""
        meta = obj["metadata"]
        namespace = meta.get("namespace", "")
        objs = self._data.setdefault(storage, {}).setdefault(namespace, {})
        if meta["name"] not in objs:
            self.namespace_counts[namespace] += 1
        objs[meta["name"]] = obj
        self._reindex_owners((storage, namespace, meta["name"]), None, obj)

    def _reindex_owners(self, key: ObjKey, old: Obj | None, new: Obj | None) -> None:
        if old is not None:
            self._uids.pop(old["metadata"].get("uid", ""), None)
        if new is not None and new["metadata"].get("uid"):
            self._uids[new["metadata"]["uid"]] = key
        before = owner_uids(old) if old is not None else set()
        after = owner_uids(new) if new is not None else set()
        for uid in before - after:
            deps = self._dependents.get(uid)
            if deps is not None:
                deps.discard(key)
                if not deps:
                    del self._dependents[uid]
        for uid in after - before:
            self._dependents.setdefault(uid, set()).add(key)

    def snapshot(self) -> list[tuple[str, Obj]]:
        return [
            (storage, obj)
            for storage, by_ns in self._data.items()
            for objs in by_ns.values()
            for obj in objs.values()
        ]
