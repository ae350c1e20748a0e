"""The table of measured choices (native/common/isa_choices.json) as the benches that fill it read and
write it: one row per micro-architecture (named as native/common/machine.cpp names it), each with the
CPU it was measured on, the date and command, and its entries ("kernels": variants and the row
kernel's knobs; "models": the figures a model plans with).

A script imports it as `import choice_table` (bench/ is first on its path, as for `common`).
"""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

import common

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "native" / "common" / "isa_choices.json"


def load() -> dict:
    return json.loads(TABLE.read_text())


def save(table: dict) -> None:
    TABLE.write_text(json.dumps(table, indent=1) + "\n")


def row_named(table: dict, name: str | None) -> dict | None:
    """The row of micro-architecture `name`, or None."""
    return next((r for r in table["rows"] if r["microarch"] == name), None)


def without_row(table: dict, name: str | None) -> dict:
    """The table with the row of micro-architecture `name` left out: what a CPU the table does not
    know meets (the other CPUs' rows, none of its own)."""
    return {**table, "rows": [r for r in table["rows"] if r["microarch"] != name]}


def microarch_name(bindir: Path) -> str | None:
    """This CPU's micro-architecture as native/common/machine.cpp names it (bandwall-peak's record)."""
    rec = common.record(
        [common.tool(bindir, "bandwall-peak"), "--threads", 1, "--reps", 1, "--seconds", "0.001"]
    )
    return rec["config"]["microarch"].get("name")


def cpu_line() -> str:
    """The CPU a row was measured on: 'x86_64: <model name>, <vendor> family F model M, N CPUs'."""
    cpu = common.cpu_fields()
    return (
        f"{platform.machine()}: {cpu.get('model name', '?')}, {cpu.get('vendor_id', '?')} family "
        f"{cpu.get('cpu family', '?')} model {cpu.get('model', '?')}, {len(os.sched_getaffinity(0))} CPUs"
    )


def placed(
    table: dict, row_name: str | None, entries: dict, command: str, today: str, field: str = "kernels"
) -> dict:
    """A copy of `table` with `entries` in the row of micro-architecture `row_name` (its "kernels",
    or with field="models" the figures a model plans with); a row that is not there yet is added with
    this CPU, the date and the command. No row name (a CPU no machine model names): the table as it is."""
    out = json.loads(json.dumps(table))
    if not row_name:
        return out
    row = row_named(out, row_name)
    if row is None:
        row = {"microarch": row_name, "cpu": cpu_line(), "measured": today, "command": command, "kernels": {}}
        out["rows"].append(row)
    row.setdefault(field, {}).update(entries)
    return out


def models_only(table: dict, row_name: str | None) -> dict:
    """The table with no choices in it: only this CPU's row, holding only the figures its models plan
    with ("models": the last-level cache over memory, the share of it the team gets). A knob raced
    against the compiled defaults is then raced on the caches this CPU measured, as later runs here
    will see them; without the row, on the defaults' assumptions (a 2x cache, hwloc's size)."""
    row = row_named(table, row_name) if row_name else None
    models = row.get("models") if row else None
    out = {
        "about": "no choices: every run takes the compiled defaults, on this CPU's measured models",
        "rows": [],
    }
    if models:
        out["rows"].append({"microarch": row_name, "models": json.loads(json.dumps(models)), "kernels": {}})
    return out


def standing(folder: Path, row_name: str | None, entries: dict, command: str, today: str) -> Path:
    """The table as a bench run stands at a point: the checkout's with the entries it has raced so far
    in this CPU's row, written to folder/standing-table.json for bandwall's programs to read
    (BANDWALL_ISA_CHOICES), so that a knob raced after others meets their winners without a rebuild
    (the table is compiled in). The checkout's table is not touched."""
    path = Path(folder) / "standing-table.json"
    path.write_text(json.dumps(placed(load(), row_name, entries, command, today)))
    return path


def write(a, entries: dict, command: str, today: str, field: str = "kernels") -> int:
    """Prints the entries, or with --write (a.write) puts them into this CPU's row of the table: into
    its "kernels" (variants, shapes, prefetch distances, ...), or with field="models" the figures a
    model plans with. A CPU no machine model names gets nothing written."""
    row_name = microarch_name(a.bindir)
    if not a.write or not row_name:
        print(json.dumps(entries, indent=1))
        if a.write:
            print("bench: no machine model knows this CPU: nothing written", file=sys.stderr)
        return 0
    save(placed(load(), row_name, entries, command, today, field))
    print(f"wrote {', '.join(entries)} into the {row_name} row of {TABLE}", file=sys.stderr)
    return 0
