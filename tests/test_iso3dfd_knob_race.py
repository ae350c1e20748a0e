"""ISO3DFD's row kernel knobs on a CPU whose row of the table of measured choices names none (nor
bandwall tune kept one): the register shape and the prefetch setting (distance and cache) race on
the run's own steps against those the table's rows chose, and what a race settles is kept for later runs
(native/common/knob_race.hpp). A race's outcome is this machine's: the tests assert what any outcome
has, and drive the kept paths with entries they write."""

from __future__ import annotations

import json
import subprocess

import pytest

from bandwall.core import choices, native
from iso3dfd_tool import record, tool

# Another CPU's choice at radius 3 for each vector variant: a shape other than the compiled default
# (rows_avx512.cpp, rows_avx2.cpp) and two rows of prefetch into L1 (the compiled default is one into L2).
OTHER_SHAPES = {"avx512": "4x2-split", "avx2": "4x1"}
COMPILED = {"avx512": "2x4", "avx2": "2x2"}  # the compiled defaults at radius 3
N = 64 + 6  # 64³ interior at radius 3


@pytest.fixture
def isa(monkeypatch, tmp_path) -> str:
    """A table whose one row is another CPU's, a forced model of this one without a row, and the
    widest vector variant this CPU runs."""
    topo = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in topo["result"]["isa"]["offered"] if i in OTHER_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU (the guests of tests/vm/isa_cases.py run none either)")
    isa = offered[0]
    entry = {
        "isa": isa,
        "shapes": {isa: {"shape": OTHER_SHAPES[isa]}},
        "prefetch": {isa: {"prefetch": "2:L1"}},
    }
    row = {"microarch": "AMD Zen 4", "cpu": "t", "measured": "2026-01-01", "command": "t"}
    table = tmp_path / "choices.json"
    table.write_text(json.dumps({"rows": [{**row, "kernels": {"iso3dfd.rows.r3": entry}}]}))
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
    monkeypatch.setenv("BANDWALL_MICROARCH", "Intel Sapphire Rapids")
    return isa


def run(isa: str, steps: int = 40, *more) -> dict:
    return record(N, N, N, steps, "auto", "auto", "auto", "compact", 1, "--radius", 3, "--isa", isa, *more)


def keep(key: str, candidates: list, chosen: str, settled: bool) -> None:
    """An entry of the file of knob races, as a race on this CPU would have left it."""
    p = choices.knob_races_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    doc = json.loads(p.read_text()) if p.exists() else {"choices": {}}
    doc["choices"][key] = {
        "chosen": chosen,
        "default": candidates[0],
        "settled": settled,
        "candidates": candidates,
        "cpu": "Intel Sapphire Rapids",
        "why": "written by the test",
        "measured": "2026-01-03",
    }
    p.write_text(json.dumps(doc))


def test_a_cpu_without_a_row_races_the_shapes_other_rows_chose_on_its_own_steps(isa):
    """The compiled default and the other row's shape are the candidates; whatever the race decides
    (or a run too short for it), the steps it ran are the run's, so the answer still matches the
    plain reference; a race's outcome is kept and listed by bandwall db knob-races."""
    compiled = run(isa, 2, "--row-shape", "compiled", "--prefetch", "compiled")["config"]
    assert "race" not in compiled["row_shape"] and "race" not in compiled["prefetch"]
    big = 136 + 6  # steps of a few milliseconds: short trials, so the race fits the run's steps
    grid = (big, big, big, 100, "auto", "auto", "auto", "compact", 1)
    rec = record(*grid, "--radius", 3, "--isa", isa, "--time-block", 1, "--verify")
    assert rec["validation"]["passed"] and rec["validation"]["checked"]
    shape = rec["config"]["row_shape"]
    race = shape["race"]
    assert race["candidates"] == [compiled["row_shape"]["name"], OTHER_SHAPES[isa]]
    assert shape["name"] in race["candidates"] and shape["how"] in ("raced", "default")
    assert race["how"] == shape["how"]
    pf = rec["config"]["prefetch"]
    assert pf["race"]["candidates"] == ["1:L2", "2:L1"] and pf["how"] in ("raced", "default")
    if shape["how"] == "raced":
        assert race["race"]["comparisons"][0]["ratio"]["rounds"] >= 5 and race["kept"]["file"] == str(
            choices.knob_races_path()
        )
        (kept,) = [r for r in choices.knob_race_rows() if r["run"] == race["key"]]
        # a first winner waits for its confirming race; the default may settle or, a candidate left
        # unsettled above it, keep its rounds for the next race: which of the two is the host's timing
        assert kept["chosen"] == shape["name"]
        if shape["name"] != race["candidates"][0]:
            assert kept["settled"] is False
    else:
        assert "too short" in race["why"]


def test_a_settled_race_is_taken_without_racing_and_measure_races_again(isa):
    key = run(isa, 2, "--time-block", 1)["config"]["row_shape"]["race"]["key"]
    candidates = run(isa, 2, "--time-block", 1)["config"]["row_shape"]["race"]["candidates"]
    keep(key, candidates, OTHER_SHAPES[isa], settled=True)
    shape = run(isa, 2, "--time-block", 1)["config"]["row_shape"]
    assert (shape["how"], shape["name"], shape["race"]["how"]) == ("kept", OTHER_SHAPES[isa], "kept")
    assert "2026-01-03" in shape["race"]["why"] and "written by the test" in shape["race"]["why"]
    again = run(isa, 2, "--time-block", 1, "--row-shape", "measure")["config"]["row_shape"]
    assert again["race"]["how"] != "kept" and again["requested"] == "measure"
    compiled = run(isa, 2, "--time-block", 1, "--row-shape", "compiled")["config"]["row_shape"]
    assert (compiled["how"], compiled["name"]) == ("default", candidates[0]) and "race" not in compiled


def test_measure_with_shapes_races_those_shapes_alone(isa):
    """--row-shape measure:A,B races A (its default) against B whatever the table's rows chose, and
    says so; the shape that runs is one of them."""
    names = [OTHER_SHAPES[isa], COMPILED[isa]]
    rec = run(isa, 40, "--time-block", 1, "--row-shape", "measure:" + ",".join(names))
    shape = rec["config"]["row_shape"]
    assert shape["requested"] == "measure" and shape["race"]["candidates"] == names
    assert shape["name"] in names and shape["race"]["how"] in ("raced", "default")


def test_a_first_race_winner_waits_for_a_second_race(isa):
    """Kept unsettled, a winner does not run before a second race confirms it; a run too short for
    that race takes the default and says so."""
    first = run(isa, 2, "--time-block", 1)["config"]["row_shape"]["race"]
    keep(first["key"], first["candidates"], OTHER_SHAPES[isa], settled=False)
    shape = run(isa, 2, "--time-block", 1)["config"]["row_shape"]
    assert (shape["how"], shape["name"]) == ("default", first["candidates"][0])
    assert "awaits a second" in shape["race"]["why"] and "too short" in shape["race"]["why"]


def test_a_kept_prefetch_distance_holds_for_its_shape_only(isa):
    pf = run(isa, 2, "--time-block", 1)["config"]["prefetch"]["race"]
    keep(pf["key"], pf["candidates"], "2:L1", settled=True)
    c = run(isa, 2, "--time-block", 1)["config"]
    assert (c["prefetch"]["how"], c["prefetch"]["rows_ahead"], c["prefetch"]["cache"]) == ("kept", 2, "L1")
    other = run(isa, 2, "--time-block", 1, "--row-shape", OTHER_SHAPES[isa])["config"]["prefetch"]
    assert other["how"] == "default" and other["race"]["key"] != pf["key"]


def test_a_cpu_with_a_row_or_a_choice_given_races_nothing(isa, monkeypatch):
    monkeypatch.setenv("BANDWALL_MICROARCH", "AMD Zen 4")  # the table's row: its shape
    c = run(isa, 40, "--time-block", 1)["config"]
    assert c["row_shape"]["how"] == "table" and "race" not in c["row_shape"]
    assert c["prefetch"]["how"] == "table" and "race" not in c["prefetch"]
    monkeypatch.setenv("BANDWALL_MICROARCH", "Intel Sapphire Rapids")
    c = run(isa, 40, "--time-block", 1, "--row-shape", OTHER_SHAPES[isa], "--prefetch", "none")["config"]
    assert c["row_shape"]["how"] == "given" and "race" not in c["row_shape"] and "race" not in c["prefetch"]
    auto = record(
        N, N, N, 40, "auto", "auto", "auto", "compact", "--threads", "auto", "--radius", 3, "--isa", isa
    )
    assert "--threads auto" in auto["config"]["row_shape"]["race"]["why"]
    generic = run("generic", 40, "--time-block", 1)["config"]
    assert (
        generic["row_shape"]["race"]["how"] == "default" and "generic" in generic["row_shape"]["race"]["why"]
    )


def test_the_kept_knob_races_are_listed_then_forgotten(isa, run_bandwall):
    assert json.loads(run_bandwall("db", "knob-races", "--format", "json").stdout) == []
    keep("iso3dfd.rows.r3 avx512 shape, l2 data, 1 threads", ["2x4", "4x2-split"], "4x2-split", settled=False)
    keep("iso3dfd.rows.r3 avx512 prefetch at 2x4, l2 data, 1 threads", ["1", "2"], "1", settled=True)
    proc = run_bandwall("db", "knob-races", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert [(r["chosen"], r["settled"], r["candidates"]) for r in json.loads(proc.stdout)] == [
        ("1", True, "1, 2"),
        ("4x2-split", False, "2x4, 4x2-split"),
    ]
    proc = run_bandwall("db", "knob-races", "--forget")
    assert proc.returncode == 0 and "forgot 2 knob race(s)" in proc.stdout, proc.stderr
    assert choices.knob_race_rows() == []


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"choices": {"iso3dfd.rows.r3 avx2 shape": 1}}'])
def test_a_bad_file_of_knob_races_is_one_line_for_db_and_a_race_for_a_run(isa, run_bandwall, text):
    p = choices.knob_races_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    proc = run_bandwall("db", "knob-races")
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert str(p) in proc.stderr
    proc = tool(N, N, N, 2, "auto", "auto", "auto", "compact", 1, "--radius", 3, "--isa", isa, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["config"]["row_shape"]["race"]["how"] == "default"


def test_another_variant_with_its_shape_replaces_one_chosen_at_its_compiled_shape(monkeypatch, tmp_path):
    """Where the variant was chosen by speed (a decisive choice kept on this machine, written here),
    each variant timed at its compiled shape, the shape race adds one shape of each other vector
    variant (the one the table's rows chose most often at the radius); a race that settled on it
    makes that variant run, and the record says which choice it replaced."""
    topo = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in ("avx512", "avx2", "generic") if i in topo["result"]["isa"]["offered"]]
    if not {"avx512", "avx2"} <= set(offered):
        pytest.skip("needs two vector variants (AVX-512 and AVX2) on this CPU")
    entry = {"shapes": {"avx512": {"shape": "4x2-split"}, "avx2": {"shape": "4x1"}}}
    row = {"microarch": "AMD Zen 4", "cpu": "t", "measured": "2026-01-01", "command": "t"}
    table = tmp_path / "choices.json"
    table.write_text(json.dumps({"rows": [{**row, "kernels": {"iso3dfd.rows.r3": entry}}]}))
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
    monkeypatch.setenv("BANDWALL_MICROARCH", "Intel Sapphire Rapids")
    grid = (N, N, N, 2, "auto", "auto", "auto", "compact", 1, "--radius", 3, "--time-block", 1)
    size = record(*grid, "--isa", "avx2")["config"]["isa_choice"]["size_class"]
    isa_cache = choices.path()
    isa_cache.parent.mkdir(parents=True, exist_ok=True)
    chosen = {
        "isa": "avx2",
        "kernel": "iso3dfd.rows.r3",
        "ceiling": "",
        "decisive": True,
        "figures": {"avx512": 1.0, "avx2": 2.0},
        "unit": "MPoints/s",
        "candidates": offered,
        "cpu": "Intel Sapphire Rapids",
        "size_class": size,
        "measured": "2026-01-03",
    }
    isa_cache.write_text(json.dumps({"choices": {f"iso3dfd.rows.r3@{size}": chosen}}))
    c = record(*grid)["config"]
    assert (c["isa"], c["isa_choice"]["how"]) == ("avx2", "cached")
    race = c["row_shape"]["race"]
    assert race["candidates"] == ["2x2", "4x1", "avx512 4x2-split"] and "other variants'" in race["key"]
    keep(race["key"], race["candidates"], "avx512 4x2-split", settled=True)
    rec = record(*grid, "--verify")
    c = rec["config"]
    assert rec["validation"]["passed"]
    assert (c["isa"], c["row_shape"]["name"], c["row_shape"]["how"]) == ("avx512", "4x2-split", "kept")
    assert c["isa_choice"]["how"] == "shape race" and c["isa_choice"]["source"]["replaced"]["isa"] == "avx2"
    assert (
        "prefetch at 4x2-split" in c["prefetch"]["race"]["key"] and " avx512 " in c["prefetch"]["race"]["key"]
    )
    forced = record(*grid, "--isa", "avx2")["config"]  # a variant named: no other variant races
    assert forced["isa"] == "avx2" and not any(" " in x for x in forced["row_shape"]["race"]["candidates"])


def test_the_run_says_when_the_shape_race_replaced_the_variant():
    from bandwall.views.iso3dfd import _kernel

    c = {
        "isa": "avx512",
        "isa_choice": {"isa": "avx512", "how": "shape race", "source": {"replaced": {"isa": "avx2"}}},
        "row_shape": {"name": "2x4", "requested": "default", "how": "kept"},
        "prefetch": {"rows_ahead": 1, "how": "default"},
    }
    assert (
        _kernel(c)
        == "avx512 (with its shape, faster than avx2's in the shape race), register shape 2x4 (kept)"
    )
    c["isa_choice"]["how"] = "cached"
    assert _kernel(c) == "avx512, register shape 2x4 (kept)"


@pytest.mark.parametrize(
    "time_block, shown",
    [
        ({"depth": 4, "how": "table"}, True),  # it swept at the table's depth
        ({"depth": 1, "how": "race", "race_steps": 12}, True),  # its race ran sweeps, then single steps won
        ({"depth": 1, "how": "cached", "cached_race": {"chosen": 0}}, False),  # an earlier run raced
        ({"depth": 3, "how": "user"}, True),
        ({"depth": 1, "how": "table", "check": {"ran": True}}, True),  # a check of the table's depth swept
        ({"depth": 1, "how": "table"}, False),  # the table says single steps: nothing swept
        ({"depth": 1, "how": "cached"}, False),
        ({"depth": 1, "how": "user"}, False),  # --time-block 1
        ({"depth": 1, "how": "model", "check": {"ran": False}}, False),
        ({}, False),  # a record without the field
    ],
)
def test_the_sweeps_shape_is_named_only_when_the_run_swept(time_block, shown):
    from bandwall.views.iso3dfd import _kernel

    c = {
        "isa": "avx512",
        "row_shape": {
            "name": "4x2-split",
            "requested": "default",
            "how": "table",
            "swept": {"name": "8x2-ring-y4", "how": "table"},
        },
        "prefetch": {"rows_ahead": 1, "how": "default"},
        "time_block": time_block,
    }
    assert ("sweeps in shape 8x2-ring-y4 (table)" in _kernel(c)) is shown
