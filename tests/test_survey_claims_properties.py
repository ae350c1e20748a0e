"""Properties of the survey's verdicts over constructed node records (random rounds of one figure per
node, nodes alike, one slow, one slower by its median alone, random levels; single rounds; random
links of a ring): a node (or link) is an outlier only when its claim says it falls (rises, for the
lower-is-better latency) beyond noise, the claim is the decision rule's on its rounds against the
other nodes' median, the words are the claim's, the terminal says the same words, and the record
fits the schema. Deterministic (derandomized), never timed."""

from __future__ import annotations

import statistics

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from bandwall.core import decide, records  # noqa: E402
from bandwall.core.claims import FALLS, RISES, Claim, say  # noqa: E402
from bandwall.core.spread import NOISE  # noqa: E402
from bandwall.survey import judge  # noqa: E402
from bandwall.survey.judge import NOT_OUTLIER, OUTLIER  # noqa: E402
from bandwall.views.survey import tally, verdict_lines  # noqa: E402
from test_survey_judge import link, node_rec, ring_survey  # noqa: E402

SETTINGS = settings(derandomize=True, max_examples=120, deadline=None, database=None)
RULE = decide.rule()


@st.composite
def populations(draw) -> dict[str, list[float]]:
    """node -> the rounds of its figure, in the order they ran."""
    n = draw(st.integers(3, 6))
    shape = draw(st.sampled_from(["alike", "one slow", "one noisy", "random"]))
    base = draw(st.floats(5.0, 200.0))
    jitter = draw(st.floats(0.0, 0.2))
    eps = st.floats(-1.0, 1.0)
    out = {}
    for k in range(n):
        rounds = draw(st.sampled_from([1, 3, 5, 5, 6, 8, 8]))
        if shape == "random":
            out[f"node{k}"] = [draw(st.floats(1.0, 300.0)) for _ in range(rounds)]
            continue
        level = base * (draw(st.floats(0.3, 0.95)) if k == 0 and shape == "one slow" else 1.0)
        spread = 0.5 if k == 0 and shape == "one noisy" else jitter
        out[f"node{k}"] = [level * (1 + spread * draw(eps)) for _ in range(rounds)]
    return out


def expected_direction(values: list[float], ref: float) -> str:
    """The decision rule on the node's rounds against ref as a constant series, recomputed."""
    iv = decide.ratio_interval(values, [ref] * len(values))
    v = decide.verdict(iv)
    m = statistics.median(values)
    if v == decide.SLOWER and m < ref:
        return FALLS
    if v == decide.FASTER and m > ref:
        return RISES
    return NOISE


def check_comparison(k: dict) -> Claim:
    """What every comparison holds to: an outlier only by a claim the worse way beyond noise and an
    interval wholly beyond the limit; the words are the claim's, their ending chosen by it."""
    (c,) = [Claim.from_json(c) for c in k["claims"]]
    ref = c.start.value
    if k["outlier"]:
        assert c.direction == k["worse"] and c.enough
        lo, hi = c.interval
        assert (lo * ref > k["limit"]) if k["worse"] == RISES else (hi * ref < k["limit"])
    if c.direction != k["worse"]:
        assert not k["outlier"]
    assert k["words"].startswith(say(c))
    assert k["words"].endswith(f": {OUTLIER}" if k["outlier"] else f": {NOT_OUTLIER}")
    if c.direction == NOISE:
        assert k["words"].startswith(NOISE)
    if not c.enough:
        assert c.direction == NOISE and not k["outlier"]
    return c


def check_record(rec: dict) -> None:
    r = rec["result"]
    assert records.problems(rec) == []
    for k in r["comparisons"]:
        check_comparison(k)
    figure_outliers = [o for o in r["outliers"] if o["claims"]]
    called = {(k["node"], k["metric"]) for k in r["comparisons"] if k["outlier"]}
    assert {(o["node"], o["metric"]) for o in figure_outliers} == called
    by = {(k["node"], k["metric"]): k for k in r["comparisons"]}
    for o in figure_outliers:
        k = by[(o["node"], o["metric"])]
        assert (o["reason"], o["claims"]) == (k["words"], k["claims"])
    lines = verdict_lines(r)
    for o in r["outliers"]:  # the terminal's words are the record's
        assert any(o["reason"] in line for line in lines)
    if not r["outliers"]:
        assert lines[0] == "no node stands out" + (f" ({tally(r)})" if r["comparisons"] else "")
        for k in r["comparisons"]:
            if Claim.from_json(k["claims"][0]).direction == k["worse"]:
                assert k["words"] in lines


@SETTINGS
@given(populations(), st.sampled_from([0.02, 0.05, 0.1, 0.3]))
def test_a_node_is_an_outlier_only_when_its_claim_falls_beyond_noise(pop, margin):
    rec = judge.survey_record([node_rec(n, v) for n, v in pop.items()], margin=margin)
    check_record(rec)
    r = rec["result"]
    assert len(r["comparisons"]) == len(pop)
    for k in r["comparisons"]:
        values = pop[k["node"]]
        others = [statistics.median(v) for n, v in pop.items() if n != k["node"]]
        ref = statistics.median(others)
        c = Claim.from_json(k["claims"][0])
        assert c.start.value == pytest.approx(ref) and c.end.value == pytest.approx(statistics.median(values))
        assert c.direction == expected_direction(values, ref)
        assert c.rounds == len(values) and c.enough == (len(values) >= 5)
        assert k["worse"] == FALLS
    assert r["flagged"] == sorted({k["node"] for k in r["comparisons"] if k["outlier"]})


@SETTINGS
@given(populations(), st.sampled_from([0.05, 0.1]))
def test_against_a_baseline_the_claim_is_the_rule_on_the_node_against_the_baseline(pop, margin):
    ref = statistics.median(statistics.median(v) for v in pop.values())
    baseline = {"stream_triad_all_GBps": ref}
    rec = judge.survey_record([node_rec(n, v) for n, v in pop.items()], margin=margin, baseline=baseline)
    check_record(rec)
    for k in rec["result"]["comparisons"]:
        c = Claim.from_json(k["claims"][0])
        assert c.start.label == "the baseline's median" and c.start.value == ref
        assert c.direction == expected_direction(pop[k["node"]], ref)
        assert k["limit"] == pytest.approx(ref * (1 - margin))


@st.composite
def rings(draw) -> list[dict]:
    n = draw(st.integers(3, 6))
    reps = draw(st.sampled_from([1, 3, 5, 7]))
    slow = draw(st.sampled_from([None, *range(n)]))
    jitter = draw(st.floats(0.0, 0.3))
    eps = st.floats(-1.0, 1.0)
    links = []
    for k in range(n):
        f = draw(st.floats(1.5, 6.0)) if k == slow else 1.0
        lat = [2.0 * f * (1 + jitter * draw(eps)) for _ in range(reps)]
        bw = [10.0 / f * (1 + jitter * draw(eps)) for _ in range(reps)]
        links.append(link(f"n{k}", f"n{(k + 1) % n}", lat, bw))
    return links


@SETTINGS
@given(rings())
def test_a_link_is_an_outlier_only_when_its_bandwidth_falls_or_its_latency_rises_beyond_noise(links):
    rec = ring_survey(links, [100.0, 99.0, 101.0, 100.5, 99.5])
    check_record(rec)
    compared = [k for k in rec["result"]["comparisons"] if k["metric"].startswith("link_")]
    assert len(compared) == 2 * len(links)
    for k in compared:
        c = Claim.from_json(k["claims"][0])
        assert k["worse"] == (RISES if k["metric"] == "link_latency_us" else FALLS)
        if k["outlier"]:
            assert c.direction == k["worse"]
