"""Properties of bandwall sensitivity's verdict over records built from random rounds (the program's
slowdown at each bandit and pirate dose, the controls', the placebo's, the copies'; levels within
noise and beyond it, single rounds too few for the rule, rounds that disagree), through the
experiment's own build and the record schema: every claim is the decision rule's on its interval;
the verdict, the resources and every sentence of `why`, of the controls' reasons and of the copies'
words agree with the claims the record keeps ("slows it" only beside a rising claim, "does not slow
it" only where its control's claim rises); no comparison is worded apart from a claim; the report's
card states the record's claims. Deterministic (derandomized), never timed."""

from __future__ import annotations

import copy

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from bandwall.core import decide, records  # noqa: E402
from bandwall.core.claims import FALLS, RISES, Claim, say  # noqa: E402
from bandwall.core.spread import NOISE  # noqa: E402
from bandwall.report import advice  # noqa: E402
from bandwall.sensitivity import comparisons as cmp  # noqa: E402
from bandwall.sensitivity import experiment, verdict  # noqa: E402
from bandwall.sensitivity.program import Program  # noqa: E402
from conftest import SAMPLE_PROVENANCE  # noqa: E402
from sensitivity_cases import DOSES, HELD, PIRATE, plan  # noqa: E402

SETTINGS = settings(derandomize=True, max_examples=150, deadline=None, database=None)
RULE = decide.rule()
LEVELS = [0.9, 0.97, 1.0, 1.01, 1.03, 1.1, 1.5, 3.0]  # slowdowns within the margin and beyond it
JITTERS = [0.0, 0.005, 0.05, 0.3]


@st.composite
def factors(draw, n: int, levels=LEVELS, jitters=JITTERS) -> list[float]:
    """A slowdown in each of n rounds: one level, each round a little (or much) apart from it."""
    level, jitter = draw(st.sampled_from(levels)), draw(st.sampled_from(jitters))
    return [level * (1 + jitter * draw(st.floats(-1.0, 1.0))) for _ in range(n)]


def control(draw, n: int, usual: list[float]) -> list[float]:
    """A control's slowdowns: mostly what a working method gives (usual), at times anything."""
    if draw(st.integers(0, 3)):
        return draw(factors(n, usual, [0.0, 0.005, 0.02]))
    return draw(factors(n))


@st.composite
def experiments(draw) -> dict:
    """The rounds of one constructed run, as experiment.build takes them."""
    n = draw(st.sampled_from([1, 3, 5, 5, 8, 8]))
    base = [1.0 + 0.01 * draw(st.floats(-1.0, 1.0)) for _ in range(n)]
    shared = draw(st.integers(0, 3)) > 0
    loss = draw(st.sampled_from([0.0, 0.5, 2.0]))
    ref_loss = draw(st.sampled_from([0.0, 2.0]))
    d: dict = {("base", 0): base}
    d[("placebo", 1)] = [{"s": t * f} for t, f in zip(base, control(draw, n, [1.0]))]
    for dose in DOSES:
        d[("dose", dose)] = [
            {"s": t * f, "GBps": 8.0 * dose - loss, "alone_GBps": 8.0 * dose}
            for t, f in zip(base, draw(factors(n)))
        ]
    reader = [20.0 * (1 + 0.004 * draw(st.floats(-1.0, 1.0))) for _ in range(n)]
    d[("bwc", 0)] = [{"GBps": None, "reader_GBps": g, "alone_GBps": None} for g in reader]
    for dose in DOSES:
        top = dose == DOSES[-1]
        d[("bwc", dose)] = [
            {
                "GBps": 8.0 * dose - (ref_loss if top else 0.0),
                "reader_GBps": g / f,
                "alone_GBps": 8.0 * dose if top else None,
            }
            for g, f in zip(reader, control(draw, n, [1.5, 3.0]))
        ]
    pirate = PIRATE if shared else []
    for b in pirate:
        kept = draw(st.booleans()) or draw(st.booleans())
        d[("cache", b)] = [
            {"s": t * f, "alone_ns": 2.0, "ns": 2.0 if kept else 9.0} for t, f in zip(base, draw(factors(n)))
        ]
    if shared:
        ns = [5.0 * (1 + 0.004 * draw(st.floats(-1.0, 1.0))) for _ in range(n)]
        d[("cc", 0)] = [{"ns": x, "pirate_ns": None} for x in ns]
        for b in pirate:
            d[("cc", b)] = [{"ns": x * f, "pirate_ns": 2.0} for x, f in zip(ns, control(draw, n, [1.5, 3.0]))]
    row = {"bytes": HELD, "own_ns": 5, "shared_ns": 6 if shared else 90, "flushed_ns": 100}
    row.update(held=True, shared=shared)
    cache = {"tried": [row], "held": row, "shared": shared, "reader_bytes": HELD // 2}
    copies = None
    if draw(st.booleans()):
        ks = [1, 2, 4]
        copies = {
            "counts": ks,
            "sets": ["0", "1", "2", "3"],
            "times": {k: [[t * f] * k for t, f in zip(base, draw(factors(n)))] for k in ks},
        }
    return {
        "data": d,
        "cache": cache,
        "pirate": pirate,
        "rounds": n,
        "copies": copies,
        "node": draw(st.sampled_from([10.0, 40.0, 400.0])),
    }


def build(x: dict) -> dict:
    return experiment.build(
        ["./program"],
        plan(free_cpus=(1, 2, 3)),
        Program(["./program"], [0], repeat=1),
        "constructed",
        x["rounds"],
        x["data"],
        x["cache"],
        list(x["pirate"]),
        {"provenance": copy.deepcopy(SAMPLE_PROVENANCE)},
        x["node"],
        RULE,
        x["copies"],
    )


def rule_holds(c: Claim) -> None:
    """The claim's direction is the rule's on its interval."""
    if c.direction == RISES:
        assert c.enough and c.interval[0] > 1 + RULE.margin
    elif c.direction == FALLS:
        assert c.enough and c.interval[1] < 1 / (1 + RULE.margin)
    elif c.interval is not None and c.enough:
        assert not c.interval[0] > 1 + RULE.margin or not c.end.value > c.start.value
    assert Claim.from_json(c.to_json()) == c


def rises(cs) -> bool:
    return any(c is not None and c.direction == RISES for c in cs)


def unsaid(text: str, claims: list[Claim]) -> str:
    """The text with every claim's words taken out: what is left states no comparison of its own."""
    for c in sorted(claims, key=lambda c: -len(say(c))):
        text = text.replace(say(c), "<claim>")
    return text


COMPARISONS = (" rises from ", " falls from ", f"{NOISE} in ", " slower with ", "x slower")


@SETTINGS
@given(experiments())
def test_the_verdict_and_its_words_agree_with_the_claims(x):
    rec = build(x)  # records.finish inside: the schema holds the record, claims and all
    assert records.problems(rec) == []
    r = rec["result"]
    cl = [Claim.from_json(c) for c in r["claims"]]
    for c in cl:
        rule_holds(c)
    bw = [c for c in cl if c.figure == cmp.PROGRAM and c.end.label.startswith("the bandit")]
    cache = [c for c in cl if c.figure == cmp.PROGRAM and c.end.label.endswith("of the cache left")]
    assert len(bw) <= 2 and len(cache) <= 1
    ctl = {n: Claim.from_json(c["claim"]) if c.get("claim") else None for n, c in r["controls"].items()}
    assert all(c in cl for c in ctl.values() if c is not None)  # the record keeps every control's claim
    for name, c in r["controls"].items():
        assert c["slowed"] is rises([ctl[name]])
        if c["why"] and ctl[name] is not None:  # a reason by how much: rendered from the claim
            assert say(ctl[name]) in c["why"]
    # the program's claims are the verdict's own test of a slowdown
    assert rises(bw) is any(verdict.slows(p) for p in r["curve"])
    kept = [p for p in r["cache_curve"] if p["kept"]] if r["cache_shared"] else []
    assert rises(cache) is any(verdict.slows(p) for p in kept)
    assert cl[: len(verdict.slowdown_claims(r))] == verdict.slowdown_claims(r)

    placebo = rises([ctl["placebo"]])
    for name, prog in (("bandwidth", bw), ("cache", cache)):
        word = r["resources"][name]
        if placebo:
            assert word == "not told"
            continue
        assert (word == "slows it") is rises(prog)
        if word == "does not slow it":  # only where its control was slowed in the same rounds
            assert rises([ctl[name]])

    why, kind = r["why"], r["verdict"]
    event(kind)
    for what in (
        "first slowed beyond noise",
        "so it was not slowed beyond noise",
        "but bandwidth cannot be told",
    ):
        if what in why:
            event(what)
    rest = unsaid(why, cl)
    for words in COMPARISONS:  # every comparison in why is a claim's words
        assert words not in rest, why
    if "slowed by the bandit" in rest:
        assert rises(bw) and why.startswith(
            f"slowed by the bandit: {say(next(c for c in bw if c.direction == RISES))}"
        )
    if "slowed by the pirate" in rest:
        assert rises(cache)
    if "no dose slowed it beyond noise" in rest:
        assert not rises(bw) and not rises(cache)
    if "both controls were slowed" in rest:
        assert rises([ctl["bandwidth"]]) and rises([ctl["cache"]])
    if "was not slowed beyond noise by the bandit" in rest:
        assert not rises([ctl["bandwidth"]])
    if "was not slowed beyond noise by the pirate" in rest:
        assert not rises([ctl["cache"]])
    if "slowed the program" in rest:
        assert placebo
    if "first slowed beyond noise with " in rest:
        assert sum(c.direction == RISES for c in bw) == 2
    if kind in (verdict.BANDWIDTH, verdict.LATENCY, verdict.CACHE, verdict.INSENSITIVE):
        assert not placebo
    if kind == verdict.LATENCY or (kind == verdict.BANDWIDTH and rises(bw)):
        assert "slowed by the bandit" in rest
    if kind == verdict.BANDWIDTH and not rises(bw):
        top = max(r["curve"], key=lambda p: p["taken_GBps"])
        c = cmp.slowdown(cmp.PROGRAM, top, cmp.bandit(top))
        assert c.direction != RISES and f"not slowed beyond noise: {say(c)}" in why
    if kind == verdict.CACHE:
        assert rises(cache) and why.startswith(f"slowed by the pirate: {say(cache[0])}")
    if kind == verdict.INSENSITIVE:
        assert not rises(bw) and not rises(cache)
        assert rises([ctl["bandwidth"]]) and rises([ctl["cache"]])
        assert say(ctl["bandwidth"]) in why and say(ctl["cache"]) in why

    # the copies' words are their claims'
    cp = r["copies"]
    cc = [Claim.from_json(c) for c in cp["claims"]]
    for c in cc:
        rule_holds(c)
    per = 2 * max(0, len(cp["measured"]) - 1)
    thr, each, steps = cc[:per:2], cc[1:per:2], cc[per:]
    for p, t, e in zip(cp["measured"][1:], thr, each):
        assert e.direction == RISES if p["slowed"] else e.direction != RISES
        words = cmp.by_direction(t, "more throughput", "less throughput", f"{NOISE} in throughput")
        assert words in cp["text"]
    assert cp["text"].count("more throughput (") == sum(t.direction == RISES for t in thr)
    if "every copy added throughput" in cp["text"]:
        assert steps and all(c.direction == RISES for c in steps)
    if steps and cp["advice"] < cp["measured"][-1]["copies"]:  # the advised count against the most
        (c,) = steps
        assert say(c) in cp["text"] and c.start.label == cmp.copies(cp["advice"])
    elif steps and not all(c.direction == RISES for c in steps):
        assert "not every count added throughput beyond noise" in cp["text"]
        assert say(next(c for c in steps if c.direction != RISES)) in cp["text"]

    # the report's card states the same claims
    (line,) = advice.program_sensitivity(advice.Evidence({advice.STORED: [dict(rec, id=1)]}))
    assert [c.to_json() for c in line.claims] == r["claims"] + cp["claims"]
