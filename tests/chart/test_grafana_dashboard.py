"""The chart's Grafana dashboard: its ConfigMap through the real helm, the dashboard's shape, and
every query held to the metrics the operator exports (names and labels, from its registry)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from chart_testing import CHART, NAMESPACE, ensure_binaries, helm, of_kind, one, render
from promql_names import exported_series, metric_names

from kafka_topic_operator.k8s.metrics import REGISTRY, every_family

DASHBOARD_FILE = CHART / "dashboards" / "kafka-topic-operator.json"
ENABLED = ["--set", "zookeeper.connect=zk:2181", "--set", "grafanaDashboard.enabled=true"]
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
# Labels Prometheus gives every series of a scrape target (the Prometheus Operator renames the
# target's own `namespace` to `exported_namespace` unless the ServiceMonitor honors labels).
TARGET_LABELS = frozenset({"job", "instance", "namespace", "exported_namespace", "pod",
                           "service", "endpoint", "container"})  # fmt: skip
# Prometheus' own per-target metric, not the operator's.
PROMETHEUS_METRICS = {"up": frozenset()}
AGGREGATIONS = ("sum", "min", "max", "avg", "count", "group", "stddev", "stdvar")


@pytest.fixture(scope="module", autouse=True)
def binaries() -> Iterator[None]:
    ensure_binaries()
    yield


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD_FILE.read_text())
    return loaded


def panels() -> list[dict[str, Any]]:
    return list(dashboard()["panels"])


def targets() -> list[dict[str, Any]]:
    return [t for p in panels() for t in p.get("targets", [])]


def label_problems(expr: str, legend: str, known: dict[str, frozenset[str]]) -> list[str]:
    """What an expression and its legend name that the metrics read do not have: unknown metrics,
    labels in matchers or `by (...)` the metrics lack, legend labels the result no longer has."""
    bare = re.sub(r'"(?:\\.|[^"\\])*"', '""', expr)
    names = metric_names(bare)
    unknown = sorted(names - known.keys())
    if unknown:
        return [f"unknown metric {n!r} in {expr!r}" for n in unknown]
    labels = frozenset().union(*(known[n] for n in names)) | TARGET_LABELS
    problems = []
    matched = re.findall(r"([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)", " ".join(re.findall(r"\{[^}]*\}",
                         bare)))  # fmt: skip
    grouped = [g for _, g in re.findall(r"\b(by|without)\s*\(([^)]*)\)", bare)]
    for label in matched + [x.strip() for g in grouped for x in g.split(",") if x.strip()]:
        if label not in labels:
            problems.append(f"label {label!r} is not on {sorted(names)} in {expr!r}")
    # What the result still carries: each aggregation keeps only its `by` labels (none without),
    # histogram_quantile drops `le`.
    left = set(labels)
    for by in re.findall(rf"\b(?:{'|'.join(AGGREGATIONS)})\s*(?:by\s*\(([^)]*)\))?\s*\(", bare):
        left &= {x.strip() for x in by.split(",") if x.strip()}
    if "histogram_quantile" in bare:
        left.discard("le")
    for label in re.findall(r"\{\{\s*(\w+)\s*\}\}", legend):
        if label not in left:
            problems.append(f"legend label {label!r} is not in the result of {expr!r}")
    return problems


def variable_query(definition: str) -> tuple[str, str]:
    """A Grafana query variable's `label_values(SERIES, LABEL)`: the series' PromQL and the label
    its values come from (as a legend naming it, for the checks above)."""
    found = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\s*\)\s*", definition)
    assert found, f"not a label_values(...) variable: {definition!r}"
    return found[1], "{{" + found[2] + "}}"


def known_metrics() -> dict[str, frozenset[str]]:
    return {**exported_series(), **PROMETHEUS_METRICS}


# The chart.


def test_the_default_rendering_has_no_dashboard() -> None:
    docs = render("--set", "zookeeper.connect=zk:2181")
    assert of_kind(docs, "ConfigMap") == []


def test_enabled_it_is_one_configmap_holding_the_dashboard_file() -> None:
    docs = render(*ENABLED)
    configmap = one(docs, "ConfigMap")
    assert configmap["metadata"]["namespace"] == NAMESPACE
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert configmap["metadata"]["labels"]["app.kubernetes.io/instance"] == "kto"
    assert "annotations" not in configmap["metadata"]
    assert list(configmap["data"]) == ["kafka-topic-operator.json"]
    assert json.loads(configmap["data"]["kafka-topic-operator.json"]) == dashboard()


def test_the_namespace_labels_and_annotations_are_the_values() -> None:
    docs = render(*ENABLED, "--set", "grafanaDashboard.namespace=monitoring",
                  "--set", "grafanaDashboard.labels.grafana_dashboard=kto",
                  "--set", "grafanaDashboard.annotations.grafana_folder=Kafka")  # fmt: skip
    metadata = one(docs, "ConfigMap")["metadata"]
    assert metadata["namespace"] == "monitoring"
    assert metadata["labels"]["grafana_dashboard"] == "kto"
    assert metadata["annotations"] == {"grafana_folder": "Kafka"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "grafanaDashboard.enabled=yes"],
         "at '/grafanaDashboard/enabled': got string, want boolean"),
        (["--set", "grafanaDashboard.folder=Kafka"], "additional properties 'folder' not allowed"),
        (["--set", "grafanaDashboard.namespace=Monitoring"], "at '/grafanaDashboard/namespace'"),
        (["--set", "grafanaDashboard.labels.team=1"],
         "at '/grafanaDashboard/labels/team': got number, want string"),
    ],
)  # fmt: skip
def test_the_schema_refuses_bad_values(args: list[str], message: str) -> None:
    done = helm("template", "kto", str(CHART), "--set", "zookeeper.connect=zk:2181", *args)
    assert done.returncode != 0
    assert message in done.stderr


# The dashboard's shape.


def test_the_dashboard_is_identified_and_asks_for_a_prometheus_data_source() -> None:
    board = dashboard()
    assert board["uid"] == "kafka-topic-operator"
    assert board["title"] == "Kafka topic operator"
    assert board["tags"] and board["schemaVersion"] >= 36
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    for variable in variables.values():
        if variable["type"] == "query":
            assert variable["datasource"] == DATASOURCE


def test_panels_have_unique_ids_titles_and_descriptions() -> None:
    ids = [p["id"] for p in panels()]
    assert len(ids) == len(set(ids))
    for panel in panels():
        assert panel["title"].strip(), panel
        if panel["type"] != "row":
            assert panel["description"].strip(), panel["title"]
            assert panel["type"] in {"timeseries", "stat", "bargauge"}, panel["title"]
            assert panel["targets"], panel["title"]


def test_panels_fit_24_columns_without_overlapping() -> None:
    taken: dict[tuple[int, int], str] = {}
    for panel in panels():
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["w"] > 0 and grid["h"] > 0 and grid["y"] >= 0
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        for column in range(grid["x"], grid["x"] + grid["w"]):
            for row in range(grid["y"], grid["y"] + grid["h"]):
                assert (column, row) not in taken, f"{panel['title']} over {taken[column, row]}"
                taken[column, row] = panel["title"]


def test_every_target_has_a_ref_id_an_expression_and_the_data_source_variable() -> None:
    for panel in panels():
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == DATASOURCE, panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs)) and all(refs), panel["title"]
        for target in panel["targets"]:
            assert target["expr"].strip(), panel["title"]
            assert target["datasource"] == DATASOURCE, panel["title"]


def test_the_dashboard_shows_every_metric_the_operator_exports() -> None:
    shown = set().union(*(metric_names(t["expr"]) for t in targets()))
    families = {f.name for f in every_family()}
    suffixes = ("", "_total", "_bucket", "_sum", "_count")
    missing = {f for f in families if not any(f + suffix in shown for suffix in suffixes)}
    assert missing == set()


# Every query against the operator's metrics.


def test_every_query_reads_only_metrics_the_operator_exports_with_their_labels() -> None:
    known = known_metrics()
    queries = [(t["expr"], t.get("legendFormat", "")) for t in targets()]
    variables = dashboard()["templating"]["list"]
    queries += [variable_query(v["definition"]) for v in variables if v["type"] == "query"]
    problems = [p for expr, legend in queries for p in label_problems(expr, legend, known)]
    assert problems == []
    assert len(queries) >= 15


def test_the_variables_query_a_series_present_from_the_start() -> None:
    """The job variable's values come from a series every operator exports before its first
    reconcile (an unlabelled histogram's count), not one that appears later."""
    at_start = {s.name for f in REGISTRY.collect() for s in f.samples}
    for variable in dashboard()["templating"]["list"]:
        if variable["type"] == "query":
            assert metric_names(variable_query(variable["definition"])[0]) <= at_start


@pytest.mark.parametrize(
    ("expr", "legend", "problem"),
    [
        ("sum by (result) (rate(kto_reconcile_total[$__rate_interval]))", "",
         "unknown metric 'kto_reconcile_total'"),
        ("kto_offline_partition", "", "unknown metric 'kto_offline_partition'"),
        ('histogram_quantile(0.9, sum by (le) (rate(kto_reconcile_duration_seconds[5m])))', "",
         "unknown metric 'kto_reconcile_duration_seconds'"),
        ("sum by (reason) (kto_topics) / kto_topic_count", "", "unknown metric 'kto_topic_count'"),
        ("sum by (outcome) (rate(kto_reconciles_total[5m]))", "", "label 'outcome' is not on"),
        ('kto_topics{state="Created"}', "", "label 'state' is not on"),
        ("sum by (reason) (kto_topics)", "{{state}}", "legend label 'state' is not in"),
        ("sum(kto_rebalance_partitions)", "{{name}}", "legend label 'name' is not in"),
        ('histogram_quantile(0.5, sum by (le) (rate(kto_reconcile_duration_seconds_bucket[5m])))',
         "{{le}}", "legend label 'le' is not in"),
    ],
)  # fmt: skip
def test_the_checker_catches_a_misspelled_metric_or_label(
    expr: str, legend: str, problem: str
) -> None:
    problems = label_problems(expr, legend, known_metrics())
    assert any(problem in p for p in problems), problems


def test_the_checker_accepts_the_registrys_names_and_labels() -> None:
    known = known_metrics()
    assert {"kto_reconciles_total", "kto_reconcile_duration_seconds_bucket", "kto_topics",
            "kto_rebalance_partitions", "kto_rebalance_plan_moves"} <= known.keys()  # fmt: skip
    assert known["kto_reconciles_total"] == {"result"}
    assert known["kto_rebalance_partitions"] == {"namespace", "name", "phase"}
    assert "le" in known["kto_reconcile_duration_seconds_bucket"]
    assert known["kto_zookeeper_up"] == known["kto_kafka_up"] == frozenset()
