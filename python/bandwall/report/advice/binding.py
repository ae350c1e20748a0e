"""Binding: bound against unbound threads, and threads sharing a CPU (bandwall pin --compare)."""

from __future__ import annotations

from bandwall.core.claims import FALLS, RISES, claim, say
from bandwall.core.spread import Spread
from bandwall.report.advice.base import EFFICIENCY_FLAG, PROGRAM, Evidence, Line, efficiency_flag, ids


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
    fom = passive["result"].get("fom") or "figure of merit"
    c = claim(fom, u, b, "unbound threads", "bound threads")
    e = c.start.value / c.end.value if c.end.value else 0.0
    if c.direction not in (RISES, FALLS):
        verdict, fix = f"{say(c)}: binding does not change this program here", ""
    elif c.direction == RISES:
        verdict = f"bind: threads left to the scheduler run at {e:.2f} of bound ones, {efficiency_flag(e)}: {say(c)}"
        fix = (
            f"OMP_PROC_BIND=close OMP_PLACES=cores {PROGRAM}   (or: bandwall pin --bind compact -- {PROGRAM})"
        )
    else:
        verdict = (
            f"binding costs here: unbound threads run {e:.2f}x as fast; the scheduler moves them off CPUs that "
            f"other work keeps busy (is something else running on this machine?): {say(c)}"
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
            flag=c.direction == RISES and e < EFFICIENCY_FLAG,
            value=b,
            claims=[c],
        )
    ]
    spin = next((r for r in recs if r is not passive and "one-cpu" in r["result"]["modes"]), None)
    if spin is not None and "one-cpu" in m:
        s1 = _modes(spin)["one-cpu"]
        sc = claim(
            f"{fom} with every thread on one CPU", s1, m["one-cpu"], "spinning waits", "sleeping waits"
        )
        passive_pays = sc.direction == RISES
        lines.append(
            Line(
                "threads sharing a CPU",
                f"all threads on one CPU: passive {m['one-cpu'].text()}; spinning ({spin['config'].get('spin')}) {s1.text()}",
                "passive against spinning waits beyond the spread",
                say(sc) + (": never run more threads than CPUs with spinning waits" if passive_pays else ""),
                f"OMP_WAIT_POLICY=passive {PROGRAM}   (when threads may share CPUs)" if passive_pays else "",
                f"{ids([passive, spin])}",
                claims=[sc],
            )
        )
    return lines
