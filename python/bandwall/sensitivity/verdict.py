"""What a sensitivity record says, as plain functions of its figures (so the report and the tests use
them on any record): the program's own bandwidth from what the bandit loses beside it, the pirate's
doses it kept, the working set, the verdict with its reason, and how many copies the node feeds.
Every threshold is decision.json's."""

from __future__ import annotations

import math
import statistics

from bandwall.core import decide

BANDWIDTH = "bandwidth-bound"
LATENCY = "latency-bound"
CACHE = "cache-bound"
INSENSITIVE = "insensitive"
VERDICTS = (BANDWIDTH, LATENCY, CACHE, INSENSITIVE)


def _losses(alone: list[float], beside: list[float]) -> list[float]:
    return [a - b for a, b in zip(alone, beside)]


def bandwidth_estimate(
    alone_p: list[float],
    beside_program: list[float],
    alone_r: list[float],
    beside_reader: list[float],
    reader: list[float],
    rule=None,
) -> dict:
    """The program's bandwidth from the bandit at full dose, run by run: what it loses beside the
    program against its rate just before (alone_p), scaled by what it loses beside a STREAM triad of
    known bandwidth on the same CPUs against its rate just before that (alone_r), so that a memory
    system the bandit alone cannot saturate still answers. None, with a note, when the bandit loses
    nothing beyond noise even beside the triad."""
    rule = rule or decide.rule()
    loss_p = statistics.median(_losses(alone_p, beside_program)) if beside_program else 0.0
    loss_r = statistics.median(_losses(alone_r, beside_reader)) if beside_reader else 0.0
    reader_gbps = statistics.median(reader) if reader else 0.0
    ref_told = decide.verdict(decide.ratio_interval(alone_r, beside_reader, rule), rule) == decide.FASTER
    prog_told = decide.verdict(decide.ratio_interval(alone_p, beside_program, rule), rule) == decide.FASTER
    out = {
        "bandit_loss_GBps": loss_p,
        "reference": {"reader_GBps": reader_gbps, "bandit_loss_GBps": loss_r, "beyond_noise": ref_told},
        "bandwidth_beyond_noise": prog_told,
        "bandwidth_GBps": None,
        "bandwidth_note": None,
    }
    if not ref_told or loss_r <= 0:
        out["bandwidth_note"] = (
            f"the bandit lost nothing beyond noise even beside a STREAM triad of {reader_gbps:.1f} GB/s on "
            "the program's CPUs: memory is not contended at this scale, so the program's bandwidth cannot be told"
        )
        return out
    out["bandwidth_GBps"] = max(0.0, reader_gbps * loss_p / loss_r)
    if not prog_told:
        out["bandwidth_note"] = (
            f"the bandit lost nothing beyond noise beside the program ({loss_p:+.2f} GB/s against "
            f"{loss_r:.2f} beside a {reader_gbps:.1f} GB/s triad): its bandwidth is small"
        )
    return out


def slow_line() -> float:
    """The rule's line for a slowdown: 1 + its margin."""
    return 1 + decide.rule().margin


def slows(point: dict) -> bool:
    """A dose slows the program when the whole interval of its paired ratios (time over the same
    round's dose-0 time) lies beyond the rule's margin, with rounds enough for its confidence: the
    rule by which bandwall decides everything."""
    s = point["slowdown"]
    return bool(s["enough"]) and s["lo"] > slow_line()


def mark_kept(cache_curve: list[dict]) -> None:
    """Marks each pirate dose kept when the pirate's lines stayed beside the program."""
    keep = decide.threshold("pirate_keeps")
    for p in cache_curve:
        a, b = p.get("pirate_alone_ns"), p.get("pirate_beside_ns")
        p["kept"] = bool(a and b and b <= keep * a)


def _mib(x: float) -> str:
    return f"{x:.3g} MiB"


def cache_note(rec: dict) -> str | None:
    """Why no pirate dose ran, or what limits them (a cache the topology claims but the pirate cannot
    hold); None when the doses ran on the cache the topology gives."""
    res, cfg = rec["result"], rec["config"]
    if cfg.get("pirate_cpu") is None:
        why = [n for n in res.get("notes", []) if "cache" in n]
        return (
            why[0] if why else "no free CPU shares the program's last-level cache"
        ) + ": no working set is claimed"
    if res.get("cache_error"):
        return f"the pirate could not probe the cache ({res['cache_error']}): no working set is claimed"
    scan = res.get("cache_scan", [])
    held = [r for r in scan if r["held"]]
    if not held:
        size = scan[0]["bytes"] / 2**20 if scan else 0
        return (
            f"the pirate could not hold even {_mib(size)} alone (its passes took as long as from memory): "
            "the cache the topology gives is not there for this CPU; no working set is claimed"
        )
    top, first = held[-1], held[0]
    if not res.get("cache_shared", first["shared"]):
        return (
            f"CPU {rec['config']['cpus']} does not share the pirate's cache: a pass through the pirate's warm lines "
            f"took {first['shared_ns']:.0f} ns an access from there, {first['flushed_ns']:.0f} ns from memory "
            "(a virtual machine can claim a shared cache its CPUs do not share); no working set is claimed"
        )
    llc = (cfg.get("llc_bytes") or 0) / 2**20
    if not res.get("cache_curve"):
        return f"the pirate held only {_mib(top['bytes'] / 2**20)}, no more than the private caches: no working set is claimed"
    if llc and top["bytes"] / 2**20 < 0.75 * llc:
        return (
            f"the pirate held at most {_mib(top['bytes'] / 2**20)} of the {_mib(llc)} last-level cache the topology "
            f"gives (a virtual machine's neighbours, or a layout it hides): no working set above "
            f"{_mib(top['bytes'] / 2**20)} can be told"
        )
    return None


def working_set(rec: dict, plan=None) -> dict:
    """[lo, hi] MiB: the cache left at the first dose that slows the program (taking doses from the
    most cache left down) and at the dose before it; None, with the note, when no kept dose slows it
    or none ran."""
    res = rec["result"]
    note = cache_note(rec)
    kept = sorted((p for p in res.get("cache_curve", []) if p.get("kept")), key=lambda p: -p["left_MiB"])
    dropped = [p for p in res.get("cache_curve", []) if not p.get("kept")]
    extra = (
        f"; the pirate lost its lines beside the program at {len(dropped)} dose(s), left out"
        if dropped
        else ""
    )
    if not kept:
        if res.get("cache_curve"):
            note = (
                note + "; " if note else ""
            ) + "the pirate kept its lines at no dose: no working set is claimed"
        return {"working_set_MiB": None, "cache_note": note}
    for i, p in enumerate(kept):
        if not slows(p):
            continue
        if i:
            return {
                "working_set_MiB": [p["left_MiB"], kept[i - 1]["left_MiB"]],
                "cache_note": (note + extra) if note else (extra[2:] or None),
            }
        # slowed by the smallest dose: at least what that left it, and no upper bound was measured
        first = (
            f"slowed already with {_mib(p['left_MiB'])} of the {_mib(res['cache_held_MiB'])} the pirate can hold "
            f"left: the working set is {_mib(p['left_MiB'])} or more, its top not measured"
        )
        return {
            "working_set_MiB": [p["left_MiB"], None],
            "cache_note": "; ".join(x for x in (note, first) if x) + extra,
        }
    least = kept[-1]["left_MiB"]
    none = (
        f"no slowdown with as little as {_mib(least)} of the cache left: the working set fits in {_mib(least)}, "
        "or the program does not reuse the cache"
    )
    return {"working_set_MiB": None, "cache_note": "; ".join(x for x in (note, none) if x) + extra}


def _worst(points: list[dict]) -> dict | None:
    return max(points, key=lambda p: p["slowdown"]["median"], default=None)


def verdict(rec: dict) -> dict:
    """{verdict, why}, in this order: slowed by the bandit: bandwidth-bound when its own bandwidth is a
    large share of the node's, else latency-bound (by the curve's shape when its bandwidth cannot be
    told); slowed as the pirate takes cache (and not by the bandit, or by it less, its bandwidth
    small): cache-bound; slowed by neither but its own bandwidth a large share of the node's: also
    bandwidth-bound (the bandit could not take enough to leave it less than it uses); else insensitive."""
    res = rec["result"]
    thr = slow_line()
    share_thr = decide.threshold("sensitivity_bandwidth_share")
    curve, cache = res["curve"], [p for p in res.get("cache_curve", []) if p.get("kept")]
    bw_slow = [p for p in curve if slows(p)]
    cache_slow = [p for p in cache if slows(p)]
    node, bw = res.get("node_GBps") or 0.0, res.get("bandwidth_GBps")
    worst_bw, worst_cache = _worst(curve), _worst(cache)
    share = bw / node if (bw is not None and node) else None
    if share is not None and not res.get("bandwidth_beyond_noise", True):
        # the bandit lost nothing beyond noise beside it: whatever the estimate, its bandwidth is small
        own = f"its own bandwidth is small: the bandit lost nothing beyond noise beside it (about {bw:.1f} GB/s or less)"
        share = 0.0
    else:
        own = (
            f"its own bandwidth, about {bw:.1f} GB/s, is {share:.0%} of the node's {node:.1f} GB/s"
            if share is not None
            else "its own bandwidth could not be told"
        )

    def at_bw(p: dict) -> str:
        return f"{p['slowdown']['median']:.2f}x slower with the bandit taking {p['taken_GBps']:.1f} GB/s"

    def at_cache(p: dict) -> str:
        return f"{p['slowdown']['median']:.2f}x slower with {_mib(p['left_MiB'])} of the cache left"

    small_bw = share is not None and share < share_thr
    if bw_slow and not (
        cache_slow and small_bw and worst_cache["slowdown"]["median"] > worst_bw["slowdown"]["median"]
    ):
        if share is not None:
            kind = BANDWIDTH if share >= share_thr else LATENCY
        else:  # by the curve's shape: slowed from the lowest dose on, or only near the top
            kind = LATENCY if slows(curve[0]) else BANDWIDTH
        if kind == BANDWIDTH:
            why = f"{at_bw(worst_bw)}; {own}"
        else:
            why = f"{at_bw(worst_bw)} (first at {bw_slow[0]['taken_GBps']:.1f} GB/s), although {own}"
        return {"verdict": kind, "why": why}
    if cache_slow:
        bw_part = (
            f"at most {worst_bw['slowdown']['median']:.2f}x beside the bandit" if worst_bw else "no bandit"
        )
        return {"verdict": CACHE, "why": f"{at_cache(worst_cache)}; {bw_part}; {own}"}
    if share is not None and share >= share_thr:
        top = max(curve, key=lambda p: p["taken_GBps"] or 0.0)
        left = node - (top["taken_GBps"] or 0.0)
        return {
            "verdict": BANDWIDTH,
            "why": f"{own}; the bandit took at most {top['taken_GBps']:.1f} GB/s, leaving about {left:.1f}, "
            f"{'more than' if left >= bw else 'about'} it uses, so it slowed only "
            f"{top['slowdown']['median']:.2f}x (within noise): a co-runner that takes more, or copies of it, will slow it",
        }
    parts = [f"no dose slowed it beyond noise (the rule's {thr - 1:.0%} margin)"]
    if worst_bw:
        parts.append(
            f"at most {worst_bw['slowdown']['median']:.2f}x with the bandit taking {worst_bw['taken_GBps']:.1f} GB/s"
        )
    if worst_cache:
        parts.append(
            f"{worst_cache['slowdown']['median']:.2f}x with {_mib(worst_cache['left_MiB'])} of the cache left"
        )
    return {"verdict": INSENSITIVE, "why": "; ".join(parts)}


def copies(rec: dict, cpus: int) -> dict:
    """How many copies of the program (each on as many CPUs as it ran on) the node feeds before its
    bandwidth runs out, and how many its CPUs hold: the necessary and sufficient count of copies."""
    res = rec["result"]
    per = len(_cpus(rec["config"]["cpus"]))
    fit = max(1, cpus // max(per, 1))
    bw, node = res.get("bandwidth_GBps"), res.get("node_GBps")
    out = {"per_copy_GBps": bw, "node_GBps": node, "cpus_hold": fit, "bandwidth_feeds": None}
    held = f"the CPUs hold {fit} cop{'y' if fit == 1 else 'ies'}"
    if bw is None or not node:
        out["text"] = f"its bandwidth could not be told: {held}"
        return out
    if not res.get("bandwidth_beyond_noise", True) or bw <= 0:
        out["text"] = (
            f"its bandwidth is below what the bandit tells: {held}, and bandwidth is not what limits more"
        )
        out["advice"] = fit
        return out
    feeds = node / bw
    out["bandwidth_feeds"] = feeds
    if feeds >= fit:
        out["text"] = (
            f"the node's {node:.1f} GB/s feeds about {feeds:.1f} copies "
            f"of {bw:.1f} GB/s: its {fit} place(s) for copies run out before its bandwidth does"
        )
        out["advice"] = fit
    else:
        k = max(1, math.floor(feeds))
        out["text"] = (
            f"the node's {node:.1f} GB/s feeds about {feeds:.1f} copies of {bw:.1f} GB/s: beyond {k}, more "
            f"copies (or threads) add little throughput; run {k} and leave the rest of the {fit} free"
        )
        out["advice"] = k
    return out


def _cpus(text: str) -> list[str]:
    out = []
    for part in str(text).split(","):
        a, _, b = part.partition("-")
        out += [str(i) for i in range(int(a), int(b) + 1)] if b else [a]
    return out
