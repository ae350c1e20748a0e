"""`bandwall sweep KERNEL`: bandwidth over core counts, the knee and the surplus cores."""

from __future__ import annotations

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bandwall.core import records, store
from bandwall.core.registry import commands
from bandwall.display import console, emit
from bandwall.kernels import stream, sweep
from bandwall.output import (
    measuring_options,
    placement_option,
    plot_option,
    refuse_empty,
    stores_option,
    thread_options,
)
from bandwall.report import sweep_plot
from bandwall.report.advice.cores import sweep_verdict
from bandwall.views.sweep import csv_rows, render


@commands.register("sweep")
@click.command("sweep")
@click.argument("kernel")
@click.option(
    "--cores",
    callback=refuse_empty,
    default=None,
    help="core counts: 1,2,4 or 1-8 or 2-16:2 (default 1..every CPU of --threads, --cpus or --bind); "
    "each point takes the first N CPUs of --cpus, or --bind's policy for N threads",
)
@thread_options
@placement_option()
@stores_option()
@click.option(
    "--size",
    callback=refuse_empty,
    default=None,
    help="bytes per array (default 4x the LLC of the CPUs used)",
)
@click.option("--reps", type=click.IntRange(min=1), default=20, show_default=True)
@click.option(
    "--knee-share",
    type=float,
    default=sweep.DEFAULT_KNEE_SHARE,
    show_default=True,
    help="the knee is the fewest cores that no other count beats by more than 1/share by the decision "
    "rule over the repetitions",
)
@plot_option("cores")
@measuring_options
def sweep_cmd(
    kernel,
    cores,
    threads,
    cpus,
    bind,
    placement,
    stores,
    size,
    reps,
    knee_share,
    plot_file,
    fmt,
    db,
    no_store,
):
    """Run KERNEL on 1..N cores; store every point as it finishes, then the sweep record."""
    sweep.check_share(knee_share)
    keep = store.Series(db, no_store)  # a bad database is refused before anything runs
    counts = sweep.parse_cores(cores, *sweep.cores_of(threads, cpus, bind))
    stream.check_kernel(kernel)
    finished = keep.records

    options = dict(cpus=cpus, bind=bind, placement=placement, stores=stores, size=size, reps=reps)
    progress = Progress(
        TextColumn("sweep {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console(stderr=True),
        transient=True,
    )
    with sweep.interruptible(lambda: len(finished), len(counts)), progress:
        task = progress.add_task(kernel, total=len(counts))
        for n in counts:
            progress.update(task, description=f"{kernel}: {n} cores")
            keep(stream.run(kernel, threads=n, **options))
            progress.advance(task)
    rec = sweep.sweep_record(
        kernel,
        finished,
        knee_share,
        config={"bind": bind, "cpus": cpus, "placement": placement},
        point_ids=keep.ids,
    )
    said = sweep_verdict(rec)  # the knee in words, rendered from the claims the record carries
    if said is not None:
        rec["result"]["verdict"], claims = said
        rec["result"]["claims"] = [c.to_json() for c in claims]
        records.validate(rec)
    if not no_store:
        rec["id"] = store.save(rec, db)
    if plot_file:
        r = rec["result"]
        sweep_plot.save(
            sweep_plot.figure(r["points"], r["knee_cores"], f"{kernel}, {bind}, {stores} stores"), plot_file
        )
    emit(rec, fmt, lambda con: render(con, rec), lambda: csv_rows(rec))
