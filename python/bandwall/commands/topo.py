"""`bandwall topo`: packages, NUMA nodes, distances, cores, caches, counters and DSA, from hwloc."""

from __future__ import annotations

import click

from bandwall import native, records
from bandwall.output import emit, format_option, refuse_empty, table
from bandwall.registry import commands


def topology(source: str | None = None, order: str | None = None, threads: int = 0) -> dict:
    """The topology record of this machine, or of an hwloc synthetic description / XML file."""
    args: list[str] = []
    if source:
        args += ["--topology", source]
    if order:
        args += ["--order", order, "--threads", str(threads)]
    return records.finish(native.run_record("bandwall-topo", args))


def cpu_order(policy: str, threads: int = 0, source: str | None = None) -> list[int]:
    """The CPUs a binding policy (compact, scatter, node:N) picks, thread by thread."""
    return topology(source, policy, threads)["result"]["order"]


def render(con, rec: dict) -> None:
    r = rec["result"]
    con.print(f"[bold]{r['cpu_model']}[/bold]  ({r['source']})")
    con.print(
        f"packages {r['packages']}, cores {r['cores']}, hardware threads {r['pus']}, "
        f"NUMA nodes {len(r['numa_nodes'])}, last-level cache {r['llc_bytes'] / 2**20:.1f} MiB"
    )
    rows = [
        [n["os_index"], n["package"], f"{n['memory_bytes'] / 2**30:.1f}", _cpus(n["cpus"])]
        for n in r["numa_nodes"]
    ]
    con.print(table("NUMA nodes", ["node", "package", "GiB", "CPUs"], rows))
    if r.get("distances"):
        n = len(r["distances"])
        con.print(
            table(
                "Distances",
                ["from \\ to"] + [str(i) for i in range(n)],
                [[i] + row for i, row in enumerate(r["distances"])],
            )
        )
    caches: dict[tuple, list] = {}
    for c in r["caches"]:
        caches.setdefault((c["level"], c["size_bytes"], c["line_bytes"]), []).append(_cpus(c["cpus"]))
    con.print(
        table(
            "Caches",
            ["level", "size KiB", "line B", "instances", "CPUs of each"],
            [[f"L{lv}", sz // 1024, ln, len(v), " | ".join(v)] for (lv, sz, ln), v in caches.items()],
        )
    )
    con.print(f"hardware counters: {r['pmu']}")
    con.print(f"DSA work queues: {', '.join(r['dsa_work_queues']) or 'none'}")


def _cpus(cpus: list[int]) -> str:
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


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
    callback=refuse_empty,
    default=None,
    help="also print the CPUs a binding policy picks: compact, scatter, node:N",
)
@click.option("--threads", default=0, type=click.IntRange(min=0), help="how many CPUs --order picks (0: all)")
@format_option
def topo(source, order, threads, fmt):
    """Show the machine: packages, NUMA nodes and distances, cores, caches, counters, DSA."""
    rec = topology(source, order, threads)

    def render_all(con):
        render(con, rec)
        if order:
            con.print(f"{order} order: {rec['result']['order']}")

    emit(rec, fmt, render_all)
