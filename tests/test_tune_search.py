"""The search of bandwall tune on synthetic cost surfaces (grids of rates with seeded noise): within
its budget it finds a configuration within 5% of the exhaustive best with at most a quarter of an
exhaustive search's runs; ties go to the cheaper configuration; failed configurations are recorded
and the search goes on; an interruption keeps what was measured; stored trials are not run again;
the final race gives the best and each configuration the verdict compares it with the decision
rule's rounds (more when the rule calls the pair unsettled), or says the budget cut it short."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from bandwall.core.errors import RunFailed
from bandwall.tune.search import MIN_ROUNDS, Search, Stats, apart
from bandwall.tune.space import Knob, Space
from bandwall.tune.trials import Trials
from bandwall.tune.tune import EXHAUSTIVE_ROUNDS, default_budget


def iso3dfd_like(c: dict) -> float:
    """Threads x binding x ISA x y block, with an ISA-block interaction (wider vectors want longer rows)."""
    t = {1: 0.55, 2: 1.0}[c["threads"]]
    b = {"compact": 1.0, "none": 0.9}[c["bind"]]
    isa = {"avx512": 1.0, "avx2": 0.95, "generic": 0.5}[c["isa"]]
    best_y = 32 if c["isa"] == "avx512" else 16
    y = math.exp(-((math.log2(c["yblock"]) - math.log2(best_y)) ** 2) / 2)
    return 1000 * t * b * isa * (0.6 + 0.4 * y)


def stream_like(c: dict) -> float:
    """Bandwidth saturating at 4 of 8 cores; scatter better than compact below the knee."""
    n = c["threads"]
    bw = 40 * min(1.0, n / 4) ** 0.8 * (1 - 0.01 * max(0, n - 4))
    b = {"compact": 1.0, "scatter": 1.08 if n < 4 else 1.0, "spread": 1.03, "none": 0.85}[c["bind"]]
    p = {"system": 1.0, "huge": 1.04, "base": 0.97}[c["pages"]]
    s = {"nt": 1.0, "regular": 0.78}[c["stores"]]
    return bw * b * p * s


def recorded(seed: int):
    """A grid whose rates are random factors per value plus random pairwise interactions of up to 5%."""
    rnd = random.Random(seed)
    knobs = {"a": 4, "b": 3, "c": 5, "d": 3}
    main = {(k, v): rnd.uniform(0.6, 1.0) for k, n in knobs.items() for v in range(n)}
    pairs = {
        (k1, v1, k2, v2): rnd.uniform(0.95, 1.05)
        for k1, k2 in itertools.combinations(knobs, 2)
        for v1 in range(knobs[k1])
        for v2 in range(knobs[k2])
    }

    def rate(c: dict) -> float:
        r = 100.0
        for k in knobs:
            r *= main[(k, c[k])]
        for k1, k2 in itertools.combinations(knobs, 2):
            r *= pairs[(k1, c[k1], k2, c[k2])]
        return r

    space = Space("recorded", [Knob(k, tuple(range(n)), n // 2) for k, n in knobs.items()])
    return space, rate


SURFACES = {
    "iso3dfd": (
        Space(
            "iso3dfd",
            [
                Knob("threads", (1, 2), 2, costs=True),
                Knob("bind", ("compact", "none"), "compact"),
                Knob("isa", ("avx512", "avx2", "generic"), "avx512"),
                Knob("yblock", (16, 4, 8, 32, 64, 128), 16),
            ],
        ),
        iso3dfd_like,
    ),
    "stream": (
        Space(
            "stream",
            [
                Knob("threads", tuple(range(1, 9)), 8, costs=True),
                Knob("bind", ("compact", "scatter", "spread", "none"), "compact"),
                Knob("pages", ("system", "huge", "base"), "system"),
                Knob("stores", ("nt", "regular"), "nt"),
            ],
        ),
        stream_like,
    ),
}


def noisy(surface, seed: int, noise: float, fail=lambda c: False):
    rnd = random.Random(seed)

    def run(c: dict):
        if fail(c):
            raise RunFailed("the program exited with code 3")
        return surface(c) * (1 + rnd.gauss(0, noise)), {}

    return run


def exhaustive_best(space: Space, surface) -> float:
    return max(surface(c) for c in space.grid())


CASES = [(name, seed) for name in SURFACES for seed in range(4)] + [("recorded", s) for s in range(4)]


@pytest.mark.parametrize("name, seed", CASES)
@pytest.mark.parametrize("noise", [0.02, 0.05])
def test_within_five_percent_of_the_exhaustive_best_with_a_quarter_of_its_runs(name, seed, noise):
    space, surface = recorded(seed) if name == "recorded" else SURFACES[name]
    budget = default_budget(space.size())
    assert budget <= math.ceil(0.25 * EXHAUSTIVE_ROUNDS * space.size())
    trials = Trials(space, noisy(surface, seed, noise), budget=budget)
    out = Search(space, trials).run()
    assert trials.runs <= budget
    assert surface(out.best) >= 0.95 * exhaustive_best(space, surface), (out, trials.runs)


def test_ties_go_to_the_cheaper_configuration():
    """Two thread counts within 1% (noise 2%): the result names both and picks the fewer threads."""
    space = Space("flat", [Knob("threads", (1, 2, 3, 4), 4, costs=True)])
    trials = Trials(space, noisy(lambda c: 100 if c["threads"] >= 2 else 50, 1, 0.02), budget=40)
    out = Search(space, trials).run()
    assert out.best == {"threads": 2}
    assert {c["threads"] for c in out.tied} <= {3, 4} and out.tied
    assert "cheaper, and within 3%" in out.why


def test_the_guess_stands_within_noise():
    """Every configuration the same within 2% noise: the model's guess is kept, run after run."""
    space = Space("flat", [Knob("threads", (1, 2, 3, 4), 4, costs=False), Knob("isa", ("a", "b", "c"), "a")])
    for seed in range(4):
        trials = Trials(space, noisy(lambda c: 100.0, seed, 0.02), budget=60)
        assert Search(space, trials).run().best == {"threads": 4, "isa": "a"}


def test_apart_needs_rounds_and_a_difference_beyond_the_spread():
    a, b = Stats(100, 98, 102, 3, 2.0), Stats(90, 89, 91, 3, 1.0)
    assert apart(a, b, 0.02) and not apart(b, a, 0.02)
    assert not apart(a, b, 0.2)  # the run's spread is larger than the difference
    assert not apart(Stats(100, 100, 100, 1), b, 0.0)  # one round proves nothing
    assert not apart(Stats(100, 60, 140, 3, 40.0), b, 0.0)  # its own rounds spread wider
    close = Stats(100, 97, 103, 2, 3.0), Stats(96, 93, 99, 2, 3.0)
    assert not apart(*close, 0.03)
    more = Stats(100, 97, 103, 20, 3.0), Stats(96, 93, 99, 20, 3.0)
    assert apart(*more, 0.03)  # more rounds resolve a smaller difference


def test_failed_configurations_are_recorded_and_the_search_goes_on():
    space, surface = SURFACES["iso3dfd"]
    trials = Trials(space, noisy(surface, 3, 0.02, fail=lambda c: c["isa"] == "avx512"), budget=60)
    out = Search(space, trials).run()
    failed = [r for r in trials.table() if "failure" in r]
    assert failed and all(r["config"]["isa"] == "avx512" for r in failed)
    assert all("exited with code 3" in r["failure"] for r in failed)
    assert out.best["isa"] == "avx2"
    # a failed configuration is not run again
    keys = [space.key(r["config"]) for r in trials.table()]
    assert len(keys) == len(set(keys))


def test_the_first_configurations_failing_alike_end_the_search():
    """A figure of merit that never matches fails every configuration the same way: bad input."""
    space, surface = SURFACES["iso3dfd"]
    trials = Trials(space, noisy(surface, 3, 0.02, fail=lambda c: True), budget=20)
    cross = 1 + sum(len(k.values) - 1 for k in space.knobs)  # the guess and its neighbours
    with pytest.raises(RunFailed, match=f"the first {cross} configurations failed alike: the program exited"):
        Search(space, trials).run()
    assert trials.runs == cross and all("failure" in r for r in trials.table())


def test_an_interruption_keeps_the_finished_trials_and_the_best_so_far():
    space, surface = SURFACES["iso3dfd"]
    run = noisy(surface, 5, 0.02)
    calls = []

    def interrupted(c):
        calls.append(c)
        if len(calls) == 7:
            raise KeyboardInterrupt
        return run(c)

    trials = Trials(space, interrupted, budget=100)
    out = Search(space, trials).run()
    assert out.stopped == "interrupted" and trials.runs == 6
    assert out.best is not None and sum(r.get("rounds", 0) for r in trials.table()) == 6


@pytest.mark.parametrize("budget", [1, 3, 10])
def test_the_budget_bounds_the_runs(budget):
    space, surface = SURFACES["stream"]
    trials = Trials(space, noisy(surface, 2, 0.02), budget=budget)
    out = Search(space, trials).run()
    assert trials.runs == budget and out.stopped == "budget" and out.best is not None


@pytest.mark.parametrize("budget, seed", [(8, 3), (14, 1), (14, 2), (14, 4), (34, 5), (20, 0)])
def test_a_walk_cut_by_the_budget_leaves_runs_to_race_its_leaders(budget, seed):
    """With noise of 12% and a budget too small for the walk, the final race still runs: the best is
    never a configuration measured once (one lucky round on a noisy machine)."""
    space, surface = SURFACES["iso3dfd"]
    trials = Trials(space, noisy(surface, seed, 0.12), budget=budget)
    out = Search(space, trials).run()
    assert trials.runs <= budget and out.stopped == "budget"
    assert trials.stats(out.best).rounds >= MIN_ROUNDS, (out, trials.table())


def test_stored_trials_are_reused_not_run_again():
    space, surface = SURFACES["iso3dfd"]
    first = Trials(space, noisy(surface, 4, 0.02), budget=default_budget(space.size()))
    best = Search(space, first).run().best
    again = Trials(space, noisy(surface, 4, 0.02), budget=default_budget(space.size()))
    for row in first.table():
        for rate in row.get("rates", []):
            again.add_stored(row["config"], rate)
    out = Search(space, again).run()
    assert out.best == best
    assert again.runs < first.runs / 4 and again.resumed == first.runs


def test_folded_configurations_run_once():
    """Two words for the same run (a canon that folds them) are one configuration."""
    space = Space(
        "fold",
        [Knob("bind", ("compact", "scatter", "none"), "compact")],
        canon=lambda c: {**c, "bind": "compact" if c["bind"] == "scatter" else c["bind"]},
    )
    trials = Trials(space, noisy(lambda c: 10.0, 1, 0.01), budget=30)
    Search(space, trials).run()
    assert sorted(r["config"]["bind"] for r in trials.table()) == ["compact", "none"]


# -- the final race: the decision rule's rounds for the verdict's pairs ------------------------------


def _verdict(space: Space, trials: Trials, out) -> list:
    """The verdict's claims on what the search measured, as the tune record makes them."""
    from bandwall.tune.verdict import verdict_claims

    rec = {
        "result": {
            "unit": "GB/s",
            "best": trials.row(out.best),
            "trials": trials.table(),
            "indistinguishable": [trials.row(c) for c in out.tied],
        }
    }
    return verdict_claims(rec)


def _scripted(rates: dict[int, list[float]], calls: list):
    """A trial function giving each thread count its rates in turn (the last one from then on)."""
    taken: dict[int, int] = {}

    def run(c: dict):
        n = c["threads"]
        i = taken.get(n, 0)
        taken[n] = i + 1
        calls.append(n)
        v = rates[n]
        return v[min(i, len(v) - 1)], {}

    return run


THREADS = Space("threads", [Knob("threads", (1, 2), 2, costs=True)])


def test_a_clearly_better_configuration_has_the_rules_rounds_and_rises():
    """The rate is 10 x the threads, exactly: the races drop threads=1 after two rounds, and the final
    race gives the pair the rule's rounds, so the verdict finds the best rising and calls it best."""
    from bandwall.core import decide
    from bandwall.core.claims import RISES
    from bandwall.tune import verdict

    rule = decide.rule()
    calls: list = []
    trials = Trials(THREADS, _scripted({1: [10.0], 2: [20.0]}, calls), budget=default_budget(THREADS.size()))
    out = Search(THREADS, trials).run()
    assert out.best == {"threads": 2} and out.stopped == "converged"
    assert out.final["finished"] and "cut_short" not in out.final and out.final["rounds"] >= 1
    ((pair),) = out.final["pairs"]
    assert pair["config"] == {"threads": 1} and pair["paired_rounds"] >= rule.rounds
    (c,) = _verdict(THREADS, trials, out)
    assert (c.start.label, c.end.label, c.direction) == ("threads=1", "threads=2", RISES)
    assert c.enough and c.rounds >= rule.rounds and c.rounds == pair["paired_rounds"]
    assert verdict.standing([c]) == verdict.BEST
    # the final race's rounds interleave the two, the order rotated each round, and are the last
    # rounds of each: those the verdict pairs
    last = calls[len(calls) - 2 * out.final["rounds"] :]
    rounds = [last[i : i + 2] for i in range(0, len(last), 2)]
    assert all(sorted(r) == [1, 2] for r in rounds)
    assert len(rounds) < 2 or rounds[0] != rounds[1]


def test_the_final_race_pairs_the_model_guess_and_the_runner_up_with_the_best():
    """The best (threads=2) is neither the guess (threads=3) nor alone: the runner-up by median
    (threads=1) and the guess each end with the rule's rounds paired with it; the verdict's claim
    against the runner-up rises."""
    from bandwall.core import decide
    from bandwall.core.claims import RISES

    space = Space("threads", [Knob("threads", (1, 2, 3), 3, costs=True)])
    trials = Trials(space, _scripted({1: [25.0], 2: [30.0], 3: [20.0]}, []), budget=default_budget(3))
    out = Search(space, trials).run()
    assert out.best == {"threads": 2} and out.final["finished"]
    paired = {p["config"]["threads"]: p["paired_rounds"] for p in out.final["pairs"]}
    assert set(paired) == {1, 3} and min(paired.values()) >= decide.rule().rounds
    (c,) = _verdict(space, trials, out)
    assert (c.start.label, c.direction) == ("threads=1", RISES) and c.enough


def test_a_tie_stays_no_difference_beyond_noise_after_the_full_rounds():
    """Two thread counts that run alike: the final race gives the pair the rule's rounds, and the
    verdict finds no difference beyond noise on rounds enough for its interval (not too few)."""
    from bandwall.core import decide
    from bandwall.core.claims import NOISE
    from bandwall.tune import verdict

    same = {1: [20.0, 20.1, 19.9, 20.2, 19.8, 20.0], 2: [20.1, 19.9, 20.0, 19.8, 20.2, 20.1]}
    trials = Trials(THREADS, _scripted(same, []), budget=default_budget(THREADS.size()))
    out = Search(THREADS, trials).run()
    assert out.final["finished"]
    (c,) = _verdict(THREADS, trials, out)
    assert c.direction == NOISE and c.enough and c.rounds >= decide.rule().rounds
    assert verdict.standing([c]) == verdict.NO_DIFFERENCE


def test_an_unsettled_pair_races_on_to_the_rules_rounds_when_unsettled():
    """After the rule's five rounds threads=1 runs 0.96x threads=2 by the median but the interval
    reaches past the margin (unsettled): the final race gives the pair rounds_when_unsettled rounds,
    and on them the rule finds threads=2 faster beyond noise."""
    from bandwall.core import decide
    from bandwall.core.claims import RISES

    rule = decide.rule()
    assert rule.rounds_when_unsettled > rule.rounds
    trials = Trials(THREADS, _scripted({1: [96.0, 97.0, 90.0, 95.0, 101.0, 95.0], 2: [100.0]}, []), budget=40)
    out = Search(THREADS, trials).run()
    ((pair),) = out.final["pairs"]
    assert out.final["finished"] and pair["paired_rounds"] == rule.rounds_when_unsettled
    # on its first five rounds the rule left the pair unsettled
    iv = decide.ratio_interval(trials.rates({"threads": 1})[:5], trials.rates({"threads": 2})[:5], rule)
    assert decide.unsettled(iv, rule)
    (c,) = _verdict(THREADS, trials, out)
    assert c.rounds == rule.rounds_when_unsettled and c.direction == RISES and c.enough


@pytest.mark.parametrize("budget", [5, 8])
def test_a_budget_too_small_for_the_final_race_says_so(budget):
    """The budget ends before the pair has the rule's rounds: the final race says it was cut short
    by the budget (how many paired rounds of how many), the search's why says it, and the verdict's
    claim has too few rounds for the rule's interval."""
    from bandwall.core import decide
    from bandwall.core.claims import NOISE

    rule = decide.rule()
    trials = Trials(THREADS, _scripted({1: [10.0], 2: [20.0]}, []), budget=budget)
    out = Search(THREADS, trials).run()
    assert trials.runs <= budget and out.stopped == "budget"
    assert not out.final["finished"] and out.final["cut_short"] == "budget"
    ((pair),) = out.final["pairs"]
    said = f"threads=1 {pair['paired_rounds']} of {rule.rounds}"
    assert pair["paired_rounds"] < rule.rounds and said in out.final["why"]
    assert "the final race was cut short by the budget" in out.final["why"] and out.final["why"] in out.why
    (c,) = _verdict(THREADS, trials, out)
    assert c.direction == NOISE and not c.enough and c.rounds == pair["paired_rounds"]


def test_the_default_budget_leaves_room_for_the_final_race_and_stays_a_quarter_of_a_large_space():
    """A small space's default budget holds the final race's rule rounds (the best and two others)
    beside the walk's two rounds of every configuration, or as the share the walk leaves it; a large
    space's stays a quarter of an exhaustive search."""
    from bandwall.core import decide
    from bandwall.tune.search import FINAL_SHARE

    rounds = decide.rule().rounds
    assert default_budget(1) == 4
    for size in (2, 3, 4, 8, 20, 40):
        final = min(size, 3) * rounds
        assert default_budget(size) >= min(final + MIN_ROUNDS * size, final / FINAL_SHARE)
    for size in (72, 180, 192):
        assert default_budget(size) == math.ceil(0.25 * EXHAUSTIVE_ROUNDS * size)
