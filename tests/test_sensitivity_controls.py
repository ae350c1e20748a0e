"""bandwall sensitivity's controls and copies, by their mechanics: records built from constructed
rounds (the experiment's own build, schema and all) whose controls pass or fail, a pirate that does
or does not share the program's cache, a placebo that slows the program; the copies curve and the
advice from it; the claims the verdict, the controls and the copies state, and their words rendered
from them; copies really run at once. No timing and no verdict of a real run is asserted."""

from __future__ import annotations

import copy
import json
import os
import sys

import pytest

from bandwall.core import decide, records
from bandwall.core.claims import NOISE, RISES, Claim, say
from bandwall.core.errors import RunFailed
from bandwall.report import advice
from bandwall.sensitivity import comparisons, controls, experiment, verdict
from bandwall.sensitivity import copies as copies_mod
from bandwall.sensitivity.program import Program
from sensitivity_cases import DOSES, HELD, PIRATE, plan

CPU = sorted(os.sched_getaffinity(0))[0]
JITTER = [1.0, 1.004, 0.997, 1.002, 0.999]  # five rounds, each a little apart


def rounds(value: float, factor: float = 1.0) -> list[float]:
    return [value * factor * j for j in JITTER]


def data(
    program_bw=1.0, program_cache=1.0, bw_control=1.5, cache_control=3.0, placebo=1.0, bandit_loss=0.0
) -> dict:
    """Constructed rounds: factors by which each dose slows the program, the controls and the
    placebo (applied at the top dose, and half of it at the lower ones)."""

    def at(f: float, i: int, n: int) -> float:
        return 1 + (f - 1) * (i + 1) / n

    base = rounds(1.0)
    d: dict = {("base", 0): base, ("placebo", 1): [{"s": t * placebo} for t in base]}
    for i, dose in enumerate(DOSES):
        d[("dose", dose)] = [
            {
                "s": t * at(program_bw, i, len(DOSES)),
                "GBps": 8.0 * dose - bandit_loss,
                "alone_GBps": 8.0 * dose,
            }
            for t in base
        ]
    d[("bwc", 0)] = [{"GBps": None, "reader_GBps": g, "alone_GBps": None} for g in rounds(20.0)]
    for i, dose in enumerate(DOSES):
        top = dose == DOSES[-1]
        d[("bwc", dose)] = [
            {
                "GBps": 8.0 * dose - (2.0 if top else 0.0),
                "reader_GBps": g / at(bw_control, i, len(DOSES)),
                "alone_GBps": 8.0 * dose if top else None,
            }
            for g in rounds(20.0)
        ]
    for i, b in enumerate(PIRATE):
        d[("cache", b)] = [
            {"s": t * at(program_cache, i, len(PIRATE)), "alone_ns": 2.0, "ns": 2.0} for t in base
        ]
    d[("cc", 0)] = [{"ns": n, "pirate_ns": None} for n in rounds(5.0)]
    for i, b in enumerate(PIRATE):
        d[("cc", b)] = [{"ns": n * at(cache_control, i, len(PIRATE)), "pirate_ns": 2.0} for n in rounds(5.0)]
    return d


def cache_scan(shared: bool = True) -> dict:
    row = {"bytes": HELD, "own_ns": 5, "shared_ns": 6 if shared else 90, "flushed_ns": 100}
    row.update(held=True, shared=shared)
    return {"tried": [row], "held": row, "shared": shared, "reader_bytes": HELD // 2}


def copy_times(slow: dict[int, float]) -> dict:
    """Each count's copies in each round, every copy slowed by slow[k]."""
    ks = sorted(slow)
    return {
        "counts": ks,
        "sets": [str(c) for c in range(ks[-1])],
        "times": {k: [[t * slow[k]] * k for t in rounds(1.0)] for k in ks},
    }


def build(make_record, d=None, cache=None, pirate_doses=PIRATE, copy_data=None, node_gbps=40.0) -> dict:
    node = {"provenance": copy.deepcopy(make_record()["provenance"])}
    return experiment.build(
        ["./program"],
        plan(),
        Program(["./program"], [0], repeat=1),
        "constructed",
        len(JITTER),
        d if d is not None else data(),
        cache if cache is not None else cache_scan(),
        list(pirate_doses),
        node,
        node_gbps,
        decide.rule(),
        copy_data,
    )


def test_insensitive_only_with_both_controls_slowed(make_record):
    rec = build(make_record)  # records.finish inside: the schema holds every new field
    r = rec["result"]
    assert r["controls"]["bandwidth"]["passed"] and r["controls"]["cache"]["passed"]
    assert r["controls"]["placebo"]["passed"] and not r["controls"]["placebo"]["slowed"]
    assert [p["dose"] for p in r["controls"]["bandwidth"]["points"]] == list(DOSES)
    assert [p["slowed"] for p in r["controls"]["cache"]["points"]] == [True, True]
    assert r["verdict"] == verdict.INSENSITIVE
    assert r["resources"] == {"bandwidth": "does not slow it", "cache": "does not slow it"}


@pytest.mark.parametrize("program_bw", [1.0, 1.5])
def test_a_bandwidth_control_not_slowed_gives_undetermined(make_record, program_bw):
    rec = build(make_record, data(program_bw=program_bw, bw_control=1.0, bandit_loss=1.0))
    r = rec["result"]
    assert not r["controls"]["bandwidth"]["passed"]
    assert r["verdict"] == verdict.UNDETERMINED, r["why"]
    assert "bandwidth control" in r["why"] and "what would make it work" in r["why"]
    assert r["bandwidth_GBps"] is None  # no estimate from a bandit not shown to take bandwidth
    assert r["resources"]["bandwidth"] == ("slows it" if program_bw > 1 else "not told")


def test_the_bandwidth_estimate_stands_where_its_control_passed(make_record):
    r = build(make_record, data(program_bw=1.5, bandit_loss=1.0))["result"]
    assert r["bandwidth"]["kind"] == "estimate" and r["bandwidth"]["GBps"] == r["bandwidth_GBps"]
    # the triad's rate beside the bandit (20 GB/s slowed 1.5x) times the ratio of the bandit's losses
    assert r["bandwidth_GBps"] == pytest.approx(20.0 / 1.5 * 1.0 / 2.0, rel=0.05)
    assert r["verdict"] == verdict.BANDWIDTH


@pytest.mark.parametrize("program_cache", [1.0, 1.5])
def test_a_cache_control_not_slowed_never_says_not_cache_bound(make_record, program_cache):
    r = build(make_record, data(program_cache=program_cache, cache_control=1.0))["result"]
    assert not r["controls"]["cache"]["passed"]
    if program_cache > 1:  # slowed by the pirate, which shares the cache: a claim of what slows it
        assert r["verdict"] == verdict.CACHE
    else:
        assert r["verdict"] == verdict.UNDETERMINED and "cache control" in r["why"]
        assert r["resources"]["cache"] == "not told"


def test_a_pirate_not_sharing_the_cache_never_decides_the_cache(make_record):
    # as the experiment runs it: no pirate dose, no cache control
    d = {k: v for k, v in data().items() if k[0] not in ("cache", "cc")}
    r = build(make_record, d, cache=cache_scan(shared=False), pirate_doses=[])["result"]
    assert not r["controls"]["cache"]["ran"] and "does not share" in r["controls"]["cache"]["why"]
    assert r["verdict"] == verdict.UNDETERMINED and r["resources"]["cache"] == "not told"
    # and a record whose cache curve slowed it although the pirate's CPU does not share the cache
    rec = build(make_record, data(program_cache=1.5))
    rec["result"]["cache_shared"] = False
    out = verdict.verdict(rec)
    assert out["verdict"] not in (verdict.CACHE, verdict.INSENSITIVE)
    assert out["resources"]["cache"] == "not told"


def test_a_placebo_that_slows_the_program_leaves_it_undetermined(make_record):
    r = build(make_record, data(program_bw=1.5, placebo=1.3))["result"]
    assert r["controls"]["placebo"]["slowed"] and not r["controls"]["placebo"]["passed"]
    assert r["verdict"] == verdict.UNDETERMINED and "placebo" in r["why"]


def test_controls_are_decided_by_the_rule():
    alone = rounds(20.0)
    few = controls.bandwidth("0", alone[:3], [(1.0, [a / 1.5 for a in alone[:3]], [8.0] * 3)], decide.rule())
    assert not few["passed"] and "too few" in few["why"]  # three rounds: no 90% interval
    five = controls.bandwidth("0", alone, [(1.0, [a / 1.5 for a in alone], [8.0] * 5)], decide.rule())
    assert five["passed"] and five["points"][0]["slowdown"]["median"] == pytest.approx(1.5)


def test_the_copies_curve_is_recorded_and_the_advice_follows_it(make_record):
    flat = copy_times({1: 1.0, 2: 1.0, 4: 2.0})  # four copies no faster than two
    rec = build(make_record, copy_data=flat)
    cp = rec["result"]["copies"]
    assert [p["copies"] for p in cp["measured"]] == [1, 2, 4]
    assert [p["slowed"] for p in cp["measured"]] == [False, False, True]
    assert cp["measured"][2]["throughput"]["median"] == pytest.approx(2.0)
    assert cp["advice"] == 2 and "run 2 copies" in cp["text"]
    line = next(
        x
        for x in advice.recommend(advice.Evidence({advice.STORED: [dict(rec, id=1)]}))
        if x.topic.startswith("your program")
    )
    assert line.fix.startswith("run 2 of 4 copies")
    linear = build(make_record, copy_data=copy_times({1: 1.0, 2: 1.0, 4: 1.0}))["result"]["copies"]
    assert linear["advice"] == 4 and "every copy added throughput" in linear["text"]


def test_a_bound_from_the_copies_where_there_is_no_estimate(make_record):
    flat = copy_times({1: 1.0, 2: 1.0, 4: 2.0})
    r = build(make_record, data(bw_control=1.0), copy_data=flat, node_gbps=40.0)["result"]
    assert r["bandwidth_GBps"] is None and r["bandwidth"]["kind"] == "upper bound"
    assert r["bandwidth"]["GBps"] == pytest.approx(40.0 / 2.0, rel=0.02)  # node over the top throughput
    linear = build(make_record, data(bw_control=1.0), copy_data=copy_times({1: 1.0, 2: 1.0}))["result"]
    assert linear["bandwidth"]["GBps"] is None and "does not flatten" in linear["bandwidth"]["why"]


def test_the_estimate_is_checked_against_the_curve():
    def point(k, median, hi, rounds=5):
        s = {"median": median, "lo": median, "hi": hi, "rounds": rounds, "enough": rounds >= 5}
        return {"copies": k, "slowdown": s, "slowed": median > 1.05}

    est = {"bandwidth_feeds": 1.5}  # two copies at once must each be slowed about 1.33x
    one = point(1, 1.0, 1.0)
    assert copies_mod.check(est, [one, point(2, 1.3, 1.4)])[0] is True
    assert copies_mod.check(est, [one, point(2, 1.0, 1.04)])[0] is False  # shown well below 1.33x
    assert copies_mod.check(est, [one, point(2, 1.0, 1.5)])[0] is None  # an interval too wide to tell
    assert copies_mod.check(est, [one, point(2, 1.0, 1.04, rounds=3)])[0] is None  # too few rounds
    # the words are the claim's: a copy's run time against one copy alone, decided by the rule
    ok, words = copies_mod.check(est, [one, point(2, 1.3, 1.4)])
    assert ok is True and "rises from one copy alone to 2 copies" in words and "1.30x, 1.30 to 1.40" in words
    _, words = copies_mod.check(est, [one, point(2, 1.0, 1.5)])
    assert "cannot tell" in words and "no difference beyond noise" in words
    feeds_all = {"bandwidth_feeds": 4.0}
    ok, words = copies_mod.check(feeds_all, [one, point(2, 1.3, 1.4)])
    assert ok is None and "something besides bandwidth" in words and "rises" in words
    ok, words = copies_mod.check(feeds_all, [one, point(2, 1.0, 1.04)])
    assert ok is True and "did not slow each other" in words and "no difference beyond noise" in words


def test_counts_and_cpu_sets():
    assert copies_mod.counts(1) == [1] and copies_mod.counts(2) == [1, 2]
    assert copies_mod.counts(6) == [1, 2, 4, 6] and len(copies_mod.counts(1000)) == copies_mod.MOST_COUNTS
    assert copies_mod.cpu_sets([2, 3], [0, 1, 2, 3, 4]) == [[2, 3], [0, 1]]


def test_the_schema_refuses_a_malformed_control(make_record):
    rec = build(make_record)
    assert records.problems(rec) == []
    bad = copy.deepcopy(rec)
    bad["result"]["resources"]["cache"] = "maybe"
    assert records.problems(bad)
    bad = copy.deepcopy(rec)
    del bad["result"]["controls"]["placebo"]
    assert records.problems(bad)
    bad = copy.deepcopy(rec)
    bad["result"]["copies"]["measured"] = [{"copies": 0}]
    assert records.problems(bad)


def test_copies_run_at_once_and_a_failed_copy_stops_them():
    times = copies_mod.run_together([sys.executable, "-c", "pass"], [[CPU], [CPU]], repeat=2)
    assert len(times) == 2 and all(t > 0 for t in times)
    with pytest.raises(RunFailed, match="exit code 3"):
        copies_mod.run_together(["sh", "-c", "exit 3"], [[CPU], [CPU]], repeat=1)


@pytest.mark.parametrize(
    "slow, expected",
    [({1: 1.0, 2: 1.0, 4: 2.0}, verdict.BANDWIDTH), ({1: 1.0, 2: 1.0, 4: 1.0}, verdict.UNDETERMINED)],
)
def test_a_bandwidth_share_the_copies_contradict_is_no_verdict(make_record, slow, expected):
    # not slowed by the bandit, but its estimated bandwidth (a third of the node's) would make it
    # bandwidth-bound: four copies at once must then slow each other
    r = build(make_record, data(bandit_loss=2.0), copy_data=copy_times(slow))["result"]
    assert r["bandwidth"]["kind"] == "estimate" and r["copies"]["estimate"]["bandwidth_feeds"] < 4
    assert r["verdict"] == expected, r["why"]


def test_copies_that_cannot_run_leave_the_record_standing(make_record):
    failed = {"why": "a copy of './program' on CPU(s) 1 failed (exit code 2)", "sets": ["0", "1"]}
    cp = build(make_record, copy_data=failed)["result"]["copies"]
    assert cp["measured"] == [] and cp["advice"] is None and "exit code 2" in cp["advice_why"]


@pytest.mark.cpus(2)
def test_no_copies_runs_none_and_says_so(run_bandwall):
    p = run_bandwall(
        "sensitivity", "--no-copies", "--rounds", "1", "--doses", "1", "--no-store", "--format", "json", "--",
        sys.executable, "-c", "sum(range(20000))",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    cp = json.loads(p.stdout)["result"]["copies"]
    assert cp["measured"] == [] and "--no-copies" in cp["advice_why"]


def test_a_bound_from_the_copies_below_the_share_tells_latency_from_bandwidth(make_record):
    # the bandwidth control failed, the bandit slowed the program; sixteen copies at once ran 10.7x
    # one copy's throughput, so one copy moves at most a tenth of the node's triad less a little
    many = copy_times({1: 1.0, 2: 1.0, 4: 1.0, 8: 1.0, 16: 1.5})
    r = build(make_record, data(program_bw=1.5, bw_control=1.0), copy_data=many)["result"]
    assert r["bandwidth"]["kind"] == "upper bound"
    assert r["bandwidth"]["GBps"] / r["node_GBps"] < decide.threshold("sensitivity_bandwidth_share")
    assert r["verdict"] == verdict.LATENCY, r["why"]
    few = copy_times({1: 1.0, 2: 1.0, 4: 2.0})  # a bound of half the node's: it does not tell
    r = build(make_record, data(program_bw=1.5, bw_control=1.0), copy_data=few)["result"]
    assert r["verdict"] == verdict.UNDETERMINED


# ---- the claims the verdict, the controls and the copies state ------------------------------------


def claims(r: dict) -> list[Claim]:
    return [Claim.from_json(c) for c in r["claims"]]


def program(r: dict, bandit: bool = True) -> list[Claim]:
    """The program's slowdown claims beside the bandit (or the pirate)."""
    return [
        c
        for c in claims(r)
        if c.figure == comparisons.PROGRAM
        and c.end.label.startswith("the bandit") is bandit
        and c.end.label != comparisons.PLACEBO
    ]


@pytest.mark.parametrize(
    "kwargs, kind, bandwidth",
    [
        ({}, verdict.INSENSITIVE, "does not slow it"),
        ({"program_bw": 1.5, "bandit_loss": 1.0}, verdict.BANDWIDTH, "slows it"),
        ({"program_bw": 1.5, "bw_control": 1.0, "bandit_loss": 1.0}, verdict.UNDETERMINED, "slows it"),
        ({"program_cache": 1.5, "cache_control": 1.0}, verdict.CACHE, "does not slow it"),
        ({"program_bw": 1.5, "placebo": 1.3}, verdict.UNDETERMINED, "not told"),
    ],
)
def test_the_why_is_rendered_from_the_claims_the_record_keeps(make_record, kwargs, kind, bandwidth):
    r = build(make_record, data(**kwargs))["result"]  # the schema holds the claims (records.finish)
    assert r["verdict"] == kind and r["resources"]["bandwidth"] == bandwidth, r["why"]
    (bw,) = program(r)
    assert (bw.direction == RISES) is any(verdict.slows(p) for p in r["curve"])
    assert say(bw) in r["why"] or kind == verdict.UNDETERMINED and "placebo" in r["why"]
    if bandwidth == "slows it":
        assert r["why"].startswith(f"slowed by the bandit: {say(bw)}")
    ctl = {n: Claim.from_json(c["claim"]) for n, c in r["controls"].items()}
    for name, c in ctl.items():  # each control's claim is in the record's, and decides it
        assert c in claims(r) and (c.direction == RISES) is r["controls"][name]["slowed"]
        if r["controls"][name]["why"]:
            assert say(c) in r["controls"][name]["why"]
    if bandwidth == "does not slow it":  # only where the bandwidth control was slowed
        assert ctl["bandwidth"].direction == RISES and bw.direction != RISES
    if kind == verdict.INSENSITIVE:
        assert say(ctl["bandwidth"]) in r["why"] and say(ctl["cache"]) in r["why"]
    if kind == verdict.CACHE:
        (cc,) = program(r, bandit=False)
        assert cc.direction == RISES and r["why"].startswith(f"slowed by the pirate: {say(cc)}")


def test_a_worst_median_not_beyond_noise_is_not_said_to_slow_it(make_record):
    # the lower dose slows the program 1.3x in every round; the top dose by 1.8x at its median, but
    # one round in five not at all: its interval reaches below 1, no slowdown beyond noise
    d = data()
    base = d[("base", 0)]
    d[("dose", DOSES[0])] = [dict(x, s=t * 1.3) for x, t in zip(d[("dose", DOSES[0])], base)]
    d[("dose", DOSES[1])] = [
        dict(x, s=t * f) for x, t, f in zip(d[("dose", DOSES[1])], base, [1.8, 0.9, 1.9, 1.85, 1.7])
    ]
    r = build(make_record, d, copy_data=copy_times({1: 1.0, 2: 1.0}))["result"]
    assert verdict.slows(r["curve"][0]) and not verdict.slows(r["curve"][1])
    (bw,) = program(r)
    assert bw.direction == RISES and bw.ratio == pytest.approx(1.3)  # the dose that slowed it
    assert bw.end.label == comparisons.bandit(r["curve"][0])
    assert "1.80x" not in r["why"] and say(bw) in r["why"]
    top = comparisons.slowdown(comparisons.PROGRAM, r["curve"][1], comparisons.bandit(r["curve"][1]))
    assert top.direction == NOISE and top not in claims(r)


def test_the_report_card_states_the_records_claims(make_record):
    rec = build(
        make_record, data(program_bw=1.5, bandit_loss=1.0), copy_data=copy_times({1: 1.0, 2: 1.0, 4: 2.0})
    )
    r = rec["result"]
    (line,) = advice.program_sensitivity(advice.Evidence({advice.STORED: [dict(rec, id=1)]}))
    assert [c.to_json() for c in line.claims] == r["claims"] + r["copies"]["claims"]
    own = verdict.slowdown_claims(r)  # rebuilt from the curves, as for a record from before claims
    assert claims(r)[: len(own)] == own
    assert all(say(c) in line.evidence for c in own)
    old = copy.deepcopy(r)
    del old["claims"]
    assert advice.programs.slowdown_claims(old) == own


UNSURE = {  # two copies at once as fast as one in two rounds of five: no count shown enough
    "counts": [1, 2],
    "sets": ["0", "1"],
    "times": {
        1: [[t] for t in rounds(1.0)],
        2: [[t * f] * 2 for t, f in zip(rounds(1.0), [1, 1.9, 1, 2.1, 1.05])],
    },
}


@pytest.mark.parametrize(
    "copied, every",
    [
        (copy_times({1: 1.0, 2: 1.0, 4: 1.0}), True),
        (copy_times({1: 1.0, 2: 1.0, 4: 1.5}), True),  # slowed each other, but more throughput still
        (UNSURE, False),
        (copy_times({1: 1.0, 2: 1.0, 4: 2.0}), None),
    ],
)
def test_the_copies_words_are_their_claims(make_record, copied, every):
    cp = build(make_record, copy_data=copied)["result"]["copies"]
    cs = [Claim.from_json(c) for c in cp["claims"]]
    per = cs[: 2 * (len(cp["measured"]) - 1)]
    for p, thr, each in zip(cp["measured"][1:], per[::2], per[1::2]):
        assert thr.figure == comparisons.THROUGHPUT and thr.end.label == comparisons.copies(p["copies"])
        assert (each.direction == RISES) is p["slowed"]
        said = comparisons.by_direction(thr, "more throughput", "less throughput", f"{NOISE} in throughput")
        assert said in cp["text"]
    steps = cs[len(per) :]
    if every is None:  # four copies no faster than two: the advice, with the claim between them
        assert cp["advice"] == 2 and say(steps[0]) in cp["text"] and steps[0].direction == NOISE
    else:
        assert cp["advice"] == cp["measured"][-1]["copies"]
        assert ("every copy added throughput" in cp["text"]) is every
        assert every is all(c.direction == RISES for c in steps)
