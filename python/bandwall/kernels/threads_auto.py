"""`--threads auto` from what is stored, read with the decision rule the native executables apply in a
run (native/common/decide.hpp's choose_fewest: the fewest threads that no other count beats by more
than the tolerance, with the rule's confidence, else every thread; after Suleman, Qureshi and Patt's
feedback-driven threading): for a STREAM kernel the newest core sweep of it on a machine of the
same topology digest that kept each point's repetitions; for ISO3DFD the newest bandwall tune of the
same grid that varied the thread count. The repetitions of different counts are paired by their
order (a sweep runs its counts one after another, so the interval is no narrower than the drift
between them). Without either the executable times the candidates itself in its first steps."""

from __future__ import annotations

import os
from collections.abc import Callable

from bandwall.core import decide, store, topo
from bandwall.core.errors import BandwallError


def max_threads(cpus: str | None = None, bind: str | None = None) -> int:
    """The largest team --cpus / --bind allow (every CPU of this process for --bind none)."""
    placed = topo.resolve_threads(None, cpus, bind)
    return len(placed) if placed is not None else len(os.sched_getaffinity(0))


def choice(how: str, record_id, unit: str, rates: dict[int, list[float]], where: str) -> dict:
    """config.threads_choice (the native record's shape) from the rates per round of each count."""
    counts = sorted(rates)
    rule = decide.rule()
    c = decide.choose_fewest(counts, [rates[n] for n in counts], rule)
    return {
        "how": how,
        "record": record_id,
        "rule": {**vars(rule), "unit": unit},
        "unit": unit,
        "default": counts[-1],
        "candidates": [{"threads": n, "rates": rates[n]} for n in counts],
        "chosen": counts[c.chosen],
        "decisive": c.decisive,
        "comparisons": c.comparisons,
        "max_threads": counts[-1],
        "why": f"{c.why} in {where} #{record_id}",
    }


def choice_from_sweep(rec: dict) -> dict | None:
    """config.threads_choice read from a stored sweep record: its points' rates per repetition; None
    for a sweep that kept no repetitions (older records)."""
    points = rec["result"]["points"]
    if not all(p.get("rates") for p in points):
        return None
    return choice("stored sweep", rec.get("id"), "GB/s", {p["cores"]: p["rates"] for p in points}, "sweep")


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


def choice_from_tune(rec: dict, bind: str | None, settings: dict | None = None) -> dict | None:
    """config.threads_choice read from a stored tune record: per thread count the rates of its best
    configuration among those run as this run will be (its binding, and each of settings, e.g. the
    instruction set or the register shape, when the tune tried it; a setting it did not try does not
    narrow); None when the tune measured fewer than two thread counts."""
    rows = [t for t in rec["result"]["trials"] if t.get("rates") and "threads" in t["config"]]
    for key, value in {"bind": bind, **(settings or {})}.items():
        if value is not None and any(t["config"].get(key) == value for t in rows):
            rows = [t for t in rows if t["config"].get(key) == value]
    best: dict[int, dict] = {}
    for t in rows:
        n = int(t["config"]["threads"])
        if n not in best or float(t["median"]) > float(best[n]["median"]):
            best[n] = t
    if len(best) < 2:
        return None
    unit = rec["result"].get("unit", "")
    rates = {n: [float(x) for x in t["rates"]] for n, t in best.items()}
    return choice("stored tune", rec.get("id"), unit, rates, "tune of this grid and topology")


def stored_tune_choice(
    target: str,
    fixed: dict,
    cpus: str | None = None,
    bind: str | None = None,
    db=None,
    settings: dict | None = None,
    absent: dict | None = None,
) -> dict | None:
    """threads_choice from the newest stored tune of target whose fixed options include fixed (for
    ISO3DFD the grid and the radius) on this topology digest that tried thread counts up to as many
    cores as this run may use, read from its trials run as this run will be (choice_from_tune); None
    when there is none. absent: the value a fixed option had in tunes stored before it was recorded
    (ISO3DFD's radius: the article's)."""
    was = absent or {}

    def fits(rec: dict, team: int) -> bool:
        cfg = rec["config"]
        counts = cfg.get("knobs", {}).get("threads", [])
        given = cfg.get("fixed", {})
        return (
            cfg.get("target") == target
            and all(given.get(k, was.get(k)) == v for k, v in fixed.items())
            and bool(counts)
            and max(counts) == team
        )

    return _newest("tune", fits, lambda rec: choice_from_tune(rec, bind, settings), cpus, bind, db)
