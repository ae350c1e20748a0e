"""`bandwall stream`: one STREAM kernel of bandwall-stream's table, shown and stored."""

from __future__ import annotations

import click

from bandwall import store, stream
from bandwall.output import (
    bind_option,
    emit,
    kernel_option,
    measuring_options,
    pages_option,
    placement_option,
    refuse_empty,
)
from bandwall.registry import commands
from bandwall.views.stream import csv_rows, render


@commands.register("stream")
@click.command("stream")
@kernel_option()
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=None,
    help="threads (default: every CPU of --cpus or --bind)",
)
@click.option(
    "--cpus", callback=refuse_empty, default=None, help="explicit CPU list, thread i on the i-th CPU (0-3,8)"
)
@bind_option()
@click.option(
    "--stores",
    default="nt",
    show_default=True,
    type=click.Choice(stream.STORES),
    help="non-temporal or regular stores",
)
@click.option(
    "--size",
    callback=refuse_empty,
    default=None,
    help="bytes per array with units (512M, 2G); default 4x the LLC of the CPUs",
)
@click.option(
    "--reps",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="repetitions (the first is dropped)",
)
@placement_option()
@pages_option("system")
@measuring_options
def stream_cmd(fmt, db, no_store, **options):
    """Run one STREAM kernel, validate it and store its record (a failed run stores nothing)."""
    if not no_store:
        store.check(db)
    rec = stream.run(**options)
    if not no_store:
        rec["id"] = store.save(rec, db)
    emit(rec, fmt, lambda con: render(con, [rec]), lambda: csv_rows([rec]))
