"""The graphs of a sensitivity record (`bandwall sensitivity --plot`): the program's slowdown against
the bandwidth the bandit took, and against the cache the pirate left it, each with its control's
slowdown in the same axes (the STREAM triad under the same doses, the cache reader under the same
pirate doses, the placebo at no bandwidth taken); and the copies run at once: throughput and each
copy's slowdown against the count. Each point is a median with its interval; the rule's threshold
of a slowdown is drawn."""

from __future__ import annotations

from bandwall.report import plots
from bandwall.sensitivity import verdict


def _points(ax, xs, points, colour, label, fmt="o-"):
    med = [p["slowdown"]["median"] for p in points]
    lo = [p["slowdown"]["median"] - p["slowdown"]["lo"] for p in points]
    hi = [p["slowdown"]["hi"] - p["slowdown"]["median"] for p in points]
    ax.errorbar(xs, med, yerr=[lo, hi], fmt=fmt, color=colour, capsize=3, label=label)


def _state(c: dict) -> str:
    return "passed" if c.get("passed") else "failed"


def figure(rec: dict):
    r = rec["result"]
    ctl = r.get("controls") or {}
    measured = (r.get("copies") or {}).get("measured") or []
    fig, axes = plots.figure(width=13.0 if measured else 9.0, height=3.8, ncols=3 if measured else 2)
    bw_ax, cache_ax = axes[0][0], axes[0][1]
    thr = verdict.slow_line()
    curve = r["curve"]
    _points(bw_ax, [0.0] + [p["taken_GBps"] for p in curve], [_unit()] + curve, plots.PALETTE[0], "program")
    bwc = ctl.get("bandwidth")
    if bwc and bwc["points"]:
        _points(
            bw_ax,
            [0.0] + [p["taken_GBps"] or 0.0 for p in bwc["points"]],
            [_unit()] + bwc["points"],
            plots.PALETTE[1],
            f"control: STREAM triad ({_state(bwc)})",
            fmt="s--",
        )
    pl = ctl.get("placebo")
    if pl and pl["points"]:
        _points(bw_ax, [0.0], pl["points"], plots.PALETTE[4], f"placebo ({_state(pl)})", fmt="D")
    bw_ax.set_xlabel("bandwidth the bandit took (GB/s)")
    bw_ax.set_ylabel("time / time alone")
    if r.get("bandwidth_GBps") is not None and r.get("node_GBps"):
        bw_ax.axvline(
            r["node_GBps"] - r["bandwidth_GBps"],
            color=plots.PALETTE[3],
            linestyle=":",
            label="node's bandwidth less the program's",
        )
    kept = [p for p in r.get("cache_curve", []) if p.get("kept")]
    cc = ctl.get("cache")
    held = r.get("cache_held_MiB")
    if kept:
        _points(
            cache_ax, [held] + [p["left_MiB"] for p in kept], [_unit()] + kept, plots.PALETTE[2], "program"
        )
        ws = r.get("working_set_MiB")
        if ws and ws[1] is not None:
            cache_ax.axvspan(ws[0], ws[1], color=plots.PALETTE[2], alpha=0.15, label="working set")
    if cc and cc["points"] and held:
        _points(
            cache_ax,
            [held] + [p["left_MiB"] for p in cc["points"]],
            [_unit()] + cc["points"],
            plots.PALETTE[1],
            f"control: reads over {cc['bytes'] / 2**20:.3g} MiB ({_state(cc)})",
            fmt="s--",
        )
    if kept or (cc and cc["points"]):
        cache_ax.invert_xaxis()
    else:
        cache_ax.text(
            0.5,
            0.5,
            "no cache doses\n(see the cache note)",
            ha="center",
            va="center",
            transform=cache_ax.transAxes,
            fontsize=9,
        )
    cache_ax.set_xlabel("cache left to the program (MiB)")
    for ax in (bw_ax, cache_ax):
        ax.axhline(thr, color="grey", linestyle="--", linewidth=0.8, label=f"the rule's margin, {thr:g}")
        ax.legend(fontsize=7)
    if measured:
        ax = axes[0][2]
        ks = [p["copies"] for p in measured]
        for key, colour, label in (
            ("throughput", plots.PALETTE[0], "throughput / one copy's"),
            ("slowdown", plots.PALETTE[3], "each copy's time / alone"),
        ):
            med = [p[key]["median"] for p in measured]
            ax.errorbar(
                ks,
                med,
                yerr=[
                    [m - p[key]["lo"] for m, p in zip(med, measured)],
                    [p[key]["hi"] - m for m, p in zip(med, measured)],
                ],
                fmt="o-",
                color=colour,
                capsize=3,
                label=label,
            )
        ax.plot(ks, ks, color="grey", linestyle=":", linewidth=0.8, label="copies (perfect scaling)")
        advice = r["copies"].get("advice")
        if advice:
            ax.axvline(advice, color=plots.PALETTE[2], linestyle="--", label=f"advised: {advice}")
        ax.set_xlabel("copies at once")
        ax.legend(fontsize=7)
    why = r["why"] if len(r["why"]) <= 300 else r["why"][:297] + "..."
    fig.suptitle(f"{r['verdict']}: {why}", fontsize=7, wrap=True)
    return fig


def _unit() -> dict:
    return {"slowdown": {"median": 1.0, "lo": 1.0, "hi": 1.0}}
