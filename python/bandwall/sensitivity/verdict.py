"""What a sensitivity record says, as plain functions of its figures (so the report and the tests use
them on any record): the program's own bandwidth from what the bandit loses beside it, the pirate's
doses it kept, the working set, and the verdict with its reason, resting on the controls run in the
same rounds (controls.py). Every threshold is decision.json's."""

from __future__ import annotations

import statistics

from bandwall.core import decide
from bandwall.core.claims import FALLS, Claim, claim, say
from bandwall.core.spread import Spread
from bandwall.sensitivity import comparisons as cmp
from bandwall.sensitivity import controls

BANDWIDTH = "bandwidth-bound"
LATENCY = "latency-bound"
CACHE = "cache-bound"
INSENSITIVE = "insensitive"
UNDETERMINED = "undetermined"
VERDICTS = (BANDWIDTH, LATENCY, CACHE, INSENSITIVE, UNDETERMINED)
BANDIT_RATE = "the bandit's bandwidth"


def _losses(alone: list[float], beside: list[float]) -> list[float]:
    return [a - b for a, b in zip(alone, beside)]


def bandwidth_estimate(
    alone_p: list[float],
    beside_program: list[float],
    alone_r: list[float],
    beside_reader: list[float],
    reader: list[float],
    rule=None,
    control: dict | None = None,
) -> dict:
    """The program's bandwidth from the bandit at full dose, run by run: what it loses beside the
    program against its rate just before (alone_p), scaled by what it loses beside a STREAM triad of
    known bandwidth on the same CPUs against its rate just before that (alone_r), so that a memory
    system the bandit alone cannot saturate still answers. None, with a note, when the bandit loses
    nothing beyond noise even beside the triad, or when the bandwidth control (the same triad's own
    slowdown under the bandit's doses, controls.bandwidth) failed."""
    rule = rule or decide.rule()
    loss_p = statistics.median(_losses(alone_p, beside_program)) if beside_program else 0.0
    loss_r = statistics.median(_losses(alone_r, beside_reader)) if beside_reader else 0.0
    reader_gbps = statistics.median(reader) if reader else 0.0
    # the bandit's rate just before against beside the triad and beside the program, rounds paired:
    # what it lost is told only where its claim falls beyond noise
    c_ref, c_prog = (
        claim(BANDIT_RATE, Spread.of(a, "GB/s"), Spread.of(b, "GB/s"), "alone", beside) if a and b else None
        for a, b, beside in (
            (alone_r, beside_reader, "beside the STREAM triad"),
            (alone_p, beside_program, "beside the program"),
        )
    )
    ref_told = c_ref is not None and c_ref.direction == FALLS
    prog_told = c_prog is not None and c_prog.direction == FALLS
    out = {
        "bandit_loss_GBps": loss_p,
        "reference": {"reader_GBps": reader_gbps, "bandit_loss_GBps": loss_r, "beyond_noise": ref_told},
        "bandwidth_beyond_noise": prog_told,
        "bandwidth_GBps": None,
        "bandwidth_note": None,
        "bandit_claims": [c.to_json() for c in (c_ref, c_prog) if c is not None],
    }
    if not ref_told or loss_r <= 0:
        told = f": {say(c_ref)}" if c_ref is not None else ""
        out["bandwidth_note"] = (
            f"the bandit lost nothing beyond noise even beside a STREAM triad of {reader_gbps:.1f} GB/s on "
            f"the program's CPUs{told}; memory is not contended at this scale, so the program's bandwidth "
            "cannot be told"
        )
        return out
    if control is not None and not control["passed"]:
        out["bandwidth_note"] = (
            f"{control['why']}: the bandit cannot be shown to take bandwidth a program needs here, so no "
            "estimate is made from it"
        )
        return out
    out["bandwidth_GBps"] = max(0.0, reader_gbps * loss_p / loss_r)
    if not prog_told:
        told = f"{say(c_prog)}; " if c_prog is not None else ""
        out["bandwidth_note"] = (
            f"the bandit lost nothing beyond noise beside the program ({told}{loss_p:+.2f} GB/s against "
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


def _kept_cache(r: dict) -> list[dict]:
    """The pirate's doses the verdict reads: those it kept its lines at, when its CPU was shown to
    share the program's cache; none otherwise."""
    return [p for p in r.get("cache_curve", []) if p.get("kept")] if r.get("cache_shared") is True else []


def slowdown_claims(r: dict) -> list[Claim]:
    """The program's slowdowns the verdict rests on, as claims: its run time beside the bandit, and
    beside the cache pirate (its kept doses, when its CPU shares the program's cache), each at the
    worst dose that slowed it beyond noise, else at its worst dose (comparisons.deciding); each
    rises exactly when some dose slowed it (slows())."""
    out = [
        cmp.deciding(cmp.PROGRAM, r.get("curve", []), cmp.bandit),
        cmp.deciding(cmp.PROGRAM, _kept_cache(r), cmp.cache_left),
    ]
    return [c for c in out if c is not None]


def control_claim(ctl: dict, name: str) -> Claim | None:
    """The claim a control was decided by (its worst dose that slowed it, else its worst)."""
    c = ctl.get(name) or {}
    if c.get("claim"):
        return Claim.from_json(c["claim"])
    figure = {
        controls.BANDWIDTH: cmp.BANDWIDTH_CONTROL,
        controls.CACHE: cmp.CACHE_CONTROL,
        controls.PLACEBO: cmp.PROGRAM,
    }[name]
    label = {controls.BANDWIDTH: cmp.bandit, controls.CACHE: cmp.cache_left}.get(name, lambda p: cmp.PLACEBO)
    return cmp.deciding(figure, c.get("points") or [], label)


def verdict(rec: dict) -> dict:
    """{verdict, why, resources, claims}. A verdict that says what slows the program needs it slowed
    beyond noise (and, for the cache, the pirate's CPU shown to share the program's cache); one that
    says what does not (insensitive) needs the matching positive control slowed in the same run; a
    placebo that slowed the program leaves every slowdown unexplained. Otherwise `undetermined`, with
    why naming the failed control, by how much, and what would make it work. In this order: slowed by
    the bandit: bandwidth-bound when its own bandwidth is a large share of the node's, else
    latency-bound (by the curve's shape when its bandwidth cannot be told, the bandwidth control
    passed); slowed as the pirate takes cache (and not by the bandit, or by it less, its bandwidth
    small): cache-bound; slowed by neither but its own bandwidth a large share of the node's: also
    bandwidth-bound (the bandit could not take enough to leave it less than it uses); else
    insensitive.

    Every comparison `why` states is a claim (comparisons.py) and its words are rendered from it
    (say()); `claims` holds them: the program's slowdowns beside the bandit and the pirate first
    (slowdown_claims), then the others `why` states, then the controls' (each rises when the control
    was slowed beyond noise). resources says "slows it" only where the program's claim rises, "does
    not slow it" only where it does not and the control's claim rises."""
    res = rec["result"]
    ctl = res.get("controls") or {}
    thr = slow_line()
    share_thr = decide.threshold("sensitivity_bandwidth_share")
    bw_failed = controls.failed(ctl, controls.BANDWIDTH)
    cache_failed = controls.failed(ctl, controls.CACHE)
    placebo_failed = controls.failed(ctl, controls.PLACEBO)
    shared = res.get("cache_shared") is True
    if not shared and not cache_failed:  # whatever the control did, no cache was shared with the program
        cache_failed = (
            f"the pirate's CPU was not shown to share the program's last-level cache ({cache_note(rec) or 'no scan'}); "
            f"what would make it work: {controls.REMEDY[controls.CACHE]}"
        )
    curve = res["curve"]
    cache = _kept_cache(res)
    c_bw = cmp.deciding(cmp.PROGRAM, curve, cmp.bandit)
    c_cache = cmp.deciding(cmp.PROGRAM, cache, cmp.cache_left)
    ctl_claims = {n: control_claim(ctl, n) for n in (controls.BANDWIDTH, controls.CACHE, controls.PLACEBO)}
    bw_slow = [p for p in curve if slows(p)]
    cache_slow = [p for p in cache if slows(p)]
    node = res.get("node_GBps") or 0.0
    bw = res.get("bandwidth_GBps") if not bw_failed else None
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
    bound = res.get("bandwidth") or {}
    if share is None and bound.get("kind") == "upper bound" and node and bound["GBps"] / node < share_thr:
        # no estimate, but its copies bound its bandwidth below the share: small, whatever the bandit did
        share = bound["GBps"] / node
        own = (
            f"its own bandwidth is at most {bound['GBps']:.1f} GB/s (a bound from its copies run at once), "
            f"under {share_thr:.0%} of the node's {node:.1f} GB/s"
        )
    resources = {
        "bandwidth": "slows it" if bw_slow else ("not told" if bw_failed else "does not slow it"),
        "cache": "slows it"
        if cache_slow
        else ("not told" if cache_failed or not shared else "does not slow it"),
    }
    stated: list[Claim] = []

    def said(c: Claim) -> str:
        """The claim's words, and the claim kept among those `why` states."""
        if c not in stated:
            stated.append(c)
        return say(c)

    def failed_control(name: str, why: str) -> str:
        """A failed control's reason (rendered from its claim, when it ran), its claim kept."""
        c = ctl_claims[name]
        if c is not None and ctl.get(name, {}).get("why") and say(c) in why:
            said(c)
        return why

    def out(kind: str, why: str) -> dict:
        first = [c for c in (c_bw, c_cache) if c is not None]
        rest = [c for c in ctl_claims.values() if c is not None]
        claims: list[Claim] = []
        for c in first + stated + rest:
            if c not in claims:
                claims.append(c)
        return {
            "verdict": kind,
            "why": why,
            "resources": resources,
            "claims": [c.to_json() for c in claims],
        }

    if placebo_failed:
        resources.update(bandwidth="not told", cache="not told")
        return out(UNDETERMINED, failed_control(controls.PLACEBO, placebo_failed))
    small_bw = share is not None and share < share_thr
    if bw_slow and not (
        cache_slow and small_bw and worst_cache["slowdown"]["median"] > worst_bw["slowdown"]["median"]
    ):
        if share is not None:
            kind = BANDWIDTH if share >= share_thr else LATENCY
        elif not bw_failed:  # by the curve's shape: slowed from the lowest dose on, or only near the top
            kind = LATENCY if slows(curve[0]) else BANDWIDTH
        else:
            return out(
                UNDETERMINED,
                f"slowed by the bandit: {said(c_bw)}; but bandwidth cannot be told from latency: "
                + failed_control(controls.BANDWIDTH, bw_failed),
            )
        if kind == BANDWIDTH:
            why = f"slowed by the bandit: {said(c_bw)}; {own}"
        else:
            first = cmp.slowdown(cmp.PROGRAM, bw_slow[0], cmp.bandit(bw_slow[0]))
            at = (
                ""
                if first == c_bw
                else "; first "
                + cmp.by_direction(
                    first,
                    f"slowed beyond noise with {first.end.label}",
                    f"faster beyond noise with {first.end.label}",
                )
            )
            if at:
                said(first)
            why = f"slowed by the bandit: {said(c_bw)}{at}; although {own}"
        return out(kind, why)
    if cache_slow:
        bw_part = f"beside the bandit, {said(c_bw)}" if c_bw else "no bandit dose ran"
        return out(CACHE, f"slowed by the pirate: {said(c_cache)}; {bw_part}; {own}")
    if share is not None and share >= share_thr:
        cp = res.get("copies") or {}
        if cp.get("agrees") is False:  # the run's own copies contradict the estimate this rests on
            return out(
                UNDETERMINED,
                f"no dose slowed it beyond noise ({said(c_bw)}); {own}, which would make it bandwidth-bound, "
                f"but {cp['check']}",
            )
        top = max(curve, key=lambda p: p["taken_GBps"] or 0.0)
        c_top = cmp.slowdown(cmp.PROGRAM, top, cmp.bandit(top))
        left = node - (top["taken_GBps"] or 0.0)
        return out(
            BANDWIDTH,
            f"{own}; the bandit took at most {top['taken_GBps'] or 0.0:.1f} GB/s, leaving about {left:.1f}, "
            f"{'more than' if left >= bw else 'about'} it uses, so it was not slowed beyond noise: "
            f"{said(c_top)}; a co-runner that takes more, or copies of it, will slow it",
        )
    parts = [f"no dose slowed it beyond noise (the rule's {thr - 1:.0%} margin)"]
    if c_bw:
        parts.append(said(c_bw))
    if c_cache:
        parts.append(said(c_cache))
    failed = []
    if bw_failed:
        failed.append(failed_control(controls.BANDWIDTH, bw_failed))
    if cache_failed:
        failed.append(failed_control(controls.CACHE, cache_failed))
    if failed:
        return out(UNDETERMINED, "; ".join(parts) + ", but that says nothing here: " + "; and ".join(failed))
    positive = [ctl_claims[n] for n in (controls.BANDWIDTH, controls.CACHE) if ctl_claims[n] is not None]
    slowed = "; ".join(said(c) for c in positive)
    return out(
        INSENSITIVE,
        "; ".join(parts)
        + "; both controls were slowed in the same rounds"
        + (f": {slowed}" if slowed else ""),
    )
