"""`bandwall db`: the stored records — list, show, compare two, export all."""

from __future__ import annotations

import csv
import io
import json
import sys

import click
from rich.table import Table

from bandwall.core import choices, records
from bandwall.core.errors import UsageError
from bandwall.core.registry import commands
from bandwall.core.store import Store
from bandwall.display import console, emit, flatten, fmt_cell, table
from bandwall.output import format_option, refuse_empty

db_path_option = click.option(
    "--db",
    "db",
    type=click.Path(readable=False),
    default=None,
    callback=refuse_empty,
    help="SQLite database (default: $BANDWALL_DB or the user data directory)",
)
HEADLINE_FIELDS = 3
TABLE_FILE_WIDTH = 200  # characters per line of a table exported to a file


class RecordId(click.ParamType):
    """A record's id: a positive integer."""

    name = "ID"

    def convert(self, value, param, ctx):
        try:
            n = int(value)
        except (TypeError, ValueError):
            n = 0
        if n < 1:
            self.fail(f"{value!r} is not a record id (a positive integer)", param, ctx)
        return n


record_id = click.argument("record_id", type=RecordId(), metavar="ID")


@commands.register("db")
@click.group("db")
def db() -> None:
    """The stored records: list, show, compare, export; and the variant choices measured here."""


def _open(path) -> Store:
    """The database to read, which must exist: a mistyped --db is refused, not read as empty."""
    return Store(path, readonly=True, must_exist=True)


def headline(record: dict) -> str:
    """The first few top-level numbers of a record's result, for one line of a table."""
    nums = {k: v for k, v in records.numbers(record.get("result", {})).items() if "." not in k}
    return "  ".join(f"{k}={fmt_cell(v)}" for k, v in list(nums.items())[:HEADLINE_FIELDS])


def _summary_table(title: str, recs: list[dict]) -> Table:
    t = Table(title=title, title_justify="left")
    for name in ("id", "tool", "date (UTC)", "host", "threads", "ok", "git"):
        t.add_column(name, no_wrap=True, justify="right" if name in ("id", "threads") else "left")
    t.add_column("result")
    for r in recs:
        p = r["provenance"]
        t.add_row(
            str(r["id"]),
            r["tool"],
            p["date"][:16].replace("T", " "),
            p["host"],
            str(p["threads"]),
            "yes" if records.passed(r) else "NO",
            p["git_revision"][:8],
            headline(r),
        )
    return t


@db.command("list")
@click.option(
    "--tool", callback=refuse_empty, default=None, help="only records of this tool (stream, sweep, topo, ...)"
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="at most this many, newest first")
@db_path_option
@format_option
def list_cmd(tool, limit, db, fmt):
    """List stored records, newest first."""
    with _open(db) as store:
        recs = store.list(tool=tool, limit=limit)

    def render(con):
        con.print(_summary_table(f"{len(recs)} record(s) in {store.path}", recs))

    emit(recs, fmt, render)


@db.command("show")
@record_id
@db_path_option
@format_option
def show_cmd(record_id, db, fmt):
    """Show one record in full."""
    with _open(db) as store:
        rec = store.get(record_id)

    def render(con):
        con.print(table(f"record {rec['id']}: {rec['tool']}", ["field", "value"], list(flatten(rec).items())))

    emit(rec, fmt, render, lambda: (["field", "value"], list(flatten(rec).items())))


CHOICE_COLUMNS = ["kernel", "size_class", "isa", "state", "cpu", "measured", "why"]


@db.command("choices")
@click.option(
    "--forget",
    "forget_kernel",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[KERNEL]",
    help="forget the cached choices (of one kernel key, e.g. stream.triad.nt; all without one): the next run "
    "measures again",
)
@format_option
def choices_cmd(forget_kernel, fmt):
    """The instruction-set variants measured on this machine and cached because they were faster than
    the default beyond noise (per kernel and size class); --isa measure, or --forget, redoes them."""
    if forget_kernel is not None:
        n = choices.forget(forget_kernel or None)
        console().print(f"forgot {n} cached choice(s) in {choices.path()}")
        return
    rows = choices.rows()

    def render(con):
        con.print(
            table(
                f"{len(rows)} cached variant choice(s) in {choices.path()}",
                CHOICE_COLUMNS,
                [[r[c] for c in CHOICE_COLUMNS] for r in rows],
            )
        )

    emit(rows, fmt, render, lambda: (CHOICE_COLUMNS, [[r[c] for c in CHOICE_COLUMNS] for r in rows]))


def _kept(fmt, forget, what: str, path, rows, forget_all, columns: list[str]) -> None:
    """A kind of kept choice: forgets them all (--forget), or lists them (rows()) as a table of columns
    titled with how many `what` the file at path() holds, or in fmt."""
    if forget:
        n = forget_all()
        console().print(f"forgot {n} {what} in {path()}")
        return
    found = rows()

    def cells():
        return [[r[c] for c in columns] for r in found]

    def render(con):
        con.print(table(f"{len(found)} {what} kept in {path()}", columns, cells()))

    emit(found, fmt, render, lambda: (columns, cells()))


TIME_BLOCK_COLUMNS = ["run", "depth", "team", "settled", "races", "cpu", "measured", "why"]


@db.command("time-blocks")
@click.option(
    "--forget", is_flag=True, help="forget them all: the next run with --time-block auto races again"
)
@format_option
def time_blocks_cmd(forget, fmt):
    """ISO3DFD's time steps per sweep that the races of --time-block auto settled on this machine,
    per run (grid, threads, kernel, blocks, team), with how many races in a row settled on it: the
    next run like it takes depth 1, or sweeps settled by two races in a row, without racing;
    --time-block measure, or --forget, races again. A race that could not decide is listed unsettled:
    the next race like it decides on its rounds and its own, until enough rounds leave depth 1."""
    _kept(
        fmt,
        forget,
        "race(s)",
        choices.time_blocks_path,
        choices.time_block_rows,
        choices.forget_time_blocks,
        TIME_BLOCK_COLUMNS,
    )


ROW_KERNEL_COLUMNS = ["kernel", "isa", *choices.ROW_KNOBS, "measured", "why"]


@db.command("row-kernels")
@click.option(
    "--forget",
    is_flag=True,
    help="forget them all: later runs take the table's knobs or the compiled defaults again",
)
@format_option
def row_kernels_cmd(forget, fmt):
    """ISO3DFD's row kernel knobs that bandwall tune iso3dfd kept on this machine beyond noise, per radius
    (the table's key) and variant: the register shape, the prefetch distance and the sweeps' shape
    (empty: not kept, the table's or the compiled default runs); bandwall-iso3dfd takes them by default
    (config.row_shape.how, config.prefetch.how, config.row_shape.swept.how: tuned)."""
    _kept(
        fmt,
        forget,
        "row kernel choice(s)",
        choices.shapes_path,
        choices.shape_rows,
        choices.forget_row_kernels,
        ROW_KERNEL_COLUMNS,
    )


KNOB_RACE_COLUMNS = ["run", "chosen", "default", "settled", "candidates", "cpu", "measured", "why"]


@db.command("knob-races")
@click.option("--forget", is_flag=True, help="forget them all: the next run like each races again")
@format_option
def knob_races_cmd(forget, fmt):
    """ISO3DFD's register shapes and prefetch distances that runs on this machine raced on their own data,
    where the table of measured choices has no row for this CPU (nor bandwall tune kept one): per radius,
    variant, knob, size class and threads, the knob chosen against the compiled default. A first race's
    winner is listed unsettled: the next run like it races it against the default again, and keeps it
    only when that race agrees; a settled one runs without a race (config.row_shape.how,
    config.prefetch.how: kept). --row-shape measure, --prefetch measure or --forget race again."""
    _kept(
        fmt,
        forget,
        "knob race(s)",
        choices.knob_races_path,
        choices.knob_race_rows,
        choices.forget_knob_races,
        KNOB_RACE_COLUMNS,
    )


def compare(a: dict, b: dict) -> list[dict]:
    """The numeric result fields of a and b side by side, with b/a where a is not zero."""
    na, nb = records.numbers(a.get("result", {})), records.numbers(b.get("result", {}))
    keys = list(na) + [k for k in nb if k not in na]
    rows = []
    for k in keys:
        va, vb = na.get(k), nb.get(k)
        ratio = vb / va if va not in (None, 0) and vb is not None else None
        rows.append({"field": k, "a": va, "b": vb, "ratio": ratio})
    return rows


@db.command("compare")
@click.argument("id_a", type=RecordId(), metavar="ID")
@click.argument("id_b", type=RecordId(), metavar="ID")
@db_path_option
@format_option
def compare_cmd(id_a, id_b, db, fmt):
    """Compare the numeric results of two records (ratio = second / first)."""
    with _open(db) as store:
        a, b = store.get(id_a), store.get(id_b)
    rows = compare(a, b)
    if not rows:
        raise UsageError(f"records {id_a} ({a['tool']}) and {id_b} ({b['tool']}) have no numeric results")
    data = {
        "a": {"id": id_a, "tool": a["tool"], "date": a["provenance"]["date"]},
        "b": {"id": id_b, "tool": b["tool"], "date": b["provenance"]["date"]},
        "fields": rows,
    }

    def render(con):
        if a["tool"] != b["tool"]:
            click.echo(
                f"bandwall: note: comparing a {a['tool']!r} record with a {b['tool']!r} record", err=True
            )
        con.print(
            table(
                f"record {id_a} ({a['tool']}, {a['provenance']['date']}) vs "
                f"record {id_b} ({b['tool']}, {b['provenance']['date']})",
                ["field", f"#{id_a}", f"#{id_b}", "ratio"],
                [
                    [r["field"], r["a"], r["b"], None if r["ratio"] is None else f"{r['ratio']:.3f}x"]
                    for r in rows
                ],
            )
        )

    emit(
        data,
        fmt,
        render,
        lambda: (["field", "a", "b", "ratio"], [[r["field"], r["a"], r["b"], r["ratio"]] for r in rows]),
    )


@db.command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "csv", "table"]),
    default="json",
    show_default=True,
    help="json: one record per line (JSON lines); csv: one flattened record per row; "
    "table: one line per record as in `db list`",
)
@click.option("--tool", callback=refuse_empty, default=None, help="only records of this tool")
@click.option(
    "--out",
    "out",
    callback=refuse_empty,
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="write to this file instead of stdout",
)
@db_path_option
def export_cmd(fmt, tool, out, db):
    """Export every record, oldest first, as JSON lines, CSV or a table."""
    with _open(db) as store:
        recs = store.list(tool=tool, oldest_first=True)
    title = f"{len(recs)} record(s) in {store.path}, oldest first"
    if fmt == "table" and out is None:
        console().print(_summary_table(title, recs))
        return
    text = {"json": _jsonl, "csv": _csv, "table": lambda r: _table_text(title, r)}[fmt](recs)
    if out is None:
        sys.stdout.write(text)
        return
    try:
        with open(out, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    except OSError as e:
        raise UsageError(f"cannot write {out!r}: {e.strerror}") from e
    console(stderr=True).print(f"exported {len(recs)} record(s) to {out}")


def _table_text(title: str, recs: list[dict]) -> str:
    """The summary table as plain text for a file: no colours, wide enough not to cut the columns."""
    buf = io.StringIO()
    console(file=buf, width=TABLE_FILE_WIDTH, no_color=True, emoji=False).print(_summary_table(title, recs))
    return buf.getvalue()


def _jsonl(recs: list[dict]) -> str:
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in recs)


def _csv(recs: list[dict]) -> str:
    flat = [flatten(r) for r in recs]
    header: list[str] = []
    for f in flat:
        header += [k for k in f if k not in header]
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows([[f.get(k, "") for k in header] for f in flat])
    return buf.getvalue()
