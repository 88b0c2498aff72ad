"""The plan's HTML report: self-contained, escaped, well-formed, and its charts, summary and moves
say what the optimization result says."""

from __future__ import annotations

import itertools
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest

from kafka_topic_operator.kafka.topic_partition import TopicPartition as TP
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel
from kafka_topic_operator.rebalance.results.report import human_bytes, render_html
from kafka_topic_operator.rebalance.results.summary import (
    OptimizationResult,
    PartitionMove,
    partition_moves,
    summarize,
)

SVG = "{http://www.w3.org/2000/svg}"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}  # fmt: skip
BAR_TITLE = re.compile(
    r"broker (\d+)(?: \(rack (.*)\))?: (\d+) (replicas?|leaders?) (before|after)"
)

# Parsing


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self) -> Iterator[Element]:
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.iter()

    def all(self, tag: str, cls: str | None = None) -> list[Element]:
        return [e for e in self.iter() if e.tag == tag
                and (cls is None or cls in e.attrs.get("class", "").split())]  # fmt: skip

    def one(self, tag: str, cls: str | None = None) -> Element:
        (found,) = self.all(tag, cls)
        return found


class TreeBuilder(HTMLParser):
    """A strict tree: every element must be closed, in order (the report never leans on the
    HTML parser's error recovery)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]
        self.doctype: str | None = None

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Element(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(doc: str) -> TreeBuilder:
    builder = TreeBuilder()
    builder.feed(doc)
    builder.close()
    assert [e.tag for e in builder.stack] == ["#document"], "unclosed elements"
    return builder


def charts(doc: str) -> dict[str, ET.Element]:
    """Each inline SVG, parsed as XML (so it must be well-formed), by what it charts."""
    out = {}
    for svg in re.findall(r"<svg\b.*?</svg>", doc, re.S):
        root = ET.fromstring(svg)
        out[root.attrib["aria-label"].split()[0].lower()] = root
    return out


def bars(svg: ET.Element) -> list[ET.Element]:
    return [r for r in svg.iter(f"{SVG}rect") if "bar" in r.attrib.get("class", "").split()]


def bar_values(svg: ET.Element) -> dict[int, tuple[int, int]]:
    """(before, after) per broker, read from the bars' hover titles."""
    values: dict[int, dict[str, int]] = {}
    for bar in bars(svg):
        title = bar.find(f"{SVG}title")
        assert title is not None and title.text is not None
        match = BAR_TITLE.fullmatch(title.text)
        assert match is not None, title.text
        assert bar.attrib["class"] == f"bar {match[5]}"
        assert bar.attrib["data-broker"] == match[1]
        values.setdefault(int(match[1]), {})[match[5]] = int(match[3])
    return {b: (v["before"], v["after"]) for b, v in values.items()}


def summary(tree: Element) -> dict[str, str]:
    table = tree.one("table", "summary")
    return {row.one("th").text(): row.one("td").text() for row in table.all("tr")}


def move_rows(tree: Element) -> list[Element]:
    return tree.one("table", "moves").one("tbody").all("tr")


# Hand-made clusters

# Brokers 1-3 hold 6, 4 and 1 replicas (5, 2 and 0 leaders); broker 4 is new. The plan moves
# four replicas onto brokers 3 and 4: replicas 3, 3, 2, 3 and leaders 2, 1, 2, 2 after.
BEFORE = {
    TP("t", 0): (1, 2), TP("t", 1): (1, 3), TP("t", 2): (2, 1), TP("t", 3): (1, 2),
    TP("u", 0): (1,), TP("u", 1): (2,), TP("u", 2): (1,),
}  # fmt: skip
AFTER = {**BEFORE, TP("t", 1): (3, 4), TP("t", 3): (4, 2), TP("u", 1): (3,), TP("u", 2): (4,)}
RACKS = {1: "a", 2: "b", 3: "c", 4: "d"}
REPLICAS = {1: (6, 3), 2: (4, 3), 3: (1, 2), 4: (0, 3)}
LEADERS = {1: (5, 2), 2: (2, 1), 3: (0, 2), 4: (0, 2)}
GIB = 1 << 30


def small(**kwargs: object) -> tuple[OptimizationResult, list[PartitionMove]]:
    model = ClusterModel(BEFORE, RACKS)
    result = summarize(model, AFTER, [1, 2, 3, 4], **kwargs)  # type: ignore[arg-type]
    return result, partition_moves(BEFORE, AFTER)


def render(result: OptimizationResult, changes: list[PartitionMove], **kwargs: object) -> str:
    return render_html(result, changes, title="Rebalance plan", **kwargs)  # type: ignore[arg-type]


def test_the_hand_made_cluster_is_what_the_assertions_assume() -> None:
    result, changes = small()
    assert (result.replica_moves, result.leader_moves, result.replica_lower_bound) == (4, 4, 4)
    assert {b.broker: (b.replicas_before, b.replicas_after) for b in result.brokers} == REPLICAS
    assert {b.broker: (b.leaders_before, b.leaders_after) for b in result.brokers} == LEADERS
    assert (result.balance_before, result.balance_after) == (60.39, 100.0)
    assert [m.partition for m in changes] == [TP("t", 1), TP("t", 3), TP("u", 1), TP("u", 2)]


# Self-contained, escaped, well-formed, accessible


def test_the_report_loads_nothing_from_anywhere_and_runs_no_script() -> None:
    result, changes = small(sizes={TP("t", 1): GIB}, unbalanced=["one rack short"])
    doc = render(result, changes, generated_at="2024-05-01T12:00:00Z")
    tree = parse(doc).root
    fetching = {"script", "link", "img", "iframe", "object", "embed", "image", "use", "audio",
                "video", "source", "foreignobject", "base", "form"}  # fmt: skip
    assert not fetching & {e.tag for e in tree.iter()}
    for element in tree.iter():
        for name, value in element.attrs.items():
            assert name not in {"src", "href", "xlink:href", "srcset", "action", "poster"}
            assert not name.startswith("on"), name
            assert "url(" not in value and "javascript:" not in value.lower()
    style = tree.one("style").text()
    assert "url(" not in style and "@import" not in style
    # The only address in the page is the SVG namespace, which is a name, not a fetch.
    # (three charts: replicas, leaders, and bytes since sizes are known)
    assert re.findall(r"\w+://[^\"' >]*", doc) == ["http://www.w3.org/2000/svg"] * 3
    csp = [m.attrs["content"] for m in tree.all("meta")
           if m.attrs.get("http-equiv") == "Content-Security-Policy"]  # fmt: skip
    assert csp and csp[0].startswith("default-src 'none'")


def test_the_report_is_a_well_formed_accessible_html5_document() -> None:
    result, changes = small(sizes={TP("t", 1): GIB}, unbalanced=["one rack short"])
    builder = parse(render(result, changes))  # asserts every element closes in order
    tree = builder.root
    assert builder.doctype is not None and builder.doctype.lower() == "doctype html"
    assert tree.one("html").attrs["lang"] == "en"
    assert any(m.attrs.get("charset") == "utf-8" for m in tree.all("meta"))
    assert tree.one("head").one("title").text() == "Rebalance plan" == tree.one("h1").text()
    for th in tree.all("th"):
        assert th.attrs.get("scope") in {"row", "col"}
    for table in ("moves", "brokers"):
        assert tree.one("table", table).one("thead").all("th")
    svgs = tree.all("svg")
    assert len(svgs) == 3
    for svg in svgs:
        assert svg.attrs["role"] == "img"
        assert svg.attrs["aria-label"].startswith(
            ("Replicas per broker", "Leaders per broker", "Bytes per broker")
        )
        first = next(c for c in svg.children if isinstance(c, Element))
        assert first.tag == "title" and first.text() == svg.attrs["aria-label"]
    ids = [e.attrs["id"] for e in tree.iter() if "id" in e.attrs]
    assert len(ids) == len(set(ids))
    for section in tree.all("section"):
        assert section.attrs["aria-labelledby"] in ids


def test_every_text_from_the_data_is_escaped() -> None:
    evil = "<img src=x onerror=alert(1)>"
    before = {TP(evil, 0): (1, 2), TP("t&t", 0): (1, 2)}
    after = {TP(evil, 0): (2, 3), TP("t&t", 0): (1, 3)}
    racks = {1: "<script>alert(2)</script>", 2: "r\"2'", 3: "r&3"}
    result = summarize(ClusterModel(before, racks), after, [1, 2, 3],
                       unbalanced=["<a href=x>rack</a> & more"])  # fmt: skip
    doc = render_html(result, partition_moves(before, after), title="<b>plan</b>",
                      generated_at="<i>now</i>")  # fmt: skip
    assert "<img" not in doc and "<script" not in doc and "<b>" not in doc and "<a " not in doc
    tree = parse(doc).root
    assert {"img", "script", "b", "i", "a"}.isdisjoint(e.tag for e in tree.iter())
    assert tree.one("head").one("title").text() == "<b>plan</b>" == tree.one("h1").text()
    assert "<i>now</i>" in tree.one("p", "meta").text()
    assert [row.all("td")[0].text() for row in move_rows(tree)] == [evil, "t&t"]
    assert tree.one("section", "warning").one("li").text() == "<a href=x>rack</a> & more"
    # Racks reach the charts' labels and hover titles intact, and the SVGs stay well-formed XML.
    charted = charts(doc)
    for svg in charted.values():
        labels = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "rack-label"]
        assert labels == [racks[1]]  # the long rack name thins the labels
    titles = [t.text for t in charted["replicas"].iter(f"{SVG}title")]
    assert f"broker 1 (rack {racks[1]}): 2 replicas before" in titles
    assert f"broker 2 (rack {racks[2]}): 1 replica after" in titles
    rack_cells = [row.all("td")[0].text() for row in tree.one("table", "brokers").all("tr")[1:]]
    assert rack_cells == [racks[1], racks[2], racks[3]]


# Charts


@pytest.mark.parametrize(("chart", "expected"), [("replicas", REPLICAS), ("leaders", LEADERS)])
def test_each_chart_has_a_bar_before_and_after_per_broker_titled_with_its_count(
    chart: str, expected: dict[int, tuple[int, int]]
) -> None:
    svg = charts(render(*small()))[chart]
    assert len(bars(svg)) == 2 * len(expected)
    assert bar_values(svg) == expected
    # One scale: every bar's height is its count times the same px per unit, from one baseline.
    heights = [(float(b.attrib["height"]), count_of(b)) for b in bars(svg)]
    tallest = max(heights)
    assert all(h == pytest.approx(n * tallest[0] / tallest[1], abs=0.02) for h, n in heights)
    assert all(h == 0 for h, n in heights if n == 0)
    assert len({float(b.attrib["y"]) + float(b.attrib["height"]) for b in bars(svg)}) == 1
    # The after bar sits right of its before bar, and brokers run left to right in id order.
    xs = [float(b.attrib["x"]) for b in bars(svg)]
    assert xs == sorted(xs)
    assert [int(b.attrib["data-broker"]) for b in bars(svg)[::2]] == sorted(expected)


def count_of(bar: ET.Element) -> int:
    match = BAR_TITLE.fullmatch(bar.findtext(f"{SVG}title") or "")
    assert match is not None
    return int(match[3])


def band_of(svg: ET.Element) -> tuple[int, int, float, float]:
    (band,) = [r for r in svg.iter(f"{SVG}rect") if r.get("class") == "target"]
    y, height = float(band.attrib["y"]), float(band.attrib["height"])
    return int(band.attrib["data-low"]), int(band.attrib["data-high"]), y, y + height


def pixels(svg: ET.Element, count: float) -> float:
    """Where `count` sits on the chart's y axis, from a non-empty bar's geometry."""
    bar = next(b for b in bars(svg) if float(b.attrib["height"]) > 0)
    baseline = float(bar.attrib["y"]) + float(bar.attrib["height"])
    return baseline - float(bar.attrib["height"]) / count_of(bar) * count


def test_the_target_band_spans_q_to_q_plus_1_of_the_total_after_over_the_brokers_holding_it() -> (
    None
):
    charted = charts(render(*small()))
    # 11 replicas on 4 brokers: q = 2 (three brokers hold 3); 7 leaders: q = 1.
    for chart, q in (("replicas", 2), ("leaders", 1)):
        low, high, top, bottom = band_of(charted[chart])
        assert (low, high) == (q, q + 1)
        assert top == pytest.approx(pixels(charted[chart], q + 1), abs=0.02)
        assert bottom == pytest.approx(pixels(charted[chart], q), abs=0.02)
        assert f"balanced target {q} to {q + 1}" in charted[chart].attrib["aria-label"]
        legend = [t.text for t in charted[chart].iter(f"{SVG}text") if t.text]
        assert f"balanced target {q}\N{EN DASH}{q + 1}" in legend


def test_a_drained_broker_does_not_count_towards_the_target_and_an_exact_target_stays_visible() -> (
    None
):
    before = {TP("t", 0): (1, 2), TP("t", 1): (2, 3), TP("t", 2): (3, 1), TP("t", 3): (1, 3)}
    after = {TP("t", 0): (1, 2), TP("t", 1): (2, 1), TP("t", 2): (2, 1), TP("t", 3): (1, 2)}
    result = summarize(ClusterModel(before), after, [1, 2])
    charted = charts(render(result, partition_moves(before, after)))
    assert bar_values(charted["replicas"]) == {1: (3, 4), 2: (2, 4), 3: (3, 0)}
    # 8 replicas on the 2 brokers left (not 3): exactly 4 each; 4 leaders: exactly 2 each.
    for chart, q in (("replicas", 4), ("leaders", 2)):
        low, high, top, bottom = band_of(charted[chart])
        assert (low, high) == (q, q)
        assert bottom - top >= 2
        assert top < pixels(charted[chart], q) < bottom


def bytes_of(svg: ET.Element) -> dict[int, tuple[str, str]]:
    """(before, after) per broker as the bytes chart's hover titles say them."""
    values: dict[int, dict[str, str]] = {}
    for bar in bars(svg):
        match = re.fullmatch(r"broker (\d+)(?: \(rack .*\))?: (.+) (before|after)",
                             bar.findtext(f"{SVG}title") or "")  # fmt: skip
        assert match is not None
        values.setdefault(int(match[1]), {})[match[3]] = match[2]
    return {b: (v["before"], v["after"]) for b, v in values.items()}


def test_with_sizes_a_bytes_chart_shows_each_brokers_bytes_against_the_disk_band() -> None:
    sizes = {TP("t", 0): 7 * GIB, TP("t", 1): GIB, TP("t", 3): GIB // 2, TP("u", 2): 3 * GIB}
    result, changes = small(sizes=sizes)
    # Bytes of each broker's replicas, before (BEFORE) and after (AFTER) the plan.
    expected = {1: (11 * GIB + GIB // 2, 7 * GIB), 2: (7 * GIB + GIB // 2, 7 * GIB + GIB // 2),
                3: (GIB, GIB), 4: (0, 4 * GIB + GIB // 2)}  # fmt: skip
    assert {b.broker: (b.bytes_before, b.bytes_after) for b in result.brokers} == expected
    status = result.to_status()["brokers"]
    assert isinstance(status, list)
    assert {b["broker"]: (b["bytesBefore"], b["bytesAfter"]) for b in status} == expected
    doc = render(result, changes)
    svg = charts(doc)["bytes"]
    assert bytes_of(svg) == {b: (human_bytes(x), human_bytes(y)) for b, (x, y) in expected.items()}
    # One scale for every bar, in bytes.
    heights = {(int(b.attrib["data-broker"]), b.attrib["class"]): float(b.attrib["height"])
               for b in bars(svg)}  # fmt: skip
    px_per_byte = heights[1, "bar before"] / expected[1][0]
    for (broker, cls), height in heights.items():
        value = expected[broker][0 if cls == "bar before" else 1]
        assert height == pytest.approx(value * px_per_byte, abs=0.02)
    # The band is DiskUsageDistribution's: the mean of the brokers holding replicas, +-9%.
    mean = sum(after for _, after in expected.values()) / 4
    low, high, top, bottom = band_of(svg)
    assert (low, high) == (math.ceil(mean * 0.91), math.floor(mean * 1.09))
    baseline = float(bars(svg)[0].attrib["y"]) + float(bars(svg)[0].attrib["height"])
    assert top == pytest.approx(baseline - high * px_per_byte, abs=0.02)
    assert bottom == pytest.approx(baseline - low * px_per_byte, abs=0.02)
    assert "mean ± 9%" in svg.attrib["aria-label"]
    # The y axis counts in the unit the peak reaches, and says so.
    axis = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "axis-label"]
    assert axis[0] == "GiB per broker"
    ticks = [t.text for t in svg.find(f"{SVG}g[@class='y-axis']").iter(f"{SVG}text")][:-1]  # type: ignore[union-attr]
    assert ticks[0] == "0" and all(t is not None and t.isdigit() for t in ticks)
    # The broker table gives the exact bytes.
    table = parse(doc).root.one("table", "brokers")
    assert [th.text() for th in table.one("thead").all("th")][-2:] == [
        "Bytes before",
        "Bytes after",
    ]
    cells = {int(row.one("th").text()): [td.text() for td in row.all("td")][-2:]
             for row in table.one("tbody").all("tr")}  # fmt: skip
    assert cells == {b: [f"{x:,}", f"{y:,}"] for b, (x, y) in expected.items()}


def test_without_sizes_there_is_no_bytes_chart_and_no_bytes_in_status() -> None:
    result, changes = small()
    assert set(charts(render(result, changes))) == {"replicas", "leaders"}
    status = result.to_status()["brokers"]
    assert isinstance(status, list)
    assert all("bytesBefore" not in b and "bytesAfter" not in b for b in status)
    table = parse(render(result, changes)).root.one("table", "brokers")
    assert "Bytes before" not in table.text()


def test_an_empty_cluster_renders_without_a_target() -> None:
    result = summarize(ClusterModel({}), {}, [1, 2])
    doc = render(result, [])
    for svg in charts(doc).values():
        assert bar_values(svg) == {1: (0, 0), 2: (0, 0)}
        assert all(float(b.attrib["height"]) == 0 for b in bars(svg))
        assert not [r for r in svg.iter(f"{SVG}rect") if r.get("class") == "target"]
    tree = parse(doc).root
    assert not tree.all("table", "moves")
    assert "No partition changes" in tree.one("main").text()


def test_three_brokers_show_every_label_with_its_rack() -> None:
    for svg in charts(render(*small())).values():
        ids = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "broker-label"]
        racks = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "rack-label"]
        assert ids == ["1", "2", "3", "4"] and racks == ["a", "b", "c", "d"]
        axis = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "axis-label"]
        assert axis[1] == "broker (rack)" and axis[0] in {"replicas per broker",
                                                          "leaders per broker"}  # fmt: skip


def test_215_brokers_render_legibly() -> None:
    brokers = list(range(1000, 1215))
    racks = {b: f"zone-{b % 5}" for b in brokers}
    old = brokers[:150]  # 65 new brokers join
    tps = [TP(f"topic-{t}", p) for t in range(60) for p in range(12)]
    before = {tp: tuple(old[(i + k) % len(old)] for k in range(3)) for i, tp in enumerate(tps)}
    after = {tp: tuple(brokers[(i + k) % len(brokers)] for k in range(3))
             for i, tp in enumerate(tps)}  # fmt: skip
    result = summarize(ClusterModel(before, racks), after, brokers)
    doc = render(result, partition_moves(before, after))
    parse(doc)
    for svg in charts(doc).values():
        drawn = bars(svg)
        assert len(drawn) == 2 * 215
        width = float(svg.attrib["width"])
        assert svg.attrib["viewBox"] == f"0 0 {svg.attrib['width']} {svg.attrib['height']}"
        lefts = [float(b.attrib["x"]) for b in drawn]
        rights = [x + float(b.attrib["width"]) for x, b in zip(lefts, drawn, strict=True)]
        assert all(float(b.attrib["width"]) >= 2 for b in drawn)  # visible, not hairlines
        assert all(r <= nxt + 1e-6 for r, nxt in zip(rights, lefts[1:], strict=False))
        assert lefts[0] > 0 and rights[-1] <= width
        # Thinned labels that do not overlap; racks only under shown broker ids.
        ids = [t for t in svg.iter(f"{SVG}text") if t.get("class") == "broker-label"]
        zones = [t for t in svg.iter(f"{SVG}text") if t.get("class") == "rack-label"]
        assert 10 < len(ids) < 215 and 5 < len(zones) < len(ids)
        for row in (ids, zones):
            xs = [float(t.attrib["x"]) for t in row]
            widest = max(len(t.text or "") for t in row) * 6
            assert all(b - a >= widest for a, b in itertools.pairwise(xs))
        assert {t.attrib["x"] for t in zones} <= {t.attrib["x"] for t in ids}
        assert {t.text for t in ids} <= {str(b) for b in brokers}


# Summary


def test_the_summary_gives_moves_bound_ratio_generate_data_and_balance() -> None:
    result, changes = small(sizes={TP("t", 1): GIB, TP("t", 3): GIB // 2, TP("t", 0): 7 * GIB},
                            generate_replica_moves=9)  # fmt: skip
    assert result.data_to_move_bytes == GIB + GIB // 2  # t-0 does not move
    tree = parse(render(result, changes)).root
    rows = summary(tree)
    assert rows["Replica moves"] == "4"
    assert rows["Leader moves"] == "4"
    assert rows["Partitions changed"] == "4"
    assert rows["Lower bound on replica moves"] == "4"
    assert rows["Replica moves / lower bound"] == "1.00\N{MULTIPLICATION SIGN}"
    assert rows["Replica moves by --generate"] == "9"
    assert rows["--generate / lower bound"] == "2.25\N{MULTIPLICATION SIGN}"
    assert rows["Data to move"] == "1.5 GiB (1,610,612,736 B)"
    assert rows["Balance score"] == "60.39% → 100%"
    assert not tree.all("section", "warning")


def test_the_summary_leaves_out_what_is_unknown_and_lists_what_stays_unbalanced() -> None:
    result, changes = small(unbalanced=["rack c holds 2 replicas of t-1", "leaders: 1 short"])
    tree = parse(render(result, changes)).root
    rows = summary(tree)
    assert not {"Data to move", "Replica moves by --generate", "--generate / lower bound"} & set(
        rows
    )
    warning = tree.one("section", "warning")
    assert [li.text() for li in warning.all("li")] == [
        "rack c holds 2 replicas of t-1",
        "leaders: 1 short",
    ]


def test_a_ratio_over_a_zero_bound_is_not_a_number() -> None:
    result = summarize(ClusterModel(AFTER), AFTER, [1, 2, 3, 4], generate_replica_moves=3)
    rows = summary(parse(render(result, [])).root)
    assert rows["Lower bound on replica moves"] == "0"
    assert rows["Replica moves / lower bound"] == rows["--generate / lower bound"] == "—"


@pytest.mark.parametrize(
    ("size", "text"),
    [(0, "0 B"), (1023, "1,023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"),
     (GIB + GIB // 2, "1.5 GiB"), (1024**2 - 1, "1.0 MiB"), (5 * 1024**5, "5.0 PiB")],
)  # fmt: skip
def test_bytes_read_in_binary_units(size: int, text: str) -> None:
    assert human_bytes(size) == text


# Moves


def cells(row: Element) -> list[str]:
    return [td.text() for td in row.all("td")]


def test_moves_are_listed_as_given_with_gained_brokers_and_leader_changes_marked() -> None:
    result, changes = small()
    reorder = PartitionMove(TP("v", 0), (1, 2), (2, 1))  # leader only: no broker gained
    follower = PartitionMove(TP("v", 1), (1, 2), (1, 3))  # a follower moves, the leader stays
    given = [*reversed(changes), reorder, follower]
    tree = parse(render(result, given)).root
    rows = move_rows(tree)
    assert [cells(r)[:2] for r in rows] == [[m.partition.topic, str(m.partition.partition)]
                                            for m in given]  # fmt: skip
    by_partition = {(c[0], c[1]): (c, row) for row in rows for c in [cells(row)]}
    texts, row = by_partition[("t", "1")]
    assert texts[2:] == ["1, 3", "3, 4", "leader 1 → 3"]
    assert [m.text() for m in row.all("mark", "gained")] == ["4"]
    assert [s.text() for s in row.all("s", "lost")] == ["1"]
    assert row.all("span", "leader-change")
    texts, row = by_partition[("v", "0")]
    assert texts[2:] == ["1, 2", "2, 1", "leader 1 → 2"]
    assert not row.all("mark") and not row.all("s")
    texts, row = by_partition[("v", "1")]
    assert texts[4] == "" and not row.all("span", "leader-change")
    assert [m.text() for m in row.all("mark", "gained")] == ["3"]


def test_moves_beyond_the_limit_are_counted_not_listed() -> None:
    result, changes = small()
    many = [PartitionMove(TP("m", p), (1, 2), (3, 4)) for p in range(7)]
    for limit, listed in ((3, 3), (0, 0), (7, 7), (100, 7)):
        tree = parse(render(result, many, move_limit=limit)).root
        assert [cells(r)[1] for r in move_rows(tree)] == [str(p) for p in range(listed)]
        notes = tree.all("p", "truncated")
        if listed == 7:
            assert not notes
        else:
            (note,) = notes
            assert f"{7 - listed:,} more partition changes not shown" in note.text()
            assert "of 7" in note.text() and "reassignment JSON" in note.text()
    with pytest.raises(ValueError, match="move_limit"):
        render(result, changes, move_limit=-1)


def test_the_default_limit_is_5000_rows() -> None:
    result, _ = small()
    many = [PartitionMove(TP("m", p), (1, 2), (3, 4)) for p in range(5002)]
    tree = parse(render(result, many)).root
    assert len(move_rows(tree)) == 5000
    assert "2 more partition changes not shown" in tree.one("p", "truncated").text()


def test_generated_at_is_shown_only_when_given() -> None:
    result, changes = small()
    assert not parse(render(result, changes)).root.all("p", "meta")
    tree = parse(render(result, changes, generated_at="2024-05-01T12:00:00Z")).root
    assert tree.one("p", "meta").text() == "Generated 2024-05-01T12:00:00Z"
