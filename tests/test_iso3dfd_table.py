"""ISO3DFD's table of measured choices per CPU and radius: the row shape, the swept shape, the blocks'
share of L2 and the sweep team a row names run by default (forced to this machine's model, so any CPU
runs them), and a shape bandwall tune kept winning over the table. The sweeps' depth a row names is in
test_iso3dfd_table_sweeps.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bandwall.tune import targets
from iso3dfd_tool import SWEPT_SHAPES, THREADS, offered_isas, record

TABLE = Path(__file__).resolve().parent.parent / "native" / "common" / "isa_choices.json"


# A shape of each vector variant other than its compiled default at radius 3 (rows_avx512.cpp and
# rows_avx2.cpp), which the table below names.
TABLE_SHAPES = {"avx512": "4x2-split", "avx2": "4x1"}


@pytest.mark.parametrize("radius", [3, 8])
def test_the_table_of_measured_choices_names_the_shape_per_cpu_and_radius(radius, monkeypatch, tmp_path):
    """A row of the table for this machine's model (forced: any CPU runs it) with a shape for the
    variant at the run's radius: that shape runs, and the record says table and whence; a radius
    the row has no shape for, or a shape the variant lacks, runs the compiled default and says
    why."""
    offered = [i for i in offered_isas() if i in TABLE_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU (the guests of tests/vm/isa_cases.py run none either)")
    isa = offered[0]
    key = "iso3dfd.rows" if radius == 8 else f"iso3dfd.rows.r{radius}"
    entries = {
        key: {
            "isa": isa,
            "shapes": {isa: {"shape": TABLE_SHAPES[isa], "measured": "2026-01-02", "command": "c"}},
        },
        "iso3dfd.rows.r5": {"isa": isa, "shapes": {isa: {"shape": "9x9"}}},
    }
    table = tmp_path / "choices.json"
    row = {
        "microarch": "AMD Zen 4",
        "cpu": "test",
        "measured": "2026-01-01",
        "command": "t",
        "kernels": entries,
    }
    table.write_text(json.dumps({"rows": [row]}))
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
    monkeypatch.setenv("BANDWALL_MICROARCH", "AMD Zen 4")
    n = 2 * radius + 40
    args = (n, n, n, 2, "auto", "auto", "auto", "compact", 1, "--isa", isa, "--time-block", 1)
    shape = record(*args, "--radius", radius)["config"]["row_shape"]
    assert (shape["how"], shape["name"]) == ("table", TABLE_SHAPES[isa])
    assert "AMD Zen 4" in shape["from"] and key in shape["from"] and "2026-01-02" in shape["from"]
    for other in (5, 6):  # a shape the variant lacks; no entry at all
        m = 2 * other + 40
        shape = record(m, m, m, 2, *args[4:], "--radius", other)["config"]["row_shape"]
        assert shape["how"] == "default" and "has no shape" in shape["from"]
    given = record(*args, "--radius", radius, "--row-shape", "default")["config"]["row_shape"]
    assert given["how"] == "table"  # "default" asks for the default choice, which the table makes


@pytest.mark.parametrize(
    "named, rows, cache, how",
    [
        ("2:L1", 2, "L1", "table"),
        ("1:l2", 1, "L2", "table"),
        (2, 2, "L2", "table"),  # a number of rows: into the default cache
        ("0", 0, None, "table"),
        ("3:L9", 1, "L2", "default"),  # not a setting: the compiled default, and why
    ],
)
def test_the_prefetch_setting_the_table_names_runs_by_default(named, rows, cache, how, monkeypatch, tmp_path):
    """The distance and the cache of a row's prefetch entry run by default, checked against the
    reference; what is not a setting leaves the compiled default (one row into L2 at radius 3)."""
    offered = [i for i in offered_isas() if i in TABLE_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU (the guests of tests/vm/isa_cases.py run none either)")
    isa = offered[0]
    entry = {"isa": isa, "prefetch": {isa: {"prefetch": named, "measured": "2026-01-03", "command": "c"}}}
    row = {"microarch": "AMD Zen 4", "cpu": "t", "measured": "2026-01-01", "command": "t"}
    table = tmp_path / "choices.json"
    table.write_text(json.dumps({"rows": [{**row, "kernels": {"iso3dfd.rows.r3": entry}}]}))
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
    monkeypatch.setenv("BANDWALL_MICROARCH", "AMD Zen 4")
    args = (46, 40, 44, 3, "auto", "auto", "auto", "compact", THREADS, "--isa", isa, "--time-block", 1)
    rec = record(*args, "--radius", 3, "--row-shape", "2x4" if isa == "avx512" else "2x2", "--verify")
    assert rec["validation"]["passed"] and rec["validation"]["checked"]
    pf = rec["config"]["prefetch"]
    assert (pf["rows_ahead"], pf["cache"], pf["how"]) == (rows, cache, how)
    assert ("2026-01-03" in pf["from"]) is (how == "table")


def test_every_prefetch_setting_of_the_table_is_one_the_kernel_takes():
    """Each row's prefetch entries name a setting in --prefetch's written form (0, N:L1, N:L2), the
    shape it was measured at, and its figures under the same names."""
    import re

    table = json.loads(TABLE.read_text())
    seen = 0
    for row in table["rows"]:
        for key, entry in row["kernels"].items():
            for isa, pf in entry.get("prefetch", {}).items():
                where = (row["microarch"], key, isa)
                assert re.fullmatch(r"0|[1-8]:L[12]", pf["prefetch"]), where
                assert pf["prefetch"] in pf["figures"] and pf["decision"]["default"] in pf["figures"], where
                assert all(re.fullmatch(r"0|[1-8]:L[12]", k) for k in pf["figures"]), where
                seen += 1
    assert seen >= 16


def test_the_sweeps_run_the_swept_shape_the_table_names(monkeypatch, tmp_path):
    """A row with swept_shapes for the variant at the run's radius: a run that sweeps runs that shape
    in its sweeps (the record says table and whence, and its in-core model is that shape's) and
    checks its answer; --swept-shape same and a name given win over the table; a row without one
    keeps the step shape and says why."""
    offered = [i for i in offered_isas() if i in SWEPT_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU (the guests of tests/vm/isa_cases.py run none either)")
    isa, radius = offered[0], 3
    swept = {"shape": SWEPT_SHAPES[isa], "measured": "2026-01-03", "command": "c"}
    row = {
        "microarch": "AMD Zen 4",
        "cpu": "test",
        "measured": "2026-01-01",
        "command": "t",
        "kernels": {"iso3dfd.rows.r3": {"isa": isa, "swept_shapes": {isa: swept}}},
    }
    table = tmp_path / "choices.json"
    table.write_text(json.dumps({"rows": [row]}))
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
    monkeypatch.setenv("BANDWALL_MICROARCH", "AMD Zen 4")
    n = 2 * radius + 40
    args = (n, n, n, 6, "auto", "auto", "auto", "compact", 1, "--isa", isa, "--radius", radius)
    rec = record(*args, "--time-block", 3, "--verify")
    shape = rec["config"]["row_shape"]
    assert (shape["swept"]["how"], shape["swept"]["name"]) == ("table", SWEPT_SHAPES[isa])
    assert "iso3dfd.rows.r3" in shape["swept"]["from"] and "2026-01-03" in shape["swept"]["from"]
    assert shape["name"] != SWEPT_SHAPES[isa]
    assert rec["result"]["time_block"] == 3 and rec["validation"]["passed"] is True
    assert rec["result"]["incore_model"].get("shape", SWEPT_SHAPES[isa]) == SWEPT_SHAPES[isa]
    same = record(*args, "--time-block", 3, "--swept-shape", "same")["config"]["row_shape"]
    assert (same["swept"]["how"], same["swept"]["name"]) == ("same", same["name"])
    given = record(*args, "--time-block", 3, "--swept-shape", shape["name"])["config"]["row_shape"]
    assert given["swept"]["how"] == "given"
    m = 2 * 5 + 40
    other = record(m, m, m, *args[3:-1], 5, "--time-block", 1)["config"]["row_shape"]["swept"]
    assert other["how"] == "same" and "no swept shape" in other["from"]


def test_the_blocks_follow_the_share_of_l2_the_table_names(monkeypatch, tmp_path):
    """A row with blocks for the variant at the run's radius: the model's window of prev may fill the
    share of L2 it names, so the y block grows with it, and config.blocks_choice.model says table
    and whence; a share out of range, or no entry, keeps the model's default and says why."""
    offered = [i for i in offered_isas() if i in SWEPT_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU")
    isa = offered[0]

    def model(share) -> dict:
        row = {
            "microarch": "AMD Zen 4",
            "cpu": "test",
            "measured": "2026-01-01",
            "command": "t",
            "kernels": {
                "iso3dfd.rows.r3": {
                    "isa": isa,
                    "blocks": {isa: {"l2_share": share, "measured": "2026-01-04"}},
                }
            },
        }
        table = tmp_path / "choices.json"
        table.write_text(json.dumps({"rows": [row]}))
        monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
        monkeypatch.setenv("BANDWALL_MICROARCH", "AMD Zen 4")
        monkeypatch.setenv("BANDWALL_CACHES", "L2=1M,L3=32M")
        rec = record(262, 134, 46, 2, "auto", "auto", "auto", "compact", 1, "--isa", isa, "--radius", 3)
        return rec["config"]["blocks_choice"]["model"]

    default, wide = model("none"), model(2.0)
    assert (default["l2_share"], default["l2_share_how"]) == (0.5, "default")
    assert "no L2 share" in default["l2_share_from"]
    assert (wide["l2_share"], wide["l2_share_how"]) == (2.0, "table")
    assert "iso3dfd.rows.r3" in wide["l2_share_from"] and "2026-01-04" in wide["l2_share_from"]
    assert wide["blocks"][1] > default["blocks"][1] and "200% of the" in wide["why"]
    # a window several times the L2 (radius 8 on AMD Zen 3: 4.19), refused only beyond eight
    assert model(4.5)["l2_share_how"] == "table"
    assert model(9.0)["l2_share_how"] == "default"


@pytest.mark.parametrize("team", ["slabs", "shared"])
def test_the_sweep_team_the_table_names_runs_by_default(team, monkeypatch, tmp_path):
    """A row with teams for the variant at the run's radius: --sweep-team auto on one NUMA node takes
    that team (config.time_block says table and whence) and checks its answer; --sweep-team given
    wins; a row without one leaves the choice to the model and says so."""
    offered = [i for i in offered_isas() if i in SWEPT_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU")
    isa = offered[0]
    entry = {"isa": isa, "teams": {isa: {"team": team, "measured": "2026-01-06"}}}
    row = {"microarch": "AMD Zen 4", "cpu": "t", "measured": "2026-01-01", "command": "t"}
    table = tmp_path / "choices.json"
    table.write_text(json.dumps({"rows": [{**row, "kernels": {"iso3dfd.rows.r1": entry}}]}))
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
    monkeypatch.setenv("BANDWALL_MICROARCH", "AMD Zen 4")
    monkeypatch.setenv("BANDWALL_CACHES", "L2=1M,L3=32M")
    threads = min(2, len(os.sched_getaffinity(0)))  # a user given one CPU runs the suite too
    grid = (66, 66, 66, 8, "auto", "auto", "auto", "compact", threads)
    args = (*grid, "--isa", isa, "--radius", 1, "--time-block", 4)
    rec = record(*args, "--verify")
    tb = rec["config"]["time_block"]
    if "several NUMA nodes" in tb.get("team_why", ""):
        pytest.skip("the table's team applies on one NUMA node")
    assert (tb["team_how"], tb["teams_considered"]) == ("table", team), tb
    assert "iso3dfd.rows.r1" in tb["team_from"] and "2026-01-06" in tb["team_from"]
    assert rec["validation"]["passed"] is True
    other = "shared" if team == "slabs" else "slabs"
    given = record(*args, "--sweep-team", other)["config"]["time_block"]
    assert given["teams_considered"] == other and "team_how" not in given
    m = 2 * 2 + 62
    none = record(m, m, m, *grid[3:], "--isa", isa, "--radius", 2, "--time-block", 4)["config"]["time_block"]
    assert none["team_how"] == "model" and "no team" in none["team_from"]


def test_a_shape_the_tune_kept_runs_by_default_on_this_machine():
    """A shape bandwall tune settled beyond noise is kept in the cache folder for its radius and
    variant: later runs take it (how: tuned) before the table's or the compiled default; a tie keeps
    nothing; the default winning keeps nothing either."""
    from bandwall.core import choices
    from bandwall.tune.targets import Iso3dfdTarget

    offered = [i for i in offered_isas() if i in TABLE_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU")
    isa, radius = offered[0], 3
    target = Iso3dfdTarget("iso3dfd", "MPoints/s")
    row = {"median": 1000.0, "rounds": 5, "summary": {"variant_key": "iso3dfd.rows.r3", "isa": isa}}
    best = {"shape": TABLE_SHAPES[isa], "isa": isa}
    assert "not kept" in target.settled(best, row, decided=False)
    assert not choices.shapes_path().exists()
    assert target.settled({**best, "shape": targets.DEFAULT_SHAPE}, row, decided=True) is None
    assert "later runs" in target.settled(best, row, decided=True)
    (kept,) = choices.shape_rows()
    assert (kept["kernel"], kept["isa"], kept["shape"]) == ("iso3dfd.rows.r3", isa, TABLE_SHAPES[isa])
    assert "1000 MPoints/s" in kept["why"] and kept["measured"]
    n = 2 * radius + 40
    args = (
        n,
        n,
        n,
        2,
        "auto",
        "auto",
        "auto",
        "compact",
        1,
        "--isa",
        isa,
        "--time-block",
        1,
        "--radius",
        radius,
    )
    shape = record(*args)["config"]["row_shape"]
    assert (shape["how"], shape["name"]) == ("tuned", TABLE_SHAPES[isa])
    assert "bandwall tune" in shape["from"]
    other = record(n + 2, n, n, *args[3:-1], 5)["config"]["row_shape"]  # another radius: not kept there
    assert other["how"] in ("table", "default")
    choices.keep_row_kernel("iso3dfd.rows.r3", isa, None, "", "")
    assert record(*args)["config"]["row_shape"]["how"] in ("table", "default")
    # a prefetch setting alone: kept beside the shape the run takes anyway
    best = {"shape": targets.DEFAULT_SHAPE, "prefetch": "2:L1", "isa": isa}
    assert "the prefetch setting 2:L1 not kept" in target.settled(best, row, decided=False)
    assert "later runs" in target.settled(best, row, decided=True)
    (kept,) = choices.shape_rows()
    assert (kept["prefetch"], kept["shape"]) == ("2:L1", "")
    c = record(*args)["config"]
    assert (c["prefetch"]["how"], c["prefetch"]["rows_ahead"], c["prefetch"]["cache"]) == ("tuned", 2, "L1")
    assert c["row_shape"]["how"] in ("table", "default")
    choices.keep_row_kernel("iso3dfd.rows.r3", isa, None, "", "")
