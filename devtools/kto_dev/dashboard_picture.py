"""A picture of the chart's Grafana dashboard drawn without Grafana, from the operator's own
`/metrics`: this records scrapes of a running operator and draws the dashboard's panel grid as
SVG (standard library only; prometheus_client parses the scrapes).

    python -m kto_dev.dashboard_picture record --scrape URL --seconds N --out scrapes.jsonl
    python -m kto_dev.dashboard_picture render --scrapes scrapes.jsonl --out docs/dashboard.svg

Timeseries panels become polylines with their legend (last and max values), stat panels the
last value on its threshold's colour, bar gauges one bar per series. The queries are evaluated
here, for exactly the shapes the dashboard uses: a selector with label matchers, `rate()` of a
counter over a window, `sum|max|min|avg|count [by (...)]`, and `histogram_quantile()` over
bucket rates; any other shape is refused naming what is unsupported. Every scrape also gets the
series Prometheus adds itself: `up` (0 for a failed scrape), and `job` and `instance` labels."""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import sys
import time
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from prometheus_client.parser import text_string_to_metric_families

DASHBOARD = (Path(__file__).resolve().parents[2] / "charts" / "kafka-topic-operator"
             / "dashboards" / "kafka-topic-operator.json")  # fmt: skip
JOB, INSTANCE = "kafka-topic-operator", "kafka-topic-operator:9090"

Labels = tuple[tuple[str, str], ...]  # sorted (name, value) pairs
Sample = tuple[str, Labels, float]
# A query's result: each series' labels and its value at each scrape (None: absent then).
Result = dict[Labels, list[float | None]]


class UnsupportedQuery(ValueError):
    """A PromQL shape this evaluator does not handle."""


# Scrapes.


@dataclass(frozen=True)
class Scrape:
    """One scrape of /metrics: when, and the text (None: the scrape failed)."""

    at: float
    text: str | None


def samples(scrape: Scrape, job: str = JOB, instance: str = INSTANCE) -> list[Sample]:
    """The scrape's samples as Prometheus stores them: with the target's `job` and `instance`,
    and `up` beside them."""
    target = (("instance", instance), ("job", job))
    found: list[Sample] = [("up", target, 0.0 if scrape.text is None else 1.0)]
    for family in text_string_to_metric_families(scrape.text or ""):
        for s in family.samples:
            labels = dict(s.labels) | dict(target)
            found.append((s.name, tuple(sorted(labels.items())), float(s.value)))
    return found


def record(url: str, seconds: float, interval: float, out: Path, *,
           clock: Callable[[], float] = time.time,
           sleep: Callable[[float], None] = time.sleep) -> int:  # fmt: skip
    """Scrapes `url` every `interval` seconds for `seconds`, one JSON line per scrape
    ({"at": epoch seconds, "text": the exposition or null}); returns the number taken."""
    start, taken = clock(), 0
    with out.open("w") as f:
        while clock() - start <= seconds:
            at = clock()
            try:
                with urllib.request.urlopen(url, timeout=interval) as response:
                    text: str | None = response.read().decode()
            except OSError:
                text = None
            f.write(json.dumps({"at": at, "text": text}) + "\n")
            f.flush()
            taken += 1
            sleep(max(0.0, at + interval - clock()))
    return taken


def load(path: Path) -> list[Scrape]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [Scrape(float(x["at"]), x["text"]) for x in lines]


# The evaluator: a tokenizer and a recursive descent over the supported shapes.

TOKEN = re.compile(r'\s*(?:(?P<number>\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w]))|(?P<duration>\d+'
                   r'(?:ms|[smhdwy])(?:\d+(?:ms|[smhdwy]))*)|(?P<name>[A-Za-z_:][\w:]*)|'
                   r'(?P<string>"(?:\\.|[^"\\])*")|(?P<op>=~|!~|!=|=|[(){}\[\],]))')  # fmt: skip
UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
AGGREGATORS = ("sum", "max", "min", "avg", "count")
SUPPORTED = ("selectors with label matchers, rate(counter[window]), "
             f"{'|'.join(AGGREGATORS)} [by (labels)], histogram_quantile(q, ...)")  # fmt: skip


def tokens(expr: str) -> list[tuple[str, str]]:
    found, at = [], 0
    while at < len(expr.rstrip()):
        match = TOKEN.match(expr, at)
        if match is None or match.end() == at:
            raise UnsupportedQuery(f"cannot read {expr[at:].strip()[:20]!r} in {expr!r}")
        kind = match.lastgroup or ""
        found.append((kind, match[kind]))
        at = match.end()
    return found


def seconds_of(duration: str) -> float:
    return sum(int(n) * UNITS[u] for n, u in re.findall(r"(\d+)(ms|[smhdwy])", duration))


@dataclass
class Node:
    """A parsed query: `kind` is selector, rate, aggregate or quantile."""

    kind: str
    name: str = ""
    matchers: tuple[tuple[str, str, str], ...] = ()
    window: float = 0.0
    by: tuple[str, ...] | None = None
    arg: Node | None = None
    q: float = 0.0


class Parser:
    def __init__(self, expr: str) -> None:
        self.expr, self.tokens, self.at = expr, tokens(expr), 0

    def fail(self, why: str) -> UnsupportedQuery:
        return UnsupportedQuery(f"{why} in {self.expr!r}; supported: {SUPPORTED}")

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.at] if self.at < len(self.tokens) else ("end", "")

    def take(self, kind: str, value: str | None = None) -> str:
        got = self.peek()
        if got[0] != kind or (value is not None and got[1] != value):
            raise self.fail(f"expected {value or kind}, found {got[1] or 'the end'!r}")
        self.at += 1
        return got[1]

    def parse(self) -> Node:
        node = self.expression()
        if self.peek()[0] != "end":
            raise self.fail(f"unsupported {self.peek()[1]!r} after a complete query")
        return node

    def expression(self) -> Node:
        kind, value = self.peek()
        if kind != "name":
            raise self.fail(f"unexpected {value or 'end'!r}")
        self.at += 1
        if value in AGGREGATORS:
            by = self.grouping()
            self.take("op", "(")
            node = Node("aggregate", value, arg=self.expression())
            self.take("op", ")")
            node.by = by if by is not None else self.grouping()
            return node
        if value == "rate":
            self.take("op", "(")
            inner = self.selector(self.take("name"))
            self.take("op", "[")
            inner.window = seconds_of(self.take("duration"))
            self.take("op", "]")
            self.take("op", ")")
            return Node("rate", arg=inner)
        if value == "histogram_quantile":
            self.take("op", "(")
            q = float(self.take("number"))
            self.take("op", ",")
            node = Node("quantile", arg=self.expression(), q=q)
            self.take("op", ")")
            return node
        if self.peek() == ("op", "("):
            raise self.fail(f"unsupported function {value}()")
        return self.selector(value)

    def grouping(self) -> tuple[str, ...] | None:
        if self.peek() == ("name", "without"):
            raise self.fail("unsupported grouping without (...)")
        if self.peek() != ("name", "by"):
            return None
        self.at += 1
        self.take("op", "(")
        labels = []
        while self.peek() != ("op", ")"):
            labels.append(self.take("name"))
            if self.peek() == ("op", ","):
                self.at += 1
        self.take("op", ")")
        return tuple(labels)

    def selector(self, name: str) -> Node:
        matchers = []
        if self.peek() == ("op", "{"):
            self.at += 1
            while self.peek() != ("op", "}"):
                label = self.take("name")
                op = self.take("op")
                if op not in ("=", "!=", "=~", "!~"):
                    raise self.fail(f"unexpected {op!r} after label {label}")
                matchers.append((label, op, json.loads(self.take("string"))))
                if self.peek() == ("op", ","):
                    self.at += 1
            self.take("op", "}")
        return Node("selector", name, tuple(matchers))


def substitute(expr: str, rate_interval: float) -> str:
    """Grafana's variables: `$__rate_interval` the window given, any other variable All (.*)."""
    expr = expr.replace("$__rate_interval", f"{round(rate_interval * 1000)}ms")
    return re.sub(r"\$\{?\w+\}?", ".*", expr)


def matches(labels: Labels, matchers: Iterable[tuple[str, str, str]]) -> bool:
    values = dict(labels)
    for label, op, wanted in matchers:
        value = values.get(label, "")
        hit = re.fullmatch(wanted, value) is not None if "~" in op else value == wanted
        if hit == op.startswith("!"):
            return False
    return True


def evaluate(expr: str, scrapes: Sequence[Scrape], *, rate_interval: float = 30.0,
             parsed: Sequence[list[Sample]] | None = None) -> Result:  # fmt: skip
    """The query's series over the scrapes (each value at each scrape time)."""
    node = Parser(substitute(expr, rate_interval)).parse()
    every = parsed if parsed is not None else [samples(s) for s in scrapes]
    return _evaluate(node, [s.at for s in scrapes], every)


def _evaluate(node: Node, times: list[float], every: Sequence[list[Sample]]) -> Result:
    if node.kind == "selector":
        found: Result = {}
        for i, scraped in enumerate(every):
            for name, labels, value in scraped:
                if name == node.name and matches(labels, node.matchers):
                    named = tuple(sorted((*labels, ("__name__", name))))
                    found.setdefault(named, [None] * len(times))[i] = value
        return found
    assert node.arg is not None
    inner = _evaluate(node.arg, times, every)
    if node.kind == "rate":
        return {tuple((k, v) for k, v in labels if k != "__name__"):
                [_rate(times, values, i, node.arg.window) for i in range(len(times))]
                for labels, values in inner.items()}  # fmt: skip
    if node.kind == "aggregate":
        return _aggregate(node.name, node.by or (), inner, len(times))
    return _quantiles(node.q, inner, len(times))


def _rate(times: list[float], values: list[float | None], i: int, window: float) -> float | None:
    """Per-second increase over the window ending at scrape `i`, counter resets included."""
    points = [(t, v) for t, v in zip(times[: i + 1], values[: i + 1], strict=True)
              if v is not None and t > times[i] - window]  # fmt: skip
    if len(points) < 2 or points[-1][0] == points[0][0]:
        return None
    increase = sum(b - a if b >= a else b for (_, a), (_, b) in itertools.pairwise(points))
    return increase / (points[-1][0] - points[0][0])


def _aggregate(how: str, by: tuple[str, ...], inner: Result, n: int) -> Result:
    groups: dict[Labels, list[list[float | None]]] = {}
    for labels, values in inner.items():
        key = tuple((k, v) for k, v in labels if k in by)
        groups.setdefault(key, []).append(values)
    combine: dict[str, Callable[[list[float]], float]] = {
        "sum": sum, "max": max, "min": min, "count": len,
        "avg": lambda xs: sum(xs) / len(xs),
    }  # fmt: skip
    out: Result = {}
    for key, members in groups.items():
        at = [[v for v in (m[i] for m in members) if v is not None] for i in range(n)]
        out[key] = [float(combine[how](xs)) if xs else None for xs in at]
    return out


def _quantiles(q: float, inner: Result, n: int) -> Result:
    groups: dict[Labels, list[tuple[float, list[float | None]]]] = {}
    for labels, values in inner.items():
        le = dict(labels).get("le")
        if le is None:
            raise UnsupportedQuery("histogram_quantile() over series without an le label")
        key = tuple((k, v) for k, v in labels if k != "le")
        groups.setdefault(key, []).append((float(le), values))
    out: Result = {}
    for key, buckets in groups.items():
        buckets.sort(key=lambda b: b[0])
        out[key] = [bucket_quantile(q, [(le, v[i]) for le, v in buckets]) for i in range(n)]
    return out


def bucket_quantile(q: float, buckets: list[tuple[float, float | None]]) -> float | None:
    """Prometheus' bucketQuantile: linear interpolation in the bucket the rank falls in; the
    highest finite bound when it falls in +Inf's; None without observations."""
    known = [(le, c) for le, c in buckets if c is not None]
    if len(known) < 2 or not math.isinf(known[-1][0]) or known[-1][1] <= 0:
        return None
    rank = q * known[-1][1]
    lower, below = 0.0, 0.0
    for i, (le, count) in enumerate(known):
        if count >= rank:
            if math.isinf(le):
                return known[i - 1][0]
            if i == 0 and le <= 0:
                return le
            return lower + (le - lower) * (rank - below) / (count - below or 1.0)
        lower, below = le, count
    return None


# Formatting values as Grafana does for the units the dashboard uses.


def number(value: float) -> str:
    if abs(value) >= 1000:
        return f"{value / 1000:.3g} K" if abs(value) < 1e6 else f"{value / 1e6:.3g} Mil"
    if value == int(value):
        return str(int(value))
    return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}".rstrip("0").rstrip(".")


def formatted(value: float | None, unit: str) -> str:
    if value is None or math.isnan(value):
        return "No data"
    if unit == "s":
        for limit, scale, name in ((1e-3, 1e-6, "µs"), (1.0, 1e-3, "ms"), (60.0, 1.0, "s"),
                                   (3600.0, 60.0, "min"), (math.inf, 3600.0, "hour")):  # fmt: skip
            if abs(value) < limit or limit == math.inf:
                return f"{number(value / scale)} {name}" if value else "0 s"
    if unit == "ops":
        return f"{number(value)} ops/s"
    return number(value)


# The SVG.

PALETTE = ("#7EB26D", "#EAB839", "#6ED0E0", "#EF843C", "#E24D42", "#1F78C1", "#BA43A9",
           "#705DA0", "#508642", "#CCA300", "#447EBC", "#C15C17")  # fmt: skip
NAMED = {"green": "#73BF69", "red": "#F2495C", "yellow": "#FADE2A", "orange": "#FF9830",
         "blue": "#5794F2"}  # fmt: skip
BG, PANEL, BORDER, TEXT, MUTED, GRID = ("#111217", "#181b1f", "#2c3235", "#ccccdc", "#8e8e8e",
                                         "#2a2d32")  # fmt: skip
COLUMN, ROW, GAP, HEADER = 60, 30, 8, 56


@dataclass
class Series:
    name: str
    values: list[float | None]
    color: str


def legend(fmt: str, labels: Labels) -> str:
    values = dict(labels)
    if not fmt:
        inner = ", ".join(f'{k}="{v}"' for k, v in labels if k != "__name__")
        return f"{values.get('__name__', '')}{{{inner}}}"
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: values.get(m[1], ""), fmt)


def panel_series(panel: dict[str, Any], scrapes: Sequence[Scrape], parsed: Sequence[list[Sample]],
                 rate_interval: float) -> list[Series]:  # fmt: skip
    found: list[Series] = []
    for target in panel.get("targets", []):
        result = evaluate(target["expr"], scrapes, rate_interval=rate_interval, parsed=parsed)
        for labels, values in sorted(result.items()):
            found.append(Series(legend(target.get("legendFormat", ""), labels), values, ""))
    for i, series in enumerate(found):
        series.color = PALETTE[i % len(PALETTE)]
    return found


def last(values: Sequence[float | None]) -> float | None:
    return next((v for v in reversed(values) if v is not None), None)


def text(x: float, y: float, content: str, *, size: int = 12, fill: str = TEXT,
         anchor: str = "start", weight: str = "normal") -> str:  # fmt: skip
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{fill}" '
            f'text-anchor="{anchor}" font-weight="{weight}">{escape(content)}</text>')  # fmt: skip


def fit(content: str, width: float, size: int) -> str:
    most = max(1, int(width / (size * 0.56)))
    return content if len(content) <= most else content[: most - 1] + "…"


def threshold_color(panel: dict[str, Any], value: float | None) -> str:
    steps = panel["fieldConfig"]["defaults"].get("thresholds", {}).get("steps", [])
    color = "green"
    for step in steps:
        if step["value"] is None or (value is not None and value >= step["value"]):
            color = step["color"]
    return NAMED.get(color, color)


def mapped(panel: dict[str, Any], value: float | None) -> str | None:
    for mapping in panel["fieldConfig"]["defaults"].get("mappings", []):
        if mapping.get("type") == "value" and value is not None:
            option = mapping["options"].get(number(value))
            if option:
                return str(option["text"])
    return None


def draw_stat(panel: dict[str, Any], series: list[Series], box: tuple[float, float, float, float],
              unit: str) -> list[str]:  # fmt: skip
    x, y, w, h = box
    if not series:
        return [text(x + w / 2, y + h / 2 + 8, "No data", size=22, fill=MUTED, anchor="middle")]
    parts, each = [], w / len(series)
    for i, s in enumerate(series):
        value = last(s.values)
        left = x + i * each
        fill = threshold_color(panel, value)
        parts.append(f'<rect x="{left + 2:.1f}" y="{y:.1f}" width="{each - 4:.1f}" '
                     f'height="{h:.1f}" rx="2" fill="{fill}"/>')  # fmt: skip
        shown = mapped(panel, value) or formatted(value, unit)
        size = int(min(30, h * 0.42, (each - 8) / max(1, len(shown)) * 1.6))
        named = len(series) > 1 or panel["options"].get("textMode") == "value_and_name"
        if named:
            parts.append(text(left + each / 2, y + 16, fit(s.name, each - 8, 11), size=11,
                              fill="#ffffff", anchor="middle"))  # fmt: skip
        middle = y + h / 2 + size / 2.6 + (6 if named else 0)
        parts.append(text(left + each / 2, middle, shown, size=size, fill="#ffffff",
                          anchor="middle", weight="bold"))  # fmt: skip
    return parts


def draw_bars(series: list[Series], box: tuple[float, float, float, float],
              unit: str) -> list[str]:  # fmt: skip
    x, y, w, h = box
    if not series:
        return [text(x + w / 2, y + h / 2, "No data", size=18, fill=MUTED, anchor="middle")]
    values = [last(s.values) or 0.0 for s in series]
    top = max(values) or 1.0
    row = min(34.0, h / len(series))
    parts = []
    for i, (s, value) in enumerate(zip(series, values, strict=True)):
        top_y = y + i * row
        parts.append(text(x, top_y + 11, fit(s.name, w * 0.7, 11), size=11))
        bar_w, bar_h = w - 70, max(4.0, row - 17)
        parts.append(f'<rect x="{x:.1f}" y="{top_y + 14:.1f}" width="{bar_w:.1f}" '
                     f'height="{bar_h:.1f}" fill="{GRID}"/>')  # fmt: skip
        parts.append(f'<rect x="{x:.1f}" y="{top_y + 14:.1f}" width="{bar_w * value / top:.1f}" '
                     f'height="{bar_h:.1f}" fill="{s.color}" fill-opacity="0.85"/>')  # fmt: skip
        parts.append(text(x + w, top_y + 14 + bar_h / 2 + 5, formatted(value, unit), size=14,
                          fill=s.color, anchor="end", weight="bold"))  # fmt: skip
    return parts


def nice_top(value: float) -> float:
    if value <= 0:
        return 1.0
    magnitude = 10.0 ** math.floor(math.log10(value))
    steps = (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10)
    return next(float(m * magnitude) for m in steps if m * magnitude >= value)


def clock(at: float, span: float) -> str:
    return time.strftime("%H:%M:%S" if span < 600 else "%H:%M", time.gmtime(at))


def draw_timeseries(panel: dict[str, Any], series: list[Series], times: list[float],
                    box: tuple[float, float, float, float], unit: str) -> list[str]:  # fmt: skip
    x, y, w, h = box
    rows = min(len(series), max(1, int(h * 0.4 / 16) - 1))
    legend_h = 16 * (rows + 1) + (14 if rows < len(series) else 0) if series else 0
    plot_x, plot_y, plot_w, plot_h = x + 52, y + 4, w - 56, h - legend_h - 24
    custom = panel["fieldConfig"]["defaults"]["custom"]
    stacked = custom["stacking"]["mode"] == "normal"
    opacity = custom.get("fillOpacity", 0) / 100
    drawn = [list(s.values) for s in series]
    # Stacked: each series drawn on the ones before it, its band filled down to them.
    floors: list[list[float]] = []
    below = [0.0] * len(times)
    for values in drawn:
        floors.append(list(below))
        for i, v in enumerate(values):
            if v is not None and stacked:
                below[i] += v
                values[i] = below[i]
    peak = max((v for values in drawn for v in values if v is not None), default=0.0)
    top = nice_top(peak)
    parts = []
    for tick in range(5):
        value = top * tick / 4
        ty = plot_y + plot_h - plot_h * tick / 4
        parts.append(f'<line x1="{plot_x:.1f}" y1="{ty:.1f}" x2="{plot_x + plot_w:.1f}" '
                     f'y2="{ty:.1f}" stroke="{GRID}" stroke-width="1"/>')  # fmt: skip
        parts.append(text(plot_x - 6, ty + 4, formatted(value, unit), size=10, fill=MUTED,
                          anchor="end"))  # fmt: skip
    start, span = times[0], max(times[-1] - times[0], 1.0)
    step = next((s for s in (10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200)
                 if span / s <= max(2, plot_w / 90)), span / 2)  # fmt: skip
    tick_at = math.ceil(start / step) * step
    while tick_at <= times[-1]:
        tx = plot_x + plot_w * (tick_at - start) / span
        parts.append(f'<line x1="{tx:.1f}" y1="{plot_y:.1f}" x2="{tx:.1f}" '
                     f'y2="{plot_y + plot_h:.1f}" stroke="{GRID}" stroke-width="1"/>')  # fmt: skip
        parts.append(text(tx, plot_y + plot_h + 14, clock(tick_at, span), size=10, fill=MUTED,
                          anchor="middle"))  # fmt: skip
        tick_at += step

    def at(i: int) -> float:
        return plot_x + plot_w * (times[i] - start) / span

    def point(i: int, v: float) -> str:
        return f"{at(i):.1f},{plot_y + plot_h - plot_h * v / top:.1f}"

    for s, values, floor in reversed(list(zip(series, drawn, floors, strict=True))):
        for run in _runs(values):
            line = " ".join(point(i, v) for i, v in run)
            if opacity and len(run) > 1:
                base = " ".join(point(i, floor[i] if stacked else 0.0) for i, _ in reversed(run))
                parts.append(f'<polygon points="{line} {base}" fill="{s.color}" '
                             f'fill-opacity="{opacity:g}" stroke="none"/>')  # fmt: skip
            parts.append(f'<polyline points="{line}" fill="none" stroke="{s.color}" '
                         f'stroke-width="1.5"/>')  # fmt: skip
    if not series:
        parts.append(text(plot_x + plot_w / 2, plot_y + plot_h / 2, "No data", size=16, fill=MUTED,
                          anchor="middle"))  # fmt: skip
        return parts
    ly = plot_y + plot_h + 34
    columns = [x + w - 160, x + w - 80]  # Last, Max
    for name, cx in zip(("Last", "Max"), columns, strict=True):
        parts.append(text(cx + 74, ly - 2, name, size=10, fill="#6e9fff", anchor="end"))
    for i, s in enumerate(series[:rows]):
        ry = ly + 16 * (i + 1) - 2
        known = [v for v in s.values if v is not None]
        parts.append(f'<rect x="{x + 4:.1f}" y="{ry - 7:.1f}" width="14" height="4" rx="1" '
                     f'fill="{s.color}"/>')  # fmt: skip
        parts.append(text(x + 24, ry, fit(s.name, columns[0] - x - 28, 11), size=11))
        for figure, cx in zip((last(s.values), max(known, default=None)), columns, strict=True):
            parts.append(text(cx + 74, ry, formatted(figure, unit), size=11, anchor="end"))
    if rows < len(series):
        parts.append(text(x + 24, ly + 16 * (rows + 1) + 8, f"+ {len(series) - rows} more",
                          size=10, fill=MUTED))  # fmt: skip
    return parts


def _runs(values: list[float | None]) -> list[list[tuple[int, float]]]:
    """Stretches of present values: a line breaks where a series is absent, as in Grafana."""
    runs: list[list[tuple[int, float]]] = [[]]
    for i, v in enumerate(values):
        if v is None:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append((i, v))
    return [run for run in runs if run]


def render(dashboard: dict[str, Any], scrapes: Sequence[Scrape], *,
           rate_interval: float = 30.0) -> str:  # fmt: skip
    """The dashboard as an SVG document over the scrapes' time range."""
    if len(scrapes) < 2:
        raise ValueError("a picture needs at least two scrapes")
    parsed = [samples(s) for s in scrapes]
    times = [s.at for s in scrapes]
    panels = dashboard["panels"]
    width = 24 * COLUMN
    height = HEADER + max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels) * ROW + GAP
    minutes = (times[-1] - times[0]) / 60
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="Inter, Helvetica, Arial, sans-serif">',
             f'<rect width="{width}" height="{height}" fill="{BG}"/>',
             text(GAP, 26, dashboard["title"], size=18, weight="bold"),
             text(GAP, 46, "Data source: Prometheus   Job: All", size=11, fill=MUTED),
             text(width - GAP, 26, f"{clock(times[0], 3600)} to {clock(times[-1], 3600)} UTC "
                  f"({minutes:.0f} min), rate interval {rate_interval:g}s", size=11, fill=MUTED,
                  anchor="end")]  # fmt: skip
    for panel in panels:
        grid = panel["gridPos"]
        px, py = grid["x"] * COLUMN + GAP / 2, HEADER + grid["y"] * ROW + GAP / 2
        pw, ph = grid["w"] * COLUMN - GAP, grid["h"] * ROW - GAP
        if panel["type"] == "row":
            parts.append(text(px, py + 18, panel["title"], size=14, weight="bold"))
            continue
        parts.append(f'<rect x="{px:.1f}" y="{py:.1f}" width="{pw:.1f}" height="{ph:.1f}" '
                     f'rx="3" fill="{PANEL}" stroke="{BORDER}"/>')  # fmt: skip
        parts.append(text(px + 8, py + 20, fit(panel["title"], pw - 16, 13), size=13,
                          weight="bold"))  # fmt: skip
        series = panel_series(panel, scrapes, parsed, rate_interval)
        unit = panel["fieldConfig"]["defaults"].get("unit", "none")
        box = (px + 8, py + 30, pw - 16, ph - 38)
        if panel["type"] == "stat":
            parts += draw_stat(panel, series, box, unit)
        elif panel["type"] == "bargauge":
            parts += draw_bars(series, box, unit)
        elif panel["type"] == "timeseries":
            parts += draw_timeseries(panel, series, times, box, unit)
        else:
            raise ValueError(f"panel {panel['title']!r}: no drawing for type {panel['type']!r}")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kto_dev.dashboard_picture",
        description="Record scrapes of the operator's /metrics, and draw the chart's Grafana "
        "dashboard from them as SVG.",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    rec = sub.add_parser("record", help="scrape /metrics every --interval seconds")
    rec.add_argument("--scrape", required=True, metavar="URL", help="the operator's /metrics")
    rec.add_argument("--seconds", type=float, required=True)
    rec.add_argument("--interval", type=float, default=2.0)
    rec.add_argument("--out", type=Path, required=True, help="the scrapes, one JSON line each")
    draw = sub.add_parser("render", help="draw the dashboard from recorded scrapes")
    draw.add_argument("--scrapes", type=Path, required=True)
    draw.add_argument("--out", type=Path, required=True, help="the SVG")
    draw.add_argument("--dashboard", type=Path, default=DASHBOARD)
    draw.add_argument("--rate-interval", type=float, default=30.0, metavar="SECONDS",
                      help="what $__rate_interval stands for (30)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.action == "record":
        taken = record(args.scrape, args.seconds, args.interval, args.out)
        print(f"{taken} scrapes written to {args.out}")
        return 0
    scrapes = load(args.scrapes)
    try:
        svg = render(json.loads(args.dashboard.read_text()), scrapes,
                     rate_interval=args.rate_interval)  # fmt: skip
    except ValueError as e:  # UnsupportedQuery among them
        print(f"dashboard_picture: {e}", file=sys.stderr)
        return 1
    args.out.write_text(svg)
    print(f"{args.out} drawn from {len(scrapes)} scrapes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
