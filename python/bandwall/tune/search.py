"""The search of bandwall tune: coordinate descent from the model's guess, each line of candidates
(the current configuration with one knob varied) raced in rotated rounds, halved after the first
round, and the candidates dropped as soon as the leader is apart from them beyond the spread
measured in the same run; then a race of the leading configurations; then the final race, which
gives the decision rule its rounds. Never the full grid.

The walk only steers what is measured. What the search keeps is chosen by the project's decision
rule (bandwall.core.decide) on the rounds paired in the order they ran: the guess stands unless
another configuration is faster beyond noise, and that one gives way to a cheaper one (fewer cores)
shown to be within the rule's tolerance of it.

The races drop a candidate after MIN_ROUNDS rounds, fewer than the rule needs for its interval
(decide.rule().rounds), so the verdict would find even a configuration twice as fast "no difference
beyond noise" on too few rounds. The final race (Search._final_race) therefore keeps the best, the
runner-up by median (and the runner-up the verdict compares with, the fastest not tied with the
best) and the model's guess racing in interleaved rounds, the order rotated each round, until each
has at least the rule's rounds paired with the best (up to rounds_when_unsettled when the rule calls
the pair unsettled), within the budget; the decision is then made again on all the rounds. The pairs
are the verdict's (bandwall.tune.verdict.verdict_claims): each configuration's rates in the order
they ran, on their last common rounds. Outcome.final says what the final race ran and whether the
budget cut it short.

Pure: it measures through a `Trials` object (python/bandwall/tune/trials.py) and reads the space
(python/bandwall/tune/space.py), so synthetic cost surfaces test it without running anything.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field

from bandwall.core import decide

MIN_ROUNDS = 2  # rounds before two candidates may be called apart
MAX_ROUNDS = 5  # rounds of a line's race before its survivors are called indistinguishable
FINAL_ROUNDS = 15  # rounds of the leaders' race (equal configurations would otherwise take the budget)
Z = 2.0  # standard errors between two configurations called apart
MAX_PASSES = 3  # passes of coordinate descent over the knobs
FINALISTS = 5  # configurations in the leaders' race
# The share of the budget the walk leaves to the leaders' race and the final race: a walk cut short by
# the budget would otherwise leave its leader measured once, and one round of a noisy machine names a
# lucky one.
FINAL_SHARE = 0.3
# Times the final race may take up new comparisons (the best or the runner-up changing as its rounds
# come in) before it ends with what it has.
FINAL_PASSES = 4


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
    final: dict | None = None  # the final race: its rounds, each pair's paired rounds, whether finished


@dataclass
class FinalRace:
    """What the final race ran: its rounds and runs, and why it ended short of the rule's rounds
    (cut: "budget", "interrupted", or "passes" when the comparisons kept changing)."""

    rounds_needed: int
    rounds_when_unsettled: int
    rounds: int = 0
    runs: int = 0
    cut: str | None = None

    def record(self, search: Search, out: Outcome) -> dict:
        """The record's account (result.final_race): each configuration the verdict compares with the
        best, its rounds paired with the best and the rounds the rule wants of the pair; finished when
        every pair has them, else why not."""
        best = out.best
        pairs = [
            {
                "config": c,
                "paired_rounds": search.paired(c, best),
                "needed": search.needed(best, c),
            }
            for c in search._compared(out)
            if not search.trials.failed(c)
        ]
        short = [p for p in pairs if p["paired_rounds"] < p["needed"]]
        rec = {
            "rounds": self.rounds,
            "runs": self.runs,
            "rounds_needed": self.rounds_needed,
            "rounds_when_unsettled": self.rounds_when_unsettled,
            "pairs": pairs,
            "finished": not short,
        }
        if short:
            cause = {
                "budget": "cut short by the budget",
                "interrupted": "interrupted",
                "passes": f"ended after {FINAL_PASSES} passes as its comparisons kept changing",
            }.get(self.cut or "", "ended short of them")
            words = ", ".join(
                f"{' '.join(f'{k}={v}' for k, v in p['config'].items()) or 'the defaults'} "
                f"{p['paired_rounds']} of {p['needed']}"
                for p in short
            )
            rec["cut_short"] = self.cut or "ended"
            rec["why"] = f"the final race was {cause}: rounds paired with the best: {words}"
        return rec


class Search:
    """space: key(), canonical(), guess(), lines(current), cost(); trials: stats(), failed(),
    measure(), measured(), noise()."""

    def __init__(self, space, trials):
        self.space, self.trials = space, trials
        self.rule = decide.rule()

    def run(self) -> Outcome:
        stopped = "converged"
        self.final = FinalRace(self.rule.rounds, self.rule.rounds_when_unsettled)
        out = None
        try:
            self.trials.held = FINAL_SHARE
            try:
                self._descend()
            except OutOfBudget:
                stopped = "budget"
            # the leaders' race leaves the final race the runs it may need
            self.trials.held = self._reserve()
            try:
                self._final()
            except OutOfBudget:
                stopped = "budget"
            self.trials.held = 0.0
            out = self._final_race()
        except OutOfBudget:
            stopped = "budget"
            self.final.cut = "budget"
        except KeyboardInterrupt:
            stopped = "interrupted"
            self.final.cut = "interrupted"
        if out is None:
            out = self._decide(self.trials.measured())
        out.stopped = stopped
        if out.best is not None:
            out.final = self.final.record(self, out)
            if not out.final["finished"]:
                out.why += "; " + out.final["why"]
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
        """The leaders' race: the five best by median and the model's guess, those the leader is
        apart from dropped (never the guess)."""
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

    def _reserve(self) -> float:
        """The share of the budget (runs, or seconds at the pace of this tune's runs so far) the final
        race may need: the rule's rounds for the leading three and the guess, less the rounds they
        have (the leaders' race, run within the rest, may give them some)."""
        ranked = self._ranked(self.trials.measured())
        if len(ranked) < 2:
            return 0.0
        members = self._unique([*ranked[:3], self.space.guess()])
        short = [
            max(0, self.rule.rounds - len(self.trials.rates(c))) for c in members if not self.trials.failed(c)
        ]
        runs = sum(short) + max(short, default=0)  # the best runs in every round
        if not runs:
            return 0.0
        share = 0.0
        budget = getattr(self.trials, "budget", None)
        seconds = getattr(self.trials, "seconds", None)
        if budget:
            share = max(share, runs / budget)
        if seconds:
            done = getattr(self.trials, "runs", 0)
            start = getattr(self.trials, "start", None)
            if done and start is not None:
                share = max(share, runs * (time.monotonic() - start) / done / seconds)
            else:
                share = max(share, FINAL_SHARE)
        return min(1.0, share)

    def _final_race(self) -> Outcome:
        """The decision, on rounds enough for the rule: decides, then races the best with each
        configuration the verdict compares it with (the runner-up by median, the fastest not tied
        with it, the model's guess) in interleaved rounds, the order rotated each round, every
        configuration short of its rounds measured once a round with the best, until each pair has
        the rule's rounds (its rounds_when_unsettled when the rule calls the pair unsettled); then
        decides again, and races again when the decision or its comparisons changed."""
        for _ in range(FINAL_PASSES):
            out = self._decide(self.trials.measured())
            if out.best is None:
                return out
            best = out.best
            short = self._short(best, self._compared(out))
            if not short:
                return out
            while short:
                members = [best, *short]
                self._room(len(members))
                r = self.final.rounds
                for c in members[r % len(members) :] + members[: r % len(members)]:
                    if not self.trials.failed(c):
                        self.trials.measure(c)
                        self.final.runs += 1
                self.final.rounds += 1
                if self.trials.failed(best):
                    break
                short = self._short(best, self._compared(out))
        out = self._decide(self.trials.measured())
        if out.best is not None and self._short(out.best, self._compared(out)):
            self.final.cut = "passes"
        return out

    def _room(self, runs: int) -> None:
        """OutOfBudget unless a budget of runs has room for a whole round of the final race: a round
        cut in half would leave one configuration of a pair a round ahead, and the verdict's pairing
        (their last common rounds) a round out of step."""
        budget = getattr(self.trials, "budget", None)
        if budget is not None and getattr(self.trials, "runs", 0) + runs > budget:
            raise OutOfBudget()

    def _compared(self, out: Outcome) -> list[dict]:
        """Whom the final race pairs with the best: the runner-up by median, the runner-up the
        verdict compares with (the fastest by median not tied with the best, the first measured of
        equals), the model's guess (when it has not failed), and those it ties with: they have the
        rule's rounds (that is how they were found tied), and race on only when the rule calls the
        pair unsettled."""
        key = self.space.key
        best = key(out.best)
        ranked = [c for c in self._ranked(self.trials.measured()) if key(c) != best]
        tied = {key(c) for c in out.tied}
        order = [c for c in self._unique(self.trials.measured()) if any(key(c) == key(x) for x in ranked)]
        untied = [c for c in order if key(c) not in tied]
        runner = max(untied, key=lambda c: self.trials.stats(c).median, default=None)
        guess = self.space.canonical(self.space.guess())
        out_ = [*ranked[:1], *([runner] if runner is not None else [])]
        if key(guess) != best and not self.trials.failed(guess):
            out_.append(guess)
        return self._unique([*out_, *out.tied])

    def paired(self, a: dict, b: dict) -> int:
        """The rounds the verdict pairs of a and b: their last common number of rounds."""
        return min(len(self.trials.rates(a)), len(self.trials.rates(b)))

    def needed(self, best: dict, c: dict) -> int:
        """The paired rounds the rule wants of c with the best: its rounds, or rounds_when_unsettled
        once those leave the pair unsettled (decided then on all of them)."""
        n = self.paired(c, best)
        if n >= self.rule.rounds and decide.unsettled(self._paired(c, best), self.rule):
            return max(self.rule.rounds, self.rule.rounds_when_unsettled)
        return self.rule.rounds

    def _short(self, best: dict, compared: list[dict]) -> list[dict]:
        return [
            c for c in compared if not self.trials.failed(c) and self.paired(c, best) < self.needed(best, c)
        ]

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
