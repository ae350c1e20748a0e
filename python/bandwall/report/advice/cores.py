"""Cores per memory-bound process: the knee of a stored sweep, the parallel efficiency, and
whether the surplus cores pay beside a noise process (bandwall interference)."""

from __future__ import annotations

import dataclasses

from bandwall.core import decide
from bandwall.core.claims import FALLS, RISES, Claim, claim, say
from bandwall.core.spread import NOISE, Spread, fmt
from bandwall.interference import verdict as interference
from bandwall.report.advice.base import EFFICIENCY_FLAG, PROGRAM, STORED, Evidence, Line, efficiency_flag, ids


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


def knee_choice(spreads: dict[int, Spread], share: float) -> decide.Choice:
    """The decision rule's choice of the fewest cores that no other count beats by more than 1/share
    with its confidence (the repetitions paired in order), else every core (not decisive)."""
    counts = sorted(spreads)
    rule = dataclasses.replace(decide.rule(), tolerance=1 / share - 1)
    return decide.choose_fewest(counts, [spreads[n].values for n in counts], rule)


def knee(spreads: dict[int, Spread], share: float) -> tuple[int, int]:
    """(knee, top): top is the core count with the best median; the knee is the fewest cores that no
    other count beats by more than 1/share with the decision rule's confidence (its repetitions
    paired in order), else every core: fewer cores are recommended only on evidence."""
    top = max(spreads, key=lambda n: spreads[n].median)
    counts = sorted(spreads)
    return counts[knee_choice(spreads, share).chosen], top


def point_spreads(ev: Evidence, sweep: dict) -> tuple[dict[int, Spread], list[dict]]:
    """The bandwidth of each core count of a sweep over its kept repetitions (cores -> Spread, the
    values in the order they ran): the sweep's own per-repetition rates when it kept them, else its
    point records' (Spread.of_stream); and the point records. Median, min and max are those of the
    rates the decision rule compares, so a card shows the figures its rule used."""
    pts = sweep_points(ev, sweep)
    out: dict[int, Spread] = {}
    for r in pts:
        s = Spread.of_stream(r)
        out[int(r["config"]["threads"])] = Spread.of(s.values, "GB/s") if s.values else s
    rates = {int(p["cores"]): p["rates"] for p in sweep["result"].get("points", []) if p.get("rates")}
    if len(rates) >= len(out):
        out = {n: Spread.of(v, "GB/s") for n, v in rates.items()}
    return dict(sorted(out.items())), pts


def _cores(n: int) -> str:
    return f"{n} core{'s' if n != 1 else ''}"


def cores(ev: Evidence) -> list[Line]:
    lines = []
    for sw in ev.all("sweep"):
        sp, pts = point_spreads(ev, sw)
        kernel, share = sw["config"]["kernel"], sw["config"].get("knee_share", 0.95)
        if len(sp) < 2:
            continue
        counts = list(sp)
        top = max(sp, key=lambda n: sp[n].median)
        choice = knee_choice(sp, share)
        k, most = counts[choice.chosen], counts[-1]
        evidence = f"sweep {ids([sw])}, points {ids(pts)}; " + "; ".join(
            f"{_cores(n)} {s.text()}" for n, s in sp.items()
        )
        verdict, claims = knee_verdict(kernel, sp, share, choice)
        lines.append(
            Line(
                f"cores per memory-bound process ({kernel})",
                f"{sp[k].text()} on {k} core(s)",
                f"{share:.0%} of this machine's best {kernel} bandwidth ({sp[top].text()} on {top} cores), "
                "shown by the decision rule over the repetitions",
                verdict,
                f"OMP_NUM_THREADS={k} OMP_PROC_BIND=close OMP_PLACES=cores {PROGRAM}",
                evidence,
                value=sp[k],
                limit=share * sp[top].median,
                claims=claims,
            )
        )
        one = sp.get(1)
        if one is not None and most > 1:
            whole = claim(f"{kernel} bandwidth", one, sp[most], _cores(1), _cores(most))
            e = whole.end.value / (most * whole.start.value) if whole.start.value else 0.0
            scaling, more = _scaling(e, whole, claims[0] if choice.decisive else None, k)
            lines.append(
                Line(
                    f"parallel efficiency ({kernel}, {most} cores)",
                    f"{e:.2f}: {fmt(whole.end.value)} GB/s on {most} cores against {most} x "
                    f"{fmt(whole.start.value)} on 1",
                    f"{EFFICIENCY_FLAG}",
                    efficiency_flag(e) + scaling,
                    "",  # the knee line above carries the fix
                    f"sweep {ids([sw])}",
                    flag=e < EFFICIENCY_FLAG,
                    claims=[whole, *more],
                )
            )
    return lines


def knee_verdict(
    kernel: str, sp: dict[int, Spread], share: float, choice: decide.Choice | None = None
) -> tuple[str, list[Claim]]:
    """The knee's words and the claims they are rendered from, for the card and for bandwall
    sweep's verdict (sp: each core count's rates, at least two counts): with a decided knee, the
    claim of the knee against every core; else the claim of the largest count against the one
    before, "no knee" only when that claim rises, "knee undecided" otherwise."""
    choice = choice or knee_choice(sp, share)
    counts = list(sp)
    figure = f"{kernel} bandwidth"
    k, most = counts[choice.chosen], counts[-1]
    tol = f"{1 / share - 1:.0%}"
    if choice.decisive:
        # the knee and what the surplus cores do: the claim of the knee against every core
        beyond = claim(figure, sp[k], sp[most], _cores(k), _cores(most))
        verdict = (
            f"{k} core{'s reach' if k > 1 else ' reaches'} the bandwidth (the knee): use {k} per memory-bound "
            "process; "
            f"{most - k} surplus core{'s' if most - k > 1 else ''}: leave them free or give them other work; "
            f"{say(beyond)}"
        )
        if beyond.direction == RISES:
            verdict += f", within the knee's {tol}"
        return verdict, [beyond]
    last = claim(figure, sp[counts[-2]], sp[most], _cores(counts[-2]), _cores(most))
    if last.direction == RISES:
        return f"no knee: {say(last)}; a memory-bound process can use every core", [last]
    return (
        f"knee undecided: {say(last)}; no smaller count was shown within {tol} of the others "
        f"by the decision rule, so every core ({most}) is kept",
        [last],
    )


def sweep_verdict(rec: dict) -> tuple[str, list[Claim]] | None:
    """knee_verdict of a sweep record from the rates its points kept (None when a point lacks them
    or there is one point): the words bandwall sweep prints and the claims they come from."""
    pts = rec["result"]["points"]
    if len(pts) < 2 or not all(p.get("rates") for p in pts):
        return None
    sp = {int(p["cores"]): Spread.of(p["rates"], "GB/s") for p in sorted(pts, key=lambda p: p["cores"])}
    return knee_verdict(rec["config"]["kernel"], sp, rec["config"].get("knee_share", 0.95))


def surplus_under_noise(ev: Evidence) -> list[Line]:
    """Does leaving the surplus cores free pay beside a noise process, when bandwall interference's
    record is stored for this machine: the kernel on every core beside the noise against the knee's
    cores with the noise on a surplus core, their interleaved rounds paired, decided by the rule (the
    claim), the fix (how to keep them free) only when it pays beyond noise."""
    lines = []
    for rec in ev.section(STORED):
        if rec.get("tool") != "interference":
            continue
        cfg, unit = rec["config"], rec["result"].get("unit", "")
        k, n = cfg["cores_knee"], cfg["cores_all"]
        a, b = (interference.case(rec, c) for c in (interference.ALL_NOISE, interference.KNEE_NOISE))
        sa, sb = Spread.of(a["values"], unit), Spread.of(b["values"], unit)
        c = interference.surplus_claim(rec)
        verdict, found = interference.verdict_text(rec, c)
        lines.append(
            Line(
                "surplus cores beside a noise process",
                f"{k} of {n} cores, the noise on a surplus core: {sb.text()}; {n} of {n} cores: {sa.text()}",
                "the two cases' interleaved rounds under the decision rule",
                verdict,
                interference.keep_free_advice(rec)[0] if found is True else "",
                f"interference {ids([rec])} ({cfg.get('noise', 'noise')} noise)",
                value=sb,
                claims=[c],
            )
        )
    return lines


def _scaling(e: float, whole: Claim, beyond: Claim | None, knee_cores: int) -> tuple[str, list[Claim]]:
    """The efficiency's words, from the claim of every core against one (whole) and, when a knee was
    decided, the claim of the knee against every core (beyond); and the claims besides whole."""
    if whole.direction == FALLS:
        return f": more cores run slower than one: {say(whole)}", []
    if whole.direction == NOISE:
        return f": the added cores add no bandwidth shown by the decision rule: {say(whole)}", []
    if e >= EFFICIENCY_FLAG:
        return f": the cores add bandwidth almost in proportion: {say(whole)}", []
    if beyond is not None:
        if beyond.direction == RISES:
            past = f"the cores beyond it add little: {say(beyond)}"
        elif beyond.direction == FALLS:
            past = f"the cores beyond it cost bandwidth: {say(beyond)}"
        else:
            past = f"the cores beyond it add no bandwidth shown by the decision rule: {say(beyond)}"
        return (
            f": memory-bound work does not scale past the knee ({knee_cores} cores): {say(whole)}; {past}",
            [beyond],
        )
    return (
        ": the added cores still add bandwidth, each less than the one before (memory saturating): "
        f"{say(whole)}",
        [],
    )
