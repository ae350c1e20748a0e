"""`bandwall report`: sections from a registry, each measuring, printing and rendering itself.

A section is an object with:
  title: str            heading in the terminal summary and the HTML page
  order: int            position (lower first)
  collect(ctx) -> dict  runs its measurements (storing records through ctx.save), returns its data;
                        raises bandwall.errors.Unavailable("reason") when it cannot run here
  terminal(ctx, data)   prints its summary on ctx.console (rich)
  html(ctx, data) -> str  an HTML fragment; plots embedded with bandwall.report.plots.img_tag(fig)
Adding a section is adding a module under bandwall/report/sections/ that calls
sections.register("name")(TheSection()).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from rich.console import Console

from bandwall.registry import Registry

sections: Registry = Registry("report section")


@dataclass
class Context:
    quick: bool
    out: Path
    console: Console
    threads: int                      # the most threads any section uses (CPUs available)
    store: Optional[Any] = None       # bandwall.store.Store, or None with --no-store
    results: dict = field(default_factory=dict)  # name -> data of the sections collected so far
    record_ids: list = field(default_factory=list)

    def save(self, record: dict) -> None:
        """Stores a record of the report (when a store is open)."""
        if self.store is not None:
            self.record_ids.append(self.store.add(record))


def load_sections() -> list[tuple[str, Any]]:
    from bandwall.report import sections as pkg
    for mod in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{pkg.__name__}.{mod.name}")
    return sorted(sections.items(), key=lambda kv: getattr(kv[1], "order", 100))
