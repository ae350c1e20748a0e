"""Memory- or compute-bound, judged against this machine's measured ceilings (its STREAM bandwidth
and FMA peak): STREAM's kernels and the ISO3DFD stencil."""

from __future__ import annotations

from bandwall.core import decide, manifest
from bandwall.core.claims import FALLS, RISES, claim, say
from bandwall.core.spread import NOISE, Spread, fmt
from bandwall.report.advice.base import EFFICIENCY_FLAG, Evidence, Line, efficiency_flag, ids


def bound(gbps: float, gflops: float, ceiling_gbps: float, peak_gflops: float) -> tuple[str, float, float]:
    """(bound, share of the bandwidth ceiling, share of the FMA peak), by the roofline of the measured
    ceilings: memory-bound when the run's flops per byte are below the ridge (peak / bandwidth
    ceiling). A peak below what the run itself computed is no ceiling (that peak run was off): the
    run is judged by bandwidth alone, as memory-bound."""
    bw_share = gbps / ceiling_gbps if ceiling_gbps > 0 else 0.0
    flop_share = gflops / peak_gflops if peak_gflops > 0 else float("inf")
    if flop_share > 1 or gbps <= 0:
        return "memory", bw_share, flop_share
    ridge = peak_gflops / ceiling_gbps if ceiling_gbps > 0 else float("inf")
    return ("memory" if gflops / gbps < ridge else "compute"), bw_share, flop_share


def _gflops(stream_rec: dict) -> float:
    res = stream_rec["result"]
    return res["median_GBps"] * res["flops_per_element"] / res["bytes_per_element"]


def peak_spread(peak: dict) -> Spread:
    """The FMA peak's repetitions over all threads (double precision); a record from before they were
    stored gives its best alone."""
    r = peak["result"]
    return Spread.of(r.get("total_gflops_dp_reps") or [r["total_gflops_dp"]], "GFlop/s")


def roofline(ev: Evidence) -> list[Line]:
    """What limits each STREAM kernel. No claims: the card states a classification by the roofline
    model (the run's flops per byte against the ridge of the measured ceilings) and the run's shares
    of the two ceilings, no comparison of two figures measured in paired rounds."""
    peaks, streams = ev.all("peak"), [r for r in ev.all("stream") if "engine" not in r["config"]]
    if not peaks or not streams:
        return []
    peak = max(peaks, key=lambda r: r["result"]["total_gflops_dp"])
    ceiling = max(streams, key=lambda r: r["result"]["median_GBps"])
    lines = []
    by_kernel: dict[str, dict] = {}
    for r in streams:
        k = r["config"]["kernel"]
        if k not in by_kernel or r["result"]["median_GBps"] > by_kernel[k]["result"]["median_GBps"]:
            by_kernel[k] = r
    cg, pk = ceiling["result"]["median_GBps"], peak["result"]["total_gflops_dp"]
    flops = {k: _gflops(r) for k, r in by_kernel.items()}
    off = pk < max(flops.values())  # a peak below what a STREAM run computed is no ceiling
    for k, r in by_kernel.items():
        what, bw, fl = bound(r["result"]["median_GBps"], flops[k], cg, 0.0 if off else pk)
        fl = flops[k] / pk if pk > 0 else float("inf")
        note = (
            " (the FMA peak measured below what STREAM itself computed: that peak run is off)" if off else ""
        )
        gflops = flops[k]
        lines.append(
            Line(
                f"what limits STREAM {k}",
                f"{Spread.of_stream(r).text()}: {bw:.0%} of the STREAM ceiling, {fmt(gflops)} GFlop/s = {fl:.1%} of the FMA peak",
                f"this machine's STREAM ceiling {Spread.of_stream(ceiling).text()} ({ceiling['config']['kernel']}, "
                f"{ceiling['config']['threads']} cores) and FMA peak {fmt(pk)} GFlop/s double "
                f"({peak['config'].get('isa', '')}; the best of its rounds, which spread {peak_spread(peak).text()})",
                f"{what}-bound{note}: more flops per byte moved (blocking, fusing loops) help it; more cores past the knee do not",
                "",
                f"{ids([r, peak])}",
                value=Spread.of_stream(r),
                limit=cg,
            )
        )
    return lines


# The Execution-Cache-Memory estimate: the core's work, the L2-to-L1 transfers and (in records that
# name it in ecm_levels) the memory transfers, not overlapped.
ECM = "ports + L2-to-L1 fills"


# The article's variants the NUMA guide warns against (serial initialisation puts every page on the
# master thread's node; a dynamic schedule sends blocks away from the thread that placed them): never
# recommended where one NUMA node cannot tell them apart, and elsewhere only when they win beyond noise.
DEFAULT_VARIANT = ("first-touch", "static")
WARNED = {"serial", "dynamic"}


def _numa_nodes(ev: Evidence) -> int:
    topos = ev.all("topo")
    return len([n for n in topos[-1]["result"]["numa_nodes"] if n["cpus"]]) if topos else 1


def stencil(ev: Evidence) -> list[Line]:
    runs = [r for r in ev.section("iso3dfd") if r.get("tool") == "iso3dfd" and "roofline" in r["result"]]
    if not runs:
        return []
    variants: dict[tuple[str, str], list[dict]] = {}
    for r in runs:
        variants.setdefault((r["config"]["init"], r["config"]["schedule"]), []).append(r)
    sp = {v: Spread.of([r["result"]["mpoints_per_s"] for r in rs], "MPoints/s") for v, rs in variants.items()}
    default = DEFAULT_VARIANT if DEFAULT_VARIANT in sp else next(iter(sp))
    # The variant to recommend: the default, unless an allowed one runs faster beyond noise.
    allowed = [v for v in sp if v == default or (_numa_nodes(ev) > 1 or not WARNED & set(v))]
    names = [f"{a}/{b}" for a, b in allowed]
    pick = decide.choose_best(names, [sp[v].values for v in allowed], allowed.index(default))
    best = allowed[pick.chosen]
    fig = "ISO3DFD throughput"
    chosen = claim(fig, sp[default], sp[best], _name(default), _name(best))
    decisive = pick.decisive and chosen.direction == RISES  # a choice only where its claim rises
    if not decisive:
        best = default
    roof = max(variants[best], key=lambda r: r["result"]["mpoints_per_s"])["result"]["roofline"]
    ecm = roof.get("ecm_levels", ECM)
    # arrays a cache holds come from there: L3's roof (or, in L2, none beyond it), not memory's, which
    # the run may pass
    level = roof.get("arrays_in_cache", {}).get("level")
    feed = {"L3": ("L3", "llc_bound"), "L2": ("L2", "l2_feed")}.get(level, ("memory", "memory_bound"))
    bounds = {
        name: roof[f"{key}_mpoints_per_s"]
        for name, key in (
            feed,
            ("in-core (ports)", "port_bound"),
            ("in-core (operation mix)", "mix_bound"),
            ("the kernel in L2", "kernel_bound"),
            ("FMA", "incore_bound"),
            (ecm, "ecm"),
        )
        if roof.get(f"{key}_mpoints_per_s")
    }
    if not bounds:
        return []
    tight = min(bounds, key=bounds.get)
    e = sp[best].median / bounds[tight]
    others = [v for v in sp if v != best]
    # each other variant against the one kept (the default, when chosen, in the claim above)
    against = [
        claim(fig, sp[best], sp[v], _name(best), _name(v)) for v in others if not decisive or v != default
    ]
    verdict = (
        f"{best[0]} initialisation, {best[1]} schedule: {say(chosen)}"
        if decisive
        else f"keep {best[0]} initialisation, {best[1]} schedule (the default)"
    )
    if against:
        verdict += "; " + "; ".join(
            say(c) for c in against if not (decisive and c.end.label == chosen.start.label)
        )
    if _numa_nodes(ev) <= 1 and any(WARNED & set(v) for v in others):
        verdict += (
            " (one NUMA node: serial initialisation and a dynamic schedule cannot show their cost here)"
        )
    # the run against the flag's share of its bound, each round against the same line
    line = Spread.of([EFFICIENCY_FLAG * bounds[tight]] * max(1, len(sp[best].values)), "MPoints/s")
    held = claim(fig, line, sp[best], f"{EFFICIENCY_FLAG} of the {tight} bound", _name(best))
    low = held.direction == FALLS
    side = "at or above" if e >= EFFICIENCY_FLAG else "below"
    verdict += f"; it reaches {e:.0%} of its tightest bound ({tight}), " + (
        efficiency_flag(e)
        if held.direction != NOISE
        else f"{side} {EFFICIENCY_FLAG} by its median, not beyond noise"
        + ("" if e >= EFFICIENCY_FLAG else ": not flagged")
    )
    verdict += f" ({say(held)})"
    if tight == ecm:
        verdict += (
            f"; {fmt(roof['l1_fill_bytes_per_point'])} bytes a point come from L2 into L1 "
            f"(L2 {fmt(roof['l2_GBps'])} GB/s, {fmt(roof['l1_fill_bound_mpoints_per_s'])} MPoints/s alone)"
            + ("" if roof.get("y_window_in_l1") else ": the y neighbours' rows do not stay in L1")
        )
    proj = roof.get("node_projection")
    blocks = [r["config"].get("time_block", {}) for r in variants[best]]
    ran = max(int(b.get("depth", 1)) for b in blocks)
    # A run whose own race (now, or kept from an earlier run), or the table's race on this CPU,
    # settled the depth has answered "do sweeps pay" under the decision rule: the projection never
    # overrules it.
    raced = [b for b in blocks if b.get("how") in manifest.raced_depth_hows()]
    if raced and ran == 1:
        who = "the table of measured choices" if raced[0].get("how") == "table" else "the run's own race"
        verdict += f"; temporal blocking: {who} kept step by step ({raced[0].get('why', '')})"
    elif proj:
        verdict += f"; temporal blocking: {proj['why']}"
    # below the flag beyond noise, not by the median alone (low, above): a figure hovering at the flag
    # must not bring a fix one run and not the next
    fix = []
    if proj and proj["pays"] and ran == 1 and not raced and len(proj["depths"]) > 1:
        fix.append(f"--time-block {proj['depths'][-1]['depth']}")
    if decisive:
        fix.append(f"--init {best[0]} --schedule {best[1]}")
    if low and tight != "memory":
        fix.append("--blocks search")
    return [
        Line(
            "ISO3DFD stencil",
            f"{sp[best].text()}",
            f"{tight} bound {fmt(bounds[tight])} MPoints/s from this machine's measured ceilings"
            + (f" (STREAM {fmt(roof['stream_best_GBps'])} GB/s)" if "stream_best_GBps" in roof else ""),
            verdict,
            f"bandwall iso3dfd {' '.join(fix)}" if fix else "",
            f"{ids(runs)}; " + "; ".join(f"{a}/{b} {s.text()}" for (a, b), s in sp.items()),
            flag=low,
            value=sp[best],
            limit=EFFICIENCY_FLAG * bounds[tight],
            claims=[*([chosen] if decisive else []), *against, held],
        )
    ]


def _name(v: tuple[str, str]) -> str:
    return f"{v[0]}/{v[1]}"
