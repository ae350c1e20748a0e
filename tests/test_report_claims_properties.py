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
from bandwall.core.claims import DIRECTIONS, FALLS, RISES, say  # noqa: E402
from bandwall.core.spread import NOISE, fmt  # noqa: E402
from bandwall.report import advice  # noqa: E402
from bandwall.report.advice import Evidence  # noqa: E402

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


# -- the other cards: copy engine, surplus beside noise, NUMA placement, stencil, your program ----

FEW = settings(derandomize=True, max_examples=40, deadline=None, database=None)


@st.composite
def cases(draw, k: int) -> list[list[float]]:
    """k figures measured in the same rounds (one value each a round): random, level within noise,
    apart beyond it either way, or a single round."""
    rounds = draw(st.sampled_from([1, 2, 3, 5, 6, 8]))
    shape = draw(st.sampled_from(["random", "level", "apart"]))
    base = draw(st.floats(5.0, 50.0))
    out = []
    for _ in range(k):
        if shape == "random":
            out.append([draw(st.floats(1.0, 100.0)) for _ in range(rounds)])
            continue
        level = base if shape == "level" else base * draw(st.sampled_from([0.5, 0.8, 1.0, 1.25, 2.0]))
        out.append([level * (1 + 0.01 * draw(st.floats(-1.0, 1.0))) for _ in range(rounds)])
    return out


def stream_rec(kernel: str, threads: int, rates: list[float], **config) -> dict:
    """A stream record whose kept repetitions ran at these rates (1 GB each, a warm-up first)."""
    return {
        "tool": "stream",
        "config": {"kernel": kernel, "threads": threads, "reps": len(rates) + 1, **config},
        "result": {
            "best_GBps": max(rates),
            "median_GBps": statistics.median(rates),
            "min_GBps": min(rates),
            "max_GBps": max(rates),
            "dropped_reps": 1,
            "times_s": [1.0] + [1.0 / v for v in rates],
            "traffic": {"without_write_allocate": {"bytes_per_rep": 1e9}},
        },
    }


def words_follow(line, figures: dict[str, float]) -> None:
    """Every claim of a card agrees with the figures and is worded in its verdict (or, for a card
    whose verdict is another module's words, its evidence)."""
    assert line.claims
    for c in line.claims:
        check_claim(c, figures)
        assert say(c) in line.verdict or say(c) in line.evidence


@FEW
@given(cases(2))
@example([[20.0, 19.0, 21.0, 20.0, 20.0], [26.0, 25.0, 27.0, 26.0, 26.0]])
@example([[20.0], [40.0]])
def test_the_copy_engine_card_follows_its_claim(rounds):
    cpu, eng = rounds
    recs = [
        stream_rec("triad", 1, cpu),
        stream_rec("triad", 1, eng, engine="helper", strategy="split"),
        {"tool": "engine-sweep", "config": {"kernels": ["triad"]}, "result": {"rows": []}},
    ]
    (line,) = advice.copy_engine(Evidence({"engine": recs}))
    (c,) = line.claims
    words_follow(line, {c.start.label: statistics.median(cpu), c.end.label: statistics.median(eng)})
    assert line.value.median == pytest.approx(c.end.value)  # the bar: the engine run the claim ends at
    assert ("--engine helper" in line.fix) is (c.direction == RISES)
    assert line.verdict.startswith("pays") is (c.direction == RISES)
    assert ("leave the copy engine off" in line.fix) is (c.direction == FALLS)


@FEW
@given(cases(2), st.booleans())
@example([[5.0, 6.0, 7.0], [8.0, 9.0, 10.0]], True)  # ranges apart, three rounds: too few to tell
def test_the_surplus_card_follows_its_claim(rounds, higher_is_better):
    from bandwall.interference import verdict as v

    every, knee = rounds

    def case(name, xs):
        return {"case": name, "values": xs, "median": statistics.median(xs), "min": min(xs), "max": max(xs)}

    rec = {
        "tool": "interference",
        "config": {
            "higher_is_better": higher_is_better,
            "cores_knee": 1,
            "cores_all": 2,
            "surplus_cpus": "1",
            "noise": "memory",
        },
        "result": {
            "unit": "GB/s" if higher_is_better else "s",
            "cases": [case(v.ALL_ALONE, every), case(v.KNEE_ALONE, knee)]
            + [case(v.ALL_NOISE, every), case(v.KNEE_NOISE, knee)],
        },
    }
    (line,) = advice.surplus_under_noise(Evidence({advice.STORED: [rec]}))
    (c,) = line.claims
    words_follow(line, {c.start.label: statistics.median(every), c.end.label: statistics.median(knee)})
    pays = c.direction == (RISES if higher_is_better else FALLS)
    assert ("pays beside the noise" in line.verdict and "not pay" not in line.verdict) is pays
    assert bool(line.fix) is pays
    assert line.value.median == pytest.approx(c.end.value)


NUMA_TITLES = {
    "all": "all nodes, memory as the OS places it",
    "node0": "one node only (its CPUs and memory)",
    "per-node": "one process per node, each bound to its node",
    "interleave": "all nodes, memory interleaved",
}


@FEW
@given(cases(4))
@example([[10.0] * 6, [10.0] * 6, [15.0] * 6, [10.0] * 6])
def test_the_numa_placement_card_follows_its_claims(rounds):
    from bandwall.numa import numa_check

    rs = dict(zip(NUMA_TITLES, rounds))
    rec = {
        "tool": "numa-check",
        "config": {},
        "result": {
            "fom": "steps/s",
            "fom_unit": "1/s",
            "nodes": 2,
            "modes": {
                n: {"title": t, "value": statistics.median(rs[n]), "rounds": rs[n]}
                for n, t in NUMA_TITLES.items()
            },
            **numa_check.verdict({n: statistics.median(v) for n, v in rs.items()}, 2),
        },
    }
    topo = {"tool": "topo", "config": {}, "result": {"numa_nodes": [{"cpus": [0]}, {"cpus": [1]}]}}
    (line,) = [x for x in advice.placement(Evidence({"numa": [rec], "topology": [topo]})) if x.claims]
    words_follow(line, {NUMA_TITLES[n]: statistics.median(v) for n, v in rs.items()})
    faster = [c for c in line.claims if c.start.label == NUMA_TITLES["all"] and c.direction == RISES]
    assert line.verdict.startswith("NUMA costs this program nothing") is (not faster)
    if faster:  # the cost named is the best placement shown faster, and the bar is the default run
        assert line.claims[0].end.value == max(c.end.value for c in faster)
    assert line.value.median == pytest.approx(statistics.median(rs["all"]))
    assert ("slower than one node alone" in line.verdict) is any(
        c.start.label == NUMA_TITLES["node0"] and c.direction == FALLS for c in line.claims
    )


@FEW
@given(cases(2), st.floats(100.0, 3000.0))
@example([[150.0, 160.0, 170.0, 160.0, 160.0], [100.0, 105.0, 110.0, 105.0, 105.0]], 300.0)
@example([[100.0] * 6, [300.0] * 6], 1000.0)
def test_the_stencil_card_follows_its_claims(rounds, bound):
    first_touch, serial = rounds
    roof = {"memory_bound_mpoints_per_s": bound * 2, "port_bound_mpoints_per_s": bound}

    def run(init, mp):
        return {
            "tool": "iso3dfd",
            "config": {"init": init, "schedule": "static"},
            "result": {"mpoints_per_s": mp, "roofline": roof},
        }

    recs = [run("first-touch", v) for v in first_touch] + [run("serial", v) for v in serial]
    topo = {"tool": "topo", "config": {}, "result": {"numa_nodes": [{"cpus": [0]}, {"cpus": [1]}]}}
    (line,) = advice.stencil(Evidence({"iso3dfd": recs, "topology": [topo]}))
    figures = {
        "first-touch/static": statistics.median(first_touch),
        "serial/static": statistics.median(serial),
        "0.8 of the in-core (ports) bound": 0.8 * bound,
    }
    words_follow(line, figures)
    chose = line.verdict.startswith("serial initialisation")
    assert chose is any(c.end.label == "serial/static" and c.direction == RISES for c in line.claims)
    assert ("--init serial" in line.fix) is chose
    kept = "serial/static" if chose else "first-touch/static"
    assert line.value.median == pytest.approx(figures[kept])  # the bar: the variant kept
    held = line.claims[-1]
    assert held.end.label == kept and line.flag is (held.direction == FALLS)
    # the share of the bound is said beyond noise only where its claim says so
    assert ("by its median, not beyond noise" in line.verdict) is (held.direction == NOISE)


@FEW
@given(
    st.lists(
        st.tuples(st.floats(0.9, 2.0), st.floats(0.0, 0.3), st.sampled_from([3, 5, 8])),
        min_size=1,
        max_size=4,
    )
)
def test_the_program_card_claims_the_slowdowns_its_verdict_rests_on(doses):
    from bandwall.sensitivity import verdict as sv

    def slow(m, w, n):
        lo, hi = m * (1 - w), m * (1 + w)
        return {"median": m, "lo": lo, "hi": hi, "rounds": n, "enough": n >= 5}

    curve = [{"dose": i, "taken_GBps": 5.0 * (i + 1), "slowdown": slow(*d)} for i, d in enumerate(doses)]
    rec = {
        "tool": "sensitivity",
        "config": {"command": ["./app"]},
        "result": {
            "curve": curve,
            "node_GBps": 40.0,
            "bandwidth_GBps": None,
            "verdict": "latency-bound",
            "why": "why",
            "copies": {"text": "copies"},
        },
    }
    (line,) = advice.program_sensitivity(Evidence({advice.STORED: [rec]}))
    (c,) = line.claims
    assert say(c) in line.evidence
    slowed = [p for p in curve if sv.slows(p)]
    assert (c.direction == RISES) is bool(slowed)  # the sensitivity's own test of a slowdown
    worst = max(slowed or curve, key=lambda p: p["slowdown"]["median"])
    assert c.end.label == f"the bandit taking {worst['taken_GBps']:.1f} GB/s"
    assert c.ratio == pytest.approx(worst["slowdown"]["median"])


# -- the sweep record and the report agree, and one report's cards never contradict each other ---


@SETTINGS
@given(sweeps())
@example({1: [24.6, 25.5, 25.9, 27.6], 2: [21.5, 25.0, 26.2, 29.8]})
def test_the_sweep_record_decides_the_knee_the_card_shows(rates):
    from bandwall.kernels import sweep
    from bandwall.report.advice.cores import sweep_verdict

    rec = sweep_rec(rates)
    pts = rec["result"]["points"]
    k = sweep.knee(pts, 0.95)
    knee, _ = advice.cores(Evidence({"stream": [rec]}))
    assert knee.fix.startswith(f"OMP_NUM_THREADS={k} ")  # the record's knee is the card's
    words, claims = sweep_verdict(rec)
    assert words == knee.verdict and [c.to_json() for c in claims] == [c.to_json() for c in knee.claims]
    assert "still rises" not in words
    d = sweep.knee_decision(pts, 0.95)
    assert d.decisive is (k < max(rates))
    # where the rule finds no difference beyond noise between the last two counts, the knee is not
    # said to rise: undecided (every core kept) or decided at fewer cores
    if claims[0].direction == NOISE and not d.decisive:
        assert words.startswith("knee undecided")


@FEW
@given(sweeps(), cases(2), cases(2))
def test_no_two_cards_of_one_report_contradict_each_other(rates, engine, binding):
    cpu, eng = engine
    bound, unbound = binding
    ev = Evidence(
        {
            "stream": [sweep_rec(rates)],
            "engine": [
                stream_rec("triad", 1, cpu),
                stream_rec("triad", 1, eng, engine="helper", strategy="split"),
                {"tool": "engine-sweep", "config": {"kernels": ["triad"]}, "result": {"rows": []}},
            ],
            "pinning": [
                {
                    "tool": "pin-compare",
                    "config": {"spin": "passive"},
                    "result": {"modes": {"bound": {"rounds": bound}, "unbound": {"rounds": unbound}}},
                }
            ],
        }
    )
    lines = advice.recommend(ev)
    consistent(lines)
    for line in lines:
        for c in line.claims:
            assert c.direction in DIRECTIONS
            if c.direction != NOISE:
                assert f"{c.direction} from {c.start.label}" in say(c)


@FEW
@given(cases(3), st.sampled_from(["isa", "pages"]))
@example([[10.0, 10.2, 10.4, 10.1, 10.3], [12.0, 12.2, 12.4, 12.1, 12.3], [11.0] * 5], "isa")
@example([[10.0], [20.0], [30.0]], "pages")
def test_the_variant_cards_follow_their_claims(rounds, knob):
    names = ("avx512", "avx2", "sse2") if knob == "isa" else ("4k", "2m", "1g")
    recs = []
    for name, values in zip(names, rounds):
        for v in values:
            r = stream_rec("dot", 2, [v])
            r["result"]["median_GBps"] = v
            if knob == "isa":
                r["config"].update(isa=name, isa_requested=name)
            else:
                r["placement"] = {"pages": name}
            recs.append(r)
    (line,) = getattr(advice, knob)(Evidence({"variants": recs}))
    figures = {n: statistics.median(v) for n, v in zip(names, rounds)}
    words_follow(line, figures)
    chose = not line.verdict.startswith(f"keep the default {names[0]}")
    assert bool(line.fix) is chose
    if chose:  # the value recommended rises above the default by its claim, and is the bar
        best = line.verdict.split(":")[0]
        assert any((c.start.label, c.end.label, c.direction) == (names[0], best, RISES) for c in line.claims)
        assert line.value.median == pytest.approx(figures[best])
    else:
        assert line.value.median == pytest.approx(figures[names[0]])


@FEW
@given(cases(2), st.integers(1, 2))
def test_the_initialisation_card_follows_its_claim(rounds, nodes):
    first_touch, serial = rounds
    recs = [
        {"tool": "iso3dfd", "config": {"init": init, "schedule": "static"}, "result": {"mpoints_per_s": v}}
        for init, values in (("first-touch", first_touch), ("serial", serial))
        for v in values
    ]
    topo = {"tool": "topo", "config": {}, "result": {"numa_nodes": [{"cpus": [n]} for n in range(nodes)]}}
    lines = [x for x in advice.placement(Evidence({"iso3dfd": recs, "topology": [topo]})) if x.claims]
    if len(first_touch) < 2:
        assert not lines  # one run of each: nothing compared
        return
    (line,) = lines
    (c,) = line.claims
    words_follow(
        line,
        {
            "serial initialisation": statistics.median(serial),
            "first-touch initialisation": statistics.median(first_touch),
        },
    )
    assert bool(line.fix) is (c.direction == RISES)
    assert line.value.median == pytest.approx(c.end.value)


@FEW
@given(cases(2))
@example([[20.0] * 6, [10.0] * 6])
def test_the_numa_efficiency_card_follows_its_claim(rounds):
    local, remote = rounds
    n = len(local)
    cell = lambda xs: statistics.median(xs)  # noqa: E731
    rec = {
        "tool": "numa-matrix",
        "config": {},
        "result": {
            "matrix": [[cell(local), cell(remote)], [cell(remote), cell(local)]],
            "cell_rounds": [[local, remote], [remote, local]],
        },
    }
    topo = {"tool": "topo", "config": {}, "result": {"numa_nodes": [{"cpus": [0]}, {"cpus": [1]}]}}
    (line,) = [x for x in advice.placement(Evidence({"placement": [rec], "topology": [topo]})) if x.claims]
    (c,) = line.claims
    words_follow(
        line, {"local memory": statistics.median(local * 2), "remote memory": statistics.median(remote * 2)}
    )
    assert line.value.median == pytest.approx(c.end.value)  # the bar: the remote figure
    assert line.flag is (c.direction != NOISE and cell(remote) / cell(local) < 0.8)
    assert c.rounds == 2 * n


@FEW
@given(cases(3))
def test_the_threads_sharing_a_cpu_card_follows_its_claim(rounds):
    bound, passive_one, spin_one = rounds
    passive = {
        "tool": "pin-compare",
        "config": {"spin": "passive"},
        "result": {
            "modes": {
                "bound": {"rounds": bound},
                "unbound": {"rounds": bound},
                "one-cpu": {"rounds": passive_one},
            }
        },
    }
    spin = {
        "tool": "pin-compare",
        "config": {"spin": "active"},
        "result": {"modes": {"one-cpu": {"rounds": spin_one}}},
    }
    _, line = advice.binding(Evidence({"pinning": [passive, spin]}))
    (c,) = line.claims
    words_follow(
        line,
        {"spinning waits": statistics.median(spin_one), "sleeping waits": statistics.median(passive_one)},
    )
    assert bool(line.fix) is (c.direction == RISES)


@FEW
@given(cases(3), st.integers(0, 2))
def test_the_tune_verdict_claims_the_comparisons_it_rests_on(rounds, tied):
    from bandwall.core.claims import Claim
    from bandwall.tune import verdict
    from bandwall.tune.verdict import verdict_claims

    rows = [
        {"config": {"threads": n + 1}, "rates": v, "median": statistics.median(v), "rounds": len(v)}
        for n, v in enumerate(rounds)
    ]
    best = max(rows, key=lambda t: t["median"])
    others = [t for t in rows if t is not best]
    rec = {
        "result": {
            "unit": "GB/s",
            "best": best,
            "trials": rows,
            "indistinguishable": others[:tied],
        }
    }
    claims = verdict_claims(rec)
    assert len(claims) == min(len(others), tied + 1)
    by_label = {f"threads={t['config']['threads']}": t for t in others}
    runner = max(others[tied:], key=lambda t: t["median"], default=None)
    assert [by_label[c.start.label] for c in claims] == others[:tied] + ([runner] if runner else [])
    for c in claims:
        t = by_label[c.start.label]
        n = min(len(t["rates"]), len(best["rates"]))
        check_claim(
            c,
            {
                c.start.label: statistics.median(t["rates"][-n:]),
                f"threads={best['config']['threads']}": statistics.median(best["rates"][-n:]),
            },
        )
    # the record carries them and their words; the choice is called best only when every one rises
    verdict.add_claims(rec)
    assert [Claim.from_json(c) for c in rec["result"]["claims"]] == claims
    assert rec["result"]["claims_said"] == [say(c) for c in claims]
    standing = verdict.standing(claims)
    assert (standing == verdict.BEST) is all(c.direction == RISES for c in claims)
    assert (standing == verdict.NOT_FASTEST) is (
        standing != verdict.BEST and any(c.direction == FALLS for c in claims)
    )
