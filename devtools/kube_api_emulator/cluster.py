"""The emulated API server's verbs, complete: deletion on top of the read and write verbs.

Deletion follows kube-apiserver's object lifecycle: finalizers keep an object (with a
deletionTimestamp) until they are gone; a namespace or a CRD terminates by deleting its content
first; dependents are garbage-collected by ownerReferences (background or orphan; without a
policy, each resource's default: orphan for batch/v1 Jobs, as kube-apiserver keeps it for them).
"""

from __future__ import annotations

from typing import Any

from . import builtins, crds
from . import errors as fe
from .errors import ApiError
from .patch import deep_copy
from .reads import CRDS, NAMESPACES, ListResult, Obj, Result, now
from .resources import ResourceInfo
from .watch import DEFAULT_RING_CAPACITY
from .writes import ClusterWrites

__all__ = ["Cluster", "ListResult", "Result"]

BACKGROUND: Obj = {"propagationPolicy": "Background"}


def _propagation(info: ResourceInfo, options: Obj) -> str:
    """The delete's propagation policy: the one asked for (propagationPolicy, or the older
    orphanDependents), else the resource's default (builtins.default_propagation)."""
    policy = options.get("propagationPolicy")
    if policy:
        return str(policy)
    orphan = options.get("orphanDependents")
    if isinstance(orphan, bool):
        return "Orphan" if orphan else "Background"
    return builtins.default_propagation(info)


class Cluster(ClusterWrites):
    """Every verb of the emulated API server over one in-memory store."""

    def __init__(self, *, ring_capacity: int = DEFAULT_RING_CAPACITY, bootstrap: bool = True):
        super().__init__(ring_capacity=ring_capacity)
        if bootstrap:
            ns_info = self.info("", "v1", "namespaces")
            for name in builtins.INITIAL_NAMESPACES:
                self.create(ns_info, None, builtins.initial_namespace(name))

    # -- delete --------------------------------------------------------------------------------

    def delete(
        self,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        options: Obj | None = None,
        *,
        dry_run: bool = False,
    ) -> Result:
        options = options or {}
        old = self.store.get(info.storage, namespace or "", name)
        if old is None:
            raise fe.not_found(info.group, info.plural, name)
        pre = options.get("preconditions") or {}
        meta = old["metadata"]
        # rest.BeforeDelete's words, naming the kind where other conflicts name the resource.
        if pre.get("uid") and pre["uid"] != meta["uid"]:
            raise fe.conflict(
                info.group,
                info.kind,
                name,
                f"the UID in the precondition ({pre['uid']}) does not match the UID in record "
                f"({meta['uid']}). The object might have been deleted and then recreated",
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != meta["resourceVersion"]:
            raise fe.conflict(
                info.group,
                info.kind,
                name,
                f"the ResourceVersion in the precondition ({pre['resourceVersion']}) does not "
                f"match the ResourceVersion in record ({meta['resourceVersion']}). The object "
                "might have been modified",
            )
        policy = _propagation(info, options)
        dry_run = dry_run or "All" in (options.get("dryRun") or [])
        if dry_run:
            return Result(self.render(info, old), finished=not meta.get("finalizers"))
        if meta.get("deletionTimestamp"):
            return Result(self.render(info, old), finished=False)
        if info.storage == NAMESPACES:
            return self._terminate_namespace(info, old)
        if info.storage == CRDS:
            return self._terminate_crd(info, old)
        if meta.get("finalizers"):
            new = deep_copy(old)
            new["metadata"]["deletionTimestamp"] = now()
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            if info.tracks_generation:
                new["metadata"]["generation"] = int(meta.get("generation") or 0) + 1
            if policy == "Orphan":
                self._orphan_dependents(meta["uid"])
            stored = self.store.put(info.storage, new, old)
            return Result(self.render(info, stored), finished=False)
        final = self.store.remove(info.storage, deep_copy(old))
        self._after_removal(info, final, policy)
        return Result(self.render(info, final))

    def delete_collection(
        self,
        info: ResourceInfo,
        namespace: str | None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        options: Obj | None = None,
        dry_run: bool = False,
    ) -> list[Obj]:
        listed = self.list_objects(
            info, namespace, label_selector=label_selector, field_selector=field_selector
        )
        deleted = []
        for obj in listed.items:
            meta = obj["metadata"]
            try:
                result = self.delete(
                    info, meta.get("namespace"), meta["name"], options, dry_run=dry_run
                )
            except ApiError as exc:
                if exc.code == 404:
                    continue
                raise
            deleted.append(result.obj)
        return deleted

    def _terminate_namespace(self, info: ResourceInfo, old: Obj) -> Result:
        name = old["metadata"]["name"]
        new = deep_copy(old)
        new["metadata"]["deletionTimestamp"] = now()
        new["metadata"]["deletionGracePeriodSeconds"] = 0
        new["status"] = {"phase": "Terminating"}
        current = self.store.put(info.storage, new, old)
        for storage in self.store.storages():
            owner = self.storage_info(storage)
            if owner is None or not owner.namespaced:
                continue
            for obj in list(self.store.iter_objects(storage, name)):
                if not obj["metadata"].get("deletionTimestamp"):
                    # The namespace controller deletes the content in the background.
                    self.delete(owner, name, obj["metadata"]["name"], BACKGROUND)
        released = self._maybe_release_namespace(name)
        if released is not None:
            return Result(self.render(info, released))
        return Result(self.render(info, current), finished=False)

    def _maybe_release_namespace(self, name: str) -> Obj | None:
        ns_obj = self.store.get(NAMESPACES, "", name)
        if ns_obj is None or not ns_obj["metadata"].get("deletionTimestamp"):
            return None
        info = self.info("", "v1", "namespaces")
        if not self._releasable(info, ns_obj):
            return None
        final = deep_copy(ns_obj)
        final["spec"] = {}
        return self.store.remove(NAMESPACES, final)

    def _terminate_crd(self, info: ResourceInfo, old: Obj) -> Result:
        new = deep_copy(old)
        new["metadata"]["deletionTimestamp"] = now()
        new["metadata"]["deletionGracePeriodSeconds"] = 0
        new["metadata"]["generation"] = int(old["metadata"].get("generation") or 0) + 1
        status = new.setdefault("status", {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "Terminating"]
        conditions.append(
            {
                "type": "Terminating",
                "status": "True",
                "lastTransitionTime": now(),
                "reason": "InstanceDeletionInProgress",
                "message": "CustomResource deletion is in progress",
            }
        )
        status["conditions"] = conditions
        current = self.store.put(info.storage, new, old)
        crd_name = old["metadata"]["name"]
        resources = self.registry.crd_resources(crd_name)
        if resources:
            served = resources[0]
            for obj in list(self.store.iter_objects(served.storage, None)):
                if not obj["metadata"].get("deletionTimestamp"):
                    self.delete(served, obj["metadata"].get("namespace"), obj["metadata"]["name"])
        released = self._maybe_release_crd(crd_name)
        if released is not None:
            return Result(self.render(info, released))
        return Result(self.render(info, current), finished=False)

    def _maybe_release_crd(self, crd_name: str) -> Obj | None:
        crd = self.store.get(CRDS, "", crd_name)
        if crd is None or not crd["metadata"].get("deletionTimestamp"):
            return None
        resources = self.registry.crd_resources(crd_name)
        storage = resources[0].storage if resources else ""
        if storage and self.store.count(storage):
            return None
        finalizers = [
            f for f in crd["metadata"].get("finalizers") or [] if f != crds.CLEANUP_FINALIZER
        ]
        new = deep_copy(crd)
        if finalizers:
            new["metadata"]["finalizers"] = finalizers
            self.store.put(CRDS, new, crd)
            return None
        new["metadata"].pop("finalizers", None)
        final = self.store.remove(CRDS, new)
        self._unregister_crd(crd_name, storage)
        return final

    def _unregister_crd(self, crd_name: str, storage: str) -> None:
        self.registry.remove_crd(crd_name)
        if storage:
            self.store.drop_storage(storage)

    def _after_removal(self, info: ResourceInfo, final: Obj, policy: str = "Background") -> None:
        """Cascade: garbage-collect dependents, and release a terminating namespace or CRD."""
        meta = final["metadata"]
        if policy == "Orphan":
            self._orphan_dependents(meta["uid"])
        else:
            self._collect_dependents(meta["uid"])
        namespace = meta.get("namespace")
        if namespace:
            self._maybe_release_namespace(namespace)
        if info.owner_crd:
            self._maybe_release_crd(info.owner_crd)
        if info.storage == CRDS:
            storage = f"{final['spec']['group']}/{final['spec']['names']['plural']}"
            self._unregister_crd(meta["name"], storage)

    def _dependents(self, uid: str) -> list[tuple[ResourceInfo, Obj]]:
        found = []
        for storage, namespace, name in self.store.dependents(uid):
            owner = self.storage_info(storage)
            obj = self.store.get(storage, namespace, name)
            if owner is not None and obj is not None:
                found.append((owner, obj))
        return found

    def _orphan_dependents(self, uid: str) -> None:
        for owner, obj in self._dependents(uid):
            new = deep_copy(obj)
            refs = [r for r in new["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
            if refs:
                new["metadata"]["ownerReferences"] = refs
            else:
                new["metadata"].pop("ownerReferences", None)
            self.store.put(owner.storage, new, obj)

    def _collect_dependents(self, uid: str) -> None:
        for owner, obj in self._dependents(uid):
            current = self.store.get(
                owner.storage, obj["metadata"].get("namespace", ""), obj["metadata"]["name"]
            )
            if current is None or current["metadata"].get("deletionTimestamp"):
                continue
            others = [
                r
                for r in current["metadata"].get("ownerReferences") or []
                if r.get("uid") != uid and self._uid_exists(r.get("uid"))
            ]
            if others:
                self._orphan_dependents_one(owner, current, uid)
                continue
            try:
                # The garbage collector deletes a dependent in the background, whatever the
                # dependent's own default (a Job's pods go with it).
                self.delete(
                    owner,
                    current["metadata"].get("namespace"),
                    current["metadata"]["name"],
                    BACKGROUND,
                )
            except ApiError:
                continue

    def _orphan_dependents_one(self, owner: ResourceInfo, obj: Obj, uid: str) -> None:
        new = deep_copy(obj)
        new["metadata"]["ownerReferences"] = [
            r for r in new["metadata"].get("ownerReferences") or [] if r.get("uid") != uid
        ]
        self.store.put(owner.storage, new, obj)

    def _uid_exists(self, uid: Any) -> bool:
        return isinstance(uid, str) and self.store.has_uid(uid)

    # -- persistence ---------------------------------------------------------------------------

    def restore(self, resource_version: int, objects: list[tuple[str, Obj]]) -> None:
        """Load a snapshot into an empty cluster: CRDs first, so their resources exist."""
        for storage, obj in objects:
            if storage == CRDS:
                self.store.load(storage, obj)
                self._register_crd(obj)
        for storage, obj in objects:
            if storage != CRDS:
                self.store.load(storage, obj)
        self.store.rv = max(self.store.rv, resource_version)
        self.store.history_floor = self.store.rv
        # No history survives: the hubs the CRDs' registration started begin now too.
        for hub in self.store.hubs():
            hub.floor = max(hub.floor, self.store.history_floor)
