"""bench/sweeps_race.py, the sweeps knob of bench/iso3dfd_kernel_choices.py: the model's proposal and
every shallower depth (and the proposals on tiles L2 or the last-level cache holds) against single
steps; the entry keeps a verdict only when two races say so, the second pooling the rounds the row's
earlier second race of the same depth kept, and the row's earlier sweeps hold against a newcomer
within noise of them; the race runs on the table as the bench stands."""

from __future__ import annotations

import json
import sys

import pytest

import bench_scripts

kc = bench_scripts.load("iso3dfd_kernel_choices.py", "kernel_choices")
sr = sys.modules[kc.race_sweeps.__module__]  # bench/sweeps_race.py, as the script imported it


def race_sweeps(monkeypatch, record, races: list[dict], radius: int = 3, isa: str = "avx512", earlier=None):
    """bench/sweeps_race.py's race_sweeps with made-up runs: record(cmd) answers the probes (the
    proposals, where tiles stay), and each race of names returns single steps at 100 MPoints/s and
    the next of `races` for the others (the first of a race of two sweeps included). Returns the entry and the names of every race run; every race
    offered must have run."""
    import types

    left, calls = list(races), []

    def fake_race(a, names, run):
        calls.append(names)
        got = left.pop(0)
        return {"1": [100.0] * 5, **{k: got[k] for k in names if k != "1"}}

    monkeypatch.setattr(sr, "race", fake_race)
    monkeypatch.setattr(sr.common, "tool", lambda bindir, name: name)
    monkeypatch.setattr(sr.common, "record", record)
    a = types.SimpleNamespace(bindir=bench_scripts.BENCH, sweep_steps=40, interior=256, threads=2, rounds=5)
    n = 256 + 2 * radius
    entry = {"isa": isa, **({"sweeps": {isa: earlier}} if earlier else {})}
    out = sr.race_sweeps(a, entry, [isa], radius, n, {"BANDWALL_CACHE_DIR": "/nonexistent"})
    assert not left  # every race offered was run
    return out[isa], calls


def test_the_sweeps_entry_keeps_a_verdict_only_when_two_races_say_so(monkeypatch):
    """The sweeps knob: the model's proposal against single steps; sweeps faster (or slower) beyond
    noise stand only when a second race says so too; rounds left unsettled are doubled; the entry
    names the threads it was measured with."""

    def record(*x, **k):  # tiles in L2 or L3 propose the same sweeps: no other candidate
        return {"config": {"time_block": {"proposal": {"depth": 4, "level": "L2"}}}}

    level = [101.0, 99.0, 100.0, 102.0, 98.0]

    def entry(*rates: list[float]) -> dict:  # the shallower depth 2 and 3 level with single steps
        return race_sweeps(monkeypatch, record, [{"4": r, "2": level, "3": level} for r in rates], radius=1)[
            0
        ]

    fast, slow = [150.0] * 5, [70.0] * 5
    mixed = [150.0, 150.0, 150.0, 60.0, 150.0]  # median beyond the margin, interval not: unsettled
    assert (entry(fast, fast)["depth"], entry(fast, fast)["slower"]) == (4, False)
    assert (entry(slow, slow)["depth"], entry(slow, slow)["slower"]) == (1, True)
    assert (entry(fast, level)["depth"], entry(slow, level)["slower"]) == (1, False)
    assert entry(level)["depth"] == 1 and "second_race" not in entry(level)
    doubled = entry(mixed, fast, fast)  # ten rounds, then a second race
    assert doubled["depth"] == 4 and doubled["proposed"] == 4
    assert doubled["threads"] == 2  # the team it was measured with: a run of another does not take it


CASE = "256^3 interior, 40 steps, 2 threads compact"
EARLIER_3 = {"1": [100.0] * 5, "3": [108.0, 107.0, 110.0, 106.0, 109.0]}


def kept(raced: str = "3", case: str = CASE, rates: dict | None = EARLIER_3, **more) -> dict:
    """The row's earlier sweeps record: its case and its second race of `raced` with `rates` kept."""
    return {"case": case, "second_race": {"raced": raced, **({"rates": rates} if rates else {}), **more}}


@pytest.mark.parametrize(
    "earlier, rounds, pool",
    [
        (None, 5, {}),  # no earlier entry: this race's rounds alone
        ({"case": CASE}, 5, {}),  # an earlier entry without a second race
        (kept(rates=None), 5, {}),  # one that kept no rounds
        (kept(), 10, {"races": 2, "rounds": 10}),
        (kept(raced="4"), 5, {}),  # another depth
        (kept(case="512^3 interior, 40 steps, 2 threads compact"), 5, {}),  # another case
        (kept(pooled={"races": 2, "rounds": 5}), 10, {"races": 3, "rounds": 10}),  # the third race
        (kept(rates={"1": [100.0] * 46, "3": [105.0] * 46}), 48, {"races": 2, "rounds": 48}),  # the latest 48
        (kept(rates={"1": [100.0] * 7, "3": [105.0] * 6}), 11, {"races": 2, "rounds": 11}),  # as many of each
    ],
)
def test_a_second_race_pools_the_rows_earlier_rounds_of_the_same_pair(earlier, rounds, pool):
    """The sweeps' second race decides on its rounds after those the row's earlier second race of the
    same pair on the same case kept (the latest 48), and says what it pooled."""
    rates = {"1": [100.0] * 5, "3": [108.0, 97.0, 110.0, 106.0, 109.0]}
    out, said = sr.pooled(earlier, ["1", "3"], CASE, rates)
    assert said == ({"pooled": pool} if pool else {})
    assert [len(out[k]) for k in ("1", "3")] == [rounds, rounds]
    assert out["3"][-5:] == rates["3"]  # this race's rounds last
    assert sr.POOLED_ROUNDS == 48


def test_a_second_race_within_noise_alone_decides_on_the_pooled_rounds(monkeypatch):
    """Depth 3 within noise of single steps in this second race alone (its 5 rounds unsettled, 5 more
    alike: 0.97x to 1.10x over 10) but faster beyond noise on its rounds pooled with the row's earlier
    second race of it: the entry sweeps at depth 3 and keeps all fifteen rounds for the next race."""

    def record(*x, **k):
        return {"config": {"time_block": {"proposal": {"depth": 3, "level": "L2"}}}}

    first = {"3": [150.0] * 5, "2": [101.0, 99.0, 100.0, 102.0, 98.0]}
    second = {"3": [108.0, 97.0, 110.0, 106.0, 109.0]}
    earlier = {**kept(), "depth": 1}
    alone, calls = race_sweeps(monkeypatch, record, [first, second, second])
    assert calls == [["1", "3", "2"], ["1", "3"], ["1", "3"]]
    assert alone["depth"] == 1 and "pooled" not in alone["second_race"]
    assert alone["second_race"]["rates"] == {"1": [100.0] * 10, "3": second["3"] * 2}
    out, _ = race_sweeps(monkeypatch, record, [first, second, second], earlier=earlier)
    assert out["depth"] == 3
    assert out["second_race"]["pooled"] == {"races": 2, "rounds": 15}
    assert out["second_race"]["rates"]["3"] == EARLIER_3["3"] + second["3"] * 2


def test_tiles_sized_for_l2_race_beside_the_models_proposal(monkeypatch):
    """Where --tile-cache L2 proposes other sweeps than the model's, they race too, from single steps,
    with each deeper depth a tile L2 holds allows: a winner stands only when a second race of it alone
    against single steps says so, and the entry then says tile_cache L2; the model's proposal slower
    twice still says `slower`."""

    def record(cmd, **k):
        depth = cmd[cmd.index("--time-block") + 1]
        if depth != "auto":  # a probe of where tiles L2 holds stay at that depth
            return {"result": {"traffic_model": {"time_block": {"level": "L2" if int(depth) <= 4 else "L3"}}}}
        in_l2 = cmd[cmd.index("--tile-cache") + 1] == "L2"
        got = {"depth": 3, "level": "L2"} if in_l2 else {"depth": 8}
        return {"config": {"time_block": {"proposal": got, "max_depth": 64}}}

    def entry(*races: dict) -> dict:
        out, calls = race_sweeps(monkeypatch, record, list(races))
        assert calls[0] == ["1", "8", "2", "3", "4", "5", "6", "7", "3 L2", "4 L2"]
        return out

    fast, faster, slow, level = [150.0] * 5, [170.0] * 5, [70.0] * 5, [101.0, 99.0, 100.0, 102.0, 98.0]
    shallower = {str(d): level for d in range(2, 8)}
    won = entry({"8": fast, "3 L2": fast, "4 L2": faster, **shallower}, {"4 L2": faster})
    assert (won["depth"], won["tile_cache"], won["proposed_in_l2"]) == (4, "L2", 3)
    assert won["second_race"]["raced"] == "4 L2"
    once = entry({"8": level, "3 L2": fast, "4 L2": level, **shallower}, {"3 L2": level})
    assert once["depth"] == 1 and "tile_cache" not in once
    model = entry({"8": fast, "3 L2": level, "4 L2": fast, **shallower}, {"8": fast})
    assert model["depth"] == 8 and "tile_cache" not in model
    slower = entry({"8": slow, "3 L2": level, "4 L2": level, **shallower}, {"8": slow})
    assert (slower["depth"], slower["slower"]) == (1, True)


def test_tiles_sized_for_the_last_level_cache_race_where_they_differ(monkeypatch):
    """Where --tile-cache L3 proposes other sweeps than the model's (whose tiles L2 holds), they race
    too; a winner confirmed alone says tile_cache L3."""

    def record(cmd, **k):
        tiles = cmd[cmd.index("--tile-cache") + 1]
        got = {"depth": 7, "level": "L3"} if tiles == "L3" else {"depth": 5, "level": "L2"}
        return {"config": {"time_block": {"proposal": got, "max_depth": 64}}}

    races = [
        {"5": [150.0] * 5, "2": [150.0] * 5, "3": [150.0] * 5, "4": [150.0] * 5, "7 L3": [170.0] * 5},
        {"7 L3": [170.0] * 5},
    ]
    out, calls = race_sweeps(monkeypatch, record, races, isa="avx2")
    assert calls == [["1", "5", "2", "3", "4", "7 L3"], ["1", "7 L3"]]
    assert (out["depth"], out["tile_cache"], out["proposed_in_l3"]) == (7, "L3", 7)
    assert "proposed_in_l2" not in out


def test_the_sweeps_race_runs_on_the_table_as_the_bench_stands(monkeypatch, tmp_path):
    """The sweeps' race reads the table the bench names (BANDWALL_ISA_CHOICES): the checkout's with the
    knobs raced before it, in this CPU's row (a new row when the table has none), the checkout's file
    untouched; so one run of every knob needs no rebuild in between."""
    ct = sys.modules["choice_table"]
    checkout = {"about": "x", "rows": [{"microarch": "Other", "kernels": {"k": {"isa": "avx2"}}}]}
    monkeypatch.setattr(ct, "load", lambda: json.loads(json.dumps(checkout)))
    monkeypatch.setattr(ct, "cpu_line", lambda: "x86_64: a CPU")
    raced = {"iso3dfd.rows.r3": {"isa": "avx512", "shapes": {"avx512": {"shape": "2x4"}}}}
    path = ct.standing(tmp_path, "Mine", raced, "cmd", "2026-12-04")
    table = json.loads(path.read_text())
    mine = ct.row_named(table, "Mine")
    assert mine["kernels"] == raced and (mine["cpu"], mine["measured"]) == ("x86_64: a CPU", "2026-12-04")
    assert ct.row_named(table, "Other") == checkout["rows"][0] and len(checkout["rows"]) == 1
    # an existing row keeps its other entries; a CPU no machine model names leaves the table as it is
    again = ct.placed(table, "Mine", {"iso3dfd.rows.r4": {"isa": "avx2"}}, "cmd", "2026-12-05")
    assert set(ct.row_named(again, "Mine")["kernels"]) == {"iso3dfd.rows.r3", "iso3dfd.rows.r4"}
    assert (
        ct.row_named(again, "Mine")["measured"] == "2026-12-04"
        and ct.placed(table, None, raced, "c", "d") == table
    )

    envs = []

    def record(cmd, env=None, **k):
        envs.append(env)
        return {"config": {"time_block": {"proposal": {"depth": 4, "level": "L2"}}}}

    import types

    monkeypatch.setattr(sr, "race", lambda a, names, run: (run(names[1]), {n: [100.0] * 5 for n in names})[1])
    monkeypatch.setattr(sr.common, "tool", lambda bindir, name: name)
    monkeypatch.setattr(sr.common, "record", record)
    a = types.SimpleNamespace(bindir=bench_scripts.BENCH, sweep_steps=40, interior=256, threads=2, rounds=5)
    env = {"BANDWALL_CACHE_DIR": str(tmp_path), "BANDWALL_ISA_CHOICES": str(path), "OTHER": "x"}
    sr.race_sweeps(a, {"isa": "avx512"}, ["avx512"], 3, 262, env)
    assert envs and all(
        e == {"BANDWALL_CACHE_DIR": str(tmp_path), "BANDWALL_ISA_CHOICES": str(path)} for e in envs
    )


@pytest.mark.parametrize(
    "earlier, third, depth, held_race, first_race",
    [
        ({"case": CASE, "depth": 2}, [[109.0, 112.0, 108.0, 111.0, 110.0]], 2, True, "1 4 2 3"),  # 2 holds
        # beyond noise twice in a row: 3 takes the row; once, then within noise: 2 holds
        ({"case": CASE, "depth": 2}, [[150.0] * 5] * 2, 3, True, "1 4 2 3"),
        ({"case": CASE, "depth": 2}, [[150.0] * 5, [110.0] * 5], 2, True, "1 4 2 3"),
        ({"case": CASE, "depth": 3}, None, 3, False, "1 4 2 3"),  # the row's own depth won again
        ({"case": CASE, "depth": 1}, None, 3, False, "1 4 2 3"),  # single steps held: the second race decided
        ({"case": "512^3 interior, 40 steps, 2 threads compact", "depth": 2}, None, 3, False, "1 4 2 3"),
        # a depth the model no longer proposes races in the first race too, and then holds
        ({"case": CASE, "depth": 6}, [[109.0, 112.0, 108.0, 111.0, 110.0]], 6, True, "1 4 2 3 6"),
        ({"case": CASE, "depth": 6}, [[150.0] * 5] * 2, 3, True, "1 4 2 3 6"),
    ],
)
def test_the_rows_earlier_sweeps_hold_against_a_winner_within_noise_of_them(
    monkeypatch, earlier, third, depth, held_race, first_race
):
    """Where the row chose other sweeps on the same case before and this race's winner passed both
    races, the two race alone, the row's as the default: the newcomer takes the row only when faster
    beyond noise of it in two such races in a row, so two depths within noise of each other do not
    take turns; the row's depth races in the first race too where the model no longer proposes it."""

    def record(*x, **k):
        return {"config": {"time_block": {"proposal": {"depth": 4, "level": "L2"}}}}

    within = [110.0, 111.0, 109.0, 112.0, 108.0]
    first = {"4": [105.0] * 5, "2": within, "3": [120.0] * 5, "6": within}
    races = [first, {"3": [120.0] * 5}]
    held = str(earlier["depth"])
    for alone in third or []:
        races.append({held: within, "3": alone})
    out, calls = race_sweeps(monkeypatch, record, races, earlier=earlier)
    assert calls[:2] == [first_race.split(), ["1", "3"]]
    assert out["depth"] == depth
    assert ("incumbent_race" in out) == held_race
    if held_race:
        assert calls[2:] == [[held, "3"]] * len(third)
        assert (out["incumbent_race"]["held"], out["incumbent_race"]["raced"]) == (held, "3")
        assert len(out["incumbent_race"].get("again", [])) == len(third) - 1


@pytest.mark.parametrize(
    "first, second, held_alone, depth, unconfirmed",
    [
        # the winner 2 fails its second race: the row's 3 races single steps alone, pooled, and holds
        ({"4": [105.0] * 5, "2": [150.0] * 5, "3": [110.0] * 5}, {"2": [101.0] * 5}, [125.0] * 5, 3, "2"),
        # ... or does not, and single steps stand
        ({"4": [105.0] * 5, "2": [150.0] * 5, "3": [110.0] * 5}, {"2": [101.0] * 5}, [99.0] * 5, 1, "2"),
        # the first race chose nothing: the row's 3 alone, pooled
        ({"4": [101.0] * 5, "2": [99.0] * 5, "3": [101.0] * 5}, None, [125.0] * 5, 3, None),
        ({"4": [101.0] * 5, "2": [99.0] * 5, "3": [101.0] * 5}, None, [100.0] * 5, 1, None),
    ],
)
def test_the_rows_sweeps_left_unraced_by_a_failed_winner_race_single_steps_alone(
    monkeypatch, first, second, held_alone, depth, unconfirmed
):
    """Where this race leaves single steps (it chose nothing, or its winner failed the second race) and
    the row chose other sweeps before, those race single steps alone on their rounds pooled with the
    row's earlier second race of them, and hold the row only when faster beyond noise there: a race
    of other depths says nothing of them."""

    def record(*x, **k):
        return {"config": {"time_block": {"proposal": {"depth": 4, "level": "L2"}}}}

    earlier = {**kept(), "depth": 3}
    races = [first] + ([second] if second else []) + [{"3": held_alone}]
    out, calls = race_sweeps(monkeypatch, record, races, earlier=earlier)
    assert calls[-1] == ["1", "3"]
    assert out["depth"] == depth
    assert out["second_race"]["raced"] == "3" and out["second_race"]["pooled"] == {"races": 2, "rounds": 10}
    assert out["second_race"]["rates"]["3"] == EARLIER_3["3"] + held_alone  # kept for the next race
    assert (out.get("unconfirmed_race") or {}).get("raced") == unconfirmed


@pytest.mark.parametrize(
    "llc, host, cpus, agrees",
    [
        ("one", [True], {0, 1}, True),
        ("two", [True, True, False, False], {2, 5, 7}, True),  # waits two probes, then agrees after
        ("one", [False, True], {0, 1}, False),  # agrees before each run, not after
        ("two", [None], {0, 1}, False),  # no answer: runs after HOST_PROBES probes anyway, then gives up
        ("one", [False], {0, 1}, False),  # never on one L3: two waits, then one probe a run
        ("one", [True], {1}, None),  # one CPU: nothing to probe
    ],
)
def test_a_race_with_the_probes_verdict_forces_it_and_waits_for_the_host(
    monkeypatch, llc, host, cpus, agrees
):
    """--sweeps-llc: every run of the race takes the verdict (BANDWALL_LLC_PROBE), the row's earlier
    entry of that verdict (sweeps_by_llc) is the one held and pooled; before each run the bench probes
    the first two CPUs it may use until the host agrees with the verdict (at most HOST_PROBES times),
    probes once more after it, and the entry says in how many runs both agreed (None: no answer; with
    one CPU nothing is probed: 0/0); after HOST_GIVE_UP waits in a row in vain it probes once a run
    until the host agrees again."""
    import types

    monkeypatch.setattr(sr.os, "sched_getaffinity", lambda pid: set(cpus))
    monkeypatch.setattr(sr, "HOST_PROBES", 3)
    monkeypatch.setattr(sr, "HOST_PROBE_GAP_S", 0.0)
    probed, envs, trips = [], [], iter(host * 500)

    def record(cmd, env=None, **k):
        envs.append(dict(env or {}))
        probed.append("run")
        return {"config": {"time_block": {"proposal": {"depth": 3, "level": "L2"}}}}

    def probe(bindir, between, **k):
        assert list(between) == sorted(cpus)[:2]
        one = next(trips)
        probed.append(one)
        return None if one is None else sr.common.LineTrip(60.0 if one else 300.0, one)

    first = {"3": [150.0] * 5, "2": [101.0, 99.0, 100.0, 102.0, 98.0]}
    second = {"3": [108.0, 97.0, 110.0, 106.0, 109.0]}
    left = [first, second, second]

    def fake_race(a, names, run):
        for name in names:  # the runs, each probed first
            run(name)
        got = left.pop(0)
        return {"1": [100.0] * 5, **{k: got[k] for k in names if k != "1"}}

    monkeypatch.setattr(sr, "race", fake_race)
    monkeypatch.setattr(sr.common, "tool", lambda bindir, name: name)
    monkeypatch.setattr(sr.common, "record", record)
    monkeypatch.setattr(sr.common, "llc_probe", probe)
    a = types.SimpleNamespace(bindir=bench_scripts.BENCH, sweep_steps=40, interior=256, threads=2, rounds=5)
    other = "two" if llc == "one" else "one"
    earlier = {
        "sweeps": {"avx512": {"depth": 1}},
        "sweeps_by_llc": {"avx512": {llc: {**kept(), "depth": 1}, other: {}}},
    }
    out = sr.race_sweeps(a, {"isa": "avx512", **earlier}, ["avx512"], 3, 262, {}, llc)["avx512"]
    assert all(e.get("BANDWALL_LLC_PROBE") == llc for e in envs) and envs
    assert out["llc"] == llc and out["depth"] == 3
    assert out["second_race"]["pooled"] == {"races": 2, "rounds": 15}  # the verdict's own earlier rounds
    runs = len(envs) if agrees is not None else 0
    assert out["host_agreed"] == f"{runs if agrees else 0}/{runs}"
    if agrees is None:
        assert probed == ["run"] * len(envs)
        return
    # each run: the probes before it, the last agreeing unless HOST_PROBES said otherwise, one after
    want = llc == "one"
    at, vain = 0, 0
    for _ in envs:
        k = probed.index("run", at)
        before = probed[at:k]
        patience = 3 if vain < sr.HOST_GIVE_UP else 1
        assert 1 <= len(before) <= patience and all(h != want for h in before[:-1])
        assert (before[-1] == want) or len(before) == patience
        vain = 0 if before[-1] == want else vain + 1
        at = k + 2  # the probe after it
    assert at == len(probed)
    if not agrees and host in ([None], [False]):
        # per run its mark, a probe before it and one after; two more in each wait before it gave up
        assert len(envs) > sr.HOST_GIVE_UP and len(probed) == 3 * len(envs) + 2 * sr.HOST_GIVE_UP
