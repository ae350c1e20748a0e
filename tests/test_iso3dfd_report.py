"""The report's iso3dfd section: the seed's four variants, the roofline and the page maps, drawn."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from bandwall.core import decide, records
from bandwall.kernels import iso3dfd
from bandwall.report import Context, load_sections, sections


@pytest.fixture
def section(monkeypatch):
    load_sections()
    sec = sections.get("iso3dfd")
    from bandwall.report.sections import iso3dfd as mod

    monkeypatch.setattr(mod, "QUICK", {"grid": (40, 36, 44), "iters": 3})
    # The ceilings come from bandwall-stream and bandwall-peak; fixed here to keep the test short.
    monkeypatch.setattr(
        iso3dfd.Roofline,
        "ceilings",
        lambda self, threads, cpus, binding, l2_bytes=0, llc_bytes=0: {
            "stream_best_GBps": 16.0,
            "peak_gflops_sp": 122.0,
        },
    )
    return sec


def test_section_collects_renders_and_draws(section, tmp_path):
    out = io.StringIO()
    ctx = Context(quick=True, out=tmp_path, console=Console(file=out, width=140), threads=1)
    section.collect(ctx)
    data = section.build(ctx, ctx.records)
    recs = data["records"]  # the median run of each variant
    assert [(r["config"]["init"], r["config"]["schedule"]) for r in recs] == iso3dfd.ablation_variants()
    rounds = decide.rule().rounds  # the decision rule's rounds: the first section judges them
    assert len(ctx.records) == 4 * rounds  # the variants alternating, round by round
    assert [row[:2] for row in data["spreads"]] == [list(v) for v in iso3dfd.ablation_variants()]
    assert all(f"{rounds} rounds" in row[2] for row in data["spreads"])
    for r in ctx.records:
        records.validate(r)
        roof = r["result"]["roofline"]
        assert roof["memory_bound_mpoints_per_s"] == pytest.approx(1000.0)
        assert roof["incore_bound_mpoints_per_s"] == pytest.approx(2000.0)
        assert roof["percent_of_memory_bound"] == pytest.approx(r["result"]["mpoints_per_s"] / 10)
    # Every run checks itself; one is also verified against the plain reference.
    assert all(r["validation"]["checked"] is True for r in ctx.records)
    assert sum(1 for r in ctx.records if "max_abs_error" in r["validation"]) == 1 == len(data["checked"])
    section.terminal(ctx, data)
    assert "first-touch" in out.getvalue() and "serial" in out.getvalue()
    page = section.html(ctx, data)
    assert page.count("data:image/png;base64,") == 1
    assert "<table>" in page and "node 0" in page
