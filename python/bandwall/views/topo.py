"""The terminal view of a bandwall-topo record."""

from __future__ import annotations

from bandwall.core.topo import cpu_list
from bandwall.display import table


def render(con, rec: dict) -> None:
    r = rec["result"]
    con.print(f"[bold]{r['cpu_model']}[/bold]  ({r['source']})")
    con.print(
        f"packages {r['packages']}, cores {r['cores']}, hardware threads {r['pus']}, "
        f"NUMA nodes {len(r['numa_nodes'])}, last-level cache {r['llc_bytes'] / 2**20:.1f} MiB"
    )
    rows = [
        [n["os_index"], n["package"], f"{n['memory_bytes'] / 2**30:.1f}", cpu_list(n["cpus"])]
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
        caches.setdefault((c["level"], c["size_bytes"], c["line_bytes"]), []).append(cpu_list(c["cpus"]))
    con.print(
        table(
            "Caches",
            ["level", "size KiB", "line B", "instances", "CPUs of each"],
            [[f"L{lv}", sz // 1024, ln, len(v), " | ".join(v)] for (lv, sz, ln), v in caches.items()],
        )
    )
    if r.get("caches_forced"):
        con.print(
            f"cache sizes forced for bandwall's models: {r['caches_forced']} (the table gives "
            f"hwloc's sizes, the last-level cache line above the forced ones)"
        )
    if "isa" in r:
        isa = r["isa"]
        capped = (
            f" (BANDWALL_MAX_ISA={isa['ceiling']}; the CPU runs {', '.join(isa['cpu_offered'])})"
            if isa.get("ceiling") and isa.get("cpu_offered") != isa["offered"]
            else ""
        )
        con.print(f"instruction sets for the kernels: {', '.join(isa['offered'])}{capped}")
    con.print(f"hardware counters: {r['pmu']}")
    con.print(f"DSA work queues: {', '.join(r['dsa_work_queues']) or 'none'}")
    if r.get("engines"):
        con.print("copy engines: " + "; ".join(f"{name}: {state}" for name, state in r["engines"].items()))
