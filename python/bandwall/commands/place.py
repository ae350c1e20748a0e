"""`bandwall place`: allocate arrays under a placement policy, touch them from bound threads and show
which NUMA node holds each (the "memory objects" view), with the CPU of each thread."""

from __future__ import annotations

import click

from bandwall.core import store
from bandwall.core.registry import commands
from bandwall.display import emit
from bandwall.numa.place import place
from bandwall.output import measuring_options, placement_option, refuse_empty, thread_options
from bandwall.views.place import render


@commands.register("place")
@click.command("place")
@placement_option()
@thread_options
@click.option("--size", callback=refuse_empty, default="64M", show_default=True, help="bytes per array")
@click.option(
    "--arrays", callback=refuse_empty, default="a,b,c", show_default=True, help="names of the arrays"
)
@click.option(
    "--touch",
    type=click.Choice(["auto", "parallel", "serial", "none"]),
    default="auto",
    show_default=True,
    help="who touches the pages first (auto: serial for the serial policy)",
)
@measuring_options
def place_cmd(placement, threads, cpus, bind, size, arrays, touch, fmt, db, no_store):
    """Show where a placement policy puts memory: the share of each array's pages on each NUMA node."""
    if not no_store:
        store.check(db)
    rec = place(placement, threads or 0, cpus, bind, size, arrays, touch)
    if not no_store:
        store.save(rec, db)
    emit(rec, fmt, lambda con: render(con, rec))
