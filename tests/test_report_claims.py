"""The claims of the report's cards: each comparison a card words is the decision rule's verdict on
the figures it shows (base.claim), and its words are rendered from that claim (base.say). The knee,
surplus and parallel-efficiency cards of a core sweep decide on the per-repetition rates, and show
the medians and interval the rule used."""

from __future__ import annotations

import pytest

from bandwall.core import decide
from bandwall.core.claims import FALLS, RISES, Claim, End, claim, say
from bandwall.core.spread import NOISE, Spread
from bandwall.report import advice
from bandwall.report.advice import Evidence, Line


def sweep_rec(make_record, rates: dict[int, list[float]], kernel="triad", share=0.95) -> dict:
    """A sweep record whose points carry their per-repetition rates (and best and median)."""
    return make_record(
        "sweep",
        result={
            "points": [
                {"cores": n, "best_GBps": max(v), "median_GBps": sorted(v)[len(v) // 2], "rates": v}
                for n, v in rates.items()
            ]
        },
        config={"kernel": kernel, "knee_share": share},
    )


def cards(make_record, rates, **kw) -> tuple[Line, Line]:
    knee, eff = advice.cores(Evidence({"stream": [sweep_rec(make_record, rates, **kw)]}))
    return knee, eff


# The noisy 2-core machine of `bandwall report --quick`: 4 kept repetitions per count, the best of
# 2 cores above the best of 1, the medians level.
NOISY = {1: [24.6, 25.5, 25.9, 27.6], 2: [21.5, 25.0, 26.2, 29.8]}


def test_a_noisy_two_core_sweep_says_no_difference_beyond_noise(make_record):
    knee, eff = cards(make_record, NOISY)
    (c,) = knee.claims
    assert (c.start.label, c.end.label, c.direction) == ("1 core", "2 cores", NOISE)
    assert (c.start.value, c.end.value) == (pytest.approx(25.7), pytest.approx(25.6))  # medians of the rates
    assert c.interval[0] < 1 < c.interval[1] and c.rounds == 4
    # the knee is undecided (too few rounds to show anything): every core kept, never "still rises"
    assert "still rises" not in knee.verdict and knee.verdict.startswith("knee undecided")
    assert "OMP_NUM_THREADS=2 " in knee.fix
    # the bar is the figure of the cores the card recommends, not the best core count's
    assert knee.value.median == pytest.approx(25.6) and knee.measured.endswith("on 2 core(s)")
    assert [x.to_json() for x in eff.claims] == [c.to_json()]
    assert "still adds bandwidth" not in eff.verdict and eff.flag


def test_the_card_shows_the_medians_of_the_rates_the_rule_compares(make_record):
    knee, _ = cards(make_record, NOISY)
    assert knee.measured.startswith("25.6 GB/s (min 21.5, max 29.8, 4 rounds)")
    assert "1 core 25.7 GB/s (min 24.6, max 27.6, 4 rounds)" in knee.evidence


@pytest.mark.parametrize(
    "rates, knee_at, direction",
    [
        # a knee at 1 core: 2 cores add 5% in every round, within 1/0.95
        ({1: [19, 20, 21, 20, 20], 2: [20, 21, 22, 21, 21]}, 1, RISES),
        # rising to the end: no knee
        ({1: [9, 10, 11, 10, 10], 2: [18.5, 19, 19.5, 19, 19]}, 2, RISES),
        # 2 cores slower beyond noise: the knee at 1
        ({1: [30, 29, 31, 30, 30], 2: [20, 19, 21, 20, 20]}, 1, FALLS),
        # within noise with enough rounds, yet 2 cores not shown within 5%: undecided
        ({1: [20, 15, 25, 20, 20], 2: [22, 18, 24, 21, 19]}, 2, NOISE),
        # one repetition each: nothing can be shown
        ({1: [20], 2: [40]}, 2, NOISE),
    ],
)
def test_the_knee_card_claims_what_its_rule_decided(make_record, rates, knee_at, direction):
    knee, eff = cards(make_record, rates)
    (c,) = knee.claims
    assert c.direction == direction
    assert knee.fix.startswith(f"OMP_NUM_THREADS={knee_at} ")
    assert knee.value.values == tuple(rates[knee_at])
    (whole, *_) = eff.claims
    assert whole.start.label == "1 core" and whole.direction == direction  # two counts: one comparison


def test_claims_round_trip_through_json():
    c = Claim(
        "triad bandwidth", "GB/s", End("1 core", 20.0), End("2 cores", 38.0), RISES, (1.8, 2.0), 1.9, 5, True
    )
    line = Line("t", "m", "th", "v", claims=[c])
    assert Line.from_json(line.to_json()) == line
    assert line.to_json()["claims"][0]["from"] == {"label": "1 core", "value": 20.0}


def test_the_words_of_a_claim_follow_its_direction():
    a, b = Spread.of([10, 10, 10, 10, 10], "GB/s"), Spread.of([20, 20, 20, 20, 20], "GB/s")
    up, down = claim("x", a, b, "a", "b"), claim("x", b, a, "b", "a")
    assert (up.direction, down.direction) == (RISES, FALLS)
    assert say(up).startswith("x rises from a to b") and say(down).startswith("x falls from b to a")
    few = claim("x", Spread.of([10, 10], "GB/s"), Spread.of([20, 20], "GB/s"), "a", "b")
    assert few.direction == NOISE and not few.enough and say(few).startswith(NOISE)
    bare = claim("x", Spread(10, 9, 11, 3), Spread(20, 19, 21, 3), "a", "b")  # no rounds kept
    assert bare.direction == NOISE and bare.interval is None


def test_a_card_without_rates_kept_falls_back_to_its_point_records(make_record):
    pts = [
        make_record(
            "stream",
            result={
                "best_GBps": 21,
                "median_GBps": 20,
                "min_GBps": 19,
                "max_GBps": 21,
                "dropped_reps": 1,
                "times_s": [1.0] + [1.0 / v for v in rates],
                "traffic": {"without_write_allocate": {"bytes_per_rep": 1e9}},
            },
            config={"kernel": "triad", "threads": n, "reps": 6},
        )
        for n, rates in ((1, [9, 10, 11, 10, 10]), (2, [18.5, 19, 19.5, 19, 19]))
    ]
    sw = make_record("sweep", result={"points": [{"cores": 1}, {"cores": 2}]}, config={"kernel": "triad"})
    knee, _ = advice.cores(Evidence({"stream": [*pts, sw]}))
    assert knee.claims[0].direction == RISES and decide.NOISE not in knee.verdict


def test_a_report_record_with_claims_is_valid_and_a_wrong_direction_is_not(make_record):
    from bandwall.core import records

    knee, eff = cards(make_record, NOISY)
    rec = make_record(
        "report",
        result={
            "sections": [],
            "date": "2024-01-01",
            "advice": [knee.to_json(), eff.to_json()],
            "history": [],
        },
        config={"quick": True, "threads": 2, "sections": ["stream"], "command": "bandwall report"},
    )
    assert records.problems(rec) == []
    rec["result"]["advice"][0]["claims"][0]["direction"] = "still rises"
    assert records.problems(rec)


@pytest.mark.parametrize(
    "bound, unbound, direction, fix",
    [
        ([20, 21, 22, 21, 21], [10, 11, 12, 11, 11], RISES, "OMP_PROC_BIND=close"),
        ([10, 11, 12, 11, 11], [20, 21, 22, 21, 21], FALLS, "OMP_PROC_BIND=false"),
        ([10, 10.5, 11, 10.5, 10.4], [10.2, 10.8, 10.5, 10.1, 10.9], NOISE, ""),
    ],
)
def test_the_binding_card_claims_bound_against_unbound(make_record, bound, unbound, direction, fix):
    modes = {"bound": {"rounds": bound}, "unbound": {"rounds": unbound}}
    rec = make_record("pin-compare", result={"modes": modes, "fom_unit": "1/s"}, config={"spin": "passive"})
    (line,) = advice.binding(Evidence({"pinning": [rec]}))
    (c,) = line.claims
    assert (c.start.label, c.end.label, c.direction) == ("unbound threads", "bound threads", direction)
    assert line.fix.startswith(fix) and line.value.median == c.end.value


def test_the_variant_card_claims_each_comparison_the_rule_made(make_record):
    def run(isa, gbps):
        return make_record(
            "stream",
            result={"median_GBps": gbps},
            config={"kernel": "dot", "threads": 2, "isa": isa, "isa_requested": isa},
        )

    rounds = {"avx512": [10.0, 10.2, 10.4, 10.1, 10.3], "avx2": [12.0, 12.2, 12.4, 12.1, 12.3]}
    recs = [run(isa, v) for isa, vs in rounds.items() for v in vs]
    (line,) = advice.isa(Evidence({"variants": recs}))
    (c,) = line.claims
    assert (c.start.label, c.end.label, c.direction) == ("avx512", "avx2", RISES)
    assert line.fix.endswith("--isa avx2") and line.value.median == c.end.value


def test_a_claim_whose_medians_go_against_its_interval_is_no_finding():
    # 7 of 8 rounds 3% up, one round far down: the rule's interval lies above its margin, while the
    # median of the second figure is below the first's; a card would show "rises from 4.5 to 3.6"
    a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 100.0]
    b = [1.03 * x for x in a[:-1]] + [0.1]
    sa, sb = Spread.of(a, "GB/s"), Spread.of(b, "GB/s")
    assert sb.verdict(sa) == decide.FASTER and sb.median < sa.median
    c = claim("x", sa, sb, "a", "b")
    assert c.direction == NOISE and c.interval[0] > 1
    assert "the medians going the other way" in say(c)
