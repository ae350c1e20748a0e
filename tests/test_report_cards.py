"""The first section of the report's page: one card per recommendation (the verdict, the value as a
bar against its threshold, the fix as code, the evidence folded), read from the parsed HTML; and
Line.limit, the threshold the bar marks, through JSON and in the rules that judge against a number."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from bandwall.core.spread import Spread
from bandwall.report import advice, advice_page
from bandwall.report.advice import EFFICIENCY_FLAG, Evidence, Line

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict, parent: Node | None):
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node] = []
        self.content: list[Node | str] = []  # children and text in document order

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.content)

    def all(self, tag: str, cls: str | None = None) -> list[Node]:
        """Every element below this one with the tag (and class), in document order."""
        found = []
        for c in self.children:
            if c.tag == tag and (cls is None or cls in c.classes):
                found.append(c)
            found.extend(c.all(tag, cls))
        return found

    def x(self) -> float:
        return float(self.attrs["x1"])


class Tree(HTMLParser):
    """The HTML as a tree of elements; an end tag that closes another element than the open one fails."""

    def __init__(self, text: str):
        super().__init__()
        self.root = self.at = Node("#root", {}, None)
        self.feed(text)
        self.close()
        assert self.at is self.root, f"unclosed <{self.at.tag}>"

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.at)
        self.at.children.append(node)
        self.at.content.append(node)
        if tag not in VOID:
            self.at = node

    def handle_endtag(self, tag):
        assert self.at.tag == tag, f"</{tag}> closes <{self.at.tag}>"
        self.at = self.at.parent

    def handle_data(self, data):
        self.at.content.append(data)


def cards_of(lines: list[Line], history: list[str] | None = None) -> list[Node]:
    return Tree(advice_page.page(lines, history or [])).root.all("article", "card")


FULL = Line(
    "cores per memory-bound process (triad)",
    "30.0 GB/s (min 28.0, max 31.0, 5 rounds) on 2 core(s)",
    "95% of this machine's best triad bandwidth",
    "2 cores reach the bandwidth (the knee): use 2 per memory-bound process",
    "OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores ./your_program",
    "sweep records #3, points records #1, #2",
    flag=True,
    value=Spread(30.0, 28.0, 31.0, 5, "GB/s"),
    limit=20.0,
)
BARE = Line(
    "NUMA placement", "1 NUMA node, every CPU on it", "two or more NUMA nodes", "does not matter here"
)


def test_one_card_per_line_with_its_parts():
    lines = [FULL, BARE, Line("page size (triad, 2 threads)", "m", "t", "v", value=Spread(10, 9, 11, 3))]
    cards = cards_of(lines)
    assert len(cards) == len(lines)
    for card, line in zip(cards, lines):
        (title,) = card.all("h3")
        assert title.text().endswith(line.topic)
        (verdict,) = card.all("p", "verdict")
        assert verdict.text() == line.verdict
        (details,) = card.all("details")
        assert details.all("summary")
        assert [d.text() for d in details.all("dd")] == [line.measured, line.threshold, line.evidence]
        assert ("flagged" in card.classes) is line.flag
    full, bare, _ = cards
    (code,) = full.all("code")
    assert code.parent.tag == "pre" and code.text() == FULL.fix
    (button,) = full.all("button", "copy")
    assert "hidden" in button.attrs  # shown by the page's script; without it the code is still there
    assert full.all("span", "flag")
    assert not bare.all("code") and not bare.all("svg") and len(bare.all("p", "nofix")) == 1
    assert not full.all("p", "nofix")


def test_the_fixes_are_listed_once_under_the_cards():
    other = Line("binding", "m", "t", "v", fix="OMP_PROC_BIND=close ./your_program")
    root = Tree(advice_page.page([FULL, other, FULL], ["triad: 1.50x"])).root
    codes = [c.text() for c in root.all("code") if c.parent.parent.parent.tag != "article"]
    assert codes == [f"{FULL.fix}\n{other.fix}"]


def marks(card: Node) -> dict[str, list[float]]:
    (svg,) = card.all("svg")
    found: dict[str, list[float]] = {}
    for line in svg.all("line"):
        for cls in line.classes:
            found.setdefault(cls, []).append(line.x())
    return found


@pytest.mark.parametrize("median, limit", [(30.0, 20.0), (10.0, 20.0), (20.0, 20.0), (5.0, 500.0)])
def test_the_bar_puts_each_mark_where_its_number_is(median, limit):
    value = Spread(median, median * 0.9, median * 1.05, 5, "GB/s")
    (card,) = cards_of([Line("t", "m", "th", "v", value=value, limit=limit)])
    m = marks(card)
    (x_med,), (x_lim,), (x_spread_lo,) = m["median"], m["limit"], m["spread"]
    lo, hi = sorted(m["cap"])
    assert (x_med > x_lim) is (median > limit) and (x_med < x_lim) is (median < limit)
    assert lo == x_spread_lo and lo <= x_med <= hi
    (svg,) = card.all("svg")
    (fill,) = svg.all("rect", "fill")
    zero = float(fill.attrs["x"])
    assert float(fill.attrs["width"]) == pytest.approx(x_med - zero, abs=0.15)  # the bar runs 0 -> median
    assert (x_med - zero) / (x_lim - zero) == pytest.approx(median / limit, rel=0.02)
    assert 0 <= min(zero, lo, x_lim) and max(hi, x_lim) <= float(svg.attrs["width"])
    figures = card.all("p", "figures")[0].text()
    assert "GB/s" in figures and "threshold" in figures


def test_a_bar_without_a_threshold_shows_the_spread_alone():
    (card,) = cards_of([Line("t", "m", "th", "v", value=Spread(10.0, 8.0, 12.0, 4, "MPoints/s"))])
    m = marks(card)
    lo, hi = sorted(m["cap"])
    assert "limit" not in m and lo == m["spread"][0] < m["median"][0] < hi
    assert (m["median"][0] - lo) == pytest.approx(hi - m["median"][0], abs=0.15)  # 10 in 8..12
    assert "threshold" not in card.all("p", "figures")[0].text()


@pytest.mark.parametrize(
    "line",
    [
        Line("no value, no limit", "m", "t", "v"),
        Line("a limit but no value", "m", "t", "v", limit=0.8),
        Line("a value not a number", "m", "t", "v", value=Spread(float("nan"), 1.0, 2.0, 3)),
        Line("one round", "m", "t", "v", value=Spread(0.0, 0.0, 0.0, 1)),
    ],
    ids=lambda line: line.topic,
)
def test_a_line_without_limit_or_value_still_renders(line):
    (card,) = cards_of([line])
    assert card.all("h3")[0].text() == line.topic and len(card.all("details")) == 1
    assert len(card.all("svg")) == (1 if line.topic == "one round" else 0)


def test_no_recommendation_says_so():
    root = Tree(advice_page.page([], [])).root
    assert not root.all("article") and "no recommendation" in root.text()


def test_card_text_is_escaped():
    line = Line("<b>topic</b>", "m", "t", "<script>alert(1)</script>", fix="a < b && c > d")
    root = Tree(advice_page.page([line], [])).root
    assert not root.all("script") and not root.all("b")
    assert root.all("code")[0].text() == "a < b && c > d"


def test_limit_round_trips_and_old_lines_still_load():
    assert Line.from_json(FULL.to_json()) == FULL and FULL.to_json()["limit"] == 20.0
    old = {k: v for k, v in FULL.to_json().items() if k != "limit"}
    assert Line.from_json(old).limit is None
    assert "limit" not in BARE.to_json() and Line.from_json(BARE.to_json()) == BARE


def test_rules_set_the_number_they_judge_against(make_record):
    roof = {"memory_bound_mpoints_per_s": 1000.0, "port_bound_mpoints_per_s": 300.0}
    runs = [
        make_record(
            "iso3dfd",
            result={"mpoints_per_s": v, "roofline": roof},
            config={"init": "first-touch", "schedule": "static"},
        )
        for v in (150, 160, 170)
    ]
    (stencil,) = advice.stencil(Evidence({"iso3dfd": runs}))
    assert stencil.limit == pytest.approx(EFFICIENCY_FLAG * 300.0) and stencil.value.unit == "MPoints/s"

    topo = make_record("topo", result={"numa_nodes": [{"cpus": [0]}, {"cpus": [1]}]}, config={})
    mat = make_record("numa-matrix", result={"matrix": [[20.0, 10.0], [10.0, 22.0]]}, config={})
    lines = advice.placement(Evidence({"topology": [topo], "placement": [mat]}))
    (numa,) = [x for x in lines if x.topic.startswith("NUMA efficiency")]
    assert numa.limit == pytest.approx(EFFICIENCY_FLAG * 21.0) and numa.value.unit == "GB/s"
    assert numa.value.median < numa.limit  # remote 10 GB/s: below 0.8 of the local 21

    def stream(kernel, median):
        result = {"best_GBps": median, "median_GBps": median, "min_GBps": median, "max_GBps": median}
        result.update(dropped_reps=1, bytes_per_element=24.0, flops_per_element=2.0)
        return make_record("stream", result=result, config={"kernel": kernel, "threads": 2, "reps": 5})

    peak = make_record("peak", result={"total_gflops_dp": 100.0}, config={"isa": "avx2"})
    lines = advice.roofline(Evidence({"stream": [stream("scale", 18.0), stream("triad", 24.0), peak]}))
    assert [(x.value.median, x.limit) for x in lines] == [(18.0, 24.0), (24.0, 24.0)]  # the STREAM ceiling


@pytest.mark.parametrize(
    "run, words",
    [
        ({"kernel": "triad", "isa": "avx2"}, "STREAM triad, avx2 variant"),
        ({"kernel": "dot", "isa": "generic"}, "STREAM dot, generic variant"),
        ({"kernel": "triad", "pages": "huge"}, "STREAM triad, huge pages"),
    ],
)
def test_the_variants_progress_says_each_run_in_words(run, words):
    from bandwall.report.sections.variants import described

    assert described(run) == words and "{" not in described(run)
