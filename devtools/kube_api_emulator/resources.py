"""The emulator's resource registry: what each REST path serves, and what discovery lists.

A resource is one (group, version, plural); its objects live under a storage key shared by all
versions of that resource, like kube-apiserver's one-etcd-prefix-per-resource.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)


@dataclass(frozen=True)
class PrinterColumn:
    """One `additionalPrinterColumns` entry (or a built-in column) for Table output."""

    name: str
    type: str
    json_path: str
    description: str = ""
    format: str = ""
    priority: int = 0


@dataclass(frozen=True)
class ResourceInfo:
    """One served (group, version, plural) and everything the handlers need to know about it."""

    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: frozenset[str] = frozenset()
    custom: bool = False
    # The CRD's structural schema of this version (None for built-ins: no pruning/validation).
    schema: Any = None
    printer_columns: tuple[PrinterColumn, ...] = ()
    selectable_fields: tuple[str, ...] = ()
    # Built-ins that track metadata.generation (CRs always do).
    tracks_generation: bool = False
    list_kind: str = ""
    storage_version: str = ""
    owner_crd: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def storage(self) -> str:
        """The storage key shared by all versions of this resource."""
        return f"{self.group}/{self.plural}"

    @property
    def qualified(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def list_kind_name(self) -> str:
        return self.list_kind or f"{self.kind}List"

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    @property
    def storage_api_version(self) -> str:
        version = self.storage_version or self.version
        return f"{self.group}/{version}" if self.group else version


_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key for kube-aware version order: GA > beta > alpha, higher numbers first."""
    m = _VERSION_RE.match(version)
    if not m:
        return (3, 0, 0, version)
    major = int(m.group(1))
    stage = {"": 0, None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    minor = int(m.group(3) or 0)
    return (stage, -major, -minor, version)


class Registry:
    """Every served resource, indexed by REST path parts and by discovery group."""

    def __init__(self) -> None:
        self._by_path: dict[tuple[str, str, str], ResourceInfo] = {}
        # group -> version -> plural -> info, in registration order.
        self._groups: dict[str, dict[str, dict[str, ResourceInfo]]] = {}
        # Version order per group as registered by built-ins (core "v1" etc.).
        self._builtin_group_order: list[str] = []
        self._by_crd: dict[str, list[ResourceInfo]] = {}

    def add(self, infos: Iterable[ResourceInfo]) -> None:
        for info in infos:
            self._by_path[(info.group, info.version, info.plural)] = info
            versions = self._groups.setdefault(info.group, {})
            versions.setdefault(info.version, {})[info.plural] = info
            if info.owner_crd:
                self._by_crd.setdefault(info.owner_crd, []).append(info)
            elif info.group not in self._builtin_group_order:
                self._builtin_group_order.append(info.group)

    def remove_crd(self, crd_name: str) -> list[ResourceInfo]:
        removed = self._by_crd.pop(crd_name, [])
        for info in removed:
            self._by_path.pop((info.group, info.version, info.plural), None)
            versions = self._groups.get(info.group, {})
            plurals = versions.get(info.version, {})
            plurals.pop(info.plural, None)
            if not plurals:
                versions.pop(info.version, None)
            if not versions:
                self._groups.pop(info.group, None)
        return removed

    def crd_resources(self, crd_name: str) -> list[ResourceInfo]:
        return list(self._by_crd.get(crd_name, []))

    def get(self, group: str, version: str, plural: str) -> ResourceInfo | None:
        return self._by_path.get((group, version, plural))

    def has_group_version(self, group: str, version: str) -> bool:
        return version in self._groups.get(group, {})

    def groups(self) -> list[str]:
        """Groups in discovery order: built-in groups first, then custom groups by name."""
        builtin = [g for g in self._builtin_group_order if g in self._groups]
        custom = sorted(g for g in self._groups if g not in builtin)
        return builtin + custom

    def versions(self, group: str) -> list[str]:
        """A group's versions, preferred first."""
        return sorted(self._groups.get(group, {}), key=version_priority)

    def resources(self, group: str, version: str) -> list[ResourceInfo]:
        return list(self._groups.get(group, {}).get(version, {}).values())

    def all(self) -> list[ResourceInfo]:
        return list(self._by_path.values())

    def preferred(self, group: str, plural: str) -> ResourceInfo | None:
        for version in self.versions(group):
            info = self._groups[group][version].get(plural)
            if info is not None:
                return info
        return None
