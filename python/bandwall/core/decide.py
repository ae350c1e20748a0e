"""The one rule by which bandwall chooses by itself, applied in the front end (a tuner's winner, a
report's fix). It is the native executables' rule (native/common/decide.hpp), with its constants from
the manifest (native/common/decision.json); both implementations are held to one table of cases
(tests/fixtures/decision_cases.json).

Candidates run in interleaved rounds. For two candidates, each round gives the paired ratio of their
rates (higher is better); the interval of the median ratio comes from the order statistics of the
ratios (the sign test's distribution-free interval) at the rule's confidence. A candidate is chosen
over the default only when the whole interval lies beyond the margin; otherwise "no difference
beyond noise" and the default stands. With too few rounds for the confidence nothing is decided. A
comparison left unsettled (its median beyond the margin, its interval not) may be given more rounds,
rounds_when_unsettled in all, by a caller whose budget allows (decided then on all of them)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

FASTER = "faster"
SLOWER = "slower"
NOISE = "no difference beyond noise"


@dataclass(frozen=True)
class Rule:
    confidence: float = 0.9
    margin: float = 0.02
    tolerance: float = 0.03
    rounds: int = 5
    rounds_when_unsettled: int = 8

    @classmethod
    def from_json(cls, d: dict) -> Rule:
        return cls(
            float(d["confidence"]),
            float(d["margin"]),
            float(d["tolerance"]),
            int(d["rounds"]),
            int(d.get("rounds_when_unsettled", d["rounds"])),  # a manifest from before the field
        )

    def text(self) -> str:
        """'a 90% interval beyond a 2% margin', for verdicts."""
        return f"a {_pct(self.confidence)} interval beyond a {_pct(self.margin)} margin"


def rule() -> Rule:
    """The rule of the native tables (bandwall-manifest's "decision")."""
    from bandwall.core.manifest import manifest

    return Rule.from_json(manifest()["decision"])


def threshold(name: str) -> float:
    """A named threshold of the front end's verdicts (decision.json's "thresholds", through the
    manifest), written beside the rule so that every figure bandwall judges by is in one file."""
    from bandwall.core.manifest import manifest

    return float(manifest()["decision"]["thresholds"][name]["value"])


def coverage(n: int, k: int) -> float:
    """Coverage of [q(k), q(n+1-k)] of the median of n paired ratios: 1 - 2 P(Bin(n, 1/2) < k)."""
    if n <= 0 or k < 1 or 2 * k > n + 1:
        return 0.0
    return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2**n


@dataclass(frozen=True)
class Interval:
    rounds: int
    median: float
    lo: float
    hi: float
    coverage: float
    enough: bool

    def text(self) -> str:
        """'1.12x (1.05 to 1.19 over 5 paired rounds)'."""
        if not self.rounds:
            return "no paired rounds"
        return f"{self.median:.2f}x ({self.lo:.2f} to {self.hi:.2f} over {self.rounds} paired rounds)"

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in ("rounds", "median", "lo", "hi", "coverage")}


def ratio_interval(a: Sequence[float], b: Sequence[float], r: Rule | None = None) -> Interval:
    """The interval of the median of a[i] / b[i] over the rounds i where both rates are positive."""
    r = r or rule()
    q = sorted(x / y for x, y in zip(a, b) if x > 0 and y > 0 and math.isfinite(x) and math.isfinite(y))
    n = len(q)
    if not n:
        return Interval(0, 0.0, 0.0, 0.0, 0.0, False)
    k = 1
    while coverage(n, k + 1) >= r.confidence:
        k += 1
    cov = coverage(n, k)
    return Interval(n, statistics.median(q), q[k - 1], q[n - k], cov, cov >= r.confidence)


def verdict(i: Interval, r: Rule | None = None) -> str:
    """FASTER when the interval lies above 1 + margin, SLOWER below 1 / (1 + margin), else NOISE (as
    well when there are too few rounds)."""
    r = r or rule()
    if not i.enough:
        return NOISE
    if i.lo > 1 + r.margin:
        return FASTER
    if i.hi < 1 / (1 + r.margin):
        return SLOWER
    return NOISE


def unsettled(i: Interval, r: Rule | None = None) -> bool:
    """No verdict (too few rounds, or an interval across the margin) while the median ratio lies beyond
    the margin either way: more rounds may settle it."""
    r = r or rule()
    if not i.rounds or verdict(i, r) != NOISE:
        return False
    return i.median > 1 + r.margin or i.median < 1 / (1 + r.margin)


@dataclass(frozen=True)
class Choice:
    chosen: int
    decisive: bool
    why: str
    comparisons: list[dict]


def choose_best(
    names: Sequence[str], rates: Sequence[Sequence[float]], default: int, r: Rule | None = None
) -> Choice:
    """Starting from the default, each other candidate in the given order replaces the current one
    when it is faster beyond noise (rates[c]: candidate c's rate in every round)."""
    r = r or rule()
    if not names or len(names) != len(rates) or not 0 <= default < len(names):
        raise ValueError("the candidates and their rates do not match")
    chosen, comparisons = default, []
    for i in range(len(names)):
        if i == default:
            continue
        iv = ratio_interval(rates[i], rates[chosen], r)
        v = verdict(iv, r)
        comparisons.append(
            {"candidate": names[i], "against": names[chosen], "ratio": iv.to_json(), "verdict": v}
        )
        if v == FASTER:
            chosen = i
    if chosen != default:
        iv = ratio_interval(rates[chosen], rates[default], r)
        why = (
            f"{names[chosen]} faster than the default {names[default]} beyond noise: {iv.text()} ({r.text()})"
        )
    elif len(names) < 2:
        why = "one candidate: nothing to compare"
    elif not ratio_interval(rates[0], rates[0], r).enough:
        why = (
            f"too few paired rounds for a {_pct(r.confidence)} interval: the default {names[default]} stands"
        )
    else:
        against = "; ".join(
            f"{c['candidate']} {'slower beyond noise' if c['verdict'] == SLOWER else 'within noise'}, "
            f"{c['ratio']['median']:.2f}x"
            for c in comparisons
        )
        why = f"the default {names[default]} stands ({r.text()}): {against}"
    return Choice(chosen, chosen != default, why, comparisons)


def choose_fewest(counts: Sequence[int], rates: Sequence[Sequence[float]], r: Rule | None = None) -> Choice:
    """The fewest threads (counts ascending) that no other count beats by more than the tolerance,
    with the rule's confidence; the largest count when none is shown to be enough."""
    r = r or rule()
    if not counts or len(counts) != len(rates):
        raise ValueError("thread choice: no rates to choose from")
    last = len(counts) - 1
    chosen, comparisons = last, []
    for i in range(last):
        enough = True
        for j in range(len(counts)):
            if j == i:
                continue
            iv = ratio_interval(rates[j], rates[i], r)
            within = iv.enough and iv.hi <= 1 + r.tolerance
            comparisons.append(
                {
                    "threads": counts[i],
                    "against": counts[j],
                    "ratio": iv.to_json(),
                    "within_tolerance": within,
                }
            )
            if not within:
                enough = False
                break
        if enough:
            chosen = i
            break
    tol = _pct(r.tolerance)
    why = (
        f"{counts[chosen]} of {counts[last]} threads: no larger team was faster by more than {tol}"
        if chosen != last
        else f"every thread ({counts[last]}): no smaller team was shown to be within {tol} of the others"
    )
    return Choice(chosen, chosen != last, why, comparisons)


def _pct(v: float) -> str:
    p = 100 * v
    return f"{p:.0f}%" if p == round(p) else f"{p:.1f}%"
