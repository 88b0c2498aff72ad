"""The chart's PrometheusRule: rendered through the real helm, checked and unit-tested by
Prometheus' own promtool (built from its Go module by `make promtool`) with series that fire
each alert and series that do not (tests/chart/promtool/), and every metric its alerts read
held to the operator's registry."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_testing import CHART, NAMESPACE, ensure_binaries, helm, of_kind, one, render
from promql_names import exported_series, metric_names

from kafka_topic_operator.k8s.metrics import PROGRESS_PHASES
from kto_dev.promtool.build import build

UNIT_TESTS = Path(__file__).parent / "promtool"
# The two backends render different unreachable alerts; each has its own promtool test file,
# whose series and expected annotations assume these values (the defaults, and a team label).
MODES = {
    "zookeeper": ["--set", "zookeeper.connect=zk:2181"],
    "kraft": ["--set", "kafka.bootstrapServers=kafka:9092"],
}
ENABLED = ["--set", "prometheusRule.enabled=true", "--set", "prometheusRule.alertLabels.team=kafka"]
ZOOKEEPER = MODES["zookeeper"]
# What the chart's ServiceMonitor target is labelled with: the metrics Service's name as job.
JOB = "kto-kafka-topic-operator-metrics"
DEFAULT_SELECTOR = f'job="{JOB}", namespace="{NAMESPACE}"'
# Prometheus' own per-target series, not the operator's.
PROMETHEUS_SERIES = {"up"}


@pytest.fixture(scope="module", autouse=True)
def binaries() -> Iterator[None]:
    ensure_binaries()
    yield


@pytest.fixture(scope="module")
def promtool() -> Path:
    """Built once per machine (make promtool); found in the cache every later time."""
    return build()


def rule_of(*args: str) -> dict[str, Any]:
    return one(render(*args), "PrometheusRule")


def alerts_of(rule: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for group in rule["spec"]["groups"] for r in group["rules"]]


def alert_names(rule: dict[str, Any]) -> set[str]:
    return {a["alert"] for a in alerts_of(rule)}


def schema_alert_names() -> set[str]:
    schema = json.loads((CHART / "values.schema.json").read_text())
    disabled = schema["properties"]["prometheusRule"]["properties"]["disabled"]
    return set(disabled["items"]["enum"])


def run_promtool(promtool: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(promtool), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def write_rule_file(rule: dict[str, Any], folder: Path) -> Path:
    """The PrometheusRule's spec is a Prometheus rule file as it is."""
    path = folder / "rules.yaml"
    path.write_text(yaml.safe_dump(rule["spec"], sort_keys=False))
    return path


def unit_tests(mode: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((UNIT_TESTS / f"{mode}-test.yaml").read_text())
    return loaded


# The chart.


def test_the_default_rendering_has_no_prometheusrule() -> None:
    for args in MODES.values():
        assert of_kind(render(*args), "PrometheusRule") == []


def test_enabled_it_lands_in_the_release_namespace_with_the_labels() -> None:
    rule = rule_of(*ZOOKEEPER, *ENABLED, "--set", "prometheusRule.labels.release=prometheus")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["name"] == "kto-kafka-topic-operator"
    assert rule["metadata"]["namespace"] == NAMESPACE
    labels = rule["metadata"]["labels"]
    assert labels["release"] == "prometheus"
    assert labels["app.kubernetes.io/instance"] == "kto"
    moved = rule_of(*ZOOKEEPER, *ENABLED, "--set", "prometheusRule.namespace=monitoring")
    assert moved["metadata"]["namespace"] == "monitoring"
    assert "release" not in moved["metadata"]["labels"]


def test_every_alert_has_a_severity_the_extra_labels_and_what_to_do() -> None:
    for args in MODES.values():
        for alert in alerts_of(rule_of(*args, *ENABLED)):
            assert alert["labels"]["severity"] in {"critical", "warning"}, alert["alert"]
            assert alert["labels"]["team"] == "kafka"
            assert set(alert["annotations"]) == {"summary", "description"}
            assert "kubectl" in alert["annotations"]["description"], alert["alert"]


def test_each_backend_gets_its_own_unreachable_alert() -> None:
    # Each operator serves the gauge of its own kind of cluster only; each rule reads that one.
    zookeeper = alert_names(rule_of(*MODES["zookeeper"], *ENABLED))
    kraft = alert_names(rule_of(*MODES["kraft"], *ENABLED))
    assert zookeeper - kraft == {"KafkaTopicOperatorZooKeeperUnreachable"}
    assert kraft - zookeeper == {"KafkaTopicOperatorKafkaUnreachable"}
    assert zookeeper | kraft == schema_alert_names()


def test_the_selector_is_the_servicemonitors_target_unless_set(tmp_path: Path) -> None:
    docs = render(*ZOOKEEPER, *ENABLED, "--set", "metrics.serviceMonitor.enabled=true")
    service = one(docs, "Service")["metadata"]
    assert service["name"] == JOB and service["namespace"] == NAMESPACE
    for alert in alerts_of(one(docs, "PrometheusRule")):
        selected = re.findall(r"\{([^}]*)\}", alert["expr"])
        assert selected and all(s.startswith(DEFAULT_SELECTOR) for s in selected), alert["alert"]
    values = tmp_path / "selector.yaml"
    values.write_text('prometheusRule:\n  selector: job="kafka-topic-operator", cluster="prod"\n')
    for alert in alerts_of(rule_of(*ZOOKEEPER, *ENABLED, "-f", str(values))):
        selected = re.findall(r"\{([^}]*)\}", alert["expr"])
        assert all(s.startswith('job="kafka-topic-operator", cluster="prod"') for s in selected)


def test_the_thresholds_and_the_disabled_alerts_are_the_values() -> None:
    rule = rule_of("-f", str(CHART / "ci" / "prometheusrule-values.yaml"))
    alerts = {a["alert"]: a for a in alerts_of(rule)}
    assert set(alerts) == schema_alert_names() - {
        "KafkaTopicOperatorKafkaUnreachable",  # disabled; a ZooKeeper-mode cluster's anyway
    }
    fors = {name: alert.get("for") for name, alert in alerts.items()}
    assert fors == {"KafkaTopicPartitionsOffline": "2m", "KafkaTopicUnderReplicatedPartitions":
                    "10m", "KafkaTopicDeletionWaiting": None, "KafkaTopicReconcileErrors": "15m",
                    "KafkaTopicOperatorZooKeeperUnreachable": "2m", "KafkaRebalanceStuck": None,
                    "KafkaTopicOperatorDown": "10m"}  # fmt: skip
    assert alerts["KafkaTopicDeletionWaiting"]["expr"].endswith("> 7200")
    assert "[1h]" in alerts["KafkaRebalanceStuck"]["expr"]
    assert "offset 1h" in alerts["KafkaRebalanceStuck"]["expr"]
    disabled = ["--set", "prometheusRule.disabled={KafkaTopicOperatorDown,KafkaRebalanceStuck}"]
    left = alert_names(rule_of(*ZOOKEEPER, *ENABLED, *disabled))
    assert left == alert_names(rule_of(*ZOOKEEPER, *ENABLED)) - {
        "KafkaTopicOperatorDown",
        "KafkaRebalanceStuck",
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "prometheusRule.enabled=yes"],
         "at '/prometheusRule/enabled': got string, want boolean"),
        (["--set", "prometheusRule.underReplicatedFor=5min"],
         "at '/prometheusRule/underReplicatedFor': '5min' does not match pattern"),
        (["--set", "prometheusRule.rebalanceStuckFor=30"],
         "at '/prometheusRule/rebalanceStuckFor': got number, want string"),
        (["--set", "prometheusRule.offlineFor=m"], "at '/prometheusRule/offlineFor'"),
        (["--set", "prometheusRule.deletionWaitingSeconds=0"],
         "at '/prometheusRule/deletionWaitingSeconds': minimum: got 0, want 1"),
        (["--set", "prometheusRule.alertLabels.severity=page"],
         "at '/prometheusRule/alertLabels/severity'"),
        (["--set", "prometheusRule.disabled={KafkaTopicOffline}"],
         "at '/prometheusRule/disabled/0': value must be one of"),
        (["--set", "prometheusRule.selector=kto"],
         "at '/prometheusRule/selector': 'kto' does not match pattern"),
        (["--set", "prometheusRule.namespace=Monitoring"], "at '/prometheusRule/namespace'"),
        (["--set", "prometheusRule.for=5m"], "additional properties 'for' not allowed"),
        (["--set", "prometheusRule.enabled=true", "--set", "metrics.enabled=false"],
         "prometheusRule.enabled needs metrics.enabled"),
        (["--set", "prometheusRule.enabled=true", "--set", "metrics.service.enabled=false"],
         "prometheusRule.enabled without metrics.service.enabled needs prometheusRule.selector"),
    ],
)  # fmt: skip
def test_bad_values_are_refused_with_the_reason(args: list[str], message: str) -> None:
    done = helm("template", "kto", str(CHART), *ZOOKEEPER, *args)
    assert done.returncode != 0
    assert message in done.stderr


# promtool.


@pytest.mark.promtool
@pytest.mark.parametrize("args", [*MODES.values(), ["-f", str(CHART / "ci" /
                         "prometheusrule-values.yaml")]], ids=[*MODES, "ci"])  # fmt: skip
def test_promtool_checks_the_rules(promtool: Path, args: list[str], tmp_path: Path) -> None:
    rules = write_rule_file(rule_of(*args, *ENABLED), tmp_path)
    done = run_promtool(promtool, "check", "rules", rules.name, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


@pytest.mark.promtool
@pytest.mark.parametrize("mode", MODES)
def test_promtool_fires_each_alert_on_its_series_and_not_on_the_others(
    promtool: Path, mode: str, tmp_path: Path
) -> None:
    write_rule_file(rule_of(*MODES[mode], *ENABLED), tmp_path)
    shutil.copy(UNIT_TESTS / f"{mode}-test.yaml", tmp_path)
    done = run_promtool(promtool, "test", "rules", f"{mode}-test.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_every_alert_has_a_firing_and_a_quiet_case() -> None:
    """zookeeper-test.yaml covers every alert of a ZooKeeper-mode rule; kraft-test.yaml the one a
    KRaft rule has instead, its other alerts being the same rules."""
    rendered = {mode: {a["alert"]: a for a in alerts_of(rule_of(*args, *ENABLED))}
                for mode, args in MODES.items()}  # fmt: skip
    shared = rendered["zookeeper"].keys() & rendered["kraft"].keys()
    for name in shared:
        assert rendered["zookeeper"][name] == rendered["kraft"][name], name
    covered: set[str] = set()
    for mode, alerts in rendered.items():
        checks = [c for test in unit_tests(mode)["tests"] for c in test["alert_rule_test"]]
        fired = {c["alertname"] for c in checks if c.get("exp_alerts")}
        quiet = {c["alertname"] for c in checks if not c.get("exp_alerts")}
        own = alerts.keys() - (shared if mode == "kraft" else set())
        assert fired == own, mode
        assert quiet >= own, mode
        covered |= fired
        for check in checks:
            for alert in check.get("exp_alerts") or []:
                assert {"severity", "team"} <= set(alert["exp_labels"]), check
                assert set(alert["exp_annotations"]) == {"summary", "description"}, check
    assert covered == schema_alert_names()


# The metrics the alerts read.


def test_every_metric_an_alert_reads_is_one_the_operator_exports() -> None:
    exported = exported_series().keys()
    assert {"kto_reconciles_total", "kto_offline_partitions", "kto_rebalance_partitions",
            "kto_reconcile_duration_seconds_bucket"} <= exported  # fmt: skip
    read: set[str] = set()
    for args in MODES.values():
        for alert in alerts_of(rule_of(*args, *ENABLED)):
            names = metric_names(alert["expr"])
            assert names, alert["alert"]
            assert names - PROMETHEUS_SERIES <= exported, alert["alert"]
            read |= names
    assert "kto_zookeeper_up" in read and "kto_kafka_up" in read
    # The rebalance alert's phases are the ones the operator writes.
    stuck = [a for a in alerts_of(rule_of(*ZOOKEEPER, *ENABLED)) if a["alert"] ==
             "KafkaRebalanceStuck"]  # fmt: skip
    phases = set(re.findall(r'phase="(\w+)"', stuck[0]["expr"]))
    assert phases == {"done", "remaining"} and phases <= set(PROGRESS_PHASES)
