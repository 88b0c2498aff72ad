"""Server-side `Table` output (meta.k8s.io/v1), which `kubectl get` asks for.

Custom resources get Name plus the CRD's `additionalPrinterColumns` (or Age when none), as
apiextensions-apiserver's tableconvertor does; built-ins get the columns kubectl users know.
"""

from __future__ import annotations

import calendar
import json
import re
import time
from collections.abc import Callable
from typing import Any

from .resources import PrinterColumn, ResourceInfo

Obj = dict[str, Any]


def human_duration(seconds: float) -> str:
    """apimachinery's duration.HumanDuration (the AGE column's format)."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{hours // 24 // 365}y"


def _age(timestamp: Any) -> str:
    if not isinstance(timestamp, str) or not timestamp:
        return "<unknown>"
    try:
        then = calendar.timegm(time.strptime(timestamp[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return "<invalid>"
    return human_duration(time.time() - then)


# -- JSONPath (the simple subset printer columns use) --------------------------------------------

_TOKEN_RE = re.compile(
    r"\.(?P<field>[^.\[\]]+)"
    r"|\[\?\(@\.(?P<fkey>[\w.-]+)\s*==\s*(?P<q>['\"])(?P<fval>.*?)(?P=q)\)\]"
    r"|\[(?P<quote>['\"])(?P<key>.*?)(?P=quote)\]"
    r"|\[(?P<index>-?\d+|\*)\]"
)


def jsonpath(obj: Any, path: str) -> list[Any]:
    """Results of a printer-column JSONPath such as `.status.conditions[?(@.type=="Ready")]
    .status`; an unsupported expression yields no result."""
    expr = path.strip()
    if expr.startswith("{") and expr.endswith("}"):
        expr = expr[1:-1]
    if expr.startswith("$"):
        expr = expr[1:]
    values = [obj]
    pos = 0
    while pos < len(expr):
        m = _TOKEN_RE.match(expr, pos)
        if not m:
            return []
        pos = m.end()
        nxt: list[Any] = []
        for value in values:
            if m.group("field") is not None or m.group("key") is not None:
                key = m.group("field") if m.group("field") is not None else m.group("key")
                if isinstance(value, dict) and key in value:
                    nxt.append(value[key])
            elif m.group("fkey") is not None:
                if isinstance(value, list):
                    nxt += [
                        item
                        for item in value
                        if isinstance(item, dict)
                        and str(item.get(m.group("fkey"))) == m.group("fval")
                    ]
            elif isinstance(value, list):
                idx = m.group("index")
                if idx == "*":
                    nxt += value
                elif -len(value) <= int(idx) < len(value):
                    nxt.append(value[int(idx)])
        values = nxt
    return values


def _cell(column: PrinterColumn, obj: Obj) -> Any:
    found = jsonpath(obj, column.json_path)
    if not found or found[0] is None:
        return None
    value = found[0]
    kind = column.type
    if kind == "integer":
        return (
            int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
    if kind == "number":
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind == "date":
        return _age(value) if isinstance(value, str) else None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


# -- built-in columns ----------------------------------------------------------------------------

Column = tuple[str, str, Callable[[Obj], Any]]


def _count(*keys: str) -> Callable[[Obj], Any]:
    return lambda o: sum(len(o.get(k) or {}) for k in keys)


def _pod_ready(obj: Obj) -> str:
    containers = (obj.get("spec") or {}).get("containers") or []
    statuses = (obj.get("status") or {}).get("containerStatuses") or []
    return f"{sum(1 for s in statuses if s.get('ready'))}/{len(containers)}"


def _ports(obj: Obj) -> str:
    ports = (obj.get("spec") or {}).get("ports") or []
    return ",".join(f"{p.get('port')}/{p.get('protocol', 'TCP')}" for p in ports) or "<none>"


def _involved(obj: Obj) -> str:
    ref = obj.get("involvedObject") or obj.get("regarding") or {}
    return f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}"


def _last_seen(obj: Obj) -> str:
    stamp = (
        obj.get("lastTimestamp")
        or obj.get("eventTime")
        or obj.get("deprecatedLastTimestamp")
        or obj.get("metadata", {}).get("creationTimestamp")
    )
    return _age(stamp)


def _spec(key: str, default: Any = None) -> Callable[[Obj], Any]:
    return lambda o: (o.get("spec") or {}).get(key, default)


def _status(key: str, default: Any = None) -> Callable[[Obj], Any]:
    return lambda o: (o.get("status") or {}).get(key, default)


def _replicas_ready(obj: Obj) -> str:
    return f"{(obj.get('status') or {}).get('readyReplicas', 0)}/{_spec('replicas', 0)(obj)}"


BUILTIN_COLUMNS: dict[tuple[str, str], list[Column]] = {
    ("", "namespaces"): [("Status", "string", _status("phase", ""))],
    ("", "configmaps"): [("Data", "integer", _count("data", "binaryData"))],
    ("", "secrets"): [
        ("Type", "string", lambda o: o.get("type", "")),
        ("Data", "integer", _count("data")),
    ],
    ("", "serviceaccounts"): [("Secrets", "integer", lambda o: len(o.get("secrets") or []))],
    ("", "pods"): [
        ("Ready", "string", _pod_ready),
        ("Status", "string", _status("phase", "")),
        ("Restarts", "string", lambda o: "0"),
    ],
    ("", "services"): [
        ("Type", "string", _spec("type", "")),
        ("Cluster-IP", "string", _spec("clusterIP", "<none>")),
        ("External-IP", "string", lambda o: "<none>"),
        ("Port(s)", "string", _ports),
    ],
    ("apps", "deployments"): [
        ("Ready", "string", _replicas_ready),
        ("Up-to-date", "integer", _status("updatedReplicas", 0)),
        ("Available", "integer", _status("availableReplicas", 0)),
    ],
    ("apps", "replicasets"): [
        ("Desired", "integer", _spec("replicas", 0)),
        ("Current", "integer", _status("replicas", 0)),
        ("Ready", "integer", _status("readyReplicas", 0)),
    ],
    ("apps", "statefulsets"): [("Ready", "string", _replicas_ready)],
}
_EVENT_COLUMNS: list[Column] = [
    ("Last Seen", "string", _last_seen),
    ("Type", "string", lambda o: o.get("type", "")),
    ("Reason", "string", lambda o: o.get("reason", "")),
    ("Object", "string", _involved),
    ("Message", "string", lambda o: o.get("message") or o.get("note") or ""),
]
BUILTIN_COLUMNS[("", "events")] = _EVENT_COLUMNS
BUILTIN_COLUMNS[("events.k8s.io", "events")] = _EVENT_COLUMNS

_NAME_COLUMN = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "description": "Name must be unique within a namespace. Is required when creating "
    "resources, although some resources may allow a client to request the generation of an "
    "appropriate name automatically. Name is primarily intended for creation idempotence and "
    "configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
    "priority": 0,
}
_AGE_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created."
)


def column_definitions(info: ResourceInfo) -> list[Obj]:
    if info.custom:
        if not info.printer_columns:
            return [
                _NAME_COLUMN,
                {
                    "name": "Age",
                    "type": "date",
                    "format": "",
                    "description": _AGE_DESCRIPTION,
                    "priority": 0,
                },
            ]
        return [_NAME_COLUMN] + [
            {
                "name": c.name,
                "type": c.type,
                "format": c.format,
                # Without one, kube-apiserver describes the column by its path.
                "description": c.description
                or f"Custom resource definition column (in JSONPath format): {c.json_path}",
                "priority": c.priority,
            }
            for c in info.printer_columns
        ]
    if info.storage == "apiextensions.k8s.io/customresourcedefinitions":
        return [
            _NAME_COLUMN,
            {"name": "Created At", "type": "date", "format": "", "description": "", "priority": 0},
        ]
    extra = BUILTIN_COLUMNS.get((info.group, info.plural), [])
    defs = [_NAME_COLUMN] + [
        {"name": n, "type": t, "format": "", "description": "", "priority": 0} for n, t, _ in extra
    ]
    if (info.group, info.plural) not in (("", "events"), ("events.k8s.io", "events")):
        defs.append(
            {
                "name": "Age",
                "type": "date",
                "format": "",
                "description": _AGE_DESCRIPTION,
                "priority": 0,
            }
        )
    return defs


def cells(info: ResourceInfo, obj: Obj) -> list[Any]:
    meta = obj.get("metadata") or {}
    name = meta.get("name", "")
    created = meta.get("creationTimestamp")
    if info.custom:
        if not info.printer_columns:
            return [name, _age(created)]
        return [name] + [_cell(c, obj) for c in info.printer_columns]
    if info.storage == "apiextensions.k8s.io/customresourcedefinitions":
        return [name, created]
    extra = BUILTIN_COLUMNS.get((info.group, info.plural), [])
    row = [name] + [fn(obj) for _, _, fn in extra]
    if (info.group, info.plural) not in (("", "events"), ("events.k8s.io", "events")):
        row.append(_age(created))
    return row


def partial(obj: Obj) -> Obj:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata") or {},
    }


def to_table(
    info: ResourceInfo,
    objs: list[Obj],
    *,
    resource_version: str,
    include_object: str = "Metadata",
    continue_token: str = "",
    with_columns: bool = True,
) -> Obj:
    rows = []
    for obj in objs:
        row: Obj = {"cells": cells(info, obj)}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = partial(obj)
        else:
            row["object"] = None
        rows.append(row)
    meta: Obj = {"resourceVersion": resource_version}
    if continue_token:
        meta["continue"] = continue_token
    table: Obj = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta}
    table["columnDefinitions"] = column_definitions(info) if with_columns else []
    table["rows"] = rows
    return table
