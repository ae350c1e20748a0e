"""Users' own programs, from stored `bandwall sensitivity` records of this machine: what binds each
(bandwidth, latency, cache, nothing, or undetermined where a control failed), whether the controls
run beside it passed, and how many copies are worth running (from the copies run at once)."""

from __future__ import annotations

from bandwall.core.claims import Claim, claim_of_ratio, say
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
        bw = r.get("bandwidth") or {"GBps": r.get("bandwidth_GBps"), "kind": "estimate"}
        if bw["GBps"] is None:
            measured = "bandwidth not told"
        elif bw["kind"] == "upper bound":
            measured = (
                f"at most {bw['GBps']:.1f} GB/s of the node's {r['node_GBps']:.1f} (a bound, from its copies)"
            )
        else:
            measured = f"{bw['GBps']:.1f} GB/s of the node's {r['node_GBps']:.1f}"
        ws = r.get("working_set_MiB")
        if ws:
            measured += f"; working set {ws[0]:.3g} to {ws[1]:.3g} MiB" if ws[1] is not None else ""
        copies = r["copies"]
        ctl = r.get("controls") or {}
        checks = "; ".join(f"{n} control {'passed' if c['passed'] else 'failed'}" for n, c in ctl.items())
        fix = ""
        ran = [p["copies"] for p in copies.get("measured", [])]
        if ran and copies.get("advice") and copies["advice"] < ran[-1]:  # the copies curve flattens
            fix = f"run {copies['advice']} of {ran[-1]} copies or threads of {command} per node (measured)"
        elif not ran and r["verdict"] == sensitivity.BANDWIDTH and copies.get("advice"):
            fix = f"run {copies['advice']} cop(ies) or threads of {command} per node"
        claims = slowdown_claims(r)
        lines.append(
            Line(
                f"your program: {command}",
                measured,
                "slowdowns beside the bandwidth bandit and the cache pirate, beyond noise"
                + (f" ({checks}, in the same rounds)" if checks else ""),
                f"{r['verdict']}: {r['why']}; {copies['text']}",
                fix,
                f"sensitivity {ids([rec])}" + "".join(f"; {say(c)}" for c in claims),
                flag=r["verdict"] != sensitivity.INSENSITIVE,
                claims=claims,
            )
        )
    return lines


def slowdown_claims(r: dict) -> list[Claim]:
    """The claims behind the sensitivity's verdict: the program's run time beside the bandit, and
    beside the cache pirate (its kept doses, when its CPU shares the program's cache), each at the
    worst dose that slows it beyond noise, else at the worst dose by its median; each the decision
    rule's verdict on the dose's paired rounds (the interval the record holds), the sensitivity's own
    test of a slowdown (verdict.slows)."""
    out = []
    cache = [p for p in r.get("cache_curve", []) if p.get("kept")] if r.get("cache_shared") is True else []
    for points, label in (
        (r.get("curve", []), _bandit),
        (cache, lambda p: f"{p['left_MiB']:.3g} MiB of the cache left"),
    ):
        slowed = [p for p in points if sensitivity.slows(p)] or points
        worst = max(slowed, key=lambda p: p["slowdown"]["median"], default=None)
        if worst is not None:
            out.append(claim_of_ratio("run time", "alone", label(worst), worst["slowdown"]))
    return out


def _bandit(p: dict) -> str:
    taken = p.get("taken_GBps")
    return f"the bandit taking {taken:.1f} GB/s" if taken is not None else f"the bandit at dose {p['dose']}"
