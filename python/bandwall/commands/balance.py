"""`bandwall balance`: bytes per flop of the node beside what applications need."""

from __future__ import annotations

import click

from bandwall.core import store
from bandwall.core.registry import commands
from bandwall.display import emit
from bandwall.kernels import balance
from bandwall.output import isa_option, kernel_option, measuring_options, refuse_empty, thread_options
from bandwall.views.balance import APP_COLUMNS, app_rows, render


@commands.register("balance")
@click.command("balance")
@kernel_option()
@thread_options
@click.option(
    "--size", callback=refuse_empty, default=None, help="bytes per stream array (default 4x the LLC)"
)
@click.option("--reps", type=click.IntRange(min=1), default=20, show_default=True, help="stream repetitions")
@click.option(
    "--peak-reps",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="repetitions of each FMA peak measurement (the best is kept)",
)
@click.option(
    "--peak-seconds",
    type=click.FloatRange(min=0, min_open=True, max=60),
    default=0.2,
    show_default=True,
    help="seconds of one FMA peak repetition",
)
@isa_option("the stream kernel and the FMA chains")
@measuring_options
def balance_cmd(fmt, db, no_store, **options):
    """Measure the FMA peak and the stream bandwidth on the same cores; print the byte/flop balance."""
    if not no_store:
        store.check(db)
    s, p, rec = balance.measure(**options)
    if not no_store:
        for r in (s, p):
            store.save(r, db)
        rec["id"] = store.save(rec, db)
    emit(rec, fmt, lambda con: render(con, rec), lambda: (APP_COLUMNS, app_rows(rec["result"])))
