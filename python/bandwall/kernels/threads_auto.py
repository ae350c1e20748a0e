"""`--threads auto` from what is stored, read with the rule the native harness applies in a run (the
fewest threads whose best rate is within 3% of the best; native/common/harness.hpp, after Suleman,
Qureshi and Patt's feedback-driven threading): for a STREAM kernel the newest core sweep of it on a
machine of the same topology digest; for ISO3DFD the newest bandwall tune of the same grid that
varied the thread count. Without either the executable times the candidates itself in its first
iterations."""

from __future__ import annotations

import os
from collections.abc import Callable

from bandwall.core import store, topo
from bandwall.core.errors import BandwallError
from bandwall.kernels import sweep

TOLERANCE = 0.03
RULE = "the fewest threads whose best rate is within 3% of the best candidate's"


def max_threads(cpus: str | None = None, bind: str | None = None) -> int:
    """The largest team --cpus / --bind allow (every CPU of this process for --bind none)."""
    placed = topo.resolve_threads(None, cpus, bind)
    return len(placed) if placed is not None else len(os.sched_getaffinity(0))


def choice_from_sweep(rec: dict) -> dict:
    """config.threads_choice read from a stored sweep record: its points as the candidates."""
    points = rec["result"]["points"]
    chosen = sweep.knee(points, 1 - TOLERANCE)
    top = max(p["best_GBps"] for p in points)
    rate = next(p["best_GBps"] for p in points if p["cores"] == chosen)
    return {
        "how": "stored sweep",
        "record": rec.get("id"),
        "rule": RULE,
        "tolerance": TOLERANCE,
        "unit": "GB/s",
        "candidates": [{"threads": p["cores"], "rate": p["best_GBps"]} for p in points],
        "chosen": chosen,
        "max_threads": max(p["cores"] for p in points),
        "why": (
            f"{chosen} of {max(p['cores'] for p in points)} threads: {rate:.4g} GB/s, "
            f"{100 * rate / top:.1f}% of the best ({top:.4g}) in sweep #{rec.get('id')} of this topology; "
            f"the fewest within {100 * TOLERANCE:.0f}%"
        ),
    }


def _newest(
    tool: str, fits: Callable[[dict, int], bool], read: Callable[[dict], dict | None], cpus, bind, db
):
    """read(rec) of the newest stored record of tool with this machine's topology digest that fits
    (rec, the team this run may use) and reads to a choice; None when there is none, or the store
    cannot be read (the run then chooses by itself)."""
    digest = topo.topology()["provenance"]["topology_digest"]
    team = max_threads(cpus, bind)
    try:
        with store.Store(db, readonly=True) as s:
            if s.fresh:
                return None
            for rec in s.list(tool, limit=200):
                if rec["provenance"].get("topology_digest") == digest and fits(rec, team):
                    choice = read(rec)
                    if choice is not None:
                        return choice
    except BandwallError:
        return None
    return None


def stored_choice(kernel: str, cpus: str | None = None, bind: str | None = None, db=None) -> dict | None:
    """threads_choice from the newest stored sweep of kernel with this machine's topology digest,
    the same binding and CPU list and as many cores as this run may use; None when there is none."""

    def fits(rec: dict, team: int) -> bool:
        cfg = rec["config"]
        return (
            cfg.get("kernel") == kernel
            and cfg.get("bind") == bind
            and cfg.get("cpus") == cpus
            and max(p["cores"] for p in rec["result"]["points"]) == team
        )

    return _newest("sweep", fits, choice_from_sweep, cpus, bind, db)


def choice_from_tune(rec: dict, bind: str | None) -> dict | None:
    """config.threads_choice read from a stored tune record: per thread count the best median of its
    trials (of the run's binding when the tune tried it), as the candidates; None when the tune
    tried fewer than two thread counts."""
    rows = [t for t in rec["result"]["trials"] if "median" in t and "threads" in t["config"]]
    if bind is not None and any(t["config"].get("bind") == bind for t in rows):
        rows = [t for t in rows if t["config"].get("bind") == bind]
    best: dict[int, float] = {}
    for t in rows:
        n = int(t["config"]["threads"])
        best[n] = max(best.get(n, 0.0), float(t["median"]))
    if len(best) < 2:
        return None
    top = max(best.values())
    chosen = min(n for n, r in best.items() if r >= (1 - TOLERANCE) * top)
    unit = rec["result"].get("unit", "")
    return {
        "how": "stored tune",
        "record": rec.get("id"),
        "rule": RULE,
        "tolerance": TOLERANCE,
        "unit": unit,
        "candidates": [{"threads": n, "rate": best[n]} for n in sorted(best)],
        "chosen": chosen,
        "max_threads": max(best),
        "why": (
            f"{chosen} of {max(best)} threads: {best[chosen]:.4g} {unit}, {100 * best[chosen] / top:.1f}% of the "
            f"best ({top:.4g}) in tune #{rec.get('id')} of this grid and topology; the fewest within "
            f"{100 * TOLERANCE:.0f}%"
        ),
    }


def stored_tune_choice(
    target: str, fixed: dict, cpus: str | None = None, bind: str | None = None, db=None
) -> dict | None:
    """threads_choice from the newest stored tune of target whose fixed options include fixed (for
    ISO3DFD the grid) on this topology digest that tried thread counts up to as many cores as this
    run may use; None when there is none."""

    def fits(rec: dict, team: int) -> bool:
        cfg = rec["config"]
        counts = cfg.get("knobs", {}).get("threads", [])
        return (
            cfg.get("target") == target
            and all(cfg.get("fixed", {}).get(k) == v for k, v in fixed.items())
            and bool(counts)
            and max(counts) == team
        )

    return _newest("tune", fits, lambda rec: choice_from_tune(rec, bind), cpus, bind, db)
