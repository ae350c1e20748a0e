"""`bandwall report`: the whole characterisation of this machine — a terminal summary (or report.json,
or a CSV of its records, on stdout), one self-contained HTML page and report.json under --out,
every measurement stored as a record."""

from __future__ import annotations

import os
import platform
import shlex
import signal
import socket
import sys
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import click

from bandwall import __version__
from bandwall.core.errors import BandwallError, RunFailed, UsageError
from bandwall.core.registry import commands
from bandwall.output import FORMATS, db_option, no_store_option, refuse_empty


def pick_sections(available: list[tuple[str, object]], wanted: str | None) -> list[tuple[str, object]]:
    """The sections named in wanted ("a,b"), in report order; all of them when wanted is None."""
    if wanted is None:
        return available
    names = [n.strip() for n in wanted.split(",") if n.strip()]
    if not names:
        raise UsageError("--sections needs at least one section name")
    known = [n for n, _ in available]
    for n in names:
        if n not in known:
            raise UsageError(f"unknown report section {n!r} (known: {', '.join(known)})")
    return [(n, s) for n, s in available if n in names]


def allowed_threads(threads: int | None) -> int:
    cpus = len(os.sched_getaffinity(0))
    if threads is None:
        return cpus
    if threads > cpus:
        raise UsageError(f"--threads {threads} is more than the {cpus} CPU(s) this process may use")
    return threads


class Terminated(KeyboardInterrupt):
    """SIGTERM during the report: stops it like Ctrl-C (exit 143 instead of 130)."""


class ReportInterrupted(BandwallError):
    """The report stopped by a signal after writing the sections it had finished."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


@contextmanager
def sigterm_stops():
    def on_term(signum, frame):
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_sections(ctx, chosen: list[tuple[str, object]], err) -> tuple[list, int]:
    """Collects each section in turn with progress on stderr; returns the outcomes and, when a
    signal stopped the report, its exit code (130 SIGINT, 143 SIGTERM) — else 0."""
    from bandwall.report import SIGNAL_EXITS, collect, terminal

    outcomes: list = []
    try:
        with terminal.SectionProgress(len(chosen), err) as progress, sigterm_stops():
            ctx.on_step = progress.step
            for name, section in chosen:
                progress.start(getattr(section, "title", name))
                outcomes.append(collect(ctx, name, section))
                progress.done(outcomes[-1])
    except KeyboardInterrupt as e:
        return outcomes, 143 if isinstance(e, Terminated) else 130
    except BandwallError as e:
        if e.exit_code not in SIGNAL_EXITS:
            raise
        return outcomes, e.exit_code
    finally:
        ctx.on_step = None
    return outcomes, 0


def make_meta(ctx, names: list[str], store_path: str | None, argv: list[str]) -> dict:
    # argv: the effective command line (defaults filled in), shown in the page's footer
    """Who, where and when: from the provenance of the report's first record, else from Python."""
    prov = ctx.records[0].get("provenance", {}) if ctx.records else {}
    return {
        "tool": "report",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": prov.get("host") or socket.gethostname(),
        "cpu_model": prov.get("cpu_model") or platform.processor() or "unknown CPU",
        "bandwall_version": __version__,
        "git_revision": prov.get("git_revision", "unknown"),
        "compiler": prov.get("compiler", "unknown"),
        "flags": prov.get("flags", "").strip(),
        "kernel": prov.get("kernel") or f"{platform.system()} {platform.release()}",
        "quick": ctx.quick,
        "threads": ctx.threads,
        "sections_run": names,
        "store": store_path or "not stored (--no-store)",
        "command": shlex.join(argv),
    }


@commands.register("report")
@click.command("report")
@click.option(
    "--out",
    "out",
    callback=refuse_empty,
    type=click.Path(),
    default="bandwall-report",
    show_default=True,
    help="folder for index.html and report.json",
)
@click.option("--quick", is_flag=True, help="short runs: the whole report in about a minute on 2 cores")
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=None,
    help="most threads any section uses (default: every CPU this process may use)",
)
@click.option(
    "--sections",
    "wanted",
    default=None,
    metavar="A,B",
    help="only these sections, e.g. topology,stream (default: all; a wrong name lists them)",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="table: a terminal summary; json: report.json on stdout; csv: one row per record on stdout "
    "(section, tool, id, name, threads, headline figure and unit, validation)",
)
@db_option
@no_store_option
def report(out, quick, threads, wanted, fmt, db, no_store):
    """Characterise this machine: a terminal summary, an HTML page and report.json under --out."""
    from rich.console import Console

    from bandwall.core.store import Store
    from bandwall.report import FAILED, SIGNAL_EXITS, Context, load_sections, render, terminal

    chosen = pick_sections(load_sections(), wanted)
    threads = allowed_threads(threads)
    argv = (
        ["bandwall", "report", "--out", str(out)]
        + (["--quick"] if quick else [])
        + ["--threads", str(threads)]
        + (["--sections", wanted] if wanted else [])
        + (["--db", db] if db else [])
        + (["--no-store"] if no_store else [])
    )
    err = Console(stderr=True, highlight=False)
    store = None if no_store else Store(db)  # refuses a bad database before anything is measured
    try:
        out_dir = render.prepare_out(Path(out))
        ctx = Context(
            quick=quick,
            out=out_dir,
            threads=threads,
            store=store,
            console=Console(highlight=False) if fmt == "table" else err,
        )
        outcomes, stopped = run_sections(ctx, chosen, err)
    finally:
        if store is not None:
            store.close()

    meta = make_meta(ctx, [n for n, _ in chosen], str(store.path) if store else None, argv)
    stopped_section = chosen[len(outcomes)][0] if stopped and len(outcomes) < len(chosen) else None
    if stopped:
        meta["stopped"] = (
            f"stopped by {SIGNAL_EXITS[stopped]} after {len(outcomes)} of {len(chosen)} "
            f"sections: only those finished are shown"
        )
        chosen = chosen[: len(outcomes)]
    if fmt == "table":
        terminal.header(ctx.console, meta)
        for (_, section), o in zip(chosen, outcomes):
            terminal.section_terminal(ctx, section, o)
    html_path, json_path = out_dir / "index.html", out_dir / "report.json"
    render.write_text(html_path, render.page(ctx, chosen, outcomes, meta))
    doc_text = render.dumps(render.report_json(ctx, outcomes, meta))
    render.write_text(json_path, doc_text)
    if fmt == "table":
        terminal.footer(ctx.console, outcomes, ctx, meta, html_path, json_path)
    elif fmt == "csv":
        sys.stdout.write(render.report_csv(ctx, outcomes, stopped_section))
    else:
        sys.stdout.write(doc_text)
    if stopped:
        raise ReportInterrupted(f"{meta['stopped']} in {html_path} (their records are stored)", stopped)
    failed = [o.name for o in outcomes if o.status == FAILED]
    if failed:
        raise RunFailed(f"{len(failed)} section(s) failed: {', '.join(failed)} (the rest is in {html_path})")
