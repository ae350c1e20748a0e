"""bench/iso3dfd_kernel_choices.py's entries (its shape races in bench/shape_races.py, the swept ones in
bench/swept_races.py): racing the step shapes again keeps the knobs measured at
a variant's shape (prefetch, the sweeps' shape, the share of L2, the team) while that shape stands,
and drops them where it changed (the sweeps knob's race: tests/test_bench_sweeps_race.py)."""

from __future__ import annotations

import json
import sys

import pytest

import bench_scripts

kc = bench_scripts.load("iso3dfd_kernel_choices.py", "kernel_choices")
sh = sys.modules[kc.race_shapes.__module__]  # bench/shape_races.py
sw = sys.modules[kc.race_swept_variant.__module__]  # bench/swept_races.py


def test_knobs_measured_at_a_shape_stay_while_it_stands():
    before = {
        "shapes": {"avx512": {"shape": "2x4"}, "avx2": {"shape": "2x2"}},
        "prefetch": {"avx512": {"rows_ahead": 0}, "avx2": {"rows_ahead": 1}},
        "swept_shapes": {"avx512": {"shape": "2x4"}},
        "teams": {"avx512": {"team": "auto"}},
        "blocks": {"avx2": {"l2_share": 0.5}},
        "isa": "avx512",
    }
    raced = {**before, "shapes": {"avx512": {"shape": "2x4"}, "avx2": {"shape": "2x3"}}}
    out = sh.keep_measured_at(raced, sh.shapes_of(before))
    assert out["prefetch"] == {"avx512": {"rows_ahead": 0}}  # avx2's was measured at 2x2
    assert out["swept_shapes"] == before["swept_shapes"] and out["teams"] == before["teams"]
    assert "blocks" not in out  # only avx2's, whose shape changed
    assert out["shapes"] == raced["shapes"] and out["isa"] == "avx512"
    assert sh.keep_measured_at(before, sh.shapes_of(before)) == before


@pytest.mark.parametrize(
    "first, second, shape, confirmed",
    [
        ({"8x2-ring": 120.0}, {"8x2-ring": 120.0}, "8x2-ring", True),  # faster twice
        ({"8x2-ring": 120.0}, {"8x2-ring": 100.0}, "2x4", False),  # faster once: chance
        ({"8x2-ring": 100.0}, None, "2x4", None),  # within noise: no second race
        ({"8x2-ring": 80.0}, None, "2x4", None),  # slower
    ],
)
def test_a_step_shape_stands_only_when_a_second_race_says_so(monkeypatch, first, second, shape, confirmed):
    """The shapes knob: a shape other than the variant's compiled default replaces it only when a
    second race of the two alone settles on it too; the default, named twice (default and its own
    name), races once."""
    import types

    seconds = []

    def run(isa, shape, *x, **k):
        name = "2x4" if shape == "default" else shape
        jitter = [1.0, 1.01, 0.99, 1.0, 1.02][len(calls[name]) % 5]
        calls[name].append(1)
        return {
            "result": {"mpoints_per_s": first.get(name, 100.0) * jitter},
            "config": {"row_shape": {"name": name}},
        }

    def fake_race(a, names, go):
        seconds.append(names)
        return {"2x4": [100.0, 101.0, 99.0, 100.0, 102.0], **{k: [second[k]] * 5 for k in names[1:]}}

    import collections

    calls = collections.defaultdict(list)
    monkeypatch.setattr(sh, "race", fake_race)
    a = types.SimpleNamespace(rounds=5, pause=0, in_run=False)
    cands = [("avx512", "default"), ("avx512", "2x4"), ("avx512", "8x2-ring")]
    out = sh.race_shapes(a, ["avx512"], cands, run, 4)["shapes"]["avx512"]
    assert out["shape"] == shape and list(out["figures"]) == ["2x4", "8x2-ring"]
    assert seconds == ([] if second is None else [["2x4", "8x2-ring"]])
    assert out.get("second_race", {}).get("decisive") == confirmed


@pytest.mark.parametrize(
    "radius, shape, first, second, chosen, names",
    [
        # radius 3: the default one row into L2 first, then none and each distance into each cache
        (3, "2x4", {"1:L1": 120.0}, {"1:L1": 120.0}, "1:L1", ["1:L2", "0", "1:L1", "2:L1", "2:L2"]),
        (3, "2x4", {"1:L1": 120.0}, {"1:L1": 100.5}, "1:L2", ["1:L2", "0", "1:L1", "2:L1", "2:L2"]),
        # radius 2: none is the default
        (2, "2x4", {"2:L2": 101.0}, None, "0", ["0", "1:L1", "1:L2", "2:L1", "2:L2"]),
        # a ring: the cache does nothing, so none and one row race
        (8, "8x2-ring", {"0": 80.0}, None, "1:L2", ["1:L2", "0"]),
    ],
)
def test_the_prefetch_settings_race_distance_and_cache(
    monkeypatch, radius, shape, first, second, chosen, names
):
    """The prefetch knob: each distance into each cache (--prefetch N:L1, N:L2) races the compiled
    default (none at radius 1 and 2, one row into L2 beyond); a winner stands only when a second race
    of it alone against the default settles on it too."""
    import types

    races = []

    def fake_race(a, pick, go):
        races.append(pick)
        jitter = [1.0, 1.01, 0.99, 1.0, 1.02]
        got = first if len(races) == 1 else second
        return {p: [got.get(p, 100.0) * j for j in jitter] for p in pick}

    monkeypatch.setattr(kc, "race", fake_race)
    a = types.SimpleNamespace(rounds=5, pause=0, prefetch_rows=[0, 1, 2], prefetch_caches=["L1", "L2"])
    out = kc.race_prefetch(a, ["avx512"], {"avx512": {"shape": shape}}, None, radius)["avx512"]
    assert races[0] == names and list(out["figures"]) == names
    assert (out["prefetch"], out["shape"], out["decision"]["default"]) == (chosen, shape, names[0])
    assert races[1:] == ([] if second is None else [[names[0], max(first, key=first.get)]])


@pytest.mark.parametrize(
    "first,second,shape",
    [
        ({"8x2-ring": 120.0}, {"8x2-ring": 120.0}, "8x2-ring"),
        ({"8x2-ring": 120.0}, {"8x2-ring": 100.5}, "2x4"),
        ({"8x2-ring": 100.5}, None, "2x4"),
    ],
)
def test_in_run_races_the_shapes_inside_runs_and_whole_runs_confirm(monkeypatch, first, second, shape):
    """--in-run: each candidate's name from a one-step run of it (default: compiled), then one run of
    --row-shape measure:A,B,... whose record's rates decide, and the second race whole runs of the
    winner against the default, alternated (the runs users make); a run that raced nothing stops the
    bench."""
    import types

    runs, seconds = [], []
    jitter = [1.0, 1.01, 0.99, 1.0, 1.02]

    def run(isa, shape, *x, steps=None, **k):
        runs.append((shape, steps))
        if shape.startswith("measure:"):
            names = shape[len("measure:") :].split(",")
            rates = {n: [first.get(n, 100.0) * j for j in jitter] for n in names}
            race = {"how": "raced", "race": {"rates": rates}}
            return {"config": {"row_shape": {"name": names[0], "race": race}}}
        return {"config": {"row_shape": {"name": "2x4" if shape == "compiled" else shape}}}

    def whole_runs(a, names, go):
        seconds.append(names)
        return {n: [second.get(n, 100.0) * j for j in jitter] for n in names}

    monkeypatch.setattr(sh, "race", whole_runs)
    a = types.SimpleNamespace(rounds=5, pause=0, in_run=True, in_run_steps=300)
    cands = [("avx512", "default"), ("avx512", "8x2-ring")]
    out = sh.race_shapes(a, ["avx512"], cands, run, 4)["shapes"]["avx512"]
    assert out["shape"] == shape and list(out["figures"]) == ["2x4", "8x2-ring"]
    measured = [r for r in runs if r[0].startswith("measure:")]
    assert measured == [("measure:2x4,8x2-ring", 300)]
    assert seconds == ([] if second is None else [["2x4", "8x2-ring"]])
    assert runs[:2] == [("compiled", 1), ("8x2-ring", 1)]

    def nothing(isa, shape, *x, steps=None, **k):
        race = {"how": "default", "why": "the run is too short"}
        return {"config": {"row_shape": {"name": "2x4" if shape == "compiled" else shape, "race": race}}}

    with pytest.raises(SystemExit, match="raced no shapes"):
        sh.race_shapes(a, ["avx512"], cands, nothing, 4)


@pytest.mark.parametrize(
    "ring, calls, shape",
    [
        # beyond the margin, the interval across it: as many rounds again, then within noise
        ([130.0, 90.0, 125.0, 95.0, 128.0], 2, "2x4"),
        # settled by the first rounds: no more
        ([120.0, 121.0, 119.0, 120.0, 122.0], 1, "8x2-ring"),
        ([100.0, 101.0, 99.0, 100.0, 102.0], 1, "2x4"),
    ],
)
def test_an_unsettled_second_race_runs_as_many_rounds_again(monkeypatch, ring, calls, shape):
    """The shapes' second race, whole runs of the winner against the default: when its rounds leave it
    unsettled (the median beyond the margin, the interval across it) it runs as many again and decides
    on all of them, as the sweeps' race does."""
    import types

    seconds = []

    def run(isa, shape, *x, steps=None, **k):
        if shape.startswith("measure:"):
            names = shape[len("measure:") :].split(",")
            rates = {n: [120.0 if n == "8x2-ring" else 100.0] * 5 for n in names}
            return {
                "config": {
                    "row_shape": {"name": names[0], "race": {"how": "raced", "race": {"rates": rates}}}
                }
            }
        return {"config": {"row_shape": {"name": "2x4" if shape == "compiled" else shape}}}

    def whole_runs(a, names, go):
        seconds.append(names)
        return {"2x4": [100.0] * 5, "8x2-ring": list(ring)}

    monkeypatch.setattr(sh, "race", whole_runs)
    a = types.SimpleNamespace(rounds=5, pause=0, in_run=True, in_run_steps=300)
    cands = [("avx512", "default"), ("avx512", "8x2-ring")]
    out = sh.race_shapes(a, ["avx512"], cands, run, 4)["shapes"]["avx512"]
    assert seconds == [["2x4", "8x2-ring"]] * calls
    assert out["shape"] == shape


MODELS = {"iso3dfd.time_model": {"llc_over_memory": 5.3, "llc_bytes": 16 << 20}}
ROWS = [
    {"microarch": "Zen X", "cpu": "x", "kernels": {"iso3dfd.rows": {"isa": "avx2"}}, "models": MODELS},
    {"microarch": "Other", "cpu": "y", "kernels": {"iso3dfd.rows": {"isa": "avx512"}}, "models": {"m": {}}},
    {"microarch": "Bare", "cpu": "z", "kernels": {"iso3dfd.rows": {"isa": "avx512"}}},
]


@pytest.mark.parametrize(
    "row_name, rows",
    [
        ("Zen X", [{"microarch": "Zen X", "models": MODELS, "kernels": {}}]),  # its models, no choices
        ("Bare", []),  # a row without models: nothing to plan with
        ("Unknown", []),  # no row for this CPU
        (None, []),  # a CPU no machine model names
    ],
)
def test_the_knobs_race_on_this_cpus_models_and_no_choices(row_name, rows):
    """The table the knob races see (iso3dfd_kernel_choices.py): no CPU's choices, and this CPU's
    measured cache figures only, so the sweeps' knobs race at the depths runs here get."""
    table = {"about": "t", "rows": json.loads(json.dumps(ROWS))}
    out = kc.choice_table.models_only(table, row_name)
    assert out["rows"] == rows
    assert table["rows"] == ROWS  # the checkout's table is not touched
    json.dumps(out)


@pytest.mark.parametrize(
    "row_name, left",
    [
        ("Zen X", ["Other", "Bare"]),  # this CPU's row left out, the others kept
        ("Bare", ["Zen X", "Other"]),
        ("Unknown", ["Zen X", "Other", "Bare"]),  # no row for this CPU: the table as it is
        (None, ["Zen X", "Other", "Bare"]),
    ],
)
def test_a_table_without_this_cpus_row_is_what_a_cpu_it_does_not_know_meets(row_name, left):
    """The table the orders and knob benches give bandwall to run as on a CPU without a row."""
    table = {"about": "t", "rows": json.loads(json.dumps(ROWS))}
    out = kc.choice_table.without_row(table, row_name)
    assert [r["microarch"] for r in out["rows"]] == left and out["about"] == "t"
    assert table["rows"] == ROWS  # the checkout's table is not touched


STEP_ENTRY = {
    "isa": "avx2",
    "figures": {"avx512": 1356.0, "avx2": 1603.0},
    "decision": {"default": "avx512", "chosen": "avx2", "decisive": True, "why": "step race"},
    "case": "256^3 interior, 10 steps, 2 threads compact, step by step",
    "shapes": {"avx512": {"shape": "2x4"}, "avx2": {"shape": "2x2"}},
}


@pytest.mark.parametrize(
    "depth, first, second, isa, raced",
    [
        (8, {"avx512": 150.0}, None, "avx512", []),  # the model's default faster in sweeps
        (8, {"avx2": 150.0}, {"avx2": 150.0}, "avx2", [["avx512", "avx2"]]),  # avx2 faster twice
        (8, {"avx2": 150.0}, {"avx2": 100.0}, "avx512", [["avx512", "avx2"]]),  # once: chance
        (8, {}, None, "avx512", []),  # level in sweeps: the model's default
        (1, {"avx512": 150.0}, None, "avx2", None),  # the model proposes no sweeps: no race
    ],
)
def test_the_variant_races_again_inside_sweeps(monkeypatch, depth, first, second, isa, raced):
    """Where the model proposes sweeps, the variants race inside them (each at its step shape), from
    the machine model's default; the step race's variant, figures and decision stay under
    step_variant."""
    import types

    races, runs = [], []
    monkeypatch.setattr(sw, "model_default_isa", lambda offered: "avx512")
    monkeypatch.setattr(sw, "probe", lambda *x: {"config": {"time_block": {"proposal": {"depth": depth}}}})

    def fake_race(a, names, go):
        for n in names:
            go(n)
        rates = first if not races else (second or first)
        races.append(names)
        return {k: [rates.get(k, 100.0) * j for j in (1.0, 1.01, 0.99, 1.0, 1.02)] for k in names}

    monkeypatch.setattr(sw, "race", fake_race)
    a = types.SimpleNamespace(rounds=5, pause=0, interior=256, sweep_steps=40, threads=2)
    out = sw.race_swept_variant(
        a, dict(STEP_ENTRY), ["avx512", "avx2"], lambda *x, **k: runs.append((x, k)), 2, 260, {}
    )
    assert out["isa"] == isa
    if raced is None:
        assert out == STEP_ENTRY and runs == []
        return
    assert races[1:] == raced
    assert ((("avx512", "2x4"), {"swept": ("same", 8)}) in runs) and (
        (("avx2", "2x2"), {"swept": ("same", 8)}) in runs
    )
    assert out["step_variant"] == {k: STEP_ENTRY[k] for k in ("isa", "figures", "decision", "case")}
    assert out["decision"]["default"] == "avx512" and out["decision"]["chosen"] == isa
    # decisive only when a variant other than the default stands beyond noise, twice
    assert out["decision"]["decisive"] == (isa == "avx2")
    assert "--time-block 8" in out["variant_case"]
    again = sw.race_swept_variant(a, out, ["avx512", "avx2"], lambda *x, **k: None, 2, 260, {})
    assert again["step_variant"] == out["step_variant"]  # a second swept race keeps the step race's


@pytest.mark.parametrize(
    "sweeps, isa, by_llc",
    [
        ({"avx512": {"depth": 8}}, "avx512", None),  # the sweeps pay at the swept race's variant
        ({"avx512": {"depth": 1}}, "avx2", None),  # they do not: the step race's variant
        ({"avx512": {"depth": 1, "slower": True}}, "avx2", None),
        ({}, "avx2", None),  # not raced: nothing says the defaults sweep
        (
            {"avx512": {"depth": 1}},
            "avx512",
            {"avx512": {"one": {"depth": 6}, "two": {"depth": 1}}},
        ),  # on one L3
        ({"avx512": {"depth": 1}}, "avx2", {"avx512": {"one": {"depth": 1}, "two": {"depth": 1}}}),
        ({}, "avx2", {"avx2": {"one": {"depth": 4}}}),  # at the other variant: says nothing of this one
    ],
)
def test_the_swept_variant_stands_only_where_the_sweeps_pay(sweeps, isa, by_llc):
    """The step race's variant comes back where the sweeps at the swept race's variant pay neither
    with the team free nor in any entry per verdict of the probe of a shared last-level cache."""
    swept = {
        **STEP_ENTRY,
        "isa": "avx512",
        "figures": {"avx512": 2500.0, "avx2": 1700.0},
        "decision": {"default": "avx512", "chosen": "avx512", "decisive": False, "why": "swept race"},
        "runs": {},
        "variant_case": "--time-block 8",
        "step_variant": {k: STEP_ENTRY[k] for k in ("isa", "figures", "decision", "case")},
        "sweeps": sweeps,
        **({"sweeps_by_llc": by_llc} if by_llc else {}),
    }
    out = sw.variant_where_it_runs(swept, 2)
    assert out["isa"] == isa
    if isa == "avx2":
        assert out == {**STEP_ENTRY, "sweeps": sweeps, **({"sweeps_by_llc": by_llc} if by_llc else {})}
    else:
        assert out == swept


@pytest.mark.parametrize(
    "given, isa, expected",
    [
        ("all", "avx512", "default,4x2-split,2x4,8x1"),  # every shape the variant has, the default first
        ("all", "avx2", "default,2x2"),
        ("all", "generic", "default"),  # a variant without shapes: its default alone
        ("default,2x4", "avx512", "default,2x4"),  # a list given stays as it is
    ],
)
def test_all_candidate_shapes_are_every_shape_the_manifest_lists(monkeypatch, given, isa, expected):
    from bandwall.core import manifest

    shapes = {"avx512": ["4x2-split", "2x4", "8x1"], "avx2": ["2x2"]}
    listed = {k: [{"name": n} for n in v] for k, v in shapes.items()}
    monkeypatch.setattr(manifest, "manifest", lambda: {"kernels": {"iso3dfd": {"row_shapes": listed}}})
    assert sh.candidates(given, isa) == expected


@pytest.mark.parametrize(
    "held, third, shape, raced",
    [
        # the race's winner within noise of the row's shape: the row's stands after one race
        ("5x1-ring-x81", {"5x1-ring-x81": 100.0, "8x2-ring": 101.0}, "5x1-ring-x81", 1),
        # faster than it beyond noise twice in a row: the winner takes the row
        ("5x1-ring-x81", {"5x1-ring-x81": 100.0, "8x2-ring": 120.0}, "8x2-ring", 2),
        # the row held the winner already, or nothing the race ran: no race against it
        ("8x2-ring", None, "8x2-ring", 0),
        ("16x2-ring", None, "8x2-ring", 0),
        (None, None, "8x2-ring", 0),
    ],
)
def test_the_rows_shape_stands_unless_the_winner_beats_it(monkeypatch, held, third, shape, raced):
    """The shapes knob with a row that named a shape before: a winner other than it races it alone, the
    row's as the default, and replaces it only when faster beyond noise in two such races in a row; so
    two shapes that both beat the compiled default by as much do not take turns between runs of the
    bench."""
    import types

    races = []
    jitter = [1.0, 1.01, 0.99, 1.0, 1.02]
    first = {"2x4": 100.0, "5x1-ring-x81": 101.0, "8x2-ring": 120.0}

    def run(isa, shape, *x, **k):
        name = "2x4" if shape == "default" else shape
        return {"result": {"mpoints_per_s": first[name] * jitter[0]}, "config": {"row_shape": {"name": name}}}

    def fake_race(a, names, go):
        races.append(names)
        got = {"2x4": 100.0, "8x2-ring": 120.0} if len(races) == 1 else third
        return {k: [got[k] * j for j in jitter] for k in names}

    monkeypatch.setattr(sh, "race", fake_race)
    a = types.SimpleNamespace(rounds=5, pause=0, in_run=False)
    cands = [("avx512", "default"), ("avx512", "5x1-ring-x81"), ("avx512", "8x2-ring")]
    out = sh.race_shapes(a, ["avx512"], cands, run, 6, {"avx512": held})["shapes"]["avx512"]
    assert out["shape"] == shape
    assert races[0] == ["2x4", "8x2-ring"]  # the second race: the winner against the compiled default
    assert races[1:] == [[held, "8x2-ring"]] * raced
    assert ("incumbent_race" in out) == bool(raced)
    assert len(out.get("incumbent_race", {}).get("again", [])) == max(raced - 1, 0)


@pytest.mark.parametrize(
    "held, third, won, races",
    [
        # the default wins the race; the row held another: races of the two alone decide, the row's
        # the default, which holds at the first the newcomer does not win
        ("1:L1", {"1:L2": 101.0, "1:L1": 100.0}, "1:L1", 1),
        ("1:L1", {"1:L2": 120.0, "1:L1": 100.0}, "1:L2", 2),
        # the row held the default, or a setting not raced: no race against it
        ("1:L2", None, "1:L2", 0),
        ("3:L1", None, "1:L2", 0),
    ],
)
def test_every_knob_holds_the_rows_earlier_choice_unless_beaten(monkeypatch, held, third, won, races):
    """choice_races.settle, as every knob's race calls it (here the prefetch knob's): a name other
    than the row's earlier choice replaces it only when a race of the two alone, the row's as the
    default, settles on it, and a second such race too; the entry keeps the first as
    incumbent_race, the second under its `again`."""
    import types

    calls = []
    jitter = [1.0, 1.01, 0.99, 1.0, 1.02]

    def fake_race(a, pick, go):
        calls.append(pick)
        got = {} if len(calls) == 1 else third
        return {p: [got.get(p, 100.0) * j for j in jitter] for p in pick}

    monkeypatch.setattr(kc, "race", fake_race)
    a = types.SimpleNamespace(rounds=5, pause=0, prefetch_rows=[0, 1, 2], prefetch_caches=["L1", "L2"])
    shapes = {"avx512": {"shape": "2x4"}}
    out = kc.race_prefetch(a, ["avx512"], shapes, None, 3, {"avx512": held})["avx512"]
    assert out["prefetch"] == won
    assert calls[1:] == [[held, "1:L2"]] * races
    assert ("incumbent_race" in out) == bool(races)
    if races:
        assert out["incumbent_race"]["held"] == held


@pytest.mark.parametrize(
    "answers, kept, races",
    [
        # the newcomer within noise of the row's choice: held after one race
        ([{}], "held", 1),
        # slower beyond noise: held after one race
        ([{"raced": 80.0}], "held", 1),
        # faster beyond noise once, then within noise: held (one race passes the rule by chance)
        ([{"raced": 120.0}, {}], "held", 2),
        # faster beyond noise twice in a row: the newcomer takes the row
        ([{"raced": 120.0}, {"raced": 120.0}], "raced", 2),
    ],
)
def test_a_newcomer_takes_the_row_only_after_two_races_in_a_row(answers, kept, races):
    """choice_races.hold_unless_beaten: the row's earlier choice against a newcomer alone, the row's
    the default, the newcomer kept only when it wins UNSEAT_RACES races in a row; the first race that
    keeps the row's ends it. The record: the first race with held and raced, the later under again."""
    cr = sys.modules["choice_races"]
    assert cr.UNSEAT_RACES == 2
    jitter = [1.0, 1.01, 0.99, 1.0, 1.02]
    seen = []

    def again(pair):
        got = answers[len(seen)]
        seen.append(pair)
        return {n: [got.get(n, 100.0) * j for j in jitter] for n in pair}

    won, standing = cr.hold_unless_beaten("held", "raced", again)
    assert won == kept
    assert seen == [["held", "raced"]] * races
    assert standing["held"] == "held" and standing["raced"] == "raced"
    assert len(standing.get("again", [])) == races - 1
    assert "; then " in cr.against(standing) if races > 1 else "; then " not in cr.against(standing)


AVX2_WINS, LEVEL, AVX512_WINS = {"avx2": 120.0}, {}, {"avx512": 120.0}


@pytest.mark.parametrize(
    "in_run, steps, answers, held, chosen, second, third",
    [
        # inside runs: the variants race whole runs (the in-run rates come from separate runs)
        (True, LEVEL, [LEVEL], None, "avx512", False, False),
        (True, LEVEL, [AVX2_WINS, AVX2_WINS], None, "avx2", True, False),
        (True, LEVEL, [AVX2_WINS, LEVEL], None, "avx512", True, False),
        # the row's avx2 held against avx512 unless beaten alone twice in a row, avx2 the default
        (True, LEVEL, [LEVEL, LEVEL], "avx2", "avx2", False, True),
        (True, LEVEL, [LEVEL, AVX512_WINS, LEVEL], "avx2", "avx2", False, True),
        (True, LEVEL, [LEVEL, AVX512_WINS, AVX512_WINS], "avx2", "avx512", False, True),
        # run against run: the shapes' rounds pair the variants, no race of their own unless one wins
        (False, LEVEL, [], None, "avx512", False, False),
        (False, AVX2_WINS, [AVX2_WINS], None, "avx2", True, False),
        (False, AVX2_WINS, [LEVEL], None, "avx512", True, False),
    ],
)
def test_the_variants_race_whole_runs_confirmed_and_held(
    monkeypatch, in_run, steps, answers, held, chosen, second, third
):
    """The variant at a radius: each at its chosen shape from the machine model's default (avx512
    here), in whole runs alternated when the shapes raced inside runs; a winner stands only when a
    second race of the two alone settles on it too, and the row's earlier variant holds against a
    newcomer within noise of it."""
    import types

    jitter = [1.0, 1.01, 0.99, 1.0, 1.02]
    seen = []

    def fake_race(a, pick, go):
        got = answers[len(seen)]
        seen.append(pick)
        return {n: [got.get(n, 100.0) * j for j in jitter] for n in pick}

    monkeypatch.setattr(sh, "race", fake_race)
    monkeypatch.setattr(sh, "model_default_isa", lambda offered: "avx512")
    a = types.SimpleNamespace(rounds=5, pause=0, in_run=in_run)
    shapes = {"avx512": {"shape": "2x4"}, "avx2": {"shape": "2x2"}}
    best = {isa: [steps.get(isa, 100.0) * j for j in jitter] for isa in shapes}
    out = sh.race_variants(a, ["avx512", "avx2"], shapes, best, None, 3, held)
    assert out["isa"] == chosen and out["decision"]["chosen"] == chosen
    assert len(seen) == len(answers) and all(sorted(p) == ["avx2", "avx512"] for p in seen)
    assert ("second_race" in out["decision"]) == second
    assert ("incumbent_race" in out["decision"]) == third
    assert list(out["figures"]) == ["avx512", "avx2"] and out["shapes"] == shapes


def parsed(monkeypatch, *argv):
    """The script's parse() of argv (its export of --bindir undone after the test)."""
    monkeypatch.setenv("BANDWALL_BINDIR", str(bench_scripts.BENCH))
    monkeypatch.setattr(
        sys, "argv", ["iso3dfd_kernel_choices.py", "--bindir", str(bench_scripts.BENCH), *argv]
    )
    return kc.parse()


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--knobs", "sweeps,depth"], "--knobs takes"),
        (["--sweeps-llc", "three"], "--sweeps-llc takes one and two"),
        (["--sweeps-llc", "one,2"], "--sweeps-llc takes one and two"),
        (["--prefetch-caches", "L3"], "--prefetch-caches takes"),
    ],
)
def test_bad_arguments_say_one_line_and_exit_2(argv, says, monkeypatch, capsys):
    with pytest.raises(SystemExit) as e:
        parsed(monkeypatch, *argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_the_verdicts_of_the_probe_race_apart_only_when_asked(monkeypatch):
    assert parsed(monkeypatch, "--sweeps-llc", "one,two").sweeps_llc == ["one", "two"]
    assert parsed(monkeypatch).sweeps_llc == []  # the team free, into sweeps
