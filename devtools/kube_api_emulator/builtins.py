"""Built-in resources an operator and its Helm chart need, with the few defaults kube-apiserver
applies to them on create (no controllers run: a Deployment creates no pods).

Names, kinds, short names and categories are those of Kubernetes 1.33's discovery.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from . import errors as fe
from .resources import ResourceInfo

Obj = dict[str, Any]

_ALL = ("all",)


def _r(
    group: str,
    version: str,
    plural: str,
    kind: str,
    *,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    status: bool = False,
    generation: bool = False,
) -> ResourceInfo:
    return ResourceInfo(
        group=group,
        version=version,
        plural=plural,
        singular=kind.lower(),
        kind=kind,
        namespaced=namespaced,
        short_names=short,
        categories=categories,
        subresources=frozenset({"status"}) if status else frozenset(),
        tracks_generation=generation or (status and group not in ("", "apiextensions.k8s.io")),
    )


BUILTIN_RESOURCES: tuple[ResourceInfo, ...] = (
    _r("", "v1", "namespaces", "Namespace", namespaced=False, short=("ns",), status=True),
    _r("", "v1", "events", "Event", short=("ev",)),
    _r("", "v1", "configmaps", "ConfigMap", short=("cm",)),
    _r("", "v1", "secrets", "Secret"),
    _r("", "v1", "serviceaccounts", "ServiceAccount", short=("sa",)),
    _r("", "v1", "services", "Service", short=("svc",), categories=_ALL, status=True),
    _r("", "v1", "endpoints", "Endpoints", short=("ep",)),
    _r("", "v1", "pods", "Pod", short=("po",), categories=_ALL, status=True),
    _r("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", short=("pvc",), status=True),
    _r("", "v1", "nodes", "Node", namespaced=False, short=("no",), status=True),
    _r("apps", "v1", "deployments", "Deployment", short=("deploy",), categories=_ALL, status=True),
    _r("apps", "v1", "replicasets", "ReplicaSet", short=("rs",), categories=_ALL, status=True),
    _r("apps", "v1", "statefulsets", "StatefulSet", short=("sts",), categories=_ALL, status=True),
    _r("apps", "v1", "daemonsets", "DaemonSet", short=("ds",), categories=_ALL, status=True),
    _r("batch", "v1", "jobs", "Job", categories=_ALL, status=True),
    _r("batch", "v1", "cronjobs", "CronJob", short=("cj",), categories=_ALL, status=True),
    _r("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    _r("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
    _r("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False),
    _r(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        namespaced=False,
    ),
    _r("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", short=("pdb",), status=True),
    _r(
        "networking.k8s.io",
        "v1",
        "networkpolicies",
        "NetworkPolicy",
        short=("netpol",),
        generation=True,
    ),
    _r("networking.k8s.io", "v1", "ingresses", "Ingress", short=("ing",), status=True),
    _r("coordination.k8s.io", "v1", "leases", "Lease"),
    _r("events.k8s.io", "v1", "events", "Event", short=("ev",)),
    _r(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        namespaced=False,
        short=("crd", "crds"),
        status=True,
        generation=True,
    ),
)

INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

# -- names ---------------------------------------------------------------------------------------

_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1035_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")

_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def name_errors(info: ResourceInfo, name: str) -> list[fe.FieldError]:
    """metadata.name rules: RFC 1123 label for namespaces, RFC 1035 for services, else a
    subdomain."""
    path = "metadata.name"
    if info.group == "" and info.plural == "namespaces":
        regex, msg, limit = _LABEL_RE, _LABEL_MSG, 63
    elif info.group == "" and info.plural == "services":
        regex, msg, limit = _DNS1035_RE, _DNS1035_MSG, 63
    else:
        regex, msg, limit = _SUBDOMAIN_RE, _SUBDOMAIN_MSG, 253
    errs: list[fe.FieldError] = []
    if len(name) > limit:
        errs.append(fe.invalid(path, name, f"must be no more than {limit} characters"))
    if not regex.match(name):
        errs.append(fe.invalid(path, name, msg))
    return errs


# -- create defaults -----------------------------------------------------------------------------


class ClusterIPs:
    """Hands out service cluster IPs from 10.96.0.0/12, like the default service CIDR."""

    def __init__(self) -> None:
        self._next = 1

    def allocate(self) -> str:
        n = self._next
        self._next += 1
        return f"10.96.{(n >> 8) & 0xFF}.{n & 0xFF}"


def _secret(obj: Obj) -> None:
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict):
        data = dict(obj.get("data") or {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
        obj["data"] = data
    obj.setdefault("type", "Opaque")


# core.MaxSecretSize, which ValidateConfigMap applies to the sum of data and binaryData.
MAX_CONFIG_MAP_BYTES = 1024 * 1024


def _check_config_map_size(obj: Obj) -> None:
    """ValidateConfigMap's size rule: the values of data (UTF-8 bytes) and binaryData (decoded
    bytes) together at most 1 MiB, else the whole object is invalid."""
    total = sum(len(str(v).encode()) for v in (obj.get("data") or {}).values())
    for value in (obj.get("binaryData") or {}).values():
        try:
            total += len(base64.b64decode(str(value), validate=True))
        except binascii.Error:
            total += len(str(value)) * 3 // 4
    if total > MAX_CONFIG_MAP_BYTES:
        name = obj["metadata"].get("name", "")
        raise fe.invalid_object("", "ConfigMap", name, [fe.too_long("[]", MAX_CONFIG_MAP_BYTES)])


def prepare_builtin(info: ResourceInfo, obj: Obj, old: Obj | None, ips: ClusterIPs) -> None:
    """Apply, in place, the defaults kube-apiserver's registry strategies set."""
    key = (info.group, info.plural)
    if key == ("", "secrets"):
        _secret(obj)
    elif key == ("", "configmaps"):
        _check_config_map_size(obj)
    elif key == ("", "namespaces"):
        name = obj["metadata"]["name"]
        labels = dict(obj["metadata"].get("labels") or {})
        labels["kubernetes.io/metadata.name"] = name
        obj["metadata"]["labels"] = labels
        if old is None:
            obj["spec"] = {"finalizers": ["kubernetes"]}
            obj["status"] = {"phase": "Active"}
    elif key == ("", "services") and old is None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("type", "ClusterIP")
        if spec.get("type") != "ExternalName" and "clusterIP" not in spec:
            spec["clusterIP"] = ips.allocate()
            spec["clusterIPs"] = [spec["clusterIP"]]
        for port in spec.get("ports") or []:
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")
                port.setdefault("targetPort", port.get("port"))
        spec.setdefault("sessionAffinity", "None")
    elif key == ("", "pods") and old is None:
        obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
    elif key in (("apps", "deployments"), ("apps", "statefulsets")):
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
    elif key == ("apps", "replicasets"):
        obj.setdefault("spec", {}).setdefault("replicas", 1)


def default_propagation(info: ResourceInfo) -> str:
    """What a delete without a propagation policy does to the object's dependents. kube-apiserver
    orphans a batch/v1 Job's pods, for compatibility with the Jobs of old (the Job strategy's
    DefaultGarbageCollectionPolicy): `kubectl delete` asks for Background itself, API clients
    must. Every other resource served here collects its dependents in the background."""
    if (info.group, info.plural) == ("batch", "jobs"):
        return "Orphan"
    return "Background"


def initial_namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
