"""The search of bandwall tune on synthetic cost surfaces (grids of rates with seeded noise): within
its budget it finds a configuration within 5% of the exhaustive best with at most a quarter of an
exhaustive search's runs; ties go to the cheaper configuration; failed configurations are recorded
and the search goes on; an interruption keeps what was measured; stored trials are not run again."""

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
