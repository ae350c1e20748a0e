"""The first section, "What to do on this machine", on the terminal and on the page: one scorecard
line per recommendation, the command lines to use, and what changed since an earlier report.

On the page each line is a card (templates/advice.html.j2): its topic and verdict, its value drawn
as a bar (bar(): the median, the min-max spread of its rounds, and a mark at its threshold when the
line has a number for it, Line.limit), the fix as code to copy, and the evidence folded away."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from bandwall.core.spread import MIN_ROUNDS, Spread, fmt
from bandwall.report import render
from bandwall.report.advice import EFFICIENCY_FLAG, Line, command_lines

TITLE = "What to do on this machine"
NOTHING = "no recommendation: none of the sections they rest on ran (or all were unavailable)"


def _mark(line: Line) -> str:
    return "!" if line.flag else "•"


def terminal(con: Console, lines: list[Line], history: list[str]) -> None:
    con.rule(f"[bold]{TITLE}[/]", align="left")
    if not lines:
        con.print(NOTHING, highlight=False)
    for line in lines:
        colour = "bold red" if line.flag else "bold"
        con.print(f"[{colour}]{_mark(line)} {line.topic}[/]: {line.verdict}", highlight=False)
        con.print(f"    measured:  {line.measured}", highlight=False, markup=False)
        con.print(f"    threshold: {line.threshold}", highlight=False, markup=False)
        if line.fix:
            con.print(f"    fix:       {line.fix}", highlight=False, markup=False)
        con.print(f"    evidence:  {line.evidence}", highlight=False, markup=False)
    fixes = command_lines(lines)
    if fixes:
        t = Table(title="Command lines to use", title_justify="left", show_header=False)
        t.add_column("command")
        for f in fixes:
            t.add_row(f)
        con.print(t)
    for h in history:
        con.print(f"history: {h}", highlight=False, markup=False)


@dataclass(frozen=True)
class Bar:
    """Where a value's marks sit on its card's bar, in pixels from the bar's left end: the median,
    the min and max of its rounds, zero and the threshold (None when the line has no number)."""

    zero: float
    min: float
    median: float
    max: float
    limit: float | None


BAR_WIDTH, BAR_HEIGHT = 200, 24
BAR_PAD = 4  # room at each end for the marks


def bar(value: Spread | None, limit: float | None) -> Bar | None:
    """The bar of a value and its threshold, on a scale from zero (or the lowest number, when below
    zero) to the highest number; None without a value to draw."""
    if value is None:
        return None
    nums = [value.min, value.median, value.max] + ([limit] if limit is not None else [])
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in nums):
        return None
    lo, hi = min(0.0, *nums), max(nums)
    hi += 0.06 * (hi - lo) if hi > lo else 1.0  # the top mark stays clear of the bar's end

    def x(v: float) -> float:
        return round(BAR_PAD + (v - lo) / (hi - lo) * (BAR_WIDTH - 2 * BAR_PAD), 1)

    return Bar(x(0.0), x(value.min), x(value.median), x(value.max), None if limit is None else x(limit))


def _card(line: Line) -> dict:
    """A card's line, its bar and the bar's numbers as text (none without a bar)."""
    v, b = line.value, bar(line.value, line.limit)
    if v is None or b is None:
        return {"line": line, "bar": None}
    return {
        "line": line,
        "bar": b,
        "unit": f" {v.unit}" if v.unit else "",
        "median": fmt(v.median),
        "min": fmt(v.min),
        "max": fmt(v.max),
        "rounds": v.rounds,
        "few": v.rounds < MIN_ROUNDS,
        "limit": "" if line.limit is None else fmt(line.limit),
    }


def page(lines: list[Line], history: list[str]) -> str:
    if not lines:
        return render.note(NOTHING, "warn")
    return render.template("advice.html.j2").render(
        cards=[_card(x) for x in lines],
        fixes=command_lines(lines),
        history=history,
        width=BAR_WIDTH,
        height=BAR_HEIGHT,
        pad=BAR_PAD,
        flag=EFFICIENCY_FLAG,
    )
