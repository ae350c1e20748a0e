"""The search of bandwall tune: coordinate descent from the model's guess, each line of candidates
(the current configuration with one knob varied) raced in rotated rounds, halved after the first
round, and the candidates dropped as soon as the leader is apart from them beyond the spread
measured in the same run; then a final race of the leading configurations. Never the full grid.

The walk only steers what is measured. What the search keeps is chosen by the project's decision
rule (bandwall.core.decide) on the final race, where the model's guess runs beside the leaders and
the rounds are paired in the order they ran: the guess stands unless another configuration is
faster beyond noise, and that one gives way to a cheaper one (fewer cores) shown to be within the
rule's tolerance of it.

Pure: it measures through a `Trials` object (python/bandwall/tune/trials.py) and reads the space
(python/bandwall/tune/space.py), so synthetic cost surfaces test it without running anything.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from bandwall.core import decide

MIN_ROUNDS = 2  # rounds before two candidates may be called apart
MAX_ROUNDS = 5  # rounds of a line's race before its survivors are called indistinguishable
FINAL_ROUNDS = 15  # rounds of the final race (equal configurations would otherwise take the budget)
Z = 2.0  # standard errors between two configurations called apart
MAX_PASSES = 3  # passes of coordinate descent over the knobs
FINALISTS = 5  # configurations in the final race
# The share of the budget the walk leaves to the final race: a walk cut short by the budget would
# otherwise leave its leader measured once, and one round of a noisy machine names a lucky one.
FINAL_SHARE = 0.3


class OutOfBudget(Exception):
    """The trials ran out of runs or time; the search ends with what it measured."""


@dataclass(frozen=True)
class Stats:
    median: float
    min: float
    max: float
    rounds: int
    sd: float = 0.0  # sample standard deviation of the rounds

    @property
    def spread(self) -> float:
        """The relative standard deviation of the rounds (0 for one round)."""
        return self.sd / self.median if self.median > 0 else 0.0


def stats(rates: list[float]) -> Stats:
    sd = statistics.stdev(rates) if len(rates) > 1 else 0.0
    return Stats(statistics.median(rates), min(rates), max(rates), len(rates), sd)


def apart(a: Stats, b: Stats, noise: float) -> bool:
    """True when a is faster than b beyond the spread measured in the same run: both measured at
    least MIN_ROUNDS times, and their medians differ by more than Z standard errors of the
    difference, from noise (the run's median relative standard deviation, never less than the
    two configurations' own): more rounds resolve a smaller difference, as racing does."""
    if a.rounds < MIN_ROUNDS or b.rounds < MIN_ROUNDS:
        return False
    sd = max(noise, a.spread, b.spread) * a.median
    return a.median - b.median > Z * sd * math.sqrt(1 / a.rounds + 1 / b.rounds)


@dataclass
class Outcome:
    best: dict | None  # the configuration chosen
    tied: list[dict] = field(default_factory=list)  # others indistinguishable from it (cheaper first)
    why: str = ""  # how the best was chosen
    stopped: str = "converged"  # converged, budget, interrupted


class Search:
    """space: key(), canonical(), guess(), lines(current), cost(); trials: stats(), failed(),
    measure(), measured(), noise()."""

    def __init__(self, space, trials):
        self.space, self.trials = space, trials
        self.rule = decide.rule()

    def run(self) -> Outcome:
        stopped = "converged"
        try:
            self.trials.held = FINAL_SHARE
            try:
                self._descend()
            except OutOfBudget:
                stopped = "budget"
            self.trials.held = 0.0
            self._final()
        except OutOfBudget:
            stopped = "budget"
        except KeyboardInterrupt:
            stopped = "interrupted"
        out = self._decide([c for c in self.trials.measured()])
        out.stopped = stopped
        return out

    # -- the walk ------------------------------------------------------------------------------

    def _descend(self) -> None:
        current = self.space.guess()
        for _ in range(MAX_PASSES):
            changed = False
            for i in range(len(self.space.knobs)):
                line = self.space.line(current, i)
                if len(line) < 2:
                    continue
                alive = self.race(line)
                if not alive:
                    continue
                winner = self._leader(alive)
                if winner is not None and self.space.key(winner) != self.space.key(current):
                    current, changed = winner, True
            if not changed:
                return

    def _final(self) -> None:
        ranked = self._ranked(self.trials.measured()) or [self.space.guess()]
        if len(ranked) == 1 and self.trials.stats(ranked[0]) is None:  # a space of one configuration
            self.race(ranked)
        if len(ranked) > 1:
            # the model's guess races too: the decision rule judges the others against it
            guess = self.space.canonical(self.space.guess())
            finalists = ranked[:FINALISTS]
            if not self.trials.failed(guess) and all(
                self.space.key(c) != self.space.key(guess) for c in finalists
            ):
                finalists.append(guess)
            self.race(finalists, FINAL_ROUNDS, keep=guess)

    def race(self, candidates: list[dict], rounds: int = MAX_ROUNDS, keep: dict | None = None) -> list[dict]:
        """Measures the candidates in rounds, the order rotated each round (a configuration's
        earlier rounds, stored or from another line, count), halves a line of four or more after the
        first round, and drops those the leader is apart from (never keep, the baseline the others
        are judged against); returns the survivors, best first."""
        alive = self._unique(candidates)
        kept = self.space.key(self.space.canonical(keep)) if keep is not None else None
        for r in range(rounds):
            for c in alive[r % len(alive) :] + alive[: r % len(alive)]:
                st = self.trials.stats(c)
                if not self.trials.failed(c) and (st is None or st.rounds <= r):
                    self.trials.measure(c)
            alive = self._ranked(alive)
            if not alive:
                return []
            if r == 0 and len(alive) >= 4:
                alive = [
                    c for i, c in enumerate(alive) if i < (len(alive) + 1) // 2 or self.space.key(c) == kept
                ]
            if r + 1 >= MIN_ROUNDS:
                lead = self.trials.stats(alive[0])
                noise = self.trials.noise()
                alive = [
                    c
                    for c in alive
                    if self.space.key(c) == kept or not apart(lead, self.trials.stats(c), noise)
                ]
            if len(alive) == 1:
                break
        return alive

    # -- choosing ------------------------------------------------------------------------------

    def _leader(self, configs: list[dict]) -> dict | None:
        """Where the walk goes next: the leader by median, then the cheapest of those it is not apart
        from by the race's own test (each measured at least MIN_ROUNDS times). This only steers what
        is measured; what the search keeps is _decide's."""
        ranked = self._ranked(configs)
        if not ranked:
            return None
        judged = [c for c in ranked if self.trials.stats(c).rounds >= MIN_ROUNDS] or ranked
        lead = self.trials.stats(judged[0])
        noise = self.trials.noise()
        tied = [c for c in judged if not apart(lead, self.trials.stats(c), noise)]
        return min(tied, key=lambda c: (self.space.cost(c), -self.trials.stats(c).median))

    def _paired(self, a: dict, b: dict) -> decide.Interval:
        """The interval of a's rate over b's on their last common number of rounds (those of the
        races that measured both, in the order they ran)."""
        ra, rb = self.trials.rates(a), self.trials.rates(b)
        n = min(len(ra), len(rb))
        return decide.ratio_interval(ra[len(ra) - n :], rb[len(rb) - n :], self.rule)

    def _decide(self, configs: list[dict], default: dict | None = None) -> Outcome:
        """The decision rule over what was measured: the default (the guess when measured, else the
        fastest) stands unless another is faster beyond noise; then the cheapest (fewer cores,
        simpler binding: the space's cost order) shown to be within the rule's tolerance of it."""
        ranked = self._ranked(configs)
        if not ranked:
            return Outcome(None, why="no configuration ran")
        self.rule = decide.rule()
        key = self.space.key
        start = self.space.canonical(default) if default is not None else self.space.guess()
        cur = next((c for c in ranked if key(c) == key(start)), ranked[0])
        how = "the model's guess" if key(cur) == key(start) else "the fastest measured"
        for c in ranked:
            if key(c) != key(cur) and decide.verdict(self._paired(c, cur), self.rule) == decide.FASTER:
                cur, how = c, "faster beyond noise than the configuration before it"
        for c in sorted(ranked, key=lambda c: (self.space.cost(c), -self.trials.stats(c).median)):
            if self.space.cost(c) >= self.space.cost(cur):
                break
            iv = self._paired(cur, c)
            if iv.enough and iv.hi <= 1 + self.rule.tolerance:
                cur, how = (
                    c,
                    f"cheaper, and within {100 * self.rule.tolerance:.0f}% of the configuration before it",
                )
                break
        tied = [
            c
            for c in ranked
            if key(c) != key(cur)
            and self._paired(c, cur).enough
            and decide.verdict(self._paired(c, cur), self.rule) == decide.NOISE
        ]
        tied.sort(key=lambda c: (self.space.cost(c), -self.trials.stats(c).median))
        st = self.trials.stats(cur)
        why = f"{how} (the decision rule over {st.rounds} round(s): {self.rule.text()})"
        if tied:
            why += f"; {len(tied)} other configuration(s) within noise of it"
        return Outcome(cur, tied, why)

    def _ranked(self, configs: list[dict]) -> list[dict]:
        ok = [c for c in self._unique(configs) if not self.trials.failed(c) and self.trials.stats(c)]
        return sorted(ok, key=lambda c: (-self.trials.stats(c).median, self.space.cost(c)))

    def _unique(self, configs: list[dict]) -> list[dict]:
        seen: dict[str, dict] = {}
        for c in configs:
            c = self.space.canonical(c)
            seen.setdefault(self.space.key(c), c)
        return list(seen.values())
