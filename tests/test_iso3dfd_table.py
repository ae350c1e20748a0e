"""ISO3DFD's table of measured choices per CPU and radius: the row shape, the swept shape, the blocks'
share of L2, the sweep team and the sweeps' depth a row names run by default (forced to this machine's
model, so any CPU runs them), the round a run spends checking a table's depth and what the pooled checks
decide, and a shape bandwall tune kept winning over the table."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from bandwall.core import native
from bandwall.tune import targets
from iso3dfd_tool import record

THREADS = min(2, len(os.sched_getaffinity(0)))
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
    topo_rec = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in topo_rec["result"]["isa"]["offered"] if i in TABLE_SHAPES]
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
    topo_rec = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in topo_rec["result"]["isa"]["offered"] if i in TABLE_SHAPES]
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


# A shape of each vector variant for the sweeps, other than its step shape at radius 3.
SWEPT_SHAPES = {"avx512": "8x2-ring", "avx2": "2x2-split"}


def test_the_sweeps_run_the_swept_shape_the_table_names(monkeypatch, tmp_path):
    """A row with swept_shapes for the variant at the run's radius: a run that sweeps runs that shape
    in its sweeps (the record says table and whence, and its in-core model is that shape's) and
    checks its answer; --swept-shape same and a name given win over the table; a row without one
    keeps the step shape and says why."""
    topo_rec = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in topo_rec["result"]["isa"]["offered"] if i in SWEPT_SHAPES]
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
    topo_rec = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in topo_rec["result"]["isa"]["offered"] if i in SWEPT_SHAPES]
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
    topo_rec = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in topo_rec["result"]["isa"]["offered"] if i in SWEPT_SHAPES]
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


def write_sweeps_table(
    table, isa: str, depth: int | None, slower: bool = False, radius: int = 1, **more
) -> None:
    """A table of one row (AMD Zen 4) whose entry at radius 1 (or `radius`) says of sweeps for
    variant isa: depth (None: no entry), slower, and any more fields (tile_cache)."""
    sweeps = {
        isa: {"depth": depth, "slower": slower, "measured": "2026-01-07", "decision": {"why": "w"}, **more}
    }
    kernels = {} if depth is None else {f"iso3dfd.rows.r{radius}": {"isa": isa, "sweeps": sweeps}}
    row = {"microarch": "AMD Zen 4", "cpu": "t", "measured": "2026-01-01", "command": "t", "kernels": kernels}
    table.write_text(json.dumps({"rows": [row]}))


# Steps enough for the round that checks a table's depth to take at most a quarter of them (the
# model proposes at most depth 8 at radius 1: 17 steps).
STEPS = 80


def sweeps_table_run(isa: str, radius: int = 1, *more, steps: int = STEPS, interior: int = 64) -> dict:
    n = 2 * radius + interior
    rec = record(
        n, n, n, steps, "auto", "auto", "auto", "compact", THREADS, "--isa", isa, "--radius", radius, *more
    )
    assert rec["validation"]["passed"] is True
    return rec["config"]["time_block"]


@pytest.fixture
def sweeps_table(monkeypatch, tmp_path):
    """The variant to run (skips without a vector one) and the path of a table of measured choices
    the runs read, on a Zen 4 model of caches."""
    topo_rec = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in topo_rec["result"]["isa"]["offered"] if i in SWEPT_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU")
    table = tmp_path / "choices.json"
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
    monkeypatch.setenv("BANDWALL_MICROARCH", "AMD Zen 4")
    monkeypatch.setenv("BANDWALL_CACHES", "L2=256K,L3=32M")
    return offered[0], table


@pytest.mark.parametrize(
    "entry",
    [
        "slower",
        "the proposal",
        "a shallower depth raced there",
        "within noise",
        "within noise elsewhere",
        "another depth",
    ],
)
def test_the_table_says_whether_sweeps_pay_and_a_round_a_run_checks_it(
    entry, sweeps_table, monkeypatch, tmp_path, run_bandwall
):
    """A row with sweeps for the variant at the run's radius: sweeps slower there (depth 1, slower)
    and --time-block auto runs step by step without a race; depth 1 where the races there could not
    tell the depth the run's model proposes from single steps, and depth 1 stands without a race;
    the depth the run's model proposes (it paid there), or a shallower one raced where the model
    proposed what the run's proposes, and the run sweeps at it from the first step, spending one
    round of a race on its own steps to check it (one round alone decides nothing: the depth
    stands); all say table and whence. Depth 1 within noise of another proposal, or another
    depth, leaves the race to run as before (config.time_block.table cites the entry); --time-block
    measure races whatever the row says; a radius without an entry races as before."""
    isa, table = sweeps_table
    write_sweeps_table(table, isa, None)
    measured = sweeps_table_run(isa, 1, "--time-block", "measure")
    proposed = measured["proposal"]["depth"]
    assert proposed > 1 and measured["how"] != "table" and "race" in measured, measured  # a race would run
    assert proposed > 2, measured  # a shallower depth to sweep at
    depth = {
        "the proposal": proposed,
        "another depth": proposed + 1,
        "a shallower depth raced there": proposed - 1,
    }
    depth = depth.get(entry, 1)
    raced = {
        "within noise": proposed,
        "within noise elsewhere": proposed + 1,
        "a shallower depth raced there": proposed,
    }
    more = {"proposed": raced[entry]} if entry in raced else {}
    if entry == "within noise":  # the first race's winner, alone against single steps, within noise
        more["second_race"] = {"raced": str(proposed), "why": "the default 1 stands"}
    write_sweeps_table(table, isa, depth, slower=entry == "slower", **more)
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "checks"))  # no earlier round to pool with
    tb = sweeps_table_run(isa)
    if entry in ("within noise elsewhere", "another depth"):
        assert tb["how"] != "table" and "race" in tb and tb["table"]["depth"] == depth, tb
        assert "iso3dfd.rows.r1" in tb["table"]["from"] and "2026-01-07" in tb["table"]["from"]
    else:
        assert (tb["depth"], tb["how"]) == (depth, "table") and "race" not in tb, tb
        assert "iso3dfd.rows.r1" in tb["why"] and "2026-01-07" in tb["why"] and ": w" in tb["why"]
        if entry in ("slower", "within noise"):
            assert "check" not in tb
            assert ("not told from single steps" in tb["why"]) == (entry == "within noise"), tb
            assert ("then alone: the default 1 stands" in tb["why"]) == (entry == "within noise"), tb
        else:
            check = tb["check"]
            assert check["ran"] and (check["rounds"], check["runs"], check["settled"]) == (1, 1, False), check
            assert (
                set(check["this_run"]) == {"1", str(depth)}
                and "not told from single steps yet" in check["why"]
            )
            # a run whose steps a round of the check would take more than a quarter of: the depth, unchecked
            short = sweeps_table_run(isa, steps=4 * (1 + 2 * depth) - 1)
            assert (short["depth"], short["how"]) == (depth, "table") and not short["check"]["ran"], short
            assert "in a quarter of its" in short["check"]["why"]
            # the view says so, with this run's round
            monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "view"))
            n = 66
            proc = run_bandwall(
                "iso3dfd", "--grid", f"{n}x{n}x{n}", "--iters", STEPS, "--radius", 1, "--isa", isa,
                "--threads", THREADS, "--no-roofline", "--db", tmp_path / "v.db",
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            assert "the table's depth checked: this run's round step by step " in proc.stdout
            assert (
                "not told from single steps yet: " in proc.stdout
                and "over 1 round(s) of 1 run(s)" in proc.stdout
            )
    again = sweeps_table_run(isa, 1, "--time-block", "measure")
    assert again["how"] != "table" and "race" in again and "check" not in again
    other = sweeps_table_run(isa, 2)
    assert other["how"] != "table" and "table" not in other


@pytest.mark.parametrize("entry", ["within noise", "a shallower depth raced there"])
def test_a_table_entry_holds_where_two_last_level_caches_leave_the_model_slabs_only(
    entry, sweeps_table, monkeypatch, tmp_path
):
    """The table's races ran with the team free (the model's proposal and every depth from 2 up to
    it). Where the team's CPUs measure two last-level caches (forced: BANDWALL_LLC_PROBE=two), the
    model, left slabs only, proposes a shallower depth than there; the entry is still matched by the
    proposal with the team free: depth 1 stands without a race where the races could not tell, the
    entry's depth runs from the first step where it paid (one shallower than the run's model
    proposes, as the bench's race may choose). On a 96^3 interior at radius 3 with 512 KiB
    of L2 and 4 MiB of L3 the model proposes 6 by the team together, 3 by slabs."""
    if THREADS < 2:
        pytest.skip("one CPU: a team of one thread probes nothing")
    isa, table = sweeps_table
    monkeypatch.setenv("BANDWALL_CACHES", "L2=512K,L3=4M")
    # the proposals' runs race, and a race that decides keeps its depth: in a folder of their own
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "measured"))
    write_sweeps_table(table, isa, None)

    def run(probe: str) -> dict:
        monkeypatch.setenv("BANDWALL_LLC_PROBE", probe)
        return sweeps_table_run(isa, 3, "--time-block", "measure", interior=96)

    free, split = run("one")["proposal"], run("two")["proposal"]
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "cache"))
    assert (free["team"], split["team"]) == ("shared", "slabs") and free["depth"] > split["depth"] > 2
    chosen = split["depth"] - 1  # raced there (every depth from 2 up), and not what the run's model proposes
    if entry == "within noise":
        second = {"raced": str(free["depth"]), "why": "the default 1 stands"}
        write_sweeps_table(table, isa, 1, radius=3, proposed=free["depth"], second_race=second)
    else:
        write_sweeps_table(table, isa, chosen, radius=3, proposed=free["depth"])
    monkeypatch.setenv("BANDWALL_LLC_PROBE", "two")
    tb = sweeps_table_run(isa, 3, interior=96)
    assert tb["llc_probe"]["forced"] == "BANDWALL_LLC_PROBE=two" and tb["teams_considered"] == "slabs"
    assert tb["how"] == "table" and "race" not in tb, tb
    assert tb["depth"] == (1 if entry == "within noise" else chosen)


def test_the_entry_raced_with_the_probes_verdict_holds_for_runs_with_that_verdict(
    sweeps_table, monkeypatch, tmp_path
):
    """A row whose sweeps_by_llc holds an entry per verdict of the probe (one last-level cache: the
    model's team together; two: slabs) beside the entry raced with the team free: a run takes the
    entry of its own verdict, matched by its own proposal, and cites it; a verdict the row has no
    entry for takes the team-free entry, as before. On a 96^3 interior at radius 3 with 512 KiB of
    L2 and 4 MiB of L3 the model proposes 6 by the team together, 3 by slabs."""
    if THREADS < 2:
        pytest.skip("one CPU: a team of one thread probes nothing")
    isa, table = sweeps_table
    monkeypatch.setenv("BANDWALL_CACHES", "L2=512K,L3=4M")
    write_sweeps_table(table, isa, None)

    def run(probe: str) -> dict:
        monkeypatch.setenv("BANDWALL_LLC_PROBE", probe)
        return sweeps_table_run(isa, 3, interior=96)

    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "measured"))  # their races keep a depth
    monkeypatch.setenv("BANDWALL_LLC_PROBE", "one")
    one = sweeps_table_run(isa, 3, "--time-block", "measure", interior=96)["proposal"]
    monkeypatch.setenv("BANDWALL_LLC_PROBE", "two")
    two = sweeps_table_run(isa, 3, "--time-block", "measure", interior=96)["proposal"]
    assert (one["team"], two["team"]) == ("shared", "slabs") and one["depth"] > two["depth"] > 2
    entry = {"slower": False, "measured": "2026-01-08", "decision": {"why": "v"}}
    by_llc = {
        "one": {**entry, "depth": one["depth"] - 1, "proposed": one["depth"], "llc": "one"},
        "two": {**entry, "depth": 1, "proposed": two["depth"], "llc": "two"},  # could not tell there
    }
    # the team-free entry says otherwise at both
    write_sweeps_table(table, isa, 2, radius=3, proposed=one["depth"])
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "cache"))
    row = json.loads(table.read_text())
    row["rows"][0]["kernels"]["iso3dfd.rows.r3"]["sweeps_by_llc"] = {isa: by_llc}
    table.write_text(json.dumps(row))
    shared, split = run("one"), run("two")
    for tb, depth, words in (
        (shared, one["depth"] - 1, "one last-level cache"),
        (split, 1, "two last-level caches"),
    ):
        assert (tb["depth"], tb["how"]) == (depth, "table") and "race" not in tb, tb
        assert f"iso3dfd.rows.r3, {isa} sweeps with {words}" in tb["why"] and "2026-01-08" in tb["why"], tb
    assert "not told from single steps" in split["why"]
    del row["rows"][0]["kernels"]["iso3dfd.rows.r3"]["sweeps_by_llc"][isa]["two"]
    table.write_text(json.dumps(row))
    free = run("two")  # the team-free entry: depth 2, matched by the team-free proposal
    assert (free["depth"], free["how"]) == (2, "table") and "with two last-level" not in free["why"], free


@pytest.mark.parametrize("measured_with", [THREADS, THREADS + 1])
def test_a_verdict_on_sweeps_holds_for_the_team_it_was_measured_with(
    measured_with, sweeps_table, monkeypatch, tmp_path
):
    """An entry that found sweeps slower, measured with the run's number of threads, sends the run
    step by step without a race; measured with another number, it says nothing for the run, which
    races as before, and config.time_block.table says why (applies false, the entry's threads)."""
    isa, table = sweeps_table
    write_sweeps_table(table, isa, 1, slower=True, threads=measured_with)
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "cache"))
    tb = sweeps_table_run(isa)
    if measured_with == THREADS:
        assert (tb["depth"], tb["how"]) == (1, "table") and "race" not in tb, tb
        return
    assert tb["how"] != "table" and "race" in tb, tb
    other = tb["table"]
    assert (other["threads"], other["applies"], other["depth"], other["slower"]) == (
        THREADS + 1,
        False,
        1,
        True,
    )
    assert f"with {THREADS + 1} thread(s), this run has {THREADS}" in other["from"], other
    assert "iso3dfd.rows.r1" in other["from"]


def test_tiles_sized_for_l2_where_the_table_found_them_faster(sweeps_table, monkeypatch, tmp_path):
    """A row whose sweeps entry names tile_cache L2 at the depth tiles in L2 propose: --tile-cache
    auto sizes the tiles for L2 (config.time_block.tile_cache says table and whence) and sweeps at
    that depth from the first step, on tiles whose window L2 holds; --tile-cache model takes the
    model's tiles whatever the row says; an entry without tile_cache leaves the model's."""
    isa, table = sweeps_table
    write_sweeps_table(table, isa, None)
    n = 66
    args = (n, n, n, 40, "auto", "auto", "auto", "compact", THREADS, "--isa", isa, "--radius", 1)
    proposal = record(*args, "--time-block", "measure", "--tile-cache", "L2")["config"]["time_block"]
    depth = proposal["proposal"]["depth"]
    assert depth > 1 and proposal["proposal"]["level"] == "L2", proposal
    assert proposal["tile_cache"] == {
        "requested": "L2",
        "used": "L2",
        "how": "user",
        "from": "--tile-cache L2",
    }
    write_sweeps_table(table, isa, depth, tile_cache="L2")
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "checks"))
    rec = record(*args)
    tb = rec["config"]["time_block"]
    assert (tb["depth"], tb["how"]) == (depth, "table"), tb
    tc = tb["tile_cache"]
    assert (tc["requested"], tc["used"], tc["how"]) == ("auto", "L2", "table"), tc
    assert "iso3dfd.rows.r1" in tc["from"] and "2026-01-07" in tc["from"]
    assert rec["result"]["traffic_model"]["time_block"]["level"] == "L2"
    assert rec["validation"]["passed"] is True
    model = record(*args, "--tile-cache", "model")["config"]["time_block"]["tile_cache"]
    assert (model["used"], model["how"]) == ("model", "user")
    write_sweeps_table(table, isa, depth)
    plain = record(*args)["config"]["time_block"]["tile_cache"]
    assert (plain["used"], plain["how"]) == ("model", "model") and "names no cache" in plain["from"]


@pytest.mark.parametrize("outcome", ["faster", "slower"])
def test_the_checks_of_a_table_depth_keep_it_or_go_step_by_step(outcome, sweeps_table, monkeypatch, tmp_path):
    """The rounds the checks of a table's depth kept under the run's key are decided on with this
    run's own: sweeps faster beyond noise keep the depth as confirmed, and the next run takes it from
    the cache; slower beyond noise send this run step by step from there, and the next run too. The
    kept rounds (19, one short of the rounds that settle) are a billion times apart, so that one round
    of this machine's cannot move the pooled verdict."""
    isa, table = sweeps_table
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "checks"))
    write_sweeps_table(table, isa, None)
    measured = sweeps_table_run(isa, 1, "--time-block", "measure")
    depth, key = measured["proposal"]["depth"], measured["cache_key"]
    files = list((tmp_path / "checks").rglob("time-blocks-*.json"))
    assert len(files) == 1
    stored = json.loads(files[0].read_text())["choices"][key]
    fast, slow = [1e9] * 19, [1.0] * 19
    singles, sweeps = (slow, fast) if outcome == "faster" else (fast, slow)
    entry = {
        "depth": depth,
        "team": stored["team"],
        "raced": depth,
        "decisive": False,
        "runs": 3,
        "cpu": stored["cpu"],
        "why": "a test's checks",
        "race": {"rates": {"1": singles, str(depth): sweeps}},
    }
    files[0].write_text(json.dumps({"choices": {key: entry}}))
    write_sweeps_table(table, isa, depth)
    tb = sweeps_table_run(isa)
    assert tb["how"] == "table" and tb["check"]["runs"] == 4, tb
    assert tb["check"]["settled"] is True and tb["check"]["rounds"] == 20
    kept = json.loads(files[0].read_text())["choices"][key]
    assert kept["decisive"] is True and kept["runs"] == 4
    nxt = sweeps_table_run(isa)
    if outcome == "faster":
        assert tb["depth"] == depth and (kept["depth"], kept["races"]) == (depth, 2)
        assert (nxt["how"], nxt["depth"]) == ("cached", depth)
    else:
        assert tb["depth"] == 1 and "depth 1 from here on" in tb["why"] and kept["depth"] == 1
        assert (nxt["how"], nxt["depth"]) == ("cached", 1)


def test_a_shape_the_tune_kept_runs_by_default_on_this_machine():
    """A shape bandwall tune settled beyond noise is kept in the cache folder for its radius and
    variant: later runs take it (how: tuned) before the table's or the compiled default; a tie keeps
    nothing; the default winning keeps nothing either."""
    from bandwall.core import choices
    from bandwall.tune.targets import Iso3dfdTarget

    topo_rec = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in topo_rec["result"]["isa"]["offered"] if i in TABLE_SHAPES]
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
