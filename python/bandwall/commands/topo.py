"""`bandwall topo`: packages, NUMA nodes, distances, cores, caches, counters and DSA, from hwloc."""

from __future__ import annotations

import click

from bandwall.core import policies
from bandwall.core.registry import commands
from bandwall.core.topo import topology
from bandwall.display import emit
from bandwall.output import TableHelp, format_option, refuse_empty
from bandwall.views.topo import render


@commands.register("topo")
@click.command("topo")
@click.option(
    "--topology",
    "source",
    callback=refuse_empty,
    default=None,
    help="an hwloc synthetic description ('pack:2 numa:2 core:4 pu:2') or XML file instead of this machine",
)
@click.option(
    "--order",
    cls=TableHelp,
    callback=refuse_empty,
    default=None,
    help_from=lambda: "also print the CPUs a binding policy picks: " + policies.syntax("binding"),
    fallback="also print the CPUs a binding policy picks (bandwall-manifest lists them)",
)
@click.option("--threads", default=0, type=click.IntRange(min=0), help="how many CPUs --order picks (0: all)")
@click.option(
    "--cpus",
    callback=refuse_empty,
    default=None,
    help="also print the CPUs a CPU list names, thread by thread, as likwid-pin -p does (S0:0-3, E:N:4:1:2)",
)
@click.option(
    "--llc-probe",
    callback=refuse_empty,
    default=None,
    metavar="A,B",
    help="also time a cache line's round trip between two CPUs: whether they share a last-level cache, "
    "measured (a virtual machine's host may split the L3 its topology reports)",
)
@format_option
def topo(source, order, threads, cpus, llc_probe, fmt):
    """Show the machine: packages, NUMA nodes and distances, cores, caches, counters, DSA."""
    rec = topology(source, order, threads, cpus, llc_probe)

    def render_all(con):
        render(con, rec)
        if order or cpus:
            picked = ", ".join(map(str, rec["result"]["order"]))
            con.print(f"{order or cpus}: threads 0, 1, ... on CPUs {picked}", markup=False)
        if llc_probe:
            con.print(f"measured: {rec['result']['llc_probe']['why']}", markup=False)

    emit(rec, fmt, render_all)
