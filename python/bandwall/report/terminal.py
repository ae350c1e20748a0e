"""The report on a terminal: progress on stderr while sections run, then the summary on stdout."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from bandwall.report import FAILED, OK, UNAVAILABLE, Context, Outcome

STYLE = {OK: "green", UNAVAILABLE: "yellow", FAILED: "bold red"}


class SectionProgress:
    """A progress bar over the sections with what the running one does now; plain lines on stderr
    when it is not a terminal (logs, CI)."""

    def __init__(self, total: int, err: Console):
        self.err, self.total, self.index, self.title = err, total, 0, ""
        self.live = err.is_terminal
        self.bar = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            transient=True,
        )
        self.task = None

    def __enter__(self) -> SectionProgress:
        if self.live:
            self.bar.start()
            self.task = self.bar.add_task("report", total=self.total)
        return self

    def __exit__(self, *exc) -> None:
        if self.live:
            self.bar.stop()

    def start(self, title: str) -> None:
        self.index += 1
        self.title = title
        self.step("")

    def step(self, text: str) -> None:
        line = f"[{self.index}/{self.total}] {self.title}" + (f": {text}" if text else "")
        if self.live:
            self.bar.update(self.task, description=line)
        elif text:
            self.err.print(f"report: {line}", highlight=False, markup=False, soft_wrap=True)

    def done(self, o: Outcome) -> None:
        what = f"{o.status}" + (f": {o.reason}" if o.reason else "")
        if self.live:
            self.bar.advance(self.task)
            self.bar.console.print(
                f"[{STYLE[o.status]}]{_mark(o.status)}[/] {o.title} "
                f"[dim]({o.seconds:.1f} s)[/]" + ("" if o.status == OK else f"  {o.reason}"),
                highlight=False,
            )
        else:
            self.err.print(
                f"report: [{self.index}/{self.total}] {self.title}: {what} ({o.seconds:.1f} s)",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )


def _mark(status: str) -> str:
    return {OK: "✓", UNAVAILABLE: "–", FAILED: "✗"}[status]


def section_terminal(ctx: Context, section: Any, o: Outcome) -> None:
    """Prints one section under a rule: its own summary, or why it has none."""
    ctx.console.rule(f"[bold]{o.title}[/]", align="left")
    if o.status == OK:
        try:
            section.terminal(ctx, o.data)
            return
        except Exception as e:  # noqa: BLE001 — shown; the report exits 1
            if os.environ.get("BANDWALL_DEBUG"):
                raise
            o.status, o.reason = FAILED, f"cannot print: {type(e).__name__}: {e}"
    ctx.console.print(f"[{STYLE[o.status]}]{o.status}:[/] {o.reason}", highlight=False)


def header(con: Console, meta: dict) -> None:
    con.print(
        Panel.fit(
            f"[bold]bandwall report[/]  {meta['host']}\n{meta['cpu_model']}\n"
            f"{meta['threads']} thread(s), {'quick' if meta['quick'] else 'thorough'} run, "
            f"{meta['date']}",
            border_style="blue",
        ),
        highlight=False,
    )
    if meta.get("rebuilt"):
        con.print(meta["rebuilt"], highlight=False, markup=False)
    if meta.get("stopped"):
        con.print(f"[bold red]{meta['stopped']}[/]", highlight=False)
    if meta.get("steal"):
        con.print(f"[yellow]{meta['steal']}[/]", highlight=False)


def footer(con: Console, outcomes: list[Outcome], ctx: Context, meta: dict, html: Path) -> None:
    t = Table(title="Sections", title_justify="left")
    for c in ("section", "status", "time", "records"):
        t.add_column(c, justify="right" if c == "time" else "left")
    for o in outcomes:
        t.add_row(
            o.title,
            f"[{STYLE[o.status]}]{o.status}[/]" + (f": {o.reason}" if o.reason else ""),
            f"{o.seconds:.1f} s",
            ", ".join(map(str, o.record_ids)) or "-",
        )
    con.print()
    con.print(t)
    con.print(f"HTML page:   {html}", highlight=False)
    if meta.get("report_id") is not None:
        con.print(
            f"report:      record {meta['report_id']} (bandwall report --from-db --db {meta['store']} "
            "rebuilds this page)",
            highlight=False,
        )
    if ctx.record_ids:
        con.print(
            f"records:     {len(ctx.record_ids)} stored in {meta['store']} "
            f"(bandwall db list --db {meta['store']})",
            highlight=False,
        )
    else:
        con.print(f"records:     {meta['store']}", highlight=False)
