"""`bandwall report`: sections from a registry, each measuring, printing and rendering itself.

A section is an object with:
  title: str            heading in the terminal summary and the HTML page
  order: int            position (lower first)
  collect(ctx)          runs its measurements, keeping each record with ctx.save (or ctx.use for a
                        stored record it reads); raises bandwall.core.errors.Unavailable("reason")
                        when it cannot run here
  build(ctx, records) -> dict  its data, from its records alone (the ones collect kept, in order):
                        the same function serves a fresh report and `bandwall report --from-db`,
                        so the records are the report's only data
  terminal(ctx, data)   prints its summary on ctx.console (rich)
  html(ctx, data) -> str  an HTML fragment; plots embedded with bandwall.report.plots.img_tag(fig),
                        tables with bandwall.report.render.html_table(...)
Adding a section is adding a module under bandwall/report/sections/ that calls
sections.register("name")(TheSection()) after `from bandwall.report import sections` (the
subpackage, whose register() fills the registry below).

During collect a section may read ctx.results (the data of the sections collected before it),
call ctx.step("what now") to show its progress, and should keep ctx.quick runs short (the whole
quick report takes well under 90 s on a 2-core machine). ctx.save(record) keeps each record in
ctx.records and stores it unless the report runs with --no-store; the report's own record (tool
"report", bandwall.report.record) lists each section's record ids.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from rich.console import Console

from bandwall.core.errors import BandwallError, Unavailable
from bandwall.core.registry import Registry

registry: Registry = Registry("report section")

OK, UNAVAILABLE, FAILED = "ok", "unavailable", "failed"
SIGNAL_EXITS = {130: "SIGINT", 143: "SIGTERM"}  # exit codes of errors that mean "stop now"


@dataclass
class Context:
    quick: bool
    out: Path
    console: Console
    threads: int  # the most threads any section uses (CPUs available)
    store: Optional[Any] = None  # bandwall.core.store.Store, or None with --no-store
    results: dict = field(default_factory=dict)  # name -> data of the sections collected so far
    record_ids: list = field(default_factory=list)
    records: list = field(default_factory=list)  # every record the report made, stored or not
    on_step: Optional[Callable[[str], None]] = None

    def save(self, record: dict) -> Optional[int]:
        """Keeps a record of the report and stores it (when a store is open); returns its id, which
        the kept record carries under "id". The kept copy is the record as the store gives it back
        (keys sorted), so a section builds the same page from it as --from-db does later."""
        kept = json.loads(json.dumps(record, sort_keys=True))
        self.records.append(kept)
        if self.store is None:
            return None
        record_id = self.store.add(record)
        kept["id"] = record_id
        self.record_ids.append(record_id)
        return record_id

    def use(self, record: dict) -> None:
        """Keeps a record read from the store (with its "id") as one of the report's, unstored again."""
        self.records.append(record)
        if record.get("id") is not None:
            self.record_ids.append(record["id"])

    def step(self, text: str) -> None:
        """Shows what the running section is doing now (on the progress line, on stderr)."""
        if self.on_step is not None:
            self.on_step(text)


@dataclass
class Outcome:
    """What one section gave: its data, or why it has none."""

    name: str
    title: str
    status: str = OK  # ok, unavailable, failed
    reason: str = ""
    data: dict = field(default_factory=dict)
    seconds: float = 0.0
    record_ids: list = field(default_factory=list)
    records: list = field(default_factory=list)  # the records it made or used, stored or not


def load_sections() -> list[tuple[str, Any]]:
    """Every registered section, (name, section) in report order (lower order first)."""
    pkg = importlib.import_module("bandwall.report.sections")
    for mod in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{pkg.__name__}.{mod.name}")
    return sorted(registry.items(), key=lambda kv: getattr(kv[1], "order", 100))


def collect(ctx: Context, name: str, section: Any) -> Outcome:
    """Runs one section's collect(). Unavailable marks it unavailable; any other error marks it
    failed (the report goes on and exits 1; BANDWALL_DEBUG=1 shows the traceback of an
    unexpected error instead). An interrupt stops the report: KeyboardInterrupt, and errors whose
    exit code is a signal's (130 SIGINT, 143 SIGTERM, as bandwall.kernels.sweep.Interrupted) pass through."""
    out = Outcome(name, getattr(section, "title", name))
    first_id, first_record = len(ctx.record_ids), len(ctx.records)
    start = time.monotonic()
    try:
        section.collect(ctx)
        out.data = section.build(ctx, ctx.records[first_record:])
        ctx.results[name] = out.data
    except Unavailable as e:
        out.status, out.reason = UNAVAILABLE, str(e)
    except BandwallError as e:
        if e.exit_code in SIGNAL_EXITS:
            raise
        out.status, out.reason = FAILED, str(e)
    except Exception as e:  # a bug in one section must not lose the others
        if os.environ.get("BANDWALL_DEBUG"):
            raise
        out.status, out.reason = FAILED, f"internal error: {type(e).__name__}: {e}"
    out.seconds = time.monotonic() - start
    out.record_ids = ctx.record_ids[first_id:]
    out.records = ctx.records[first_record:]
    return out


def rebuild_outcome(ctx: Context, section: Any, entry: dict, recs: list[dict]) -> Outcome:
    """A section's outcome again from the report record's entry for it and its stored records:
    the status and reason it had, and its data built from the records as when it ran."""
    out = Outcome(entry["name"], getattr(section, "title", entry.get("title", entry["name"])))
    out.status, out.reason, out.seconds = entry["status"], entry.get("reason", ""), entry.get("seconds", 0.0)
    out.records, out.record_ids = recs, [r["id"] for r in recs if r.get("id") is not None]
    ctx.records.extend(recs)
    ctx.record_ids.extend(out.record_ids)
    if out.status == OK:
        try:
            out.data = section.build(ctx, recs)
            ctx.results[out.name] = out.data
        except Exception as e:  # a stored record of an older shape: the page says so
            if os.environ.get("BANDWALL_DEBUG"):
                raise
            out.status, out.reason = FAILED, f"cannot rebuild from its records: {type(e).__name__}: {e}"
    return out


def of_tool(recs: list[dict], tool: str) -> list[dict]:
    """The records of one tool among a section's records, in order."""
    return [r for r in recs if r.get("tool") == tool]


def last_of(recs: list[dict], tool: str) -> dict:
    """The last record of one tool among a section's records (a section's build needs it)."""
    found = of_tool(recs, tool)
    if not found:
        raise KeyError(f"no {tool} record")
    return found[-1]
