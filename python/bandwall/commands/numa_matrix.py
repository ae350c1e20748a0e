"""`bandwall numa-matrix`: bandwidth with threads on node i and memory on node j (bandwall.numa.numa_matrix)."""

from __future__ import annotations

import click

from bandwall.core import store
from bandwall.core.registry import commands
from bandwall.core.topo import topology
from bandwall.display import emit
from bandwall.numa import numa_check, numa_matrix
from bandwall.output import given, kernel_option, measuring_options, placing_options, refuse_empty
from bandwall.views.numa_matrix import render


@commands.register("numa-matrix")
@click.command("numa-matrix")
@kernel_option()
@click.option("--size", callback=refuse_empty, default="256M", show_default=True, help="bytes per array")
@click.option(
    "--reps", default=5, show_default=True, type=click.IntRange(1, 10000), help="repetitions per cell"
)
@click.option(
    "--rounds", default=3, show_default=True, type=click.IntRange(1, 100), help="alternating rounds; medians"
)
@placing_options(
    note="; row i takes these CPUs on node i (default: all of them); none leaves the threads free on them"
)
@measuring_options
def numa_matrix_cmd(kernel, size, reps, rounds, threads, cpus, bind, fmt, db, no_store):
    """Bandwidth with threads on node i and memory on node j, for every pair of NUMA nodes."""
    if not no_store:
        store.check(db)
    chosen = numa_check.chosen_cpus(threads, cpus, bind, any(given(o) for o in ("threads", "cpus", "bind")))
    free = bind == "none" and not cpus
    rec = numa_matrix.measure(topology(), kernel, size, reps, rounds, chosen, free)
    if not no_store:
        store.save(rec, db)
    emit(rec, fmt, lambda con: render(con, rec))
