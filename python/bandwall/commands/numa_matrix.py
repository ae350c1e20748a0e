"""`bandwall numa-matrix`: bandwidth with threads on node i and memory on node j (bandwall.numa.numa_matrix)."""

from __future__ import annotations

import click

from bandwall.core import store
from bandwall.core.registry import commands
from bandwall.core.topo import topology
from bandwall.numa import numa_matrix
from bandwall.output import emit, kernel_option, measuring_options, refuse_empty
from bandwall.views.numa_matrix import render


@commands.register("numa-matrix")
@click.command("numa-matrix")
@kernel_option()
@click.option("--size", callback=refuse_empty, default="256M", show_default=True, help="bytes per array")
@click.option(
    "--reps", default=5, show_default=True, type=click.IntRange(1, 10000), help="repetitions per cell"
)
@click.option(
    "--rounds", default=1, show_default=True, type=click.IntRange(1, 100), help="alternating rounds; medians"
)
@measuring_options
def numa_matrix_cmd(kernel, size, reps, rounds, fmt, db, no_store):
    """Bandwidth with threads on node i and memory on node j, for every pair of NUMA nodes."""
    if not no_store:
        store.check(db)
    rec = numa_matrix.measure(topology(), kernel, size, reps, rounds)
    if not no_store:
        store.save(rec, db)
    emit(rec, fmt, lambda con: render(con, rec))
