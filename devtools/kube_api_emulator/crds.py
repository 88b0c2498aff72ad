"""CustomResourceDefinitions (apiextensions.k8s.io/v1): validation, defaults, status, and the
resources each one serves.

Mirrors apiextensions-apiserver's CRD validation (a subset of its rules, same messages) and its
naming and establishing controllers' status conditions (NamesAccepted, Established).
"""

from __future__ import annotations

import re
from typing import Any

from . import cel
from . import errors as fe
from .resources import ALL_VERBS, PrinterColumn, ResourceInfo

Obj = dict[str, Any]

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
_GROUP_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def apply_crd_defaults(crd: Obj) -> None:
    """The defaults kube-apiserver sets on a CRD (in place)."""
    spec = crd.setdefault("spec", {})
    names = spec.setdefault("names", {})
    kind = names.get("kind")
    if isinstance(kind, str) and kind:
        names.setdefault("singular", kind.lower())
        names.setdefault("listKind", f"{kind}List")
    spec.setdefault("conversion", {"strategy": "None"})


def validate_crd(crd: Obj) -> list[fe.FieldError]:
    """The CRD rules that catch real mistakes, with kube-apiserver's messages."""
    errs: list[fe.FieldError] = []
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group") or ""
    plural = names.get("plural") or ""
    name = crd.get("metadata", {}).get("name", "")
    if not group:
        errs.append(fe.required("spec.group"))
    elif "." not in group or not _GROUP_RE.match(group):
        errs.append(fe.invalid("spec.group", group, "should be a domain with at least one dot"))
    if not plural:
        errs.append(fe.required("spec.names.plural"))
    if not names.get("kind"):
        errs.append(fe.required("spec.names.kind"))
    if plural and group and name != f"{plural}.{group}":
        errs.append(fe.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    scope = spec.get("scope")
    if scope not in ("Namespaced", "Cluster"):
        errs.append(fe.not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    versions = spec.get("versions") or []
    if not versions:
        errs.append(
            fe.required("spec.versions", "must have exactly one version marked as storage version")
        )
    elif sum(1 for v in versions if isinstance(v, dict) and v.get("storage")) != 1:
        errs.append(
            fe.invalid(
                "spec.versions",
                fe.OMIT,
                "must have exactly one version marked as storage version",
            )
        )
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if not isinstance(version, dict):
            continue
        vname = version.get("name") or ""
        if vname in seen:
            errs.append(fe.FieldError(fe.DUPLICATE, f"spec.versions[{i}].name", vname))
        seen.add(vname)
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        where = f"spec.versions[{i}].schema.openAPIV3Schema"
        if not isinstance(schema, dict):
            errs.append(fe.required(where, "schemas are required"))
            continue
        errs += cel.compile_schema(schema, where)
    return errs


def _condition(kind: str, reason: str, message: str, now: str) -> Obj:
    return {
        "type": kind,
        "status": "True",
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def crd_status(crd: Obj, now: str, previous: Obj | None) -> Obj:
    """Status as the naming and establishing controllers leave it once the names are accepted."""
    spec = crd["spec"]
    names = spec["names"]
    accepted = {k: names[k] for k in ("plural", "singular", "kind", "listKind") if k in names}
    for key in ("shortNames", "categories"):
        if names.get(key):
            accepted[key] = list(names[key])
    old_conditions = {c.get("type"): c for c in (previous or {}).get("conditions") or []}
    conditions = []
    for kind, reason, message in (
        ("NamesAccepted", "NoConflicts", "no conflicts found"),
        ("Established", "InitialNamesAccepted", "the initial names have been accepted"),
    ):
        kept = old_conditions.get(kind)
        if kept and kept.get("status") == "True":
            conditions.append(kept)
        else:
            conditions.append(_condition(kind, reason, message, now))
    stored = list((previous or {}).get("storedVersions") or [])
    storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
    if storage not in stored:
        stored.append(storage)
    return {"acceptedNames": accepted, "conditions": conditions, "storedVersions": stored}


def crd_resources(crd: Obj) -> list[ResourceInfo]:
    """One ResourceInfo per served version of the CRD."""
    spec = crd["spec"]
    names = spec["names"]
    storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
    infos: list[ResourceInfo] = []
    for version in spec["versions"]:
        if not version.get("served", True):
            continue
        subresources = set(version.get("subresources") or {})
        columns = tuple(
            PrinterColumn(
                name=str(c.get("name", "")),
                type=str(c.get("type", "string")),
                json_path=str(c.get("jsonPath", "")),
                description=str(c.get("description", "")),
                format=str(c.get("format", "")),
                priority=int(c.get("priority", 0)),
            )
            for c in version.get("additionalPrinterColumns") or []
        )
        selectable = tuple(
            str(f.get("jsonPath", "")).lstrip(".") for f in version.get("selectableFields") or []
        )
        infos.append(
            ResourceInfo(
                group=spec["group"],
                version=version["name"],
                plural=names["plural"],
                singular=names.get("singular") or names["kind"].lower(),
                kind=names["kind"],
                namespaced=spec.get("scope") == "Namespaced",
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                verbs=ALL_VERBS,
                subresources=frozenset(subresources & {"status"}),
                custom=True,
                schema=(version.get("schema") or {}).get("openAPIV3Schema") or {},
                printer_columns=columns,
                selectable_fields=selectable,
                tracks_generation=True,
                list_kind=names.get("listKind") or f"{names['kind']}List",
                storage_version=storage,
                owner_crd=crd["metadata"]["name"],
                extra={
                    "scale": (version.get("subresources") or {}).get("scale"),
                    "deprecationWarning": version.get("deprecationWarning")
                    if version.get("deprecated")
                    else None,
                },
            )
        )
    return infos
