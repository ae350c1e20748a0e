"""Users' own programs, from stored `bandwall sensitivity` records of this machine: what binds each
(bandwidth, latency, cache, nothing, or undetermined where a control failed), whether the controls
run beside it passed, and how many copies are worth running (from the copies run at once)."""

from __future__ import annotations

from bandwall.core.claims import Claim, say
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
        own = claims[: len(sensitivity.slowdown_claims(r))]  # the program's slowdowns come first
        lines.append(
            Line(
                f"your program: {command}",
                measured,
                "slowdowns beside the bandwidth bandit and the cache pirate, beyond noise"
                + (f" ({checks}, in the same rounds)" if checks else ""),
                f"{r['verdict']}: {r['why']}; {copies['text']}",
                fix,
                f"sensitivity {ids([rec])}" + "".join(f"; {say(c)}" for c in own),
                flag=r["verdict"] != sensitivity.INSENSITIVE,
                claims=claims,
            )
        )
    return lines


def slowdown_claims(r: dict) -> list[Claim]:
    """The claims behind the sensitivity's verdict, as the record states them: result.claims (the
    program's run time beside the bandit and beside the cache pirate at the doses its verdict rests
    on, then the others its why states, then the controls'), and the copies' (result.copies.claims);
    for a record from before the claims, the program's slowdowns rebuilt by the sensitivity's own
    rule (verdict.slowdown_claims: each the decision rule's verdict on the dose's paired rounds)."""
    if r.get("claims"):
        return [Claim.from_json(c) for c in r["claims"] + (r.get("copies") or {}).get("claims", [])]
    return sensitivity.slowdown_claims(r)
