"""The dashboard picture's evaluator and drawing: the PromQL shapes the chart's Grafana dashboard
uses, evaluated over recorded scrapes as Prometheus would, any other shape refused, and the SVG
drawn for every panel. Pure and fast: no operator, no sleeps."""

from __future__ import annotations

import json
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from kto_dev import dashboard_picture as picture
from kto_dev.dashboard_picture import Scrape, UnsupportedQuery, bucket_quantile, evaluate

SVG = "{http://www.w3.org/2000/svg}"
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def exposition(ok: float = 0, error: float = 0, topics: dict[str, int] | None = None,
               offline: int = 0, observations: tuple[float, ...] = ()) -> str:  # fmt: skip
    """A /metrics page in the operator's shape (as prometheus_client writes it)."""
    lines = ["# TYPE kto_reconciles counter",
             f'kto_reconciles_total{{result="ok"}} {ok}',
             f'kto_reconciles_total{{result="error"}} {error}',
             "# TYPE kto_reconcile_duration_seconds histogram"]  # fmt: skip
    for le in (*BUCKETS, float("inf")):
        count = sum(1 for o in observations if o <= le)
        lines.append(f'kto_reconcile_duration_seconds_bucket{{le="{"+Inf" if le > 10 else le}"}} '
                     f"{count}")  # fmt: skip
    lines += [f"kto_reconcile_duration_seconds_count {len(observations)}",
              f"kto_reconcile_duration_seconds_sum {sum(observations)}",
              "# TYPE kto_topics gauge"]  # fmt: skip
    lines += [f'kto_topics{{reason="{r}"}} {n}' for r, n in (topics or {}).items()]
    lines += ["# TYPE kto_offline_partitions gauge", f"kto_offline_partitions {offline}",
              "# TYPE kto_zookeeper_up gauge", "kto_zookeeper_up 1",
              "# TYPE kto_rebalance_partitions gauge"]  # fmt: skip
    rebalance = 'kto_rebalance_partitions{namespace="default",name="even-out",phase="%s"} %d'
    lines += [rebalance % ("done", 4), rebalance % ("remaining", 6)]
    return "\n".join(lines) + "\n"


def only(result: picture.Result) -> list[float | None]:
    assert len(result) == 1, result
    return next(iter(result.values()))


# Selectors and gauges.


def test_a_gauge_is_read_as_is_with_the_labels_prometheus_adds() -> None:
    scrapes = [Scrape(0, exposition(topics={"Created": 3})), Scrape(2, exposition())]
    result = evaluate("kto_topics", scrapes)
    assert result == {(("__name__", "kto_topics"), ("instance", picture.INSTANCE),
                       ("job", picture.JOB), ("reason", "Created")): [3.0, None]}  # fmt: skip


@pytest.mark.parametrize(
    ("matcher", "reasons"),
    [
        ('reason="Created"', {"Created"}),
        ('reason!="Created"', {"BrokersUnavailable", "DeletionIneligible"}),
        ('reason=~"Deletion.*"', {"DeletionIneligible"}),
        ('reason!~"Deletion.*|Created"', {"BrokersUnavailable"}),
        ('job=~"$job", reason="Created"', {"Created"}),
        ('job="someone-else"', set()),
    ],
)
def test_label_matchers_select_series(matcher: str, reasons: set[str]) -> None:
    topics = {"Created": 5, "BrokersUnavailable": 1, "DeletionIneligible": 2}
    result = evaluate(f"kto_topics{{{matcher}}}", [Scrape(0, exposition(topics=topics))])
    assert {dict(labels)["reason"] for labels in result} == reasons


def test_a_failed_scrape_is_up_0_and_nothing_else() -> None:
    scrapes = [Scrape(0, exposition(offline=2)), Scrape(2, None), Scrape(4, exposition())]
    assert only(evaluate('up{job=~"$job"}', scrapes)) == [1.0, 0.0, 1.0]
    assert only(evaluate("kto_offline_partitions", scrapes)) == [2.0, None, 0.0]


# rate() and aggregations.


def test_rate_is_the_per_second_increase_over_the_window() -> None:
    scrapes = [Scrape(t, exposition(ok=n)) for t, n in ((0, 0), (2, 10), (4, 30), (6, 30))]
    result = evaluate('rate(kto_reconciles_total{result="ok"}[4s])', scrapes)
    # Each window holds the scrapes after its start: (t-4, t].
    assert only(result) == [None, 5.0, 10.0, 0.0]
    assert "__name__" not in dict(next(iter(result)))


def test_rate_takes_a_counter_reset_as_a_restart_from_zero() -> None:
    scrapes = [Scrape(t, exposition(ok=n)) for t, n in ((0, 100), (10, 120), (20, 6))]
    result = evaluate('rate(kto_reconciles_total{result="ok"}[1m])', scrapes)
    assert only(result) == [None, 2.0, (20 + 6) / 20]


def test_rate_interval_is_the_window_given() -> None:
    scrapes = [Scrape(t, exposition(ok=t)) for t in range(0, 100, 10)]
    narrow = evaluate('rate(kto_reconciles_total{result="ok"}[$__rate_interval])', scrapes,
                      rate_interval=5)  # fmt: skip
    wide = evaluate('rate(kto_reconciles_total{result="ok"}[$__rate_interval])', scrapes,
                    rate_interval=30)  # fmt: skip
    assert set(only(narrow)) == {None}
    assert only(wide)[1:] == [1.0] * 9


def test_sum_by_groups_and_a_bare_aggregation_keeps_no_labels() -> None:
    scrapes = [Scrape(0, exposition(ok=4, error=1)), Scrape(10, exposition(ok=24, error=1))]
    by_result = evaluate("sum by (result) (rate(kto_reconciles_total[1m]))", scrapes)
    assert by_result == {(("result", "error"),): [None, 0.0], (("result", "ok"),): [None, 2.0]}
    assert evaluate("sum(rate(kto_reconciles_total[1m]))", scrapes) == {(): [None, 2.0]}
    topics = [Scrape(0, exposition(topics={"Created": 5, "BrokersUnavailable": 2}))]
    assert evaluate("max(kto_topics)", topics) == {(): [5.0]}
    assert evaluate("min(kto_topics) by (job)", topics) == {(("job", picture.JOB),): [2.0]}
    assert evaluate("count(kto_topics)", topics) == {(): [2.0]}
    assert evaluate("avg(kto_topics)", topics) == {(): [3.5]}


# histogram_quantile.


def test_bucket_quantile_interpolates_in_the_bucket_the_rank_falls_in() -> None:
    buckets: list[tuple[float, float | None]] = [(0.1, 10), (0.5, 20), (float("inf"), 20)]
    assert bucket_quantile(0.5, buckets) == pytest.approx(0.1)
    assert bucket_quantile(0.75, buckets) == pytest.approx(0.3)
    assert bucket_quantile(0.25, buckets) == pytest.approx(0.05)


def test_bucket_quantile_in_the_inf_bucket_is_the_highest_finite_bound() -> None:
    assert bucket_quantile(0.99, [(0.1, 1), (0.5, 2), (float("inf"), 10)]) == 0.5


def test_bucket_quantile_without_observations_or_buckets_is_absent() -> None:
    assert bucket_quantile(0.5, [(0.1, 0), (float("inf"), 0)]) is None
    assert bucket_quantile(0.5, [(float("inf"), 3)]) is None
    assert bucket_quantile(0.5, [(0.1, 1), (1.0, 3)]) is None  # no +Inf bucket


def test_histogram_quantile_over_bucket_rates() -> None:
    fast, slow = (0.02,) * 90, (3.0,) * 10
    scrapes = [Scrape(0, exposition()), Scrape(10, exposition(observations=fast + slow))]
    expr = ("histogram_quantile({q}, sum by (le) (rate(kto_reconcile_duration_seconds_bucket"
            '{{job=~"$job"}}[$__rate_interval])))')  # fmt: skip
    p50 = only(evaluate(expr.format(q=0.5), scrapes))
    p99 = only(evaluate(expr.format(q=0.99), scrapes))
    assert p50[0] is None and p50[1] == pytest.approx(0.01 + 0.015 * (50 / 90))
    assert p99[1] == pytest.approx(2.5 + 2.5 * (99 - 90) / 10)


def test_histogram_quantile_needs_le() -> None:
    with pytest.raises(UnsupportedQuery, match="without an le label"):
        evaluate("histogram_quantile(0.5, kto_topics)", [Scrape(0, exposition(topics={"A": 1}))])


# What is refused.


@pytest.mark.parametrize(
    ("expr", "why"),
    [
        ("irate(kto_reconciles_total[1m])", "unsupported function irate()"),
        ("kto_topics + kto_offline_partitions", "cannot read '+ kto_offline_partit'"),
        ("sum without (reason) (kto_topics)", "unsupported grouping without"),
        ("topk(3, kto_topics)", "unsupported function topk()"),
        ("kto_topics offset 5m", "unsupported 'offset' after a complete query"),
        ("rate(kto_reconciles_total)", "expected [, found ')'"),
        ("histogram_quantile(q, x)", "expected number, found 'q'"),
        ("sum(", "unexpected 'end'"),
    ],
)  # fmt: skip
def test_any_other_shape_is_refused_naming_it(expr: str, why: str) -> None:
    with pytest.raises(UnsupportedQuery) as refused:
        evaluate(expr, [Scrape(0, exposition())])
    assert why in str(refused.value)
    assert expr in str(refused.value)


# Formatting.


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (None, "s", "No data"),
        (0.0042, "s", "4.2 ms"),
        (0.5, "s", "500 ms"),
        (42.0, "s", "42 s"),
        (150.0, "s", "2.5 min"),
        (7200.0, "s", "2 hour"),
        (0.0, "s", "0 s"),
        (3.25, "ops", "3.25 ops/s"),
        (12.0, "none", "12"),
        (0.125, "none", "0.125"),
        (1500.0, "none", "1.5 K"),
    ],
)
def test_values_are_formatted_in_their_units(value: float | None, unit: str, shown: str) -> None:
    assert picture.formatted(value, unit) == shown


# The picture.


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(picture.DASHBOARD.read_text())
    return loaded


def story() -> list[Scrape]:
    """Two minutes of an operator creating topics, with an offline broker for a while."""
    scrapes = []
    for i in range(61):
        created = min(i * 5, 200)
        offline = 3 if 20 <= i < 40 else 0
        observations = tuple(0.01 + (j % 7) * 0.02 for j in range(created))
        scrapes.append(Scrape(1_700_000_000 + 2 * i, exposition(
            ok=created, error=i // 10, offline=offline, observations=observations,
            topics={"Created": created - offline, "BrokersUnavailable": offline})))  # fmt: skip
    scrapes[45] = Scrape(scrapes[45].at, None)
    return scrapes


def test_every_query_of_the_dashboard_is_one_the_evaluator_handles() -> None:
    scrapes = story()
    for panel in dashboard()["panels"]:
        for target in panel.get("targets", []):
            evaluate(target["expr"], scrapes)


def test_the_picture_draws_every_panel_with_its_title_and_values() -> None:
    svg = picture.render(dashboard(), story())
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    texts = [t.text for t in root.iter(f"{SVG}text")]
    for panel in dashboard()["panels"]:
        assert panel["title"] in texts or any(
            t and t.endswith("…") and panel["title"].startswith(t[:-1]) for t in texts
        ), panel["title"]
    assert "Kafka topic operator" in texts
    assert "UP" in texts  # the operator's up, mapped; the last scrape succeeded
    assert texts.count("No data") >= 2  # no under-replicated partitions series, no rebalances
    assert "ok" in texts and "p99" in texts and "even-out done" in texts
    assert len(list(root.iter(f"{SVG}polyline"))) >= 8
    assert str(picture.DASHBOARD.parents[3]) not in svg  # no path of this machine


def test_the_stat_colour_follows_the_thresholds() -> None:
    panel = next(p for p in dashboard()["panels"] if p["title"] == "Offline partitions")
    assert picture.threshold_color(panel, 0.0) == picture.NAMED["green"]
    assert picture.threshold_color(panel, 3.0) == picture.NAMED["red"]


def test_a_picture_needs_two_scrapes() -> None:
    with pytest.raises(ValueError, match="at least two scrapes"):
        picture.render(dashboard(), [Scrape(0, exposition())])


# Recording and the command line.


class Metrics(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = exposition(ok=7).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def metrics_url() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), Metrics)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/metrics"
    server.shutdown()
    server.server_close()


def test_record_scrapes_on_a_clock_and_render_draws_from_the_file(
    metrics_url: str, tmp_path: Path
) -> None:
    now = [1000.0]
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    out = tmp_path / "scrapes.jsonl"
    taken = picture.record(metrics_url, 6, 2, out, clock=lambda: now[0], sleep=sleep)
    assert taken == 4 and waits == [2.0] * 4
    scrapes = picture.load(out)
    assert [s.at for s in scrapes] == [1000.0, 1002.0, 1004.0, 1006.0]
    assert all(s.text and "kto_reconciles_total" in s.text for s in scrapes)
    svg = tmp_path / "dashboard.svg"
    assert picture.main(["render", "--scrapes", str(out), "--out", str(svg)]) == 0
    assert ET.fromstring(svg.read_text()).tag == f"{SVG}svg"


def test_a_failed_scrape_is_recorded_as_null(tmp_path: Path) -> None:
    now = [0.0]
    out = tmp_path / "scrapes.jsonl"
    # Port 9 (discard) on loopback: nothing listens, the connection is refused at once.

    def sleep(seconds: float) -> None:
        now[0] += seconds

    picture.record("http://127.0.0.1:9/metrics", 0, 1, out, clock=lambda: now[0], sleep=sleep)
    assert picture.load(out) == [Scrape(0.0, None)]


def test_render_reports_an_unsupported_query(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    board = dashboard()
    board["panels"][1]["targets"][0]["expr"] = "irate(up[1m])"
    (tmp_path / "board.json").write_text(json.dumps(board))
    scrapes = tmp_path / "scrapes.jsonl"
    scrapes.write_text("".join(json.dumps({"at": t, "text": exposition()}) + "\n" for t in (0, 2)))
    code = picture.main(["render", "--scrapes", str(scrapes), "--out", str(tmp_path / "x.svg"),
                         "--dashboard", str(tmp_path / "board.json")])  # fmt: skip
    assert code == 1
    assert "unsupported function irate()" in capsys.readouterr().err
