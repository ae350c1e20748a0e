"""`bandwall report`: the whole characterisation of this machine — a terminal summary (or the
report's records as JSON or CSV on stdout) and one self-contained HTML page under --out, every
measurement stored as a record; --from-db rebuilds the page from a stored report's records."""

from __future__ import annotations

import click

from bandwall.core.errors import UsageError
from bandwall.core.registry import commands
from bandwall.display import FORMATS
from bandwall.output import db_option, no_store_option, refuse_empty


@commands.register("report")
@click.command("report")
@click.option(
    "--out",
    "out",
    callback=refuse_empty,
    type=click.Path(),
    default="bandwall-report",
    show_default=True,
    help="folder for index.html",
)
@click.option(
    "--quick",
    is_flag=True,
    help="short runs: the whole report in a few minutes on 2 cores (STREAM's arrays are 4x the last-level "
    "cache, so a large one takes longer: 3 minutes with a reported 480 MiB)",
)
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
    "--from-db",
    "from_db",
    is_flag=True,
    help="run nothing: rebuild the page of the newest report stored in --db from its records",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="table: a terminal summary; json: the report's records on stdout (the report record last); "
    "csv: one row per record on stdout (section, tool, id, name, threads, headline figure and unit, "
    "validation)",
)
@db_option
@no_store_option
def report(out, quick, threads, wanted, from_db, fmt, db, no_store):
    """Characterise this machine: what to do on it, a terminal summary and an HTML page under --out."""
    from bandwall.report import run

    req = run.Request(out=out, quick=quick, threads=threads, wanted=wanted, fmt=fmt, db=db, no_store=no_store)
    if not from_db:
        run.measure(req)
        return
    given = [
        name
        for name, on in (
            ("--quick", quick),
            ("--threads", threads),
            ("--sections", wanted),
            ("--no-store", no_store),
        )
        if on
    ]
    if given:
        raise UsageError(
            f"--from-db runs nothing and reads the stored report as it was: drop {', '.join(given)}"
        )
    run.rebuild(req)
