"""Placement and NUMA: whether placement matters here, local against remote memory, and the
ISO3DFD initialisation."""

from __future__ import annotations

from bandwall.core import manifest
from bandwall.report.advice.base import (
    EFFICIENCY_FLAG,
    FALLS,
    PROGRAM,
    RISES,
    Evidence,
    Line,
    claim,
    efficiency_flag,
    ids,
    say,
)
from bandwall.report.spread import NOISE, Spread, fmt


def placement(ev: Evidence) -> list[Line]:
    topos = ev.all("topo")
    lines = []
    init = {}
    for r in ev.section("iso3dfd"):
        if r.get("tool") == "iso3dfd":
            init.setdefault(r["config"]["init"], []).append(r["result"]["mpoints_per_s"])
    if topos:
        t = topos[-1]["result"]
        nodes = [n for n in t["numa_nodes"] if n["cpus"]]
        if len(nodes) <= 1:
            lines.append(
                Line(
                    "NUMA placement",
                    f"{len(t['numa_nodes'])} NUMA node, every CPU on it",
                    "two or more NUMA nodes with CPUs",
                    "does not matter here: with one NUMA node every page is local to every core, so placement "
                    "(numactl, first touch, interleaving) cannot change where memory is",
                    "",
                    ids(topos[-1:]),
                )
            )
        else:
            lines.extend(_numa_lines(ev, len(nodes)))
    first_touch, serial = manifest.iso3dfd_word_names("init")[:2]  # each thread its blocks; the master thread
    if {first_touch, serial} <= set(init) and min(len(v) for v in init.values()) >= 2:
        ft, se = Spread.of(init[first_touch], "MPoints/s"), Spread.of(init[serial], "MPoints/s")
        c = claim("ISO3DFD throughput", se, ft, "serial initialisation", "first-touch initialisation")
        verdict = say(c)
        one_node = bool(topos) and len([n for n in topos[-1]["result"]["numa_nodes"] if n["cpus"]]) <= 1
        if c.direction in (RISES, FALLS) and one_node:
            verdict += " (one NUMA node: the difference is cache and thread warm-up, not where pages are)"
        lines.append(
            Line(
                "initialisation (ISO3DFD)",
                f"first-touch {ft.text()}; serial {se.text()}",
                "first-touch against serial beyond the spread of all their runs",
                verdict,
                "initialise arrays in parallel with the compute loops' schedule (first touch)"
                if c.direction == RISES
                else "",
                ids([r for r in ev.section("iso3dfd") if r.get("tool") == "iso3dfd"]),
                value=ft,
                claims=[c],
            )
        )
    return lines


def _numa_lines(ev: Evidence, nodes: int) -> list[Line]:
    lines = []
    for chk in ev.all("numa-check")[-1:]:
        r = chk["result"]
        lines.append(
            Line(
                "NUMA placement",
                "; ".join(f"{n} {fmt(m['value'])} {r.get('fom_unit', '')}" for n, m in r["modes"].items()),
                f"{nodes} NUMA nodes: local against remote and interleaved placement",
                r["verdict"],
                "; ".join(r.get("advice", [])),
                ids([chk]),
            )
        )
    for mat in ev.all("numa-matrix")[-1:]:
        m = mat["result"]["matrix"]
        rounds = mat["result"].get("cell_rounds") or [[[v] for v in row] for row in m]
        cells = [(i, j) for i in range(len(m)) for j in range(len(m[0]))]
        local = [(i, j) for i, j in cells if i == j]
        remote = [(i, j) for i, j in cells if i != j and m[i][j]]
        if not local or not remote:
            continue
        e = (sum(m[i][j] for i, j in remote) / len(remote)) / (sum(m[i][j] for i, j in local) / len(local))
        sl = Spread.of([v for i, j in local for v in rounds[i][j]], "GB/s")
        sr = Spread.of([v for i, j in remote for v in rounds[i][j]], "GB/s")
        c = claim("bandwidth", sl, sr, "local memory", "remote memory")
        apart = c.direction != NOISE
        flagged = apart and e < EFFICIENCY_FLAG
        lines.append(
            Line(
                "NUMA efficiency (remote / local bandwidth)",
                f"{e:.2f}: remote {sr.text()}; local {sl.text()}",
                f"{EFFICIENCY_FLAG}, when local and remote differ beyond the spread of their rounds",
                (f"{efficiency_flag(e)}: {say(c)}" if apart else say(c))
                + (": keep each thread's memory on its own node" if flagged else ""),
                f"numactl --localalloc {PROGRAM}" if flagged else "",
                ids([mat]),
                flag=flagged,
                value=sr,
                limit=EFFICIENCY_FLAG * sum(m[i][j] for i, j in local) / len(local),
                claims=[c],
            )
        )
    return lines
