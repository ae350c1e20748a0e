"""`bandwall mpi-stream KERNEL`: flat-MPI bandwidth per node over ranks per node, its knee and surplus cores."""

from __future__ import annotations

import click

from bandwall.core import manifest, store
from bandwall.core.registry import commands
from bandwall.display import emit
from bandwall.kernels import sweep
from bandwall.mpi import launchers, mpi_stream
from bandwall.output import (
    db_option,
    format_option,
    no_store_option,
    pages_option,
    plot_option,
    refuse_empty,
    stores_option,
    words_option,
)
from bandwall.report import sweep_plot
from bandwall.views import mpi_stream as view


@commands.register("mpi-stream")
@click.command("mpi-stream")
@click.argument("kernel", default="triad")
@click.option(
    "--ranks-per-node",
    "counts",
    callback=refuse_empty,
    default=None,
    help="ranks per node: 1,2,4 or 1-8 or 2-16:2 (default 1..every CPU)",
)
@click.option(
    "--launcher",
    default=launchers.AUTO,
    show_default=True,
    type=click.Choice(launchers.names()),
    help="srun inside a Slurm allocation, else the mpirun of the MPI bandwall was built with",
)
@words_option(
    "--bind",
    words=manifest.rank_bindings,
    what="the CPUs of each rank",
    default=lambda: manifest.rank_binding_default(mpi_stream.TOOL),
)
@stores_option()
@click.option(
    "--size", callback=refuse_empty, default=None, help="bytes per array per rank (default: 4x LLC / ranks)"
)
@click.option("--reps", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--knee-share", type=float, default=sweep.DEFAULT_KNEE_SHARE, show_default=True)
@plot_option("ranks")
@pages_option()
@format_option
@db_option
@no_store_option
def mpi_stream_cmd(
    kernel, counts, launcher, bind, stores, size, reps, knee_share, plot_file, pages, fmt, db, no_store
):
    """Run KERNEL as flat MPI (one rank per core, all at once) at each ranks-per-node count; store
    every point and the sweep record with its knee."""
    sweep.check_share(knee_share)
    ranks = sweep.parse_cores(counts)
    keep = store.Series(db, no_store)
    recs = mpi_stream.run_points(
        kernel, ranks, keep, launcher=launcher, stores=stores, size=size, reps=reps, bind=bind, pages=pages
    )
    rec = mpi_stream.sweep_record(kernel, recs, knee_share, keep.ids)
    if not no_store:
        rec["id"] = store.save(rec, db)
    if plot_file:
        r, c = rec["result"], rec["config"]
        title = f"flat MPI {c['kernel']}, {c['stores']} stores, ranks bound by {c['bind']}"
        sweep_plot.save(
            sweep_plot.figure(r["points"], r["knee_ranks"], title, key="ranks", xlabel="ranks per node"),
            plot_file,
        )
    emit(rec, fmt, lambda con: view.render(con, rec), lambda: view.csv_rows(rec))
