"""Copies measured: the program run as 1, 2, ... k copies at once, each on CPUs of its own (as many as
it was given), in rotated rounds; per count the throughput (copies over the time of a copy) and
each copy's slowdown against one copy alone in the same round, by the rule. The advice is the rule's
choice of the fewest copies that no larger count beats by more than its tolerance; the program's
bandwidth from the bandit, where there is one, is shown beside the curve and checked against it;
where there is none, the curve and the node's triad give a bound on it. The words about the curve
(more throughput or not, copies slowed or not) are rendered from claims (result.copies.claims):
each count against one copy, and the advised count against the most."""

from __future__ import annotations

import math
import os
import select
import statistics
import time
from collections.abc import Callable

from bandwall.core import decide, launch, process, topo
from bandwall.core.claims import NOISE, RISES, Claim, claim, claim_of_ratio, say
from bandwall.core.errors import RunFailed
from bandwall.core.spread import Spread
from bandwall.sensitivity import comparisons as cmp
from bandwall.sensitivity.controls import beyond_noise, interval

MOST_COUNTS = 8  # counts of copies tried at most: 1, 2, 4, 8, ... and the most the CPUs hold


def counts(most: int) -> list[int]:
    """1, 2, 4, ... up to most, and most itself; at most MOST_COUNTS of them."""
    out, k = [], 1
    while k < most and len(out) < MOST_COUNTS - 1:
        out.append(k)
        k *= 2
    return [*out, most] if most >= 1 else [1]


def cpu_sets(program_cpus: list[int], allowed: list[int]) -> list[list[int]]:
    """The CPUs of each copy: the program's own first, then the others in their order, as many to a
    copy as the program was given."""
    per = max(1, len(program_cpus))
    order = list(program_cpus) + [c for c in allowed if c not in program_cpus]
    return [order[i * per : (i + 1) * per] for i in range(len(order) // per)]


def run_together(argv: list[str], sets: list[list[int]], repeat: int) -> list[float]:
    """Seconds of each copy (repeat runs in a row each, from each start to each exit), all started
    at once, each on its CPUs in a session of its own. RunFailed when one fails; every copy ends
    with it, and with an interrupt."""
    live: dict[int, tuple[int, process.Child, float]] = {}  # pidfd -> (copy, child, start)
    left, total = [repeat] * len(sets), [0.0] * len(sets)
    poller = select.poll()

    def start(i: int) -> None:
        t0 = time.perf_counter()
        try:
            child = process.start(
                argv,
                cpus=sets[i],
                env=launch.pinned_env(sets[i]),
                session=True,
                die_with_bandwall=True,
            )
        except OSError as e:
            raise RunFailed(f"cannot run {argv[0]!r}: {e.strerror}") from e
        fd = os.pidfd_open(child.pid)
        live[fd] = (i, child, t0)
        poller.register(fd, select.POLLIN)

    try:
        for i in range(len(sets)):
            start(i)
        while live:
            for fd, _ in poller.poll():
                t1 = time.perf_counter()
                i, child, t0 = live.pop(fd)
                poller.unregister(fd)
                os.close(fd)
                code = child.wait()
                last = child.error()
                child.stop(grace=0)  # what it left running in its session
                child.close()
                if code != 0:
                    raise RunFailed(
                        f"a copy of {' '.join(argv)!r} on CPU(s) {topo.cpu_list(sets[i])} failed "
                        f"({process.how(code)}){': ' + last if last else ''}"
                    )
                total[i] += t1 - t0
                left[i] -= 1
                if left[i]:
                    start(i)
    finally:
        if live:
            process.stop([c for _, c, _ in live.values()], grace=0)
            for fd, (_, c, _) in live.items():
                os.close(fd)
                c.close()
    return total


def measure(
    argv: list[str],
    program_cpus: list[int],
    allowed: list[int],
    repeat: int,
    rounds: int,
    progress: Callable[[str], None],
) -> dict:
    """{counts, sets, times}: times[k] the copies' seconds in each round (a list per round)."""
    sets = cpu_sets(program_cpus, allowed)
    ks = counts(len(sets))
    times: dict[int, list[list[float]]] = {k: [] for k in ks}
    for r in range(rounds):
        for j in range(len(ks)):
            k = ks[(j + r) % len(ks)]
            progress(f"copies, round {r + 1}/{rounds}: {k} at once")
            times[k].append(run_together(argv, sets[:k], repeat))
    return {"counts": ks, "sets": [topo.cpu_list(s) for s in sets], "times": times}


def curve(ks: list[int], sets: list[str], times: dict, rule) -> list[dict]:
    """result.copies.measured: per count, each copy's slowdown (the mean time of a copy over one copy's
    time alone in the same round) and the throughput (copies over the mean time of a copy, over one
    copy's), each with the rule's interval."""
    one = [statistics.fmean(r) for r in times[ks[0]]]
    out = []
    for k in ks:
        mean = [statistics.fmean(r) for r in times[k]]
        slow = decide.ratio_interval(mean, one, rule)
        thr = decide.ratio_interval([k / m for m in mean], [ks[0] / m for m in one], rule)
        out.append(
            {
                "copies": k,
                "cpus": sets[:k],
                "seconds": statistics.median(mean) if mean else None,
                "times_s": [list(r) for r in times[k]],
                "throughput": interval(thr),
                "slowdown": interval(slow),
                "slowed": beyond_noise(slow, rule),
            }
        )
    return out


def advise(measured: list[dict], rule) -> dict:
    """The rule's choice: the fewest copies that no larger count beats in throughput by more than its
    tolerance (the largest when none is shown to be enough)."""
    ks = [p["copies"] for p in measured]
    if len(ks) == 1:
        return {"advice": ks[0], "advice_why": "the CPUs hold one copy: nothing to compare"}
    rates = [[len(r) / statistics.fmean(r) for r in p["times_s"]] for p in measured]
    choice = decide.choose_fewest(ks, rates, rule)
    k, tol = ks[choice.chosen], f"{rule.tolerance:.0%}"
    why = (
        f"{k} of {ks[-1]} copies: no larger count gave more than {tol} more throughput ({rule.text()})"
        if choice.decisive
        else f"all {k}: no smaller count was shown to be within {tol} of the others' throughput ({rule.text()})"
    )
    return {"advice": k, "advice_why": why}


def count_claims(p: dict) -> tuple[Claim, Claim]:
    """One count's comparisons with one copy, from the intervals of paired ratios the curve holds:
    the throughput (rises when k copies at once did more than one) and a copy's run time (rises when
    they slowed each other beyond noise)."""
    throughput = claim_of_ratio(cmp.THROUGHPUT, cmp.ONE_COPY, cmp.copies(p["copies"]), p["throughput"])
    return throughput, time_claim(p)


def time_claim(p: dict) -> Claim:
    """A count's copy run time against one copy alone: rises when they slowed each other beyond noise."""
    return claim_of_ratio(cmp.COPY_TIME, cmp.ONE_COPY_ALONE, cmp.copies(p["copies"]), p["slowdown"])


def _rates(p: dict) -> Spread:
    """The copies' throughput in each round (copies over a copy's mean time), in the order they ran."""
    return Spread.of([len(r) / statistics.fmean(r) for r in p["times_s"]], "copies/s")


def step_claim(a: dict, b: dict) -> Claim:
    """The throughput of b's count against a's, their rounds paired in the order they ran."""
    return claim(cmp.THROUGHPUT, _rates(a), _rates(b), cmp.copies(a["copies"]), cmp.copies(b["copies"]))


def text(measured: list[dict], advice: int, rule=None) -> tuple[str, list[Claim]]:
    """The copies' words and the claims they are rendered from: per count, its throughput and a
    copy's time against one copy's; then the advice: the throughput from the advised count to the
    most (within the rule's tolerance, as advise() chose), or every count's against the one before
    it where the advice is to run them all ("every copy added throughput" only where each rises)."""
    rule = rule or decide.rule()
    claims: list[Claim] = []
    parts = []
    for p in measured[1:]:
        thr, slow = count_claims(p)
        claims += [thr, slow]
        parts.append(
            f"{cmp.copies(p['copies'])}, "
            + cmp.by_direction(thr, "more throughput", "less throughput", f"{NOISE} in throughput")
            + ", each copy "
            + cmp.by_direction(slow, "slower", "faster", f"{NOISE} in its time")
        )
    top = measured[-1]["copies"]
    tol = f"{rule.tolerance:.0%}"
    if advice < top:
        chosen = next(p for p in measured if p["copies"] == advice)
        c = step_claim(chosen, measured[-1])
        claims.append(c)
        verdict = (
            f"run {advice} cop{'y' if advice == 1 else 'ies'} or threads, leave the rest of the {top} free "
            f"(no larger count gave more than {tol} more throughput: {say(c)})"
        )
    elif len(measured) > 1:
        steps = [step_claim(a, b) for a, b in zip(measured, measured[1:])]
        claims += steps
        flat = [c for c in steps if c.direction != RISES]
        if not flat:
            verdict = f"every copy added throughput beyond noise: run as many as the CPUs hold ({top})"
        else:
            verdict = (
                f"no smaller count was shown within {tol} of the others' throughput: run as many as the CPUs "
                f"hold ({top}), although not every count added throughput beyond noise ({say(flat[0])})"
            )
    else:
        verdict = f"run as many as the CPUs hold ({top})"
    return f"at once, {'; '.join(parts) or 'one copy only'}: {verdict}", claims


def estimate(rec: dict, fit: int) -> dict:
    """How many copies the node's triad feeds at the program's estimated bandwidth (node over own),
    capped by how many copies the CPUs hold: the estimate shown beside the measured curve."""
    res = rec["result"]
    bw, node = res.get("bandwidth_GBps"), res.get("node_GBps")
    out = {"per_copy_GBps": bw, "node_GBps": node, "cpus_hold": fit, "bandwidth_feeds": None, "advice": None}
    if bw is None or not node:
        out["text"] = "no estimate: the program's bandwidth could not be told"
        return out
    if not res.get("bandwidth_beyond_noise", True) or bw <= 0:
        out["text"] = "its bandwidth is below what the bandit tells: bandwidth is not what limits copies"
        out["advice"] = fit
        return out
    feeds = node / bw
    out["bandwidth_feeds"] = feeds
    out["advice"] = fit if feeds >= fit else max(1, math.floor(feeds))
    out["text"] = f"the node's {node:.1f} GB/s over its {bw:.1f} GB/s feeds about {feeds:.1f} copies"
    return out


def check(est: dict, measured: list[dict], rule=None) -> tuple[bool | None, str]:
    """Whether the estimate agrees with the curve. Where it says the node feeds F copies, k > F copies
    at once share it, each slowed at least k / F: the curve agrees when they slowed each other beyond
    noise, and disagrees only when its whole interval (rounds enough) lies below that by more than the
    rule's margin. Where it says the node feeds them all, copies that slowed each other point to
    something else shared. None: the curve cannot tell."""
    rule = rule or decide.rule()
    feeds = est.get("bandwidth_feeds")
    if feeds is None or len(measured) < 2:
        return None, "nothing to check"
    beyond = [p for p in measured if p["copies"] > feeds]
    if beyond:
        slowed = [c for c in map(time_claim, beyond) if c.direction == RISES]
        if slowed:
            return (
                True,
                f"the curve agrees: the copies slow each other beyond {feeds:.1f} at once: {say(slowed[0])}",
            )
        short = [
            p
            for p in beyond
            if p["slowdown"]["enough"] and p["slowdown"]["hi"] * (1 + rule.margin) < p["copies"] / feeds
        ]
        if short:
            p = short[-1]
            return False, (
                f"the curve disagrees: {p['copies']} copies at once were each slowed at most "
                f"{p['slowdown']['hi']:.2f}x, where a node that feeds {feeds:.1f} would slow them "
                f"{p['copies'] / feeds:.2f}x"
            )
        return (
            None,
            f"the curve cannot tell: copies beyond {feeds:.1f} were not slowed beyond noise, nor shown not to be: "
            + say(time_claim(beyond[-1])),
        )
    top = time_claim(measured[-1])
    if top.direction == RISES:
        return None, (
            f"the copies slowed each other though the estimate says the node feeds them all: {say(top)}: "
            "something besides bandwidth is shared (the cache, the clock)"
        )
    return (
        True,
        f"the curve agrees: the copies did not slow each other beyond noise, as the estimate says: {say(top)}",
    )


def bound(measured: list[dict], node_gbps: float | None) -> tuple[float | None, str]:
    """An upper bound on one copy's bandwidth from the curve: k copies at once move T times what one
    moves alone (T the throughput ratio), and never more than the node's triad, so one copy moves at
    most node / T; given where the curve flattens (the copies slowed each other beyond noise), where
    it is the per-copy share at saturation. The interval's low end of T, so that the bound holds."""
    if not node_gbps:
        return None, "the node's triad bandwidth is not known"
    if len(measured) < 2:
        return None, "the CPUs hold one copy: no curve"
    flat = [c for c in map(time_claim, measured[1:]) if c.direction == RISES]
    if not flat:
        return None, (
            f"the copies did not slow each other beyond noise up to {measured[-1]['copies']} at once "
            f"({say(time_claim(measured[-1]))}): the curve does not flatten, so it bounds no bandwidth"
        )
    t = max(p["throughput"]["lo"] for p in measured)
    if t <= 0:
        return None, "no throughput measured"
    top = max(measured, key=lambda p: p["throughput"]["lo"])
    return node_gbps / t, (
        f"an upper bound: {top['copies']} copies at once ran {t:.2f}x one copy's throughput (the low end of the "
        f"interval) and all of them together move no more than the node's {node_gbps:.1f} GB/s triad"
    )


def bandwidth(res: dict, measured: list[dict], control_passed: bool) -> dict:
    """result.bandwidth: the estimate where the bandwidth control passed, else the bound from the
    copies curve, else None, each with why."""
    est = res.get("bandwidth_GBps")
    if est is not None:
        return {
            "GBps": est,
            "kind": "estimate",
            "why": "from the bandit's loss beside it, scaled by the triad's",
        }
    bound_gbps, why = bound(measured, res.get("node_GBps"))
    lost = res.get("bandwidth_note") or (
        "the bandwidth control failed" if not control_passed else "no estimate"
    )
    if bound_gbps is not None:
        return {"GBps": bound_gbps, "kind": "upper bound", "why": f"{lost}; {why}"}
    return {"GBps": None, "kind": None, "why": f"{lost}; no bound: {why}"}


def summary(rec: dict, data: dict | None, rule) -> dict:
    """result.copies from the measured data (and the estimate beside it)."""
    est = estimate(rec, len(data["sets"]) if data else 1)
    if not data or data.get("why"):
        why = f"not measured: {data['why'] if data else 'the CPUs hold one copy'}"
        return {
            "measured": [],
            "advice": None,
            "advice_why": why,
            "text": f"{why}; {est['text']}",
            "estimate": est,
            "claims": [],
        }
    measured = curve(data["counts"], data["sets"], data["times"], rule)
    adv = advise(measured, rule)
    agrees, checked = check(est, measured, rule)
    words, claims = text(measured, adv["advice"], rule)
    out = {"measured": measured, **adv, "estimate": est, "agrees": agrees, "check": checked}
    out["text"] = words + (
        f" (estimate: {est['text']}; {checked})" if est.get("bandwidth_feeds") is not None else ""
    )
    out["claims"] = [c.to_json() for c in claims]
    return out
