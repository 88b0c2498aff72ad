"""Write verbs: create, update (PUT) and the four patch formats, with kube-apiserver's rules for
resourceVersion preconditions, generation, the status subresource, finalizers being added to
an object under deletion, CRD registration, and structural schemas with CEL rules.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from . import builtins, crds, schema
from . import cel as celrules
from . import errors as fe
from .errors import ApiError
from .patch import (
    PatchError,
    apply_merge,
    deep_copy,
    json_patch,
    merge_patch,
    strategic_merge_patch,
)
from .reads import CRDS, NAMESPACES, ClusterState, Obj, Result, ensure_metadata, now
from .resources import ResourceInfo

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH)

# Fields only the server sets; a client's values are dropped on create.
_SERVER_META = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "selfLink",
    "managedFields",
)
# Fields an update cannot change; the old object's values are kept.
_KEPT_META = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "namespace",
)
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"


# Schema errors after which CEL rules are not evaluated, and what is said instead.
_BLOCKING = frozenset({fe.NOT_SUPPORTED, fe.REQUIRED, fe.TOO_LONG, fe.TOO_MANY, fe.TYPE_INVALID})
_RULES_NOT_CHECKED = (
    "some validation rules were not checked because the object was invalid; correct the "
    "existing errors to complete validation"
)


class ClusterWrites(ClusterState):
    """The write verbs, on top of the state and read verbs."""

    # -- create --------------------------------------------------------------------------------

    def create(
        self,
        info: ResourceInfo,
        namespace: str | None,
        body: Any,
        *,
        dry_run: bool = False,
        field_validation: str = "",
    ) -> Result:
        if not isinstance(body, dict):
            raise fe.unrecognized(info.kind, body)
        obj = deep_copy(body)
        self._check_type(info, obj)
        meta = ensure_metadata(obj)
        if info.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and namespace and body_ns != namespace:
                raise fe.bad_request(
                    "the namespace of the provided object does not match the namespace sent "
                    "on the request"
                )
            namespace = namespace or body_ns
            if not namespace:
                raise fe.bad_request("the namespace of the object is required")
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
            namespace = ""
        name = meta.get("name") or ""
        if not name and meta.get("generateName"):
            name = self._generate_name(info, namespace, str(meta["generateName"]))
            meta["name"] = name
        if not name:
            errs = [fe.required("metadata.name", "name or generateName is required")]
            if info.custom and celrules.has_rules(info.schema or {}):
                # A required-field error blocks the CEL rules, which say so.
                errs.append(fe.invalid("<nil>", None, _RULES_NOT_CHECKED))
            raise fe.invalid_object(info.group, info.kind, "", errs)
        if info.namespaced:
            self._check_namespace_open(info, namespace, name)
        if info.custom:
            self._check_crd_open(info)
        name_errs = builtins.name_errors(info, name)
        if name_errs:
            raise fe.invalid_object(info.group, info.kind, name, name_errs)
        # A custom resource is validated before the store finds its name taken (BeforeCreate,
        # then the storage's create); a built-in's allocations wait until the name is free.
        exists = self.store.get(info.storage, namespace, name) is not None
        if exists and not info.custom:
            raise fe.already_exists(info.group, info.plural, name)
        for key in _SERVER_META:
            meta.pop(key, None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now()
        if info.tracks_generation:
            meta["generation"] = 1
        if info.has_status:
            obj.pop("status", None)
        obj["apiVersion"] = info.storage_api_version
        warnings: list[str] = []
        if info.custom:
            obj, warnings = self._admit_custom(info, obj, None, field_validation)
            if exists:
                raise fe.already_exists(info.group, info.plural, name)
        else:
            builtins.prepare_builtin(info, obj, None, self.ips)
            if info.storage == CRDS:
                self._admit_crd(obj, None)
        if dry_run:
            return Result(self.render(info, obj), warnings, created=True)
        stored = self.store.put(info.storage, obj, None)
        if info.storage == CRDS:
            self._register_crd(stored)
        return Result(self.render(info, stored), warnings, created=True)

    def _check_type(self, info: ResourceInfo, obj: Obj) -> None:
        api_version = obj.get("apiVersion")
        if api_version and api_version != info.api_version:
            raise fe.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API "
                f"version ({info.api_version})"
            )
        kind = obj.get("kind")
        if kind and kind != info.kind and info.custom:
            # A custom resource of another kind decodes, then fails validation (named as its
            # own kind).
            name = str((obj.get("metadata") or {}).get("name") or "")
            raise fe.invalid_object(
                info.group, str(kind), name, [fe.invalid("kind", kind, f"must be {info.kind}")]
            )
        if kind and kind != info.kind:
            raise fe.bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({info.kind})"
            )
        obj["apiVersion"] = info.api_version
        obj["kind"] = info.kind

    def _generate_name(self, info: ResourceInfo, namespace: str, prefix: str) -> str:
        base = prefix[: 63 - 5]
        for _ in range(100):
            name = base + "".join(self._rng.choice(_NAME_CHARS) for _ in range(5))
            if self.store.get(info.storage, namespace, name) is None:
                return name
        raise ApiError(500, "InternalError", "could not generate a unique name")

    def _check_namespace_open(self, info: ResourceInfo, namespace: str, name: str) -> None:
        ns_obj = self.store.get(NAMESPACES, "", namespace)
        if ns_obj is None:
            raise fe.not_found("", "namespaces", namespace)
        if ns_obj["metadata"].get("deletionTimestamp"):
            raise ApiError(
                403,
                "Forbidden",
                f"{info.qualified} {json.dumps(name)} is forbidden: unable to create new content "
                f"in namespace {namespace} because it is being terminated",
                {"name": name, "group": info.group, "kind": info.plural},
            )

    def _check_crd_open(self, info: ResourceInfo) -> None:
        crd = self.store.get(CRDS, "", info.owner_crd)
        if crd is not None and crd["metadata"].get("deletionTimestamp"):
            raise fe.method_not_allowed(
                "create not allowed while custom resource definition is terminating"
            )

    # -- admission: schemas and CRDs -----------------------------------------------------------

    def _admit_custom(
        self, info: ResourceInfo, obj: Obj, old: Obj | None, field_validation: str
    ) -> tuple[Obj, list[str]]:
        """Prune, default and validate a custom resource against its version's schema."""
        warnings: list[str] = []
        spec_schema = info.schema or {}
        unknown = schema.prune(obj, spec_schema)
        if unknown:
            texts = [f'unknown field "{p}"' for p in unknown]
            if field_validation == "Strict":
                raise fe.bad_request(
                    f'{info.kind} in version "{info.version}" cannot be handled as a '
                    f"{info.kind}: strict decoding error: {', '.join(texts)}"
                )
            if field_validation != "Ignore":
                warnings += texts
        schema.apply_defaults(obj, spec_schema)
        name = obj["metadata"].get("name", "")
        errs = schema.validate(obj, spec_schema)
        if celrules.has_rules(spec_schema):
            if any(e.type in _BLOCKING for e in errs):
                # The object lacks the shape its rules were written for (hasBlockingErr).
                errs.append(fe.invalid("<nil>", None, _RULES_NOT_CHECKED))
            else:
                old_view = self.render(info, old) if old is not None else None
                errs += celrules.validate_rules(obj, old_view, spec_schema, has_old=old is not None)
        if errs:
            raise fe.invalid_object(info.group, info.kind, name, errs)
        deprecation = info.extra.get("deprecationWarning")
        if deprecation:
            warnings.append(str(deprecation))
        return obj, warnings

    def _admit_crd(self, crd: Obj, old: Obj | None) -> None:
        crds.apply_crd_defaults(crd)
        errs = crds.validate_crd(crd)
        if errs:
            raise fe.invalid_object(
                "apiextensions.k8s.io",
                "CustomResourceDefinition",
                crd["metadata"].get("name", ""),
                errs,
            )
        meta = crd["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if old is None and crds.CLEANUP_FINALIZER not in finalizers:
            finalizers.append(crds.CLEANUP_FINALIZER)
            meta["finalizers"] = finalizers
        if not meta.get("deletionTimestamp"):
            crd["status"] = crds.crd_status(crd, now(), (old or {}).get("status"))

    def _register_crd(self, crd: Obj) -> None:
        name = crd["metadata"]["name"]
        self.registry.remove_crd(name)
        resources = crds.crd_resources(crd)
        self.registry.add(resources)
        for info in resources:
            self.store.start_history(info.storage)

    # -- update and patch ----------------------------------------------------------------------

    def update(
        self,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        body: Any,
        *,
        subresource: str = "",
        dry_run: bool = False,
        field_validation: str = "",
    ) -> Result:
        if not isinstance(body, dict):
            raise fe.unrecognized(info.kind, body)
        self._check_subresource(info, subresource)
        obj = deep_copy(body)
        self._check_type(info, obj)
        meta = ensure_metadata(obj)
        if meta.get("name") and meta["name"] != name:
            raise fe.bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL "
                f"({name})"
            )
        if info.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
            raise fe.bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )
        old = self.store.get(info.storage, namespace or "", name)
        if old is None:
            raise fe.not_found(info.group, info.plural, name)
        requested = meta.get("resourceVersion")
        if not requested and info.custom:
            # The custom resource store's words: the resource (not the kind) and Go's %#v of the
            # unset version (0x0).
            raise fe.invalid_object(
                info.group,
                info.plural,
                name,
                [
                    fe.invalid(
                        "metadata.resourceVersion", fe.OMIT, "0x0: must be specified for an update"
                    )
                ],
            )
        return self._replace(info, old, obj, subresource, dry_run, field_validation)

    def patch(
        self,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        patch_type: str,
        patch: Any,
        *,
        subresource: str = "",
        dry_run: bool = False,
        field_validation: str = "",
    ) -> Result:
        self._check_subresource(info, subresource)
        if patch_type == STRATEGIC_PATCH and info.custom:
            raise fe.unsupported_media_type(patch_type, [JSON_PATCH, MERGE_PATCH, APPLY_PATCH])
        old = self.store.get(info.storage, namespace or "", name)
        if old is None:
            if patch_type == APPLY_PATCH and not subresource:
                return self._apply_create(info, namespace, name, patch, dry_run, field_validation)
            raise fe.not_found(info.group, info.plural, name)
        current = self.render(info, old)
        try:
            if patch_type == JSON_PATCH:
                patched = json_patch(current, patch)
            elif patch_type == MERGE_PATCH:
                if not isinstance(patch, dict):
                    raise PatchError("merge patch must be a JSON object", malformed=True)
                patched = merge_patch(current, patch)
            elif patch_type == STRATEGIC_PATCH:
                if not isinstance(patch, dict):
                    raise PatchError("strategic merge patch must be a JSON object", malformed=True)
                patched = strategic_merge_patch(current, patch)
            elif patch_type == APPLY_PATCH:
                if not isinstance(patch, dict):
                    raise PatchError("apply patch must be an object", malformed=True)
                self._check_apply_body(info, patch, name)
                patched = apply_merge(current, patch, builtin=not info.custom)
            else:
                raise fe.unsupported_media_type(patch_type, list(PATCH_TYPES))
        except PatchError as exc:
            if exc.malformed:
                raise fe.bad_request(str(exc)) from exc
            raise fe.unprocessable(str(exc)) from exc
        if not isinstance(patched, dict):
            raise fe.unprocessable("the patched object is not a JSON object")
        obj = deep_copy(patched)
        self._check_type(info, obj)
        meta = ensure_metadata(obj)
        if meta.get("name") != name:
            raise fe.bad_request("the name of the object cannot be changed by a patch")
        return self._replace(info, old, obj, subresource, dry_run, field_validation)

    def _check_apply_body(self, info: ResourceInfo, body: Obj, name: str) -> None:
        if body.get("apiVersion") != info.api_version or body.get("kind") != info.kind:
            api_version = str(body.get("apiVersion") or "")
            group, _, version = api_version.rpartition("/")
            raise fe.bad_request(
                f"invalid object type: {group}/{version}, Kind={body.get('kind') or ''}"
            )
        applied_name = (body.get("metadata") or {}).get("name")
        if applied_name and applied_name != name:
            raise fe.bad_request(
                f"the name of the object ({applied_name}) does not match the name on the URL "
                f"({name})"
            )

    def _apply_create(
        self,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        body: Any,
        dry_run: bool,
        field_validation: str,
    ) -> Result:
        if not isinstance(body, dict):
            raise fe.bad_request("apply patch must be an object")
        self._check_apply_body(info, body, name)
        obj = deep_copy(body)
        ensure_metadata(obj)["name"] = name
        return self.create(info, namespace, obj, dry_run=dry_run, field_validation=field_validation)

    def _check_subresource(self, info: ResourceInfo, subresource: str) -> None:
        if subresource and subresource not in info.subresources:
            raise fe.path_not_found()

    def _replace(
        self,
        info: ResourceInfo,
        old: Obj,
        obj: Obj,
        subresource: str,
        dry_run: bool,
        field_validation: str,
    ) -> Result:
        """The common tail of update and patch: keep what the request may not change, check
        preconditions, admit, bump generation, and commit (or delete, if finalized)."""
        name = old["metadata"]["name"]
        old_meta = old["metadata"]
        requested = obj["metadata"].get("resourceVersion")
        if requested and requested != old_meta["resourceVersion"]:
            raise fe.conflict(info.group, info.plural, name)
        if subresource == "status":
            new = deep_copy(old)
            new["apiVersion"] = info.api_version
            if "status" in obj:
                new["status"] = obj["status"]
            else:
                new.pop("status", None)
            obj = new
        else:
            meta = obj["metadata"]
            for key in _KEPT_META:
                if key in old_meta:
                    meta[key] = old_meta[key]
                else:
                    meta.pop(key, None)
            meta.pop("managedFields", None)
            if info.has_status and info.storage != CRDS:
                if "status" in old:
                    obj["status"] = deep_copy(old["status"])
                else:
                    obj.pop("status", None)
            self._check_finalizers(info, old, obj)
        obj["metadata"]["resourceVersion"] = old_meta["resourceVersion"]
        warnings: list[str] = []
        obj["apiVersion"] = info.api_version
        if info.custom:
            obj, warnings = self._admit_custom(info, obj, old, field_validation)
        else:
            builtins.prepare_builtin(info, obj, old, self.ips)
            if info.storage == CRDS and subresource != "status":
                self._admit_crd(obj, old)
        obj["apiVersion"] = info.storage_api_version
        if info.tracks_generation and subresource != "status" and _spec_changed(info, obj, old):
            obj["metadata"]["generation"] = int(old_meta.get("generation") or 0) + 1
        if _same(obj, old):
            return Result(self.render(info, old), warnings)
        if dry_run:
            return Result(self.render(info, obj), warnings)
        if obj["metadata"].get("deletionTimestamp") and self._releasable(info, obj):
            final = self.store.remove(info.storage, obj)
            self._after_removal(info, final)
            return Result(self.render(info, final), warnings)
        stored = self.store.put(info.storage, obj, old)
        if info.storage == CRDS:
            self._register_crd(stored)
        return Result(self.render(info, stored), warnings)

    def _check_finalizers(self, info: ResourceInfo, old: Obj, new: Obj) -> None:
        if not old["metadata"].get("deletionTimestamp"):
            return
        before = set(old["metadata"].get("finalizers") or [])
        added = [f for f in new["metadata"].get("finalizers") or [] if f not in before]
        if added:
            listed = ", ".join(json.dumps(f) for f in added)
            error = fe.forbidden(
                "metadata.finalizers",
                "no new finalizers can be added if the object is being deleted, found "
                f"new finalizers []string{{{listed}}}",
            )
            # kube-apiserver checks the metadata update twice (BeforeUpdate, then the
            # strategy), so the cause comes twice; the message names it once.
            raise fe.invalid_object(info.group, info.kind, old["metadata"]["name"], [error, error])

    def _releasable(self, info: ResourceInfo, obj: Obj) -> bool:
        """A deleted object goes once its finalizers (and, for a namespace, content) are gone."""
        if obj["metadata"].get("finalizers"):
            return False
        if info.storage == NAMESPACES:
            return self.store.namespace_counts.get(obj["metadata"]["name"], 0) == 0
        return True

    def _after_removal(self, info: ResourceInfo, final: Obj, policy: str = "Background") -> None:
        """What follows an object's removal (garbage collection, ...): see Cluster."""


def _spec_changed(info: ResourceInfo, new: Obj, old: Obj) -> bool:
    """Whether anything outside metadata (and status, when it is a subresource) changed."""
    skip = {"metadata", "status"} if info.has_status else {"metadata"}
    keys = (set(new) | set(old)) - skip - {"apiVersion"}
    return any(new.get(k) != old.get(k) for k in keys)


def _same(new: Obj, old: Obj) -> bool:
    """A no-op write: nothing but resourceVersion/managedFields differs (no new revision)."""
    if new.keys() != old.keys():
        return False
    for key, value in new.items():
        if key == "metadata":
            a = {k: v for k, v in value.items() if k not in ("resourceVersion", "managedFields")}
            b = {k: v for k, v in old[key].items() if k not in ("resourceVersion", "managedFields")}
            if a != b:
                return False
        elif old[key] != value:
            return False
    return True
