"""A figure with its spread (median, min and max over its rounds) and the one rule the report uses
to compare two figures: a difference counts only when their ranges do not overlap; otherwise it is
"no difference beyond noise", never a finding."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

NOISE = "no difference beyond noise"
MIN_ROUNDS = 3  # fewer rounds than this and the spread is not shown as one


@dataclass(frozen=True)
class Spread:
    median: float
    min: float
    max: float
    rounds: int
    unit: str = ""

    @classmethod
    def of(cls, values: Sequence[float], unit: str = "") -> Spread:
        if not values:
            raise ValueError("a spread needs at least one value")
        vals = [float(v) for v in values]
        return cls(statistics.median(vals), min(vals), max(vals), len(vals), unit)

    @classmethod
    def of_stream(cls, rec: dict) -> Spread:
        """A stream record's bandwidth over its timed repetitions (the first, a warm-up, dropped)."""
        r = rec["result"]
        kept = max(1, int(rec["config"].get("reps", 1)) - int(r.get("dropped_reps", 0)))
        return cls(r["median_GBps"], r["min_GBps"], r["max_GBps"], kept, "GB/s")

    def apart_from(self, other: Spread) -> bool:
        """True when the two ranges do not overlap: a difference beyond noise."""
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
        }

    @classmethod
    def from_json(cls, d: dict) -> Spread:
        return cls(d["median"], d["min"], d["max"], d["rounds"], d.get("unit", ""))


def compare(a: Spread, b: Spread, a_name: str, b_name: str) -> str:
    """'a: 1.25x b' when apart beyond noise, else NOISE (with both medians)."""
    if a.apart_from(b):
        return f"{a_name}: {a.ratio(b):.2f}x {b_name}"
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
