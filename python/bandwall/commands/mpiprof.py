"""`bandwall mpiprof -- LAUNCHER ... PROGRAM`: profile an unmodified MPI program, store and show it."""

from __future__ import annotations

import click

from bandwall.core import store
from bandwall.core.registry import commands
from bandwall.display import emit
from bandwall.mpi import mpiprof
from bandwall.output import db_option, format_option, no_store_option, refuse_options_as_command
from bandwall.views import mpi as mpi_views


@commands.register("mpiprof")
@click.command("mpiprof", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=None,
    help="folder of the profiles (default: $BANDWALL_MPIPROF_DIR or the user data folder)",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="seconds before the run is stopped",
)
@format_option
@db_option
@no_store_option
@click.argument("command", nargs=-1, type=click.UNPROCESSED, callback=refuse_options_as_command)
def mpiprof_cmd(out, timeout, fmt, db, no_store, command):
    """Run COMMAND (mpirun/mpiexec/srun ... PROGRAM, or the program alone) with the MPI profiler in
    every rank; store the record and print the calls, partners and the text histograms' file."""
    if not no_store:
        store.check(db)
    rec = mpiprof.run(list(command), out=out, timeout=timeout)
    if not no_store:
        rec["id"] = store.save(rec, db)
    emit(rec, fmt, lambda con: mpi_views.profile(con, [rec]), lambda: mpiprof.csv_rows([rec]))
