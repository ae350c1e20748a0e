"""`bandwall mpi-pingpong`: latency and bandwidth between two MPI ranks (the one-rail model)."""

from __future__ import annotations

import click

from bandwall.core import store
from bandwall.core.errors import UsageError
from bandwall.core.registry import commands
from bandwall.display import emit
from bandwall.mpi import flavours as mpi
from bandwall.mpi import mpi_pingpong
from bandwall.output import db_option, format_option, no_store_option, refuse_empty
from bandwall.views import mpi as mpi_views


def _max_size(ctx, param, value):
    """--max-size refused before anything is launched: empty, not a size, or outside 1 byte..1G."""
    value = refuse_empty(ctx, param, value)
    try:
        mpi_pingpong.check_max_size(value)
    except UsageError as e:
        raise click.BadParameter(str(e).removeprefix("--max-size "), ctx, param) from e
    return value


@commands.register("mpi-pingpong")
@click.command("mpi-pingpong")
@click.option(
    "--mpi",
    "impl",
    type=click.Choice(mpi.flavours.names()),
    default=None,
    help="MPI implementation (default: the first built)",
)
@click.option(
    "--max-size",
    callback=_max_size,
    default="4M",
    show_default=True,
    help="largest message, 1 byte to 1G (sizes go 1, 4, 16, ... bytes up to it)",
)
@click.option(
    "--reps",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="repetitions per size (best kept)",
)
@click.option(
    "--max-iterations",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="round trips per repetition at most",
)
@format_option
@db_option
@no_store_option
def mpi_pingpong_cmd(impl, max_size, reps, max_iterations, fmt, db, no_store):
    """Bounce messages of 1 byte to --max-size between two ranks; one-way latency and bandwidth."""
    if not no_store:
        store.check(db)
    rec = mpi_pingpong.run(impl, max_size=max_size, reps=reps, max_iterations=max_iterations)
    if not no_store:
        rec["id"] = store.save(rec, db)
    emit(
        rec,
        fmt,
        lambda con: mpi_views.pingpong_record(con, rec),
        lambda: (mpi_pingpong.COLUMNS, mpi_pingpong.rows(rec)),
    )
