"""The first section, "What to do on this machine", on the terminal and on the page: one scorecard
line per recommendation, the command lines to use, and what changed since an earlier report."""

from __future__ import annotations

import html

from rich.console import Console
from rich.table import Table

from bandwall.report.advice import Line, command_lines
from bandwall.report.render import html_table, note

TITLE = "What to do on this machine"
COLUMNS = ["", "topic", "measured", "threshold", "verdict", "fix", "evidence"]
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


def page(lines: list[Line], history: list[str]) -> str:
    if not lines:
        return note(NOTHING, "warn")
    rows = [[_mark(x), x.topic, x.measured, x.threshold, x.verdict, x.fix or "-", x.evidence] for x in lines]
    parts = [
        note(
            "Each line: the measured value with its spread (median, min, max over its rounds), the threshold "
            "from this machine's own measured ceilings, the verdict, the fix and the records behind it. "
            "! marks an efficiency below 0.8 or a finding that costs; a difference within the spread is "
            "no difference beyond noise."
        ),
        html_table(COLUMNS, rows, caption="Recommendations"),
    ]
    fixes = command_lines(lines)
    if fixes:
        parts.append("<h3>Command lines to use</h3><pre>" + html.escape("\n".join(fixes)) + "</pre>")
    if history:
        parts.append("<h3>Since the last report of this machine</h3>" + "".join(note(h) for h in history))
    return "\n".join(parts)
