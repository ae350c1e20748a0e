"""The two graphs of a sensitivity record (`bandwall sensitivity --plot`): the program's slowdown
against the bandwidth the bandit took, and against the cache the pirate left it; each dose's median
with its interval, the threshold of a slowdown drawn."""

from __future__ import annotations

from bandwall.report import plots
from bandwall.sensitivity import verdict


def _points(ax, xs, points, colour, label):
    med = [p["slowdown"]["median"] for p in points]
    lo = [p["slowdown"]["median"] - p["slowdown"]["lo"] for p in points]
    hi = [p["slowdown"]["hi"] - p["slowdown"]["median"] for p in points]
    ax.errorbar(xs, med, yerr=[lo, hi], fmt="o-", color=colour, capsize=3, label=label)


def figure(rec: dict):
    r = rec["result"]
    fig, axes = plots.figure(width=9.0, height=3.6, ncols=2)
    bw_ax, cache_ax = axes[0][0], axes[0][1]
    thr = verdict.slow_line()
    curve = r["curve"]
    _points(bw_ax, [0.0] + [p["taken_GBps"] for p in curve], [_unit()] + curve, plots.PALETTE[0], "program")
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
    if kept:
        held = r["cache_held_MiB"]
        _points(
            cache_ax, [held] + [p["left_MiB"] for p in kept], [_unit()] + kept, plots.PALETTE[2], "program"
        )
        cache_ax.invert_xaxis()
        ws = r.get("working_set_MiB")
        if ws and ws[1] is not None:
            cache_ax.axvspan(ws[0], ws[1], color=plots.PALETTE[2], alpha=0.15, label="working set")
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
    fig.suptitle(f"{r['verdict']}: {r['why']}", fontsize=8, wrap=True)
    return fig


def _unit() -> dict:
    return {"slowdown": {"median": 1.0, "lo": 1.0, "hi": 1.0}}
