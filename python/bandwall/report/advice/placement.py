"""Placement and NUMA: whether placement matters here, local against remote memory, and the
ISO3DFD initialisation."""

from __future__ import annotations

from bandwall.core import manifest
from bandwall.core.claims import FALLS, RISES, claim, say
from bandwall.core.spread import NOISE, Spread, fmt
from bandwall.numa import numa_check
from bandwall.report.advice.base import EFFICIENCY_FLAG, PROGRAM, Evidence, Line, efficiency_flag, ids


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
        lines.extend(_numa_check(chk, nodes))
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


# numa-check's modes (numa_check.MODE_TITLES): the default run, one node alone, and the placements
# that use the whole machine otherwise
DEFAULT_MODE, ONE_NODE = "all", "node0"
OTHER_PLACEMENTS = tuple(m for m in numa_check.WHOLE_MACHINE if m != DEFAULT_MODE)


def _numa_check(chk: dict, nodes: int) -> list[Line]:
    """numa-check's card: each whole-machine placement against the default run (their alternating
    rounds paired, its figure higher for better), decided by the rule; the cost of NUMA is the best
    placement shown faster beyond noise, and its advice given only then. A record without the modes'
    rounds (or from a machine of one node) keeps numa-check's own words, claiming nothing."""
    r = chk["result"]
    modes, unit = r["modes"], r.get("fom_unit", "")
    measured = "; ".join(f"{n} {fmt(m['value'])} {unit}" for n, m in modes.items())
    topic, threshold = "NUMA placement", f"{nodes} NUMA nodes: local against remote and interleaved placement"
    if (
        not r.get("judgeable", True)
        or DEFAULT_MODE not in modes
        or not all(m.get("rounds") for m in modes.values())
    ):
        return [Line(topic, measured, threshold, r["verdict"], "; ".join(r.get("advice", [])), ids([chk]))]
    sp = {n: Spread.of(m["rounds"], unit) for n, m in modes.items()}
    fom = r.get("fom") or "figure of merit"
    title = {n: m.get("title", n) for n, m in modes.items()}
    others = [
        claim(fom, sp[DEFAULT_MODE], sp[n], title[DEFAULT_MODE], title[n])
        for n in OTHER_PLACEMENTS
        if n in sp
    ]
    faster = [c for c in others if c.direction == RISES]
    if faster:
        best = max(faster, key=lambda c: c.end.value)
        cost = 1 - best.start.value / best.end.value if best.end.value else 0.0
        verdict = f"NUMA costs this program {cost:.0%} of its speed: {say(best)}"
        mode = next(n for n in OTHER_PLACEMENTS if title.get(n) == best.end.label)
        # numa-check's advice is for its own best mode: given when the rule found the same one
        fix = "; ".join(r.get("advice", [])) if r.get("best_mode") == mode else ""
        claims = [best, *(c for c in others if c is not best)]
        verdict += "".join(f"; {say(c)}" for c in claims[1:])
    else:
        verdict = "NUMA costs this program nothing shown by the decision rule: " + "; ".join(
            say(c) for c in others
        )
        # numa-check's advice to keep the default placement, when it found no cost either
        fix = "; ".join(r.get("advice", [])) if r.get("numa_cost", 0.0) <= numa_check.NOISE else ""
        claims = others
    if ONE_NODE in sp:
        alone = claim(fom, sp[ONE_NODE], sp[DEFAULT_MODE], title[ONE_NODE], title[DEFAULT_MODE])
        if alone.direction == FALLS:  # worded, and claimed, only as a warning
            verdict += f"; all {nodes} nodes run slower than one node alone: {say(alone)}"
            claims.append(alone)
    return [
        Line(
            topic,
            measured,
            threshold,
            verdict,
            fix,
            ids([chk]),
            value=sp[DEFAULT_MODE],
            claims=claims,
        )
    ]
