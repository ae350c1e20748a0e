"""Page size and instruction-set variant, when a variants run measured them: the best value per
kernel, beyond noise or not."""

from __future__ import annotations

from collections.abc import Callable

from bandwall.report.advice.base import Evidence, Line, ids
from bandwall.report.spread import NOISE, Spread


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
        best = max(sp, key=lambda v: sp[v].median)
        tied = [v for v in sp if v != best and not sp[v].apart_from(sp[best])]
        if tied:
            verdict, fix = f"{NOISE} between {', '.join([best, *tied])}", ""
        else:
            runner = max((v for v in sp if v != best), key=lambda v: sp[v].median)
            verdict = f"{best}: {sp[best].ratio(sp[runner]):.2f}x the next best ({runner}), beyond the spread"
            fix = f"bandwall stream --kernel {kernel} {flag_of(best)}"
        lines.append(
            Line(
                f"{topic} ({kernel}, {key[1]} threads)",
                "; ".join(f"{v} {s.text()}" for v, s in sp.items()),
                "each value against the best beyond the spread of its rounds",
                verdict,
                fix,
                ids([x for rs in by.values() for x in rs]),
                value=sp[best],
            )
        )
    return lines


def isa(ev: Evidence) -> list[Line]:
    return _choice(ev, "isa", "instruction-set variant", lambda v: f"--isa {v}")


def pages(ev: Evidence) -> list[Line]:
    return _choice(ev, "pages", "page size", lambda v: f"--pages {v}")
