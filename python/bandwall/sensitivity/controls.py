"""The controls run in the same rounds as the program, which show whether the method works on these
CPUs in this run: a positive bandwidth control (a STREAM triad on the program's CPUs, under the
bandit's doses), a positive cache control (random reads over half of what the pirate holds, on the
program's CPU, under the pirate's doses) and a placebo (multiply-adds on the bandit's CPUs, which
take no memory, beside the program). Each control's slowdown at each dose is decided by the rule by
which bandwall decides everything (core/decide): a positive control passes when some dose slowed it
beyond noise, the placebo when it did not slow the program. Each control keeps the claim it is
decided by (`claim`: at its worst dose that slowed it, else at its worst dose; comparisons.py), and
its reason is rendered from that claim."""

from __future__ import annotations

import statistics

from bandwall.core import decide
from bandwall.core.claims import RISES, Claim, say
from bandwall.sensitivity import comparisons as cmp

BANDWIDTH, CACHE, PLACEBO = "bandwidth", "cache", "placebo"


def interval(iv: decide.Interval) -> dict:
    return {"median": iv.median, "lo": iv.lo, "hi": iv.hi, "rounds": iv.rounds, "enough": iv.enough}


def beyond_noise(iv: decide.Interval, rule: decide.Rule) -> bool:
    """Slowed beyond noise: the rule's verdict on the ratio (slowed time over time alone) is FASTER,
    its whole interval beyond the margin with rounds enough for its confidence."""
    return decide.verdict(iv, rule) == decide.FASTER


def _median(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _decide(out: dict, figure: str, label) -> Claim | None:
    """The control's claim (None without doses) and whether it was slowed: its claim rises."""
    c = cmp.deciding(figure, out["points"], label)
    out["claim"] = c.to_json() if c else None
    out["slowed"] = c is not None and c.direction == RISES
    return c


def bandwidth(
    cpus: str, alone: list[float], doses: list[tuple[float, list[float], list[float]]], rule
) -> dict:
    """The triad's rate alone in each round (alone) and beside the bandit at each dose: (dose, the
    triad's rate in each round, the bandit's rate in each round). Slowdown: rate alone over rate
    beside, paired by round."""
    points = []
    for dose, beside, taken in doses:
        iv = decide.ratio_interval(alone, beside, rule)
        points.append(
            {
                "dose": dose,
                "taken_GBps": _median(taken),
                "GBps": _median(beside),
                "slowdown": interval(iv),
                "slowed": beyond_noise(iv, rule),
            }
        )
    out = {
        "what": f"a STREAM triad on the program's CPU(s) {cpus}, under the bandit's doses",
        "alone_GBps": _median(alone),
        "points": points,
        "ran": bool(points),
    }
    c = _decide(out, cmp.BANDWIDTH_CONTROL, cmp.bandit)
    out["passed"] = out["slowed"]
    out["why"] = None
    if not out["passed"]:
        out["why"] = (
            f"the bandwidth control (a STREAM triad of {out['alone_GBps'] or 0:.1f} GB/s on the program's CPU(s)) "
            f"was not slowed beyond noise by the bandit: {say(c)} (the rule needs the whole interval beyond "
            f"{1 + rule.margin:g}x)"
            if c
            else "the bandwidth control did not run"
        )
    return out


def cache(
    cpu: int | None,
    nbytes: int | None,
    held_bytes: int | None,
    alone: list[float],
    doses: list[tuple[int, list[float]]],
    rule,
    not_run: str | None = None,
) -> dict:
    """The reader's ns an access alone in each round and beside the pirate holding each dose (bytes,
    ns in each round). Slowdown: ns beside over ns alone, paired by round. not_run: why it could not
    run (no pirate, or one that does not share the program's cache)."""
    out = {
        "what": (
            f"random reads over {nbytes / 2**20:.3g} MiB (half of what the pirate holds) on CPU {cpu}, "
            "under the pirate's doses"
            if nbytes
            else "random reads over half of what the pirate holds, on the program's CPU"
        ),
        "bytes": nbytes,
        "alone_ns": _median(alone),
        "points": [],
        "slowed": False,
        "ran": not_run is None and bool(doses),
    }
    for b, beside in doses:
        iv = decide.ratio_interval(beside, alone, rule)
        out["points"].append(
            {
                "pirate_MiB": b / 2**20,
                "left_MiB": (held_bytes - b) / 2**20 if held_bytes else None,
                "ns": _median(beside),
                "slowdown": interval(iv),
                "slowed": beyond_noise(iv, rule),
            }
        )
    c = _decide(out, cmp.CACHE_CONTROL, cmp.cache_left)
    out["passed"] = out["slowed"]
    if not out["ran"]:
        out["why"] = f"the cache control could not run: {not_run or 'no pirate dose ran'}"
    elif not out["passed"]:
        out["why"] = f"the cache control ({out['what']}) was not slowed beyond noise by the pirate: {say(c)}"
    else:
        out["why"] = None
    return out


def placebo(cpus: str, beside: list[float], base: list[float], rule) -> dict:
    """The program's time beside multiply-adds on the bandit's CPUs, over its time alone in the same
    round. It passes when it did not slow the program beyond noise."""
    iv = decide.ratio_interval(beside, base, rule)
    point = {"slowdown": interval(iv), "slowed": beyond_noise(iv, rule), "times_s": list(beside)}
    out = {
        "what": f"multiply-adds in registers on the bandit's CPU(s) {cpus} (no memory), beside the program",
        "points": [point],
        "ran": bool(beside),
    }
    c = _decide(out, cmp.PROGRAM, lambda p: cmp.PLACEBO)
    out["passed"] = bool(beside) and not out["slowed"]
    out["why"] = None
    if out["slowed"]:
        out["why"] = (
            f"the placebo ({out['what']}) slowed the program: {say(c)}: a busy neighbour alone slows it here "
            "(a shared clock or power budget, SMT siblings, a busy host), so the bandit's and the pirate's "
            "slowdowns cannot be told from it"
        )
    elif not beside:
        out["why"] = "the placebo did not run"
    return out


# What would make a failed control work, for result.why.
REMEDY = {
    BANDWIDTH: (
        "more free CPUs on the program's memory node for the bandit (fewer for the program with --cpus), "
        "or a quieter node"
    ),
    CACHE: "a free CPU that shares the program's last-level cache (on bare metal, not a VM's CPUs on two caches), or a quieter node",
    PLACEBO: "CPUs for the program on other cores than the bandit's (no SMT siblings), or a quieter node",
}


def failed(controls: dict, name: str) -> str | None:
    """Why the control failed, with what would make it work; None when it passed."""
    c = controls.get(name)
    if c is None:
        return f"the {name} control did not run (a record from before the controls); {REMEDY[name]}"
    if c.get("passed"):
        return None
    return f"{c.get('why') or f'the {name} control failed'}; what would make it work: {REMEDY[name]}"
