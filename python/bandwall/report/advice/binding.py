"""Binding: bound against unbound threads, and threads sharing a CPU (bandwall pin --compare)."""

from __future__ import annotations

from bandwall.report.advice.base import EFFICIENCY_FLAG, PROGRAM, Evidence, Line, efficiency_flag, ids
from bandwall.report.spread import NOISE, Spread, compare


def _modes(rec: dict) -> dict[str, Spread]:
    return {
        name: Spread.of(m["rounds"], rec["result"].get("fom_unit", ""))
        for name, m in rec["result"]["modes"].items()
    }


def binding(ev: Evidence) -> list[Line]:
    recs = ev.all("pin-compare")
    passive = next((r for r in recs if r["config"].get("spin") == "passive"), recs[0] if recs else None)
    if passive is None:
        return []
    m = _modes(passive)
    if "bound" not in m or "unbound" not in m:
        return []
    b, u = m["bound"], m["unbound"]
    e = u.median / b.median if b.median else 0.0
    if not b.apart_from(u):
        verdict, fix = f"{NOISE}: binding does not change this program here", ""
    elif b.median > u.median:
        verdict = f"bind: threads left to the scheduler run at {e:.2f} of bound ones, " + efficiency_flag(e)
        fix = (
            f"OMP_PROC_BIND=close OMP_PLACES=cores {PROGRAM}   (or: bandwall pin --bind compact -- {PROGRAM})"
        )
    else:
        verdict = (
            f"binding costs here: unbound threads run {e:.2f}x as fast; the scheduler moves them off CPUs that "
            "other work keeps busy (is something else running on this machine?)"
        )
        fix = f"OMP_PROC_BIND=false {PROGRAM}"
    lines = [
        Line(
            "binding",
            f"bound {b.text()}; unbound {u.text()}",
            "bound against unbound beyond the spread of their rounds",
            verdict,
            fix,
            f"{ids([passive])} ({passive['result'].get('fom', '')})",
            flag=b.apart_from(u) and b.median > u.median and e < EFFICIENCY_FLAG,
            value=b,
        )
    ]
    spin = next((r for r in recs if r is not passive and "one-cpu" in r["result"]["modes"]), None)
    if spin is not None and "one-cpu" in m:
        s1 = _modes(spin)["one-cpu"]
        shared = compare(m["one-cpu"], s1, "sleeping idle threads", "spinning ones")
        lines.append(
            Line(
                "threads sharing a CPU",
                f"all threads on one CPU: passive {m['one-cpu'].text()}; spinning ({spin['config'].get('spin')}) {s1.text()}",
                "passive against spinning waits beyond the spread",
                shared
                + (
                    ": never run more threads than CPUs with spinning waits"
                    if m["one-cpu"].apart_from(s1) and m["one-cpu"].median > s1.median
                    else ""
                ),
                f"OMP_WAIT_POLICY=passive {PROGRAM}   (when threads may share CPUs)"
                if m["one-cpu"].apart_from(s1) and m["one-cpu"].median > s1.median
                else "",
                f"{ids([passive, spin])}",
            )
        )
    return lines
