"""Claims: the decision rule's verdict on one comparison, kept as data so that the words said about
it are rendered from it (say()) and cannot say "rises" when the rule found no difference beyond noise.

A claim compares a figure measured in paired rounds at two settings (claim()), or reads an interval
of paired ratios a record already holds (claim_of_ratio()), with the medians and the interval the
rule used. The report's cards, the commands' verdict lines (sweep, tune, pin, interference, survey,
sensitivity) and the property tests all use these."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from bandwall.core import decide
from bandwall.core.spread import NOISE, Spread, fmt

RISES = "rises"
FALLS = "falls"
DIRECTIONS = (RISES, FALLS, NOISE)


@dataclass(frozen=True)
class End:
    """One side of a claim: what was measured (its label) and the median the rule compared."""

    label: str
    value: float


@dataclass(frozen=True)
class Claim:
    """The decision rule on one comparison: figure goes from `start` to `end` ("rises", "falls" or
    "no difference beyond noise"), with the interval of the median ratio end / start over the paired
    rounds (None without paired rounds), the median ratio, the rounds and whether they were enough
    for the rule's confidence."""

    figure: str
    unit: str
    start: End
    end: End
    direction: str
    interval: tuple[float, float] | None = None
    ratio: float | None = None
    rounds: int = 0
    enough: bool = False
    # False: end's rounds against a fixed figure (start's value each round), not rounds paired in time
    paired: bool = True

    def to_json(self) -> dict:
        return {
            "figure": self.figure,
            "unit": self.unit,
            "from": {"label": self.start.label, "value": self.start.value},
            "to": {"label": self.end.label, "value": self.end.value},
            "direction": self.direction,
            "interval": list(self.interval) if self.interval is not None else None,
            "ratio": self.ratio,
            "rounds": self.rounds,
            "enough": self.enough,
            "paired": self.paired,
        }

    @classmethod
    def from_json(cls, d: dict) -> Claim:
        iv = d.get("interval")
        return cls(
            d["figure"],
            d.get("unit", ""),
            End(d["from"]["label"], d["from"]["value"]),
            End(d["to"]["label"], d["to"]["value"]),
            d["direction"],
            (iv[0], iv[1]) if iv else None,
            d.get("ratio"),
            int(d.get("rounds", 0)),
            bool(d.get("enough", False)),
            bool(d.get("paired", True)),
        )


def _median(s: Spread) -> float:
    """The median the rule compares: of the rounds themselves when the figure has them."""
    return statistics.median(s.values) if s.values else s.median


def claim(
    figure: str, start: Spread, end: Spread, start_label: str, end_label: str, paired: bool = True
) -> Claim:
    """The decision rule on end against start (their rounds paired in the order they ran): "rises"
    or "falls" only when the rule's interval lies beyond its margin and the two medians go the same
    way, else "no difference beyond noise". paired False: start is a fixed figure repeated once per
    round of end (such as the other nodes' median), and the words say so."""
    if start.values and end.values:
        iv = end.interval(start)
        v = decide.verdict(iv)
        direction = RISES if v == decide.FASTER else FALLS if v == decide.SLOWER else NOISE
        # the medians shown must go the way the claim says: with an odd round out, the median ratio
        # and the two medians can disagree, and a claim both ways is no finding
        a, b = _median(start), _median(end)
        if (direction == RISES and b <= a) or (direction == FALLS and b >= a):
            direction = NOISE
        interval, ratio, rounds, enough = (iv.lo, iv.hi), iv.median, iv.rounds, iv.enough
        if not rounds:
            interval, ratio = None, None
    else:
        direction, interval, ratio, rounds, enough = NOISE, None, None, 0, False
    return Claim(
        figure,
        end.unit or start.unit,
        End(start_label, _median(start)),
        End(end_label, _median(end)),
        direction,
        interval,
        ratio,
        rounds,
        enough,
        paired,
    )


def claim_of_ratio(figure: str, start_label: str, end_label: str, ratio: dict, unit: str = "x") -> Claim:
    """A claim from an interval of paired ratios end / start that a record already holds (median, lo,
    hi, rounds, enough: a sensitivity dose's slowdown, time beside over time alone), decided by the
    same rule: the figure in units of start (start 1, end the median ratio)."""
    rounds, m = int(ratio.get("rounds", 0)), float(ratio["median"])
    enough = bool(ratio.get("enough", False))
    iv = decide.Interval(rounds, m, float(ratio["lo"]), float(ratio["hi"]), 0.0, enough)
    v = decide.verdict(iv)
    direction = RISES if v == decide.FASTER else FALLS if v == decide.SLOWER else NOISE
    return Claim(
        figure,
        unit,
        End(start_label, 1.0),
        End(end_label, m),
        direction,
        (iv.lo, iv.hi) if rounds else None,
        m if rounds else None,
        rounds,
        enough,
    )


def better(c: Claim, higher_is_better: bool = True) -> bool | None:
    """True when the claim's end is better than its start beyond noise, False when worse, None
    within noise."""
    if c.direction == NOISE:
        return None
    return (c.direction == RISES) == higher_is_better


def say(c: Claim) -> str:
    """The words of a claim: 'triad bandwidth rises from 1 core to 2 cores (20.0 to 38.0 GB/s,
    1.90x, 1.85 to 1.95 over 5 paired rounds)', or 'no difference beyond noise between 1 core and 2
    cores (...)' with why (too few paired rounds, or an interval across the margin)."""
    unit = f" {c.unit}" if c.unit else ""
    if c.interval is None:
        how = "no paired rounds to compare"
    else:
        over = f"{c.rounds} paired rounds" if c.paired else f"{c.rounds} rounds against a fixed figure"
        how = f"{c.ratio:.2f}x, {c.interval[0]:.2f} to {c.interval[1]:.2f} over {over}"
        r = decide.rule()
        if not c.enough:
            how += f", too few for a {r.confidence:.0%} interval"
        elif c.direction == NOISE and (c.interval[0] > 1 + r.margin or c.interval[1] < 1 / (1 + r.margin)):
            how += ", the medians going the other way"
    if c.direction == NOISE:
        return (
            f"{NOISE} in {c.figure} between {c.start.label} and {c.end.label} "
            f"({fmt(c.start.value)} against {fmt(c.end.value)}{unit}; {how})"
        )
    return (
        f"{c.figure} {c.direction} from {c.start.label} to {c.end.label} "
        f"({fmt(c.start.value)} to {fmt(c.end.value)}{unit}; {how})"
    )
