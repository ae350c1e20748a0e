"""The report's run loop: which sections run, in what order, with progress on stderr; then the page
(terminal summary, HTML, or the records as JSON or CSV on stdout), its first section (the
recommendations) read from the records. `measure` runs a new report; `rebuild` makes the page again
from a stored report record and its records without running anything (`bandwall report --from-db`)."""

from __future__ import annotations

import os
import platform
import shlex
import signal
import socket
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

from rich.console import Console

from bandwall import __version__
from bandwall.core.errors import BandwallError, RunFailed, UsageError
from bandwall.display import console
from bandwall.report import (
    FAILED,
    SIGNAL_EXITS,
    Context,
    Outcome,
    advice,
    advice_page,
    collect,
    load_sections,
    rebuild_outcome,
    record,
    render,
    terminal,
)
from bandwall.views.host import steal_notes


@dataclass
class Request:
    """What the command line asked for."""

    out: str
    quick: bool = False
    threads: Optional[int] = None
    wanted: Optional[str] = None
    fmt: str = "table"
    db: Optional[str] = None
    no_store: bool = False


def pick_sections(available: list[tuple[str, Any]], wanted: str | None) -> list[tuple[str, Any]]:
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


def run_sections(ctx: Context, chosen: list[tuple[str, Any]], err: Console) -> tuple[list[Outcome], int]:
    """Collects each section in turn with progress on stderr; returns the outcomes and, when a
    signal stopped the report, its exit code (130 SIGINT, 143 SIGTERM) — else 0."""
    outcomes: list[Outcome] = []
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


def make_meta(ctx: Context, names: list[str], store_path: str | None, argv: list[str]) -> dict:
    """Who, where and when (from the provenance of the report's first record, else from Python),
    and argv, the effective command line (defaults filled in) shown in the page's footer."""
    prov = ctx.records[0].get("provenance", {}) if ctx.records else {}
    return {
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


def _argv(req: Request, threads: int) -> list[str]:
    return (
        ["bandwall", "report", "--out", str(req.out)]
        + (["--quick"] if req.quick else [])
        + ["--threads", str(threads)]
        + (["--sections", req.wanted] if req.wanted else [])
        + (["--db", req.db] if req.db else [])
        + (["--no-store"] if req.no_store else [])
    )


def _context(req: Request, out_dir: Path, quick: bool, threads: int, store, err: Console) -> Context:
    con = console() if req.fmt == "table" else err  # its tables never cut a figure
    return Context(quick=quick, out=out_dir, threads=threads, store=store, console=con)


def measure(req: Request) -> None:
    """Runs the chosen sections, stores their records and the report record, and shows the page."""
    from bandwall.core.store import Store

    chosen = pick_sections(load_sections(), req.wanted)
    threads = allowed_threads(req.threads)
    err = console(stderr=True)
    store = None if req.no_store else Store(req.db)  # refuses a bad database before anything is measured
    try:
        out_dir = render.prepare_out(Path(req.out))
        ctx = _context(req, out_dir, req.quick, threads, store, err)
        outcomes, stopped = run_sections(ctx, chosen, err)
        meta = make_meta(ctx, [n for n, _ in chosen], str(store.path) if store else None, _argv(req, threads))
        stopped_section = chosen[len(outcomes)][0] if stopped and len(outcomes) < len(chosen) else None
        if stopped:
            meta["stopped"] = (
                f"stopped by {SIGNAL_EXITS[stopped]} after {len(outcomes)} of {len(chosen)} "
                f"sections: only those finished are shown"
            )
        html_path = publish(
            ctx, chosen[: len(outcomes)], outcomes, meta, req.fmt, store, None, stopped_section
        )
    finally:
        if store is not None:
            store.close()
    if stopped:
        raise ReportInterrupted(f"{meta['stopped']} in {html_path} (their records are stored)", stopped)
    _refuse_failed(outcomes, html_path)


def rebuild(req: Request) -> None:
    """The page of the newest report stored in req.db, from its records alone (nothing runs)."""
    from bandwall.core.store import Store

    with Store(req.db, readonly=True, must_exist=True) as store:
        rec = record.latest(store)
        recs = record.section_records(store, rec)
        out_dir = render.prepare_out(Path(req.out))
        err = console(stderr=True)
        ctx = _context(req, out_dir, rec["config"]["quick"], rec["config"]["threads"], None, err)
        registered = dict(load_sections())
        chosen, outcomes = [], []
        for entry in rec["result"]["sections"]:
            section = registered.get(entry["name"])
            if section is None:
                err.print(
                    f"report: section {entry['name']!r} of report {rec['id']} is not known to this bandwall"
                )
                continue
            chosen.append((entry["name"], section))
            outcomes.append(rebuild_outcome(ctx, section, entry, recs[entry["name"]]))
        meta = make_meta(ctx, [n for n, _ in chosen], str(store.path), shlex.split(rec["config"]["command"]))
        meta["date"] = rec["result"].get("date", meta["date"])
        meta["rebuilt"] = f"rebuilt from report record {rec['id']} in {store.path}, nothing run"
        if rec["result"].get("stopped"):
            meta["stopped"] = rec["result"]["stopped"]
        html_path = publish(ctx, chosen, outcomes, meta, req.fmt, store, rec, None)
    _refuse_failed(outcomes, html_path)


def _refuse_failed(outcomes: list[Outcome], html_path: Path) -> None:
    """Exit 1 when a section failed (when it ran, or when it was rebuilt): the page is incomplete."""
    failed = [o.name for o in outcomes if o.status == FAILED]
    if failed:
        raise RunFailed(f"{len(failed)} section(s) failed: {', '.join(failed)} (the rest is in {html_path})")


def publish(
    ctx: Context,
    chosen: list[tuple[str, Any]],
    outcomes: list[Outcome],
    meta: dict,
    fmt: str,
    store,
    stored_report: dict | None,
    stopped_section: str | None,
) -> Path:
    """Reads the recommendations from the records, stores the report record (for a new report with a
    store), and shows the page; returns the HTML page's path."""
    if stored_report is not None:
        digest, before = stored_report["provenance"]["topology_digest"], stored_report["id"]
    else:
        digest, before = record.provenance(ctx.records)["topology_digest"], None
    sections = {o.name: o.records for o in outcomes}
    # Experiments the report does not run itself but reads when stored for this machine.
    sections[advice.STORED] = (
        record.earlier(store, digest, before, tool="interference")[:1]
        + record.earlier(store, digest, before, tool="sensitivity")[:20]
    )
    lines = advice.recommend(advice.Evidence(sections))
    hist = record.history(lines, record.earlier(store, digest, before))
    meta["steal"] = " ".join(steal_notes([r for o in outcomes for r in o.records]))
    if fmt == "table":
        terminal.header(ctx.console, meta)
        advice_page.terminal(ctx.console, lines, hist)
        for (_, section), o in zip(chosen, outcomes):
            terminal.section_terminal(ctx, section, o)
    first = {"name": "advice", "title": advice_page.TITLE, "body": advice_page.page(lines, hist)}
    page = render.page(
        ctx, chosen, outcomes, meta, first
    )  # a section that cannot print or render is failed now
    rec = stored_report
    if rec is None:
        rec = record.make(ctx.records, outcomes, meta, lines, hist)
        if store is not None:
            rec["id"] = store.add(rec)
    meta["report_id"] = rec.get("id")
    html_path = ctx.out / "index.html"
    render.write_text(html_path, page)
    if fmt == "table":
        terminal.footer(ctx.console, outcomes, ctx, meta, html_path)
    elif fmt == "csv":
        sys.stdout.write(render.report_csv(ctx, outcomes, stopped_section))
    else:
        sys.stdout.write(render.dumps([*ctx.records, rec]))
    return html_path
