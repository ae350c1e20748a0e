"""Cores per memory-bound process: the knee of a stored sweep, the parallel efficiency, and
whether the surplus cores pay beside a noise process (bandwall interference)."""

from __future__ import annotations

import dataclasses

from bandwall.core import decide
from bandwall.interference import verdict as interference
from bandwall.report.advice.base import (
    EFFICIENCY_FLAG,
    PROGRAM,
    STORED,
    Evidence,
    Line,
    efficiency_flag,
    ids,
)
from bandwall.report.spread import NOISE, Spread, compare, fmt


def sweep_points(ev: Evidence, sweep: dict) -> list[dict]:
    """The stream records of a sweep's points (by id when stored, else the same kernel's plain stream
    records of the sweep's section), one per core count, ordered by cores."""
    by_id = {r["id"]: r for r in ev.all("stream") if r.get("id") is not None}
    wanted = sweep["result"].get("point_record_ids") or []
    if wanted and all(i in by_id for i in wanted):
        found = [by_id[i] for i in wanted]
    else:
        home = ev.home_of(sweep)
        found = [
            r
            for r in home
            if r.get("tool") == "stream"
            and r["config"].get("kernel") == sweep["config"]["kernel"]
            and "engine" not in r["config"]
        ]
    per_cores = {int(r["config"]["threads"]): r for r in found}
    return [per_cores[n] for n in sorted(per_cores)]


def knee(spreads: dict[int, Spread], share: float) -> tuple[int, int]:
    """(knee, top): top is the core count with the best median; the knee is the fewest cores that no
    other count beats by more than 1/share with the decision rule's confidence (its repetitions
    paired in order), else every core: fewer cores are recommended only on evidence."""
    top = max(spreads, key=lambda n: spreads[n].median)
    counts = sorted(spreads)
    rule = dataclasses.replace(decide.rule(), tolerance=1 / share - 1)
    c = decide.choose_fewest(counts, [spreads[n].values for n in counts], rule)
    return counts[c.chosen], top


def cores(ev: Evidence) -> list[Line]:
    lines = []
    for sw in ev.all("sweep"):
        pts = sweep_points(ev, sw)
        kernel, share = sw["config"]["kernel"], sw["config"].get("knee_share", 0.95)
        if len(pts) < 2:
            continue
        sp = {int(r["config"]["threads"]): Spread.of_stream(r) for r in pts}
        k, top = knee(sp, share)
        most = max(sp)
        evidence = f"sweep {ids([sw])}, points {ids(pts)}; " + "; ".join(
            f"{n} cores {s.text()}" for n, s in sp.items()
        )
        if k == most:
            verdict = f"no knee: bandwidth still rises up to all {most} cores; a memory-bound process can use every core"
        else:
            verdict = (
                f"{k} core{'s reach' if k > 1 else ' reaches'} the bandwidth (the knee): use {k} per memory-bound "
                "process; "
                f"{most - k} surplus core{'s' if most - k > 1 else ''}: leave them free or give them other work"
            )
            if not sp[k].apart_from(sp[most]):
                verdict += f"; {k} against {most} cores: {NOISE}, so the fewer cores are kept"
            elif sp[k].beats(sp[most]):
                verdict += f"; on {most} cores it runs slower than on {k} ({compare(sp[most], sp[k], f'{most} cores', f'{k} cores')})"
        lines.append(
            Line(
                f"cores per memory-bound process ({kernel})",
                f"{sp[k].text()} on {k} core(s)",
                f"{share:.0%} of this machine's best {kernel} bandwidth ({sp[top].text()} on {top} cores), "
                "shown by the decision rule over the repetitions",
                verdict,
                f"OMP_NUM_THREADS={k} OMP_PROC_BIND=close OMP_PLACES=cores {PROGRAM}",
                evidence,
                value=sp[top],
            )
        )
        one = sp.get(1)
        if one is not None and most > 1:
            e = sp[most].median / (most * one.median)
            lines.append(
                Line(
                    f"parallel efficiency ({kernel}, {most} cores)",
                    f"{e:.2f}: {fmt(sp[most].median)} GB/s on {most} cores against {most} x {fmt(one.median)} on 1",
                    f"{EFFICIENCY_FLAG}",
                    efficiency_flag(e) + _scaling(e, k, most),
                    "",  # the knee line above carries the fix
                    f"sweep {ids([sw])}",
                    flag=e < EFFICIENCY_FLAG,
                )
            )
    return lines


def surplus_under_noise(ev: Evidence) -> list[Line]:
    """bandwall interference's verdict, when one is stored for this machine: does leaving the surplus
    cores free pay beside a noise process?"""
    lines = []
    for rec in ev.section(STORED):
        if rec.get("tool") != "interference":
            continue
        v = interference.verdict(rec)
        lines.append(
            Line(
                "surplus cores beside a noise process",
                "; ".join(f"{case}: {figure}" for case, figure in v["figures"].items()),
                "the two cases' ranges over the rounds (apart, or within noise)",
                v["text"],
                v.get("advice", [""])[0],
                f"interference {ids([rec])} ({rec['config'].get('noise', 'noise')} noise)",
            )
        )
    return lines


def _scaling(e: float, knee_cores: int, most: int) -> str:
    if e >= EFFICIENCY_FLAG:
        return ": the cores add bandwidth almost in proportion"
    if knee_cores < most:
        return ": memory-bound work does not scale past the knee; the cores beyond it add no bandwidth"
    return ": each added core still adds bandwidth, but less than the one before (memory saturating)"
