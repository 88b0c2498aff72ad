"""Legacy (unaggregated) discovery documents: /version, /api, /api/v1, /apis, /apis/<group> and
/apis/<group>/<version>, as kopf, the kubernetes client and kubectl read them.

Aggregated discovery is not offered: clients asking for it accept plain JSON and fall back.
"""

from __future__ import annotations

from typing import Any

from .resources import Registry, ResourceInfo

Obj = dict[str, Any]

KUBERNETES_VERSION = {
    "major": "1",
    "minor": "33",
    "gitVersion": "v1.33.0-kto",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2025-04-23T00:00:00Z",
    "goVersion": "go1.24.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def version() -> Obj:
    return dict(KUBERNETES_VERSION)


def core_versions(address: str) -> Obj:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def _group(registry: Registry, group: str) -> Obj:
    versions = registry.versions(group)
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": entries, "preferredVersion": entries[0]}


def group_list(registry: Registry) -> Obj:
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group(registry, g) for g in registry.groups() if g],
    }


def group(registry: Registry, name: str) -> Obj | None:
    if not name or not registry.versions(name):
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(registry, name)}


def _entry(info: ResourceInfo) -> Obj:
    entry: Obj = {
        "name": info.plural,
        "singularName": info.singular,
        "namespaced": info.namespaced,
        "kind": info.kind,
        "verbs": list(info.verbs),
    }
    if info.short_names:
        entry["shortNames"] = list(info.short_names)
    if info.categories:
        entry["categories"] = list(info.categories)
    return entry


def resource_list(registry: Registry, group: str, version: str) -> Obj | None:
    infos = registry.resources(group, version)
    if not infos:
        return None
    resources: list[Obj] = []
    for info in sorted(infos, key=lambda i: i.plural):
        resources.append(_entry(info))
        for sub in sorted(info.subresources):
            sub_entry: Obj = {
                "name": f"{info.plural}/{sub}",
                "singularName": "",
                "namespaced": info.namespaced,
                "kind": info.kind,
                "verbs": ["get", "patch", "update"],
            }
            if sub == "scale":
                sub_entry.update(group="autoscaling", version="v1", kind="Scale")
            resources.append(sub_entry)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }
