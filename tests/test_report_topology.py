"""The report's topology section (on this machine and on recorded XML machines) and the plot helpers."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from rich.console import Console

from bandwall.core import topo
from bandwall.report import Context, load_sections, plots, sections
from bandwall.report.sections import topology as section_mod

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def section():
    load_sections()
    return sections.get("topology")


@pytest.fixture
def ctx(tmp_path):
    return Context(quick=True, out=tmp_path, console=Console(file=io.StringIO(), width=140), threads=1)


def test_two_socket_diagram_rows():
    r = topo.topology(str(FIXTURES / "two-socket-4numa-smt.xml"))["result"]
    rows = dict(section_mod.diagram_rows(r))
    assert [(a, b) for a, b, _ in rows["package"]] == [(0, 8), (8, 16)]
    assert [(a, b) for a, b, _ in rows["numa"]] == [(0, 4), (4, 8), (8, 12), (12, 16)]
    assert [lab.split()[:3] for _, _, lab in rows["numa"]] == [["NUMA", "node", str(i)] for i in range(4)]
    assert len(rows["core"]) == 16
    # The cores of node 1 are cores 4-7, whose hardware threads are CPUs 8-15.
    assert [lab.split("\n")[1] for _, _, lab in rows["core"][4:8]] == [
        "PU 8,9",
        "PU 10,11",
        "PU 12,13",
        "PU 14,15",
    ]


def test_this_machine_diagram_has_every_cache_level():
    r = topo.topology()["result"]
    rows = section_mod.diagram_rows(r)
    cache_rows = [row for kind, row in rows if kind == "cache"]
    assert len(cache_rows) == len({c["level"] for c in r["caches"]})
    assert sum(b - a for a, b, _ in rows[-1][1]) == r["cores"]


def test_spans_of_a_cache_shared_by_non_adjacent_cores():
    assert section_mod._runs([0, 1, 2, 5, 7, 8]) == [(0, 3), (5, 6), (7, 9)]


def test_section_collects_prints_and_renders(ctx, section):
    sec = section
    sec.collect(ctx)
    data = sec.build(ctx, ctx.records)
    assert len(ctx.records) == 1 and ctx.records[0]["tool"] == "topo"
    assert data == ctx.records[0]["result"]
    sec.terminal(ctx, data)
    assert data["cpu_model"] in ctx.console.file.getvalue()
    page = sec.html(ctx, data)
    assert page.count("data:image/png;base64,") == (
        2 if len(data["numa_nodes"]) > 1 and data["distances"] else 1
    )
    assert "<caption>NUMA nodes</caption>" in page


def test_multi_node_html_draws_the_distances(ctx, section):
    r = topo.topology(str(FIXTURES / "two-socket-4numa-smt.xml"))["result"]
    page = section.html(ctx, r)
    assert page.count("data:image/png;base64,") == 2
    assert 'alt="NUMA distance matrix"' in page


def test_img_tag_embeds_and_closes():
    fig, ax = plots.figure()
    ax.plot([1, 2], [3, 4])
    tag = plots.img_tag(fig, alt='bandwidth "best" <GB/s>')
    assert tag.startswith('<img src="data:image/png;base64,')
    assert 'alt="bandwidth &quot;best&quot; &lt;GB/s&gt;"' in tag
    assert plt.get_fignums() == []


def test_heatmap_writes_each_value_and_leaves_gaps_blank():
    fig, ax = plots.figure(3, 3)
    plots.heatmap(ax, [[10, 21], [None, 10]], [0, 1], [0, 1], label="distance")
    texts = sorted(t.get_text() for t in ax.texts)
    assert texts == ["10", "10", "21"]
    # Black on light cells, white on dark ones.
    colours = {t.get_text(): t.get_color() for t in ax.texts}
    assert colours["21"] != colours["10"]
    plots.img_tag(fig)


def test_figures_and_tables_escape_and_group():
    from bandwall.report import render

    assert render.figures("<img a>", "<img b>") == '<div class="figs"><img a><img b></div>'
    table = render.html_table(["<b>", "GB/s"], [["a&b", 1.5], [None, 3]], caption="x<y")
    assert "<caption>x&lt;y</caption>" in table and "<th>&lt;b&gt;</th>" in table
    assert "<td>a&amp;b</td>" in table and '<td class="num">1.50</td>' in table and "<td>-</td>" in table
