"""The rebalance plan as one self-contained HTML page (pure): a summary, per-broker bar charts
before and after (replicas, leaders, and bytes when partition sizes are known), and the moves.

The page is read from a ConfigMap or a CI artifact, often offline or under strict policies, so it
loads nothing: inline CSS, hand-written inline SVG, no JavaScript, and a Content-Security-Policy
that forbids fetching anything. Topic names, racks and reasons are user data: every one of them
goes through `html.escape`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from kafka_topic_operator.rebalance.algorithms.bounds import balanced_counts
from kafka_topic_operator.rebalance.algorithms.goals import DISK_TOLERANCE, disk_band
from kafka_topic_operator.rebalance.results.summary import (
    BrokerLoad,
    OptimizationResult,
    PartitionMove,
)

# Chart layout, in px. A broker's group of two bars gets PREFERRED_PLOT / brokers, clamped: wide
# enough to see (215 brokers scroll sideways rather than shrink to hairlines), narrow enough that
# 3 brokers do not turn into slabs.
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 40, 64
_PLOT_HEIGHT = 220
_PREFERRED_PLOT, _MIN_GROUP, _MAX_GROUP = 900.0, 8.0, 72.0
_MIN_WIDTH = 380.0  # room for the legend
_FONT_PX = 11
_CHAR_PX = 6.6  # a generous average glyph width at 11 px, to keep labels apart
_BEFORE_FILL, _AFTER_FILL, _TARGET_FILL = "#a0aec0", "#2b6cb0", "#38a169"

_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_BROKER_COLUMNS = (
    "Broker", "Rack", "Replicas before", "Replicas after", "Leaders before", "Leaders after"
)  # fmt: skip
_MOVE_COLUMNS = ("Topic", "Partition", "Replicas before", "Replicas after", "Leader change")

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#1a202c;line-height:1.4}
h1{font-size:1.5rem;margin:0 0 .25rem}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
.meta,.muted{color:#4a5568}
table{border-collapse:collapse;margin:.5rem 0}
th,td{border:1px solid #cbd5e0;padding:.2rem .5rem;text-align:left;vertical-align:top}
thead th{background:#edf2f7}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.chart{overflow-x:auto;max-width:100%}
.chart svg{display:block}
.warning{border-left:4px solid #d69e2e;background:#fffaf0;padding:.25rem 1rem;margin:1rem 0}
mark.gained{background:#c6f6d5;color:inherit;font-weight:600;padding:0 .1em}
s.lost{color:#9b2c2c}
.leader-change{color:#2c5282;font-weight:600}
.truncated{font-style:italic}
"""


def render_html(
    result: OptimizationResult,
    changes: Sequence[PartitionMove],
    *,
    title: str,
    generated_at: str | None = None,
    move_limit: int = 5000,
) -> str:
    """One self-contained HTML5 document describing the plan; `changes` are listed in the order
    given, at most `move_limit` of them."""
    if move_limit < 0:
        raise ValueError("move_limit must not be negative")
    holders = sum(1 for b in result.brokers if b.replicas_after > 0)
    replicas = _Series(
        "replicas",
        tuple(b.replicas_before for b in result.brokers),
        tuple(b.replicas_after for b in result.brokers),
    )
    leaders = _Series(
        "leaders",
        tuple(b.leaders_before for b in result.brokers),
        tuple(b.leaders_after for b in result.brokers),
    )
    body = [
        f"<h1>{escape(title)}</h1>",
        _generated_line(generated_at),
        _summary_section(result, len(changes)),
        _unbalanced_section(result.unbalanced),
        _chart_section(
            "replicas-chart",
            "Replicas per broker",
            result.brokers,
            replicas,
            _target_band(sum(replicas.after), holders),
        ),
        _chart_section(
            "leaders-chart",
            "Leaders per broker",
            result.brokers,
            leaders,
            _target_band(sum(leaders.after), holders),
        ),
        _bytes_chart(result.brokers, holders),
        _broker_table(result.brokers),
        _moves_section(changes, move_limit),
    ]
    return _document(title, "\n".join(part for part in body if part))


def _document(title: str, body: str) -> str:
    # The policy makes the "loads nothing" promise hold in the browser too, should anything slip.
    csp = "default-src 'none'; style-src 'unsafe-inline'"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        f"<title>{escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n"
        f"<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def _generated_line(generated_at: str | None) -> str:
    return "" if generated_at is None else f'<p class="meta">Generated {escape(generated_at)}</p>'


# Summary


def _summary_section(result: OptimizationResult, partitions: int) -> str:
    rows = [
        ("Replica moves", f"{result.replica_moves:,}"),
        *(
            [
                ("Off the brokers being removed", f"{result.drain_moves:,}"),
                ("To balance the rest", f"{result.replica_moves - result.drain_moves:,}"),
            ]
            if result.drain_moves
            else []
        ),
        ("Leader moves", f"{result.leader_moves:,}"),
        ("Partitions changed", f"{partitions:,}"),
        ("Lower bound on replica moves", f"{result.replica_lower_bound:,}"),
        ("Replica moves / lower bound", _ratio(result.replica_moves, result.replica_lower_bound)),
    ]
    if result.generate_replica_moves is not None:
        rows += [
            ("Replica moves by --generate", f"{result.generate_replica_moves:,}"),
            ("--generate / lower bound",
             _ratio(result.generate_replica_moves, result.replica_lower_bound)),
        ]  # fmt: skip
    if result.data_to_move_bytes is not None:
        size, readable = result.data_to_move_bytes, human_bytes(result.data_to_move_bytes)
        exact = "" if size < 1024 else f' <span class="muted">({size:,} B)</span>'
        rows.append(("Data to move", readable + exact))
    balance = f"{_percent(result.balance_before)} → {_percent(result.balance_after)}"
    rows.append(("Balance score", balance))
    cells = "\n".join(
        f'<tr><th scope="row">{label}</th><td class="num">{value}</td></tr>'
        for label, value in rows
    )
    return (
        '<section aria-labelledby="summary"><h2 id="summary">Summary</h2>\n'
        f'<table class="summary">\n<tbody>\n{cells}\n</tbody>\n</table>\n</section>'
    )


def _unbalanced_section(reasons: Sequence[str]) -> str:
    if not reasons:
        return ""
    items = "\n".join(f"<li>{escape(reason)}</li>" for reason in reasons)
    return (
        '<section class="warning" aria-labelledby="unbalanced">'
        '<h2 id="unbalanced">⚠ Not fully balanced</h2>\n'
        f"<ul>\n{items}\n</ul>\n</section>"
    )


def _ratio(numerator: int, denominator: int) -> str:
    # No ratio against a bound of 0: the plan is either empty too or did more than balance.
    return "—" if denominator == 0 else f"{numerator / denominator:.2f}\N{MULTIPLICATION SIGN}"


def _percent(score: float) -> str:
    return f"{score:.2f}".rstrip("0").rstrip(".") + "%"


def human_bytes(size: int) -> str:
    """Binary units, one decimal: 1610612736 is "1.5 GiB"."""
    value, unit = float(size), 0
    # Round before comparing, so 1023.96 KiB reads 1.0 MiB rather than 1024.0 KiB.
    while unit < len(_BYTE_UNITS) - 1 and round(value, 1) >= 1024:
        value, unit = value / 1024, unit + 1
    return f"{size:,} B" if unit == 0 else f"{value:.1f} {_BYTE_UNITS[unit]}"


# Charts


@dataclass(frozen=True, slots=True)
class _Series:
    """One chart's data: a count per broker (in the order of the result's brokers). A series of
    bytes reads in binary units: its axis in the largest unit its peak reaches."""

    noun: str
    before: tuple[int, ...]
    after: tuple[int, ...]
    in_bytes: bool = False

    def text(self, value: int) -> str:
        return human_bytes(value) if self.in_bytes else _counted(value, self.noun)

    def span(self, band: tuple[int, int], dash: str) -> str:
        if not self.in_bytes:
            return _span(band, dash)
        return f"{human_bytes(band[0])}{dash}{human_bytes(band[1])}"

    def unit(self, peak: int) -> tuple[str, int]:
        """(name, bytes) of the axis' unit, or ("", 1) for counts."""
        if not self.in_bytes:
            return "", 1
        power = 0
        while power < len(_BYTE_UNITS) - 1 and peak >= 1024 ** (power + 1):
            power += 1
        return _BYTE_UNITS[power], 1024**power


@dataclass(frozen=True, slots=True)
class _Frame:
    """Where the plot area sits and how counts map to pixels."""

    brokers: int
    group: float  # px per broker, both bars and the gap around them
    axis_top: int  # the count at the top of the y axis

    @property
    def plot_width(self) -> float:
        return self.brokers * self.group

    @property
    def width(self) -> float:
        return max(_LEFT + self.plot_width + _RIGHT, _MIN_WIDTH)

    @property
    def height(self) -> float:
        return _TOP + _PLOT_HEIGHT + _BOTTOM

    @property
    def baseline(self) -> float:
        return _TOP + _PLOT_HEIGHT

    def x(self, index: int) -> float:
        return _LEFT + index * self.group

    def y(self, count: float) -> float:
        return self.baseline - _PLOT_HEIGHT * count / self.axis_top


def _chart_section(
    anchor: str,
    heading: str,
    loads: Sequence[BrokerLoad],
    series: _Series,
    band: tuple[int, int] | None,
) -> str:
    return (
        f'<section aria-labelledby="{anchor}"><h2 id="{anchor}">{heading}</h2>\n'
        f'<div class="chart">\n{_bar_chart(heading, loads, series, band)}\n</div>\n</section>'
    )


def _bytes_chart(loads: Sequence[BrokerLoad], holders: int) -> str:
    """Bytes per broker, with DiskUsageDistribution's band around the mean; none without sizes."""
    before = [load.bytes_before for load in loads if load.bytes_before is not None]
    after = [load.bytes_after for load in loads if load.bytes_after is not None]
    if not loads or len(before) != len(loads) or len(after) != len(loads):
        return ""
    series = _Series("bytes", tuple(before), tuple(after), in_bytes=True)
    band = None
    if holders:
        low, high = disk_band(sum(series.after), holders)
        band = math.ceil(low), math.floor(high)
    return _chart_section("bytes-chart", "Bytes per broker", loads, series, band)


def _target_band(total: int, holders: int) -> tuple[int, int] | None:
    """(low, high) counts of a balanced broker: q and q + 1, or q alone when the total divides
    evenly (then no broker may hold q + 1)."""
    if holders == 0:
        return None
    q, r = balanced_counts(total, holders)
    return q, q + (1 if r else 0)


def _bar_chart(
    heading: str, loads: Sequence[BrokerLoad], series: _Series, band: tuple[int, int] | None
) -> str:
    peak = max((*series.before, *series.after, band[1] if band else 0, 1))
    unit = series.unit(peak)
    step = _tick_step(-(-peak // unit[1])) * unit[1]
    frame = _Frame(
        brokers=len(loads),
        group=max(_MIN_GROUP, min(_MAX_GROUP, _PREFERRED_PLOT / max(len(loads), 1))),
        axis_top=-(-peak // step) * step,
    )
    target = f"; balanced target {_target_text(band, series)}" if band else ""
    label = f"{heading} before and after the plan, {len(loads)} brokers{target}"
    # Presentation attributes rather than the page's CSS, so the SVG still reads when copied out.
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(label)}" '
        f'width="{_px(frame.width)}" height="{_px(frame.height)}" '
        f'viewBox="0 0 {_px(frame.width)} {_px(frame.height)}" '
        f'font-family="system-ui, sans-serif" font-size="{_FONT_PX}" fill="#1a202c">\n'
        f"<title>{escape(label)}</title>\n"
        f"{_y_axis(frame, step, unit, series.noun)}\n"
        f"{_bars(frame, loads, series)}\n"
        f"{_band(frame, band, series)}\n"
        f"{_x_axis(frame, loads)}\n"
        f"{_legend(band, series)}\n"
        "</svg>"
    )


def _tick_step(peak: int) -> int:
    """1, 2 or 5 times a power of ten, giving at most about five gridlines."""
    raw = peak / 5
    power = 10 ** max(0, math.floor(math.log10(raw))) if raw >= 1 else 1
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _y_axis(frame: _Frame, step: int, unit: tuple[str, int], noun: str) -> str:
    right = _LEFT + frame.plot_width
    parts = []
    for count in range(0, frame.axis_top + 1, step):
        y = _px(frame.y(count))
        parts.append(
            f'<line x1="{_LEFT}" x2="{_px(right)}" y1="{y}" y2="{y}" stroke="#e2e8f0"/>'
            f'<text x="{_LEFT - 6}" y="{y}" text-anchor="end" dominant-baseline="middle">'
            f"{count // unit[1]}</text>"
        )
    noun = unit[0] or noun
    middle = _px(_TOP + _PLOT_HEIGHT / 2)
    parts.append(
        f'<line x1="{_LEFT}" x2="{_LEFT}" y1="{_TOP}" y2="{_px(frame.baseline)}" stroke="#4a5568"/>'
        f'<text class="axis-label" transform="rotate(-90)" x="-{middle}" y="16" '
        f'text-anchor="middle">{noun} per broker</text>'
    )
    return '<g class="y-axis">' + "".join(parts) + "</g>"


def _band(frame: _Frame, band: tuple[int, int] | None, series: _Series) -> str:
    if band is None:
        return ""
    low, high = band
    top, bottom = frame.y(high), frame.y(low)
    # An exact target (low == high) is a line: keep 2 px of it visible, centred on the count.
    if bottom - top < 2:
        top, bottom = top - 1, bottom + 1
    # Drawn over the bars, translucent, and transparent to the pointer: the bars keep their
    # hover titles where the band crosses them.
    return (
        f'<rect class="target" data-low="{low}" data-high="{high}" x="{_LEFT}" '
        f'y="{_px(top)}" width="{_px(frame.plot_width)}" height="{_px(bottom - top)}" '
        f'fill="{_TARGET_FILL}" fill-opacity="0.18" stroke="{_TARGET_FILL}" '
        f'stroke-dasharray="4 3" pointer-events="none">'
        f"<title>balanced target: {_target_text(band, series)} per broker</title></rect>"
    )


def _bars(frame: _Frame, loads: Sequence[BrokerLoad], series: _Series) -> str:
    # Two bars fill 80% of a broker's group; the rest separates neighbouring brokers.
    width = frame.group * 0.4
    parts = []
    for i, load in enumerate(loads):
        name = _broker_name(load)
        pairs = (
            ("before", series.before[i], _BEFORE_FILL),
            ("after", series.after[i], _AFTER_FILL),
        )
        for j, (when, count, fill) in enumerate(pairs):
            x, y = frame.x(i) + frame.group * 0.1 + j * width, frame.y(count)
            parts.append(
                f'<rect class="bar {when}" data-broker="{load.broker}" x="{_px(x)}" y="{_px(y)}" '
                f'width="{_px(width)}" height="{_px(frame.baseline - y)}" fill="{fill}">'
                f"<title>{escape(name)}: {series.text(count)} {when}</title></rect>"
            )
    return '<g class="bars">' + "\n".join(parts) + "</g>"


def _x_axis(frame: _Frame, loads: Sequence[BrokerLoad]) -> str:
    baseline = _px(frame.baseline)
    parts = [
        f'<line x1="{_LEFT}" x2="{_px(_LEFT + frame.plot_width)}" y1="{baseline}" '
        f'y2="{baseline}" stroke="#4a5568"/>'
    ]
    ids = [str(load.broker) for load in loads]
    racks = [load.rack or "" for load in loads]
    every = _label_step(ids, frame.group)
    parts.append(_label_row(frame, ids, every, frame.baseline + 14, "broker-label"))
    if any(racks):
        # A rack shows only under a shown broker id, so that the two read as one label.
        every *= _label_step(racks, frame.group * every)
        parts.append(_label_row(frame, racks, every, frame.baseline + 28, "rack-label"))
    axis = "broker (rack)" if any(racks) else "broker"
    parts.append(
        f'<text class="axis-label" x="{_px(_LEFT + frame.plot_width / 2)}" '
        f'y="{_px(frame.height - 8)}" text-anchor="middle">{axis}</text>'
    )
    return '<g class="x-axis">' + "".join(parts) + "</g>"


def _label_step(labels: Sequence[str], room: float) -> int:
    """Label every k-th broker only, k the smallest that keeps the widest label from overlapping
    the next shown one, `room` px apart."""
    widest = max((len(label) for label in labels), default=0) * _CHAR_PX + 6
    return max(1, math.ceil(widest / room))


def _label_row(frame: _Frame, labels: Sequence[str], every: int, y: float, cls: str) -> str:
    """Labels centred under their broker's bars."""
    return "".join(
        f'<text class="{cls}" x="{_px(frame.x(i) + frame.group / 2)}" y="{_px(y)}" '
        f'text-anchor="middle">{escape(label)}</text>'
        for i, label in enumerate(labels)
        if i % every == 0 and label
    )


def _target_text(band: tuple[int, int], series: _Series) -> str:
    if series.in_bytes:
        return f"{series.span(band, ' to ')} (mean ± {DISK_TOLERANCE:.0%})"
    return f"{_span(band, ' to ')} {series.noun}"


def _legend(band: tuple[int, int] | None, series: _Series) -> str:
    entries = [("before", _BEFORE_FILL, ""), ("after", _AFTER_FILL, "")]
    if band is not None:
        span = f"mean ± {DISK_TOLERANCE:.0%}" if series.in_bytes else _span(band, "\N{EN DASH}")
        entries.append((f"balanced target {span}", _TARGET_FILL, ' fill-opacity="0.35"'))
    parts, x = [], float(_LEFT)
    for text, fill, extra in entries:
        parts.append(
            f'<rect x="{_px(x)}" y="12" width="12" height="12" fill="{fill}"{extra}/>'
            f'<text x="{_px(x + 16)}" y="18" dominant-baseline="middle">{text}</text>'
        )
        x += 16 + len(text) * _CHAR_PX + 14
    return '<g class="legend">' + "".join(parts) + "</g>"


def _counted(count: int, plural: str) -> str:
    return f"{count} {plural[:-1] if count == 1 else plural}"


def _span(band: tuple[int, int], dash: str) -> str:
    return f"{band[0]}" if band[0] == band[1] else f"{band[0]}{dash}{band[1]}"


def _broker_name(load: BrokerLoad) -> str:
    return f"broker {load.broker}" + (f" (rack {load.rack})" if load.rack is not None else "")


def _px(value: float) -> str:
    """Coordinates with at most two decimals, without trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


# Tables


def _broker_table(loads: Sequence[BrokerLoad]) -> str:
    """The charts' numbers as a table: exact, and readable without seeing the bars."""
    sized = bool(loads) and all(
        load.bytes_before is not None and load.bytes_after is not None for load in loads
    )
    rows = "\n".join(
        f'<tr><th scope="row">{load.broker}</th><td>{escape(load.rack or "")}</td>'
        f'<td class="num">{load.replicas_before}</td><td class="num">{load.replicas_after}</td>'
        f'<td class="num">{load.leaders_before}</td><td class="num">{load.leaders_after}</td>'
        + (
            f'<td class="num">{load.bytes_before or 0:,}</td>'
            f'<td class="num">{load.bytes_after or 0:,}</td>'
            if sized
            else ""
        )
        + "</tr>"
        for load in loads
    )
    columns = _BROKER_COLUMNS + (("Bytes before", "Bytes after") if sized else ())
    head = "".join(f'<th scope="col">{h}</th>' for h in columns)
    return (
        '<section aria-labelledby="brokers"><h2 id="brokers">Brokers</h2>\n'
        f"<details><summary>{'Counts and bytes' if sized else 'Counts'} per broker</summary>\n"
        f'<table class="brokers">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody>\n'
        "</table>\n</details>\n</section>"
    )


def _moves_section(changes: Sequence[PartitionMove], limit: int) -> str:
    heading = '<section aria-labelledby="moves"><h2 id="moves">Moves</h2>\n'
    if not changes:
        return heading + "<p>No partition changes: nothing to move.</p>\n</section>"
    shown = changes[:limit]
    rows = "\n".join(_move_row(move) for move in shown)
    head = "".join(f'<th scope="col">{h}</th>' for h in _MOVE_COLUMNS)
    return (
        heading + '<p class="muted">Brokers a partition gains are '
        '<mark class="gained">highlighted</mark>; brokers it leaves are <s class="lost">struck'
        "</s>. The first replica is the preferred leader.</p>\n"
        f'<table class="moves">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody>\n'
        f"</table>\n{_truncation_note(len(changes), len(shown))}</section>"
    )


def _move_row(move: PartitionMove) -> str:
    gained, lost = set(move.after) - set(move.before), set(move.before) - set(move.after)
    leader = ""
    if move.leader_changed:
        old, new = (str(r[0]) if r else "none" for r in (move.before, move.after))
        leader = f'<span class="leader-change">leader {old} → {new}</span>'
    return (
        f"<tr><td>{escape(move.partition.topic)}</td>"
        f'<td class="num">{move.partition.partition}</td>'
        f"<td>{_replica_list(move.before, lost, 's', 'lost')}</td>"
        f"<td>{_replica_list(move.after, gained, 'mark', 'gained')}</td>"
        f"<td>{leader}</td></tr>"
    )


def _replica_list(replicas: Sequence[int], marked: set[int], tag: str, cls: str) -> str:
    return ", ".join(
        f'<{tag} class="{cls}">{b}</{tag}>' if b in marked else str(b) for b in replicas
    )


def _truncation_note(total: int, shown: int) -> str:
    if shown == total:
        return ""
    return (
        f'<p class="truncated">{total - shown:,} more partition changes not shown '
        f"(first {shown:,} of {total:,}); the reassignment JSON holds the full plan.</p>\n"
    )
