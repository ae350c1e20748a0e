"""A figure with its spread (median, min and max over its rounds, and the values of the rounds in
the order they ran) and the one rule the report uses to compare two figures: the project's decision
rule (bandwall.core.decide): the rounds of the two are paired in the order they ran, and a
difference counts only when the interval of their median ratio lies beyond the rule's margin;
otherwise it is "no difference beyond noise", never a finding. The report's sections run the
configurations they compare in interleaved rounds, so their k-th values come from one round."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from bandwall.core import decide

NOISE = decide.NOISE
MIN_ROUNDS = 3  # fewer rounds than this and the spread is not shown as one


@dataclass(frozen=True)
class Spread:
    median: float
    min: float
    max: float
    rounds: int
    unit: str = ""
    values: tuple[float, ...] = field(default=(), compare=False)

    @classmethod
    def of(cls, values: Sequence[float], unit: str = "") -> Spread:
        """values in the order their rounds ran."""
        if not values:
            raise ValueError("a spread needs at least one value")
        vals = tuple(float(v) for v in values)
        return cls(statistics.median(vals), min(vals), max(vals), len(vals), unit, vals)

    @classmethod
    def of_stream(cls, rec: dict) -> Spread:
        """A stream record's bandwidth over its timed repetitions (the first, a warm-up, dropped)."""
        r = rec["result"]
        kept = max(1, int(rec["config"].get("reps", 1)) - int(r.get("dropped_reps", 0)))
        moved = r.get("traffic", {}).get("without_write_allocate", {}).get("bytes_per_rep")
        times = r.get("times_s", [])[int(r.get("dropped_reps", 0)) :]
        values = tuple(moved / t / 1e9 for t in times if t > 0) if moved else ()
        return cls(r["median_GBps"], r["min_GBps"], r["max_GBps"], kept, "GB/s", values)

    def interval(self, other: Spread) -> decide.Interval:
        """The interval of the median ratio self / other over their paired rounds."""
        return decide.ratio_interval(self.values, other.values)

    def verdict(self, other: Spread) -> str:
        """decide.FASTER, decide.SLOWER or NOISE: self against other under the decision rule (NOISE
        as well for figures without their rounds, such as those of older stored reports)."""
        if not self.values or not other.values:
            return NOISE
        return decide.verdict(self.interval(other))

    def apart_from(self, other: Spread) -> bool:
        """True for a difference beyond noise, either way."""
        return self.verdict(other) != NOISE

    def beats(self, other: Spread) -> bool:
        """True when self is higher than other beyond noise."""
        return self.verdict(other) == decide.FASTER

    def below(self, limit: float) -> bool:
        """True when the figure lies below limit beyond noise: its rounds against the limit under the
        decision rule (a threshold crossed by the median alone is not a finding)."""
        if not self.values or limit <= 0:
            return False
        i = decide.ratio_interval(self.values, [limit] * len(self.values))
        return decide.verdict(i) == decide.SLOWER

    def ranges_apart(self, other: Spread) -> bool:
        """True when the two ranges do not overlap. For figures that were not measured in paired
        rounds, such as the same topic in two reports taken days apart: shown as a change, never
        used to choose anything."""
        return self.min > other.max or other.min > self.max

    def ratio(self, other: Spread) -> float:
        return self.median / other.median if other.median else float("inf")

    def text(self) -> str:
        """'29.7 GB/s (min 26.5, max 30.1, 4 rounds)', or a warning when there are too few rounds."""
        unit = f" {self.unit}" if self.unit else ""
        few = " (too few rounds to judge)" if self.rounds < MIN_ROUNDS else ""
        return (
            f"{fmt(self.median)}{unit} (min {fmt(self.min)}, max {fmt(self.max)}, "
            f"{self.rounds} round{'s' if self.rounds != 1 else ''}){few}"
        )

    def to_json(self) -> dict:
        return {
            "median": self.median,
            "min": self.min,
            "max": self.max,
            "rounds": self.rounds,
            "unit": self.unit,
            "values": list(self.values),
        }

    @classmethod
    def from_json(cls, d: dict) -> Spread:
        return cls(
            d["median"], d["min"], d["max"], d["rounds"], d.get("unit", ""), tuple(d.get("values", ()))
        )


def compare(a: Spread, b: Spread, a_name: str, b_name: str) -> str:
    """'a: 1.25x b (1.10 to 1.31 over 5 paired rounds)' for a difference beyond noise, else NOISE
    (with both medians)."""
    if a.apart_from(b):
        i = a.interval(b)
        return f"{a_name}: {i.median:.2f}x {b_name} ({i.lo:.2f} to {i.hi:.2f} over {i.rounds} paired rounds)"
    return (
        f"{NOISE} between {a_name} and {b_name} ({fmt(a.median)} against {fmt(b.median)} {a.unit})".rstrip()
    )


def fmt(v: float) -> str:
    """Three significant figures, without an exponent for everyday magnitudes."""
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"
