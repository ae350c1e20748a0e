"""`bandwall report`: sections from a registry, each measuring, printing and rendering itself.

A section is an object with:
  title: str            heading in the terminal summary and the HTML page
  order: int            position (lower first)
  collect(ctx) -> dict  runs its measurements (storing records through ctx.save), returns its data
                        (JSON-serialisable: it goes into report.json); raises
                        bandwall.core.errors.Unavailable("reason") when it cannot run here
  terminal(ctx, data)   prints its summary on ctx.console (rich)
  html(ctx, data) -> str  an HTML fragment; plots embedded with bandwall.report.plots.img_tag(fig),
                        tables with bandwall.report.render.html_table(...)
Adding a section is adding a module under bandwall/report/sections/ that calls
sections.register("name")(TheSection()) after `from bandwall.report import sections` (the
subpackage, whose register() fills the registry below).

During collect a section may read ctx.results (the data of the sections collected before it),
call ctx.step("what now") to show its progress, and should keep ctx.quick runs short (the whole
quick report takes about a minute on a 2-core machine). ctx.save(record) keeps each record in
ctx.records and stores it unless the report runs with --no-store; report.json lists the ids.
"""

from __future__ import annotations

import importlib
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
        """Keeps a record of the report and stores it (when a store is open); returns its id."""
        self.records.append(record)
        if self.store is None:
            return None
        record_id = self.store.add(record)
        self.record_ids.append(record_id)
        return record_id

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
    records: list = field(default_factory=list)  # the records it made, stored or not (not in report.json)

    def to_json(self) -> dict:
        out = {
            "title": self.title,
            "status": self.status,
            "seconds": round(self.seconds, 3),
            "record_ids": self.record_ids,
            "data": self.data,
        }
        if self.reason:
            out["reason"] = self.reason
        return out


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
        data = section.collect(ctx)
        out.data = data if isinstance(data, dict) else {"value": data}
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
