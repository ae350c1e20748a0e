"""Properties of bandwall pin --compare's verdict over constructed rounds (random per-mode figures,
levels within noise, modes apart either way, a single round): each claim is the decision rule's on
the paired rounds and agrees with the medians the record shows, the verdict's words are rendered
from the claims (binding "pays" only where the bound median is better beyond noise), the record
fits the schema, the terminal view prints the same words, and the report's binding card says the
same of the same comparison. Deterministic (derandomized), never timed; no program runs."""

from __future__ import annotations

import io
import statistics

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from bandwall.core import decide, records  # noqa: E402
from bandwall.core.claims import DIRECTIONS, FALLS, RISES, Claim, say  # noqa: E402
from bandwall.core.spread import NOISE  # noqa: E402
from bandwall.display import console  # noqa: E402
from bandwall.pinning import pin  # noqa: E402
from bandwall.views.pin import render_compare  # noqa: E402
from conftest import SAMPLE_PROVENANCE  # noqa: E402

SETTINGS = settings(derandomize=True, max_examples=100, deadline=None, database=None)
RULE = decide.rule()
MODES = ("bound", "one-cpu", "unbound")
LABELS = {"unbound threads": "unbound", "every thread on one CPU": "one-cpu", "bound threads": "bound"}


@st.composite
def mode_rounds(draw) -> dict[str, list[float]]:
    """Each mode's figure of merit (a rate) in each round, round k of every mode from one round:
    random, the three at one level within noise, or at levels apart (either way), or one round."""
    rounds = draw(st.sampled_from([1, 2, 3, 4, 5, 6, 8, 9]))
    shape = draw(st.sampled_from(["random", "level", "apart"]))
    base = draw(st.floats(0.5, 500.0))
    jitter = draw(st.sampled_from([0.0, 0.005, 0.01, 0.05]))
    out = {}
    for name in MODES:
        if shape == "random":
            out[name] = [draw(st.floats(0.01, 1000.0)) for _ in range(rounds)]
            continue
        level = (
            base if shape == "level" else base * draw(st.sampled_from([0.1, 0.5, 0.97, 1.0, 1.03, 2.0, 20.0]))
        )
        out[name] = [level * (1 + jitter * draw(st.floats(-1.0, 1.0))) for _ in range(rounds)]
    return out


def record(values: dict[str, list[float]]) -> dict:
    result = pin.compare_result(
        "number matched by 'time ([0-9.]+) s' (lower is better)",
        "1/s",
        2,
        {
            name: {"title": name, "cpus": [], "rounds": v, "wall_s": [1.0] * len(v)}
            for name, v in values.items()
        },
    )
    return {
        "schema_version": 1,
        "tool": "pin-compare",
        "config": {"command": ["./app"], "rounds": len(values["bound"]), "modes": list(values)},
        "result": result,
        "validation": records.not_applicable("compares the speed of runs under three bindings"),
        "provenance": dict(SAMPLE_PROVENANCE),
    }


@SETTINGS
@given(mode_rounds())
@example({m: [10.0] for m in MODES})
@example({"bound": [10.0] * 5, "one-cpu": [5.0] * 5, "unbound": [20.0] * 5})
@example(
    {"bound": [10.0, 10.0, 10.0, 10.0, 1.0], "one-cpu": [9.0, 9.0, 11.0, 11.0, 11.0], "unbound": [10.0] * 5}
)
def test_the_verdict_says_what_the_claims_say(values):
    rec = record(values)
    assert records.problems(rec) == []
    r = rec["result"]
    medians = {name: m["value"] for name, m in r["modes"].items()}
    claims = [Claim.from_json(c) for c in r["claims"]]
    assert [c.to_json() for c in claims] == r["claims"]
    assert [(c.start.label, c.end.label) for c in claims] == [
        ("unbound threads", "bound threads"),
        ("every thread on one CPU", "bound threads"),
    ]
    v = r["verdict"]
    assert len(v["claims_said"]) == len(v["answers"]) == len(claims)
    assert v["text"] == "; ".join(v["claims_said"])
    for c, answer, line in zip(claims, v["answers"], v["claims_said"]):
        # the claim: the rule's on the paired rounds, its medians those the table shows
        start, end = LABELS[c.start.label], LABELS[c.end.label]
        assert c.start.value == pytest.approx(medians[start])
        assert c.end.value == pytest.approx(medians[end])
        assert c.rounds == len(values["bound"])
        iv = decide.ratio_interval(values[end], values[start])
        assert c.interval == pytest.approx((iv.lo, iv.hi)) and c.enough == iv.enough
        assert c.direction in DIRECTIONS
        if c.direction == RISES:
            assert c.enough and c.interval[0] > 1 + RULE.margin and medians["bound"] > medians[start]
        elif c.direction == FALLS:
            assert c.enough and c.interval[1] < 1 / (1 + RULE.margin) and medians["bound"] < medians[start]
        if not iv.enough:
            assert c.direction == NOISE
        # the words: rendered from the claim, "pays" only where the bound median is better
        assert say(c) in line
        assert answer == {RISES: "pays", FALLS: "costs", NOISE: NOISE}[c.direction]
        if answer == "pays":
            assert medians["bound"] > medians[start]
            assert line.startswith("binding one thread per CPU pays beside ")
        elif answer == "costs":
            assert medians["bound"] < medians[start]
            assert line.startswith("binding one thread per CPU costs beside ")
        else:
            assert line.startswith(NOISE)
            assert "pays" not in line and "costs" not in line
            assert " rises " not in line and " falls " not in line
    # the ratios of the medians, kept for older readers
    assert r["bound_over_unbound"] == pytest.approx(medians["bound"] / medians["unbound"])
    assert r["bound_over_one_cpu"] == pytest.approx(medians["bound"] / medians["one-cpu"])


@settings(derandomize=True, max_examples=40, deadline=None, database=None)
@given(mode_rounds())
def test_the_view_prints_the_verdict_and_the_report_card_agrees(values):
    from bandwall.report import advice
    from bandwall.report.advice import Evidence

    rec = record(values)
    con = console(file=io.StringIO(), width=1000)
    render_compare(con, rec)
    shown = con.file.getvalue()
    for line in rec["result"]["verdict"]["claims_said"]:
        assert line in shown
    # the report's binding card decides bound against unbound on the same rounds: the same claim
    card = advice.binding(Evidence({"pinning": [rec]}))[0]
    (c,) = card.claims
    assert c.to_json() == rec["result"]["claims"][0]
    assert c.end.value == pytest.approx(statistics.median(values["bound"]))
