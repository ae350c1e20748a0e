"""The per-node plot of a survey record (`bandwall survey --plot`): one panel per figure, each node's
median as a bar with its range as an error bar, the nodes' median as a line, flagged nodes in the
second colour."""

from __future__ import annotations

import statistics

from bandwall.report import plots
from bandwall.views.survey import NAMES


def figure(rec: dict):
    r = rec["result"]
    nodes = r["nodes"]
    keys = sorted({k for n in nodes for k in n["figures"]})
    flagged = {(o["node"], o["metric"]) for o in r["outliers"]}
    odd = {o["node"] for o in r["outliers"] if o["metric"] not in keys}
    fig, axes = plots.figure(3.2 * len(keys), 3.2, ncols=len(keys))
    axes = list(axes.flat) if len(keys) > 1 else [axes]
    for ax, key in zip(axes, keys):
        have = [n for n in nodes if key in n["figures"]]
        xs = list(range(len(have)))
        f = [n["figures"][key] for n in have]
        med = [x["median"] for x in f]
        colours = [
            plots.PALETTE[1] if (n["node"], key) in flagged or n["node"] in odd else plots.PALETTE[0]
            for n in have
        ]
        ax.bar(xs, med, color=colours, alpha=0.85)
        ax.errorbar(
            xs,
            med,
            yerr=[[m - x["min"] for m, x in zip(med, f)], [x["max"] - m for m, x in zip(med, f)]],
            fmt="none",
            ecolor="black",
            capsize=3,
        )
        ax.axhline(statistics.median(med), color="black", linestyle="--", linewidth=1)
        ax.set_xticks(xs)
        ax.set_xticklabels([n["node"] for n in have], rotation=60, fontsize=7)
        ax.set_title(NAMES.get(key, key), fontsize=9)
        ax.set_ylabel(f[0].get("unit", ""))
        ax.set_ylim(bottom=0)
    return fig
