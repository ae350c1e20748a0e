"""Properties of the report's core-count, binding and variant cards over constructed records (random
per-round figures, levels within noise, falling and rising curves, single rounds): every claim agrees
with the figures the card shows and with the decision rule's interval, the words about a comparison
are its claim's, the bar shows the figure its sentence is about, and no two cards of one report say
different things about the same comparison. Deterministic (derandomized), never timed."""

from __future__ import annotations

import statistics

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from bandwall.core import decide  # noqa: E402
from bandwall.report import advice  # noqa: E402
from bandwall.report.advice import Evidence  # noqa: E402
from bandwall.report.advice.base import DIRECTIONS, FALLS, RISES, say  # noqa: E402
from bandwall.report.spread import NOISE, fmt  # noqa: E402

SETTINGS = settings(derandomize=True, max_examples=100, deadline=None, database=None)
RULE = decide.rule()


@st.composite
def sweeps(draw) -> dict[int, list[float]]:
    """cores -> the rates of each kept repetition (in the order they ran), of one shape of curve."""
    counts = draw(st.integers(2, 4))
    rounds = draw(st.sampled_from([1, 2, 3, 4, 5, 6, 8, 9]))
    shape = draw(st.sampled_from(["random", "noise", "falling", "rising", "saturating"]))
    base = draw(st.floats(5.0, 50.0))
    jitter = draw(st.floats(0.0, 0.15))
    eps = st.floats(-1.0, 1.0)
    out = {}
    for n in range(1, counts + 1):
        if shape == "random":
            out[n] = [draw(st.floats(5.0, 60.0)) for _ in range(rounds)]
            continue
        level = {
            "noise": base,
            "falling": base / n,
            "rising": base * n,
            "saturating": base * min(n, 2),
        }[shape]
        out[n] = [level * (1 + jitter * draw(eps)) for _ in range(rounds)]
    return out


def sweep_rec(rates: dict[int, list[float]]) -> dict:
    return {
        "tool": "sweep",
        "config": {"kernel": "triad", "knee_share": 0.95},
        "result": {
            "points": [
                {"cores": n, "best_GBps": max(v), "median_GBps": statistics.median(v), "rates": v}
                for n, v in rates.items()
            ]
        },
    }


def label(n: int) -> str:
    return f"{n} core{'s' if n != 1 else ''}"


def check_claim(c, figures: dict[str, float]) -> None:
    """A claim against the figures it names: its direction is the rule's on its interval, and the
    medians it shows go the same way."""
    assert c.direction in DIRECTIONS
    assert c.start.value == pytest.approx(figures[c.start.label])
    assert c.end.value == pytest.approx(figures[c.end.label])
    if c.direction == RISES:
        assert c.enough and c.interval[0] > 1 + RULE.margin and c.end.value > c.start.value
    elif c.direction == FALLS:
        assert c.enough and c.interval[1] < 1 / (1 + RULE.margin) and c.end.value < c.start.value
    if c.interval is not None:
        assert c.interval[0] <= c.ratio <= c.interval[1]
    else:
        assert c.direction == NOISE


def consistent(lines) -> None:
    """No two cards say different things about one comparison (either way round)."""
    seen: dict[tuple, str] = {}
    mirror = {RISES: FALLS, FALLS: RISES, NOISE: NOISE}
    for line in lines:
        for c in line.claims:
            key = (c.figure, c.start.label, c.end.label)
            back = (c.figure, c.end.label, c.start.label)
            assert seen.setdefault(key, c.direction) == c.direction
            if back in seen:
                assert seen[back] == mirror[c.direction]


# Besides the generated cases (which may vary with the modules loaded: Hypothesis draws constants
# from them), always: the noisy 2-core sweep of `bandwall report --quick`, a knee decided at 2 of 3
# cores, one repetition each.
@SETTINGS
@given(sweeps())
@example({1: [24.6, 25.5, 25.9, 27.6], 2: [21.5, 25.0, 26.2, 29.8]})
@example({1: [5.0] * 5, 2: [10.0] * 5, 3: [10.0] * 5})
@example({1: [20.0], 2: [40.0]})
def test_core_cards_say_what_their_claims_say(rates):
    lines = advice.cores(Evidence({"stream": [sweep_rec(rates)]}))
    knee, eff = lines
    figures = {label(n): statistics.median(v) for n, v in rates.items()}
    for line in lines:
        assert line.claims
        for c in line.claims:
            check_claim(c, figures)
            assert say(c) in line.verdict  # the words of the comparison are the claim's
            assert fmt(c.start.value) in line.verdict and fmt(c.end.value) in line.verdict
        if not any(c.direction == RISES for c in line.claims):
            assert "rises" not in line.verdict and "still add" not in line.verdict
    assert "still rises" not in knee.verdict
    consistent(lines)
    # the bar is the figure of the cores the card recommends, and its sentence names those cores
    k = int(knee.fix.split()[0].split("=")[1])
    assert knee.value.values == pytest.approx(tuple(rates[k]))
    assert knee.measured.endswith(f"on {k} core(s)")
    assert label(k) in (knee.claims[0].start.label, knee.claims[0].end.label)
    # the efficiency is the ratio of the medians its claim shows
    whole = eff.claims[0]
    most = max(rates)
    assert (whole.start.label, whole.end.label) == ("1 core", label(most))
    assert eff.measured.startswith(f"{whole.end.value / (most * whole.start.value):.2f}:")
    if whole.direction != RISES:
        assert "add no bandwidth" in eff.verdict or "slower" in eff.verdict


@SETTINGS
@given(sweeps())
def test_a_knee_is_recommended_only_when_the_rule_decided_one(rates):
    knee, _ = advice.cores(Evidence({"stream": [sweep_rec(rates)]}))
    k = int(knee.fix.split()[0].split("=")[1])
    if k < max(rates):
        assert "(the knee)" in knee.verdict
    else:
        assert knee.verdict.startswith(("no knee", "knee undecided"))
        assert knee.verdict.startswith("no knee") is (knee.claims[0].direction == RISES)


@SETTINGS
@given(
    st.integers(1, 9).flatmap(
        lambda n: st.tuples(
            st.lists(st.floats(1.0, 100.0), min_size=n, max_size=n),
            st.lists(st.floats(1.0, 100.0), min_size=n, max_size=n),
        )
    )
)
def test_the_binding_card_follows_its_claim(rounds):
    bound, unbound = rounds
    rec = {
        "tool": "pin-compare",
        "config": {"spin": "passive"},
        "result": {"modes": {"bound": {"rounds": bound}, "unbound": {"rounds": unbound}}, "fom_unit": "1/s"},
    }
    (line,) = advice.binding(Evidence({"pinning": [rec]}))
    (c,) = line.claims
    check_claim(c, {"bound threads": statistics.median(bound), "unbound threads": statistics.median(unbound)})
    assert say(c) in line.verdict
    assert line.value.median == pytest.approx(c.end.value)  # the bar: the bound threads the claim ends at
    assert bool(line.fix) is (c.direction != NOISE)
    assert ("OMP_PROC_BIND=close" in line.fix) is (c.direction == RISES)
