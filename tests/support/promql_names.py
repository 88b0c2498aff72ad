"""What a dashboard's or an alert rule's PromQL reads, and what the operator exports: the metric
names in an expression, and every series name the operator can serve with the labels it
carries, for tests holding the chart's queries to the operator's metrics."""

from __future__ import annotations

import re

from prometheus_client.metrics import MetricWrapperBase

from kafka_topic_operator.k8s import metrics

# PromQL's keywords (case-insensitive) and number literals: identifiers that are never metric
# names, although no `(` follows them.
KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
                      "group_left", "group_right", "atan2", "inf", "nan"})  # fmt: skip
# The series a family of each type serves, by the suffix on its name; `le` on a histogram's
# buckets.
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count",
            "_created"), "gauge": ("",)}  # fmt: skip


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads: its identifiers once strings, template
    variables ($__rate_interval, ${x}), label matchers, groupings (by, without, on, ignoring,
    group_left, group_right with their label lists) and range windows are taken out, less
    numbers and durations (1e3, 30m), functions and aggregations (a name followed by `(`) and
    PromQL's keywords."""
    text = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`', '""', expr)
    text = re.sub(r"\$\{[^}]*\}|\$\w+", " ", text)
    text = re.sub(r"\{[^}]*\}", "{}", text)
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    text = re.sub(r"\[[^\]]*\]", "[]", text)
    names = re.findall(r"(?<![\w:.])[A-Za-z_:][\w:]*(?![\w:])(?!\s*\()", text)
    return {name for name in names if name.lower() not in KEYWORDS}


def exported_series() -> dict[str, frozenset[str]]:
    """Every series name the operator can serve, whichever kind of cluster it uses, with the
    labels it carries: its samples' names and labels, and, for a metric with no sample yet (a
    labelled gauge never set), the names its type serves (a counter's `_total`, a histogram's
    `_bucket`, `_sum` and `_count`) with its collector's label names."""
    labels = declared_labels()
    found: dict[str, set[str]] = {}
    for family in metrics.every_family():
        for suffix in SUFFIXES[family.type]:
            found.setdefault(family.name + suffix, set()).update(labels.get(family.name, ()))
        if family.type == "histogram":
            found[family.name + "_bucket"].add("le")
        for sample in family.samples:
            found.setdefault(sample.name, set()).update(sample.labels)
    return {name: frozenset(names) for name, names in found.items()}


def declared_labels() -> dict[str, frozenset[str]]:
    """The label names each of the operator's metrics (kafka_topic_operator.k8s.metrics's
    module-level collectors) is declared with, by family name."""
    collectors = [c for c in vars(metrics).values() if isinstance(c, MetricWrapperBase)]
    # prometheus_client has no public accessor for a metric's label names.
    return {f.name: frozenset(c._labelnames) for c in collectors for f in c.describe()}
