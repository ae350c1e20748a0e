"""Page size and instruction-set variant, when a variants run measured them: the best value per
kernel, beyond noise or not."""

from __future__ import annotations

from collections.abc import Callable

from bandwall.core import decide
from bandwall.core.claims import RISES, claim, say
from bandwall.core.spread import Spread
from bandwall.report.advice.base import Evidence, Line, ids


def _asked_isa(r: dict) -> bool:
    return r["config"].get("isa_requested", "auto") != "auto"


# knob -> its value in a variants run that varied it (None in a run that varied the other)
KNOBS: dict[str, Callable[[dict], object]] = {
    "isa": lambda r: r["config"].get("isa") if _asked_isa(r) else None,
    "pages": lambda r: None if _asked_isa(r) else r.get("placement", {}).get("pages"),
}


def _choice(ev: Evidence, knob: str, topic: str, flag_of: Callable[[str], str]) -> list[Line]:
    """Stream runs of the variants section that differ only in one knob (KNOBS): the best value per
    kernel, beyond noise or not."""
    groups: dict[tuple, dict[str, list[dict]]] = {}
    for r in ev.section("variants"):
        if r.get("tool") != "stream" or KNOBS[knob](r) is None:
            continue
        others = (r["config"]["kernel"], r["config"]["threads"]) + tuple(
            get(r) for k, get in KNOBS.items() if k != knob
        )
        groups.setdefault(others, {}).setdefault(str(KNOBS[knob](r)), []).append(r)
    lines = []
    for key, by in groups.items():
        if len(by) < 2:
            continue
        kernel = key[0]
        sp = {v: Spread.of([x["result"]["median_GBps"] for x in rs], "GB/s") for v, rs in by.items()}
        # The default is the first value the section ran (the widest variant, the first page size):
        # another is recommended only when faster beyond noise (the decision rule).
        names = list(sp)
        pick = decide.choose_best(names, [sp[v].values for v in names], 0)
        best = names[pick.chosen]
        # the comparisons the rule made, each candidate against the one standing then
        claims = [
            claim(f"{kernel} bandwidth", sp[c["against"]], sp[c["candidate"]], c["against"], c["candidate"])
            for c in pick.comparisons
        ]
        # a choice only where the claim of the default against it rises (the medians shown agreeing)
        chosen = claim(f"{kernel} bandwidth", sp[names[0]], sp[best], names[0], best)
        decisive = pick.decisive and chosen.direction == RISES
        if not decisive:
            best = names[0]
        elif all((c.start.label, c.end.label) != (names[0], best) for c in claims):
            claims.append(chosen)
        words = "; ".join(say(c) for c in claims)
        if decisive:
            verdict = f"{best}: faster than the default {names[0]} beyond noise: {words}"
            fix = f"bandwall stream --kernel {kernel} {flag_of(best)}"
        else:
            verdict, fix = f"keep the default {names[0]}: {words}", ""
        lines.append(
            Line(
                f"{topic} ({kernel}, {key[1]} threads)",
                "; ".join(f"{v} {s.text()}" for v, s in sp.items()),
                "each value against the best beyond the spread of its rounds",
                verdict,
                fix,
                ids([x for rs in by.values() for x in rs]),
                value=sp[best],
                claims=claims,
            )
        )
    return lines


def isa(ev: Evidence) -> list[Line]:
    return _choice(ev, "isa", "instruction-set variant", lambda v: f"--isa {v}")


def pages(ev: Evidence) -> list[Line]:
    return _choice(ev, "pages", "page size", lambda v: f"--pages {v}")
