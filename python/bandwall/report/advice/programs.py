"""Users' own programs, from stored `bandwall sensitivity` records of this machine: what binds each
(bandwidth, latency, cache or nothing) and how many copies the node feeds."""

from __future__ import annotations

from bandwall.report.advice.base import STORED, Evidence, Line, ids
from bandwall.sensitivity import verdict as sensitivity


def program_sensitivity(ev: Evidence) -> list[Line]:
    lines, seen = [], set()
    for rec in ev.section(STORED):
        if rec.get("tool") != "sensitivity":
            continue
        command = " ".join(rec["config"]["command"])
        if command in seen:  # the newest record of each program
            continue
        seen.add(command)
        r = rec["result"]
        bw = r.get("bandwidth_GBps")
        measured = (
            f"{bw:.1f} GB/s of the node's {r['node_GBps']:.1f}" if bw is not None else "bandwidth not told"
        )
        ws = r.get("working_set_MiB")
        if ws:
            measured += f"; working set {ws[0]:.3g} to {ws[1]:.3g} MiB" if ws[1] is not None else ""
        copies = r["copies"]
        fix = ""
        if r["verdict"] == sensitivity.BANDWIDTH and copies.get("advice"):
            fix = f"run {copies['advice']} cop(ies) or threads of {command} per node"
        lines.append(
            Line(
                f"your program: {command}",
                measured,
                "slowdowns beside the bandwidth bandit and the cache pirate, beyond noise",
                f"{r['verdict']}: {r['why']}; {copies['text']}",
                fix,
                f"sensitivity {ids([rec])}",
                flag=r["verdict"] != sensitivity.INSENSITIVE,
            )
        )
    return lines
