"""The PromQL metric-name parser the chart's dashboard and alert tests share
(tests/support/promql_names.py)."""

from __future__ import annotations

import pytest
from promql_names import metric_names


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        ('sum by (result) (rate(kto_reconciles_total{job=~"$job", result!="ok"}'
         "[$__rate_interval]))", {"kto_reconciles_total"}),
        ("histogram_quantile(0.99, sum by (le) (rate(kto_reconcile_duration_seconds_bucket[5m])))",
         {"kto_reconcile_duration_seconds_bucket"}),
        ("max(kto_offline_partitions) > 0 or up == 0", {"kto_offline_partitions", "up"}),
        ("kto_topics offset 1h * 1e3", {"kto_topics"}),
        ('label_replace(kto_rebalances, "s", "$1", "state", "(.*)")', {"kto_rebalances"}),
        ('max by (namespace, job) (kto_offline_partitions{job="a", namespace="b"}) > 0',
         {"kto_offline_partitions"}),
        ('sum by (job) (increase(kto_reconciles_total{result="error"}[5m])) > 0',
         {"kto_reconciles_total"}),
        ("a_metric > 1e3 and on (name) changes(b_metric[30m]) == 0 and c_metric offset 1h",
         {"a_metric", "b_metric", "c_metric"}),
        ('min(up{job="x"}) == 0 or absent(up{job="x"})', {"up"}),
        ("a_metric * on (name) group_left (kind) b_metric unless c_metric offset 30m",
         {"a_metric", "b_metric", "c_metric"}),
        ("sum without (pod) (a_metric[${window}]) > bool ${threshold}", {"a_metric"}),
        ("max(a_metric) by (job) > 0 or vector(0)", {"a_metric"}),
    ],
)  # fmt: skip
def test_it_reads_metric_names_out_of_promql(expr: str, names: set[str]) -> None:
    assert metric_names(expr) == names
