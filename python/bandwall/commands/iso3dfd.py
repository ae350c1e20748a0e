"""`bandwall iso3dfd`: the stencil of Intel's NUMA 3DFD article at any order, its roofline and memory wall, and the
article's ablation."""

from __future__ import annotations

import click

from bandwall.core import manifest, store
from bandwall.core.errors import UsageError
from bandwall.core.registry import commands
from bandwall.display import emit
from bandwall.kernels import iso3dfd
from bandwall.mpi import iso3dfd_mpi, launchers
from bandwall.output import (
    auto_thread_options,
    counters_option,
    given,
    isa_option,
    measuring_options,
    pages_option,
    placement_option,
    radius_option,
    refuse_empty,
    words_option,
)
from bandwall.views import counters as counters_view
from bandwall.views import iso3dfd_mpi as mpi_view
from bandwall.views.iso3dfd import csv_rows, render


@commands.register("iso3dfd")
@click.command("iso3dfd")
@click.option(
    "--grid",
    callback=refuse_empty,
    default="272x272x272",
    show_default=True,
    help="n1xn2xn3, the halo of R (--radius) on each side included",
)
@radius_option("the run")
@click.option("--iters", default=10, show_default=True, type=click.IntRange(min=0), help="time steps")
@click.option(
    "--blocks",
    callback=refuse_empty,
    default=iso3dfd.AUTO,
    show_default=True,
    help="cache blocks n1xn2xn3; auto: chosen from this CPU's caches; search: the same, refined by a short "
    "measured search (config.blocks_choice says why; with --ranks: whole rows x 24 x 128)",
)
@auto_thread_options
@words_option("--init", words=lambda: manifest.iso3dfd_words("init"), what="who first touches the arrays")
@words_option(
    "--schedule", words=lambda: manifest.iso3dfd_words("schedule"), what="OpenMP schedule of the compute loop"
)
@placement_option()
@pages_option()
@isa_option("the row kernel")
@click.option(
    "--time-block",
    default="auto",
    show_default=True,
    help="time steps per sweep while a tile stays in cache (temporal blocking); auto: the depth an earlier "
    "run's race on this machine settled beyond noise (kept in the cache folder, like measured variants), else "
    "the depth the model proposes, kept only when a short race on this run's data shows it faster beyond "
    "noise, else 1 (a run too short to race it races a shallower one, and the model calibrated by that race "
    "says how deep; config.time_block says why); measure: race now whatever the cache says; over --ranks "
    "a number N sweeps each rank's part N steps at a time, with halos R N deep exchanged once a sweep, and auto "
    "races the model's depth against single steps on the run's data (every round timed by the slowest rank)",
)
@words_option(
    "--sweep-team",
    words=lambda: manifest.iso3dfd_words("sweep_team"),
    what="who sweeps what under temporal blocking",
)
@words_option(
    "--tile-cache",
    words=lambda: manifest.iso3dfd_words("tile_cache"),
    what="which cache the tiles of temporal blocking are sized for",
)
@click.option(
    "--row-shape",
    callback=refuse_empty,
    default=None,
    help="register shape of the row kernel: planes x vectors with -split or -ring (e.g. 8x2-ring: fewer bytes "
    "from L2), a name of the chosen instruction set's shapes (a wrong one is refused with the list), measure "
    "(race now) or compiled (the variant's compiled default); default: kept by bandwall tune, else the table of "
    "measured choices for this CPU and radius, else a race on the run's steps against the shapes the "
    "table's rows chose, kept for later runs (bandwall db knob-races; config.row_shape says which)",
)
@click.option(
    "--swept-shape",
    callback=refuse_empty,
    default=None,
    help="register shape of the row kernel in the sweeps of temporal blocking, whose tiles stay in cache: same "
    "(the step shape) or a shape's name as for --row-shape; default: kept by bandwall tune, else the table of "
    "measured choices for this CPU and radius, else the step shape (config.row_shape.swept says which)",
)
@click.option(
    "--prefetch",
    callback=refuse_empty,
    default=None,
    help="rows ahead the row kernel prefetches next, vel and prev's leading plane, and the cache they fill: "
    "none, a number of rows with :L1 or :L2 (2:L1; L2 when left out), measure (race now) or compiled (none at "
    "radius 1 and 2, one row beyond, into L2); default: kept by bandwall tune, else the table of measured "
    "choices for this CPU and radius, else a race on the run's steps against the settings the table's rows "
    "chose, kept for later runs, else compiled (config.prefetch says which)",
)
@click.option(
    "--row-pitch",
    callback=refuse_empty,
    default=None,
    help="floats from one row of the arrays to the next: packed (n1) or a number of floats from n1 up (no lead); "
    "default "
    "auto: n1 rounded up to an odd number of 64-byte lines, and every row's interior starting on a line "
    "(config.row_pitch says which, and the lead of floats before the arrays' first point)",
)
@click.option(
    "--plane-pitch",
    callback=refuse_empty,
    default=None,
    help="floats from one plane of the arrays to the next: packed (row pitch x n2) or a number of floats from "
    "that up; default auto: its rows rounded up to an odd number of 64-byte lines, so that the planes a z "
    "window reads fall in different cache sets (config.plane_pitch says which)",
)
@click.option(
    "--array-offset",
    callback=refuse_empty,
    default=None,
    help="floats each array starts after the one before it (next after prev, vel after next): a number of "
    "floats from 0 to 1008, a multiple of 16; default auto: a third of a 4 KiB page, so that the same point of "
    "the three arrays falls in different cache sets (config.array_offset says which)",
)
@click.option(
    "--verify",
    is_flag=True,
    help="compare the whole field with the plain reference (exit 1 when it differs)",
)
@counters_option
@click.option("--ablation", is_flag=True, help="the article's four runs: serial/first-touch x static/dynamic")
@click.option(
    "--roofline/--no-roofline",
    default=True,
    show_default=True,
    help="measure the best of stream copy and triad, and the FMA peak, on the same cores",
)
@click.option(
    "--ranks",
    callback=refuse_empty,
    default=None,
    help="run over MPI ranks (MPI+OpenMP, the grid cut over a 3-D grid of ranks: --dims): a count or a list "
    "such as 1,2,4 (one record each)",
)
@click.option(
    "--launcher",
    default=launchers.AUTO,
    show_default=True,
    type=click.Choice(launchers.names()),
    help="with --ranks: srun inside a Slurm allocation, else the mpirun of the MPI bandwall was built with",
)
@words_option("--scaling", words=manifest.scalings, what="with --ranks")
@click.option(
    "--dims",
    "shape",
    callback=refuse_empty,
    default=None,
    help="with --ranks: ranks along x, y and z (PxQxR, their product the rank count), or auto (the shape of "
    "least halo bytes a rank); default z-slabs (1x1xN)",
)
@words_option(
    "--rank-bind",
    words=manifest.rank_bindings,
    what="with --ranks, the CPUs of each rank",
    default=lambda: manifest.rank_binding_default(iso3dfd_mpi.TOOL),
    optional=True,
    tail="; or give --cpus or --bind instead: their CPUs (of each node) are divided among its ranks in "
    "contiguous parts in rank order, and --threads is each rank's thread count",
)
@measuring_options
def iso3dfd_cmd(
    grid,
    radius,
    iters,
    blocks,
    threads,
    cpus,
    bind,
    init,
    schedule,
    placement,
    pages,
    isa,
    time_block,
    sweep_team,
    tile_cache,
    row_shape,
    swept_shape,
    prefetch,
    row_pitch,
    plane_pitch,
    array_offset,
    verify,
    counters,
    ablation,
    roofline,
    ranks,
    launcher,
    scaling,
    rank_bind,
    shape,
    fmt,
    db,
    no_store,
):
    """Run the isotropic stencil (the ISO3DFD of Intel's NUMA 3DFD article; 16th order, or 2R with --radius)
    and store its record."""
    dims = iso3dfd.parse_dims(grid, "grid")
    blk = iso3dfd.parse_blocks(blocks)
    depth = iso3dfd.parse_time_block(time_block)
    if not no_store:
        store.check(db)
    if shape is not None and ranks is None:
        raise UsageError("--dims shapes the grid of MPI ranks: give --ranks with it")
    if ranks is not None:
        placed = cpus is not None or given("bind")
        if placed and rank_bind is not None:
            raise UsageError(
                "--rank-bind and --cpus/--bind both place the ranks: give one (--cpus and --bind are divided "
                "among each node's ranks)"
            )
        if threads == "auto":
            raise UsageError("--threads auto chooses the threads of one process; with --ranks give a number")
        if row_shape is not None:
            raise UsageError(
                "--row-shape chooses the row kernel of one process; over --ranks the default runs"
            )
        if prefetch is not None:
            raise UsageError(
                "--prefetch chooses the row kernel of one process; over --ranks the default runs"
            )
        if swept_shape is not None:
            raise UsageError(
                "--swept-shape chooses the row kernel of one process; over --ranks the default runs"
            )
        if row_pitch is not None:
            raise UsageError("--row-pitch lays out the arrays of one process; over --ranks rows are packed")
        if plane_pitch is not None:
            raise UsageError(
                "--plane-pitch lays out the arrays of one process; over --ranks planes are packed"
            )
        if array_offset is not None:
            raise UsageError(
                "--array-offset lays out the arrays of one process; over --ranks each part takes the default"
            )
        if sweep_team != "auto":
            raise UsageError(
                f"--sweep-team {sweep_team}: over MPI ranks each rank's sweeps take the model's team (its threads' "
                "slabs when they hold the depth, else the team together)"
            )
        if tile_cache != "auto":
            raise UsageError(
                f"--tile-cache {tile_cache}: over MPI ranks each rank's sweeps take the model's tiles"
            )
        counts = iso3dfd_mpi.parse_ranks(ranks)
        if shape is not None and shape != "auto" and len(counts) > 1:
            raise UsageError(f"--dims {shape} fits one rank count; give one with --ranks (or --dims auto)")
        recs = [
            iso3dfd_mpi.run(
                dims,
                iters,
                n,
                None if blk in iso3dfd.BLOCK_WORDS else blk,
                threads,
                bind if placed else rank_bind or manifest.rank_binding_default(iso3dfd_mpi.TOOL),
                scaling,
                launcher,
                pages,
                verify,
                cpus=cpus,
                dims=shape,
                model=True,
                time_block=depth,
                radius=radius,
            )
            for n in iso3dfd_mpi.checked(dims, counts, scaling, shape, depth, radius)
        ]
        if not no_store:
            for rec in recs:
                store.save(rec, db)
        emit(
            recs if len(recs) > 1 else recs[0],
            fmt,
            lambda con: mpi_view.render(con, recs),
            lambda: mpi_view.csv_rows(recs),
        )
        return
    common = dict(
        blocks=blk,
        threads=threads,
        bind=bind,
        cpus=cpus,
        placement=placement,
        verify=verify,
        pages=pages,
        isa=isa,
        time_block=depth,
        sweep_team=None if sweep_team == "auto" else sweep_team,
        tile_cache=None if tile_cache == "auto" else tile_cache,
        row_shape=row_shape,
        swept_shape=swept_shape,
        prefetch=prefetch,
        row_pitch=row_pitch,
        plane_pitch=plane_pitch,
        array_offset=array_offset,
        radius=radius,
    )
    if ablation and counters:
        raise UsageError("--counters counts one run; it does not go with --ablation")
    if ablation:
        recs = iso3dfd.ablation(dims, iters, **common)
    else:
        recs = [iso3dfd.run(dims, iters, init=init, schedule=schedule, counters=counters, db=db, **common)]
    if roofline:
        roof = iso3dfd.Roofline()
        recs = [roof.place(rec) for rec in recs]
    if not no_store:
        for rec in recs:
            store.save(rec, db)
    data = recs if ablation else recs[0]
    emit(data, fmt, lambda con: _render(con, recs), lambda: csv_rows(recs))


def _render(con, recs: list[dict]) -> None:
    render(con, recs)
    for rec in recs:
        if "counters" in rec:
            counters_view.render(con, rec)
