"""The plot of one interference record (`bandwall interference --plot`): each case's values over the
rounds, its median as a bar and its range as an error bar, alone and beside the noise."""

from __future__ import annotations

from bandwall.report import plots

LABELS = {
    "all-alone": "all cores\nalone",
    "all-noise": "all cores\n+ noise",
    "knee-alone": "knee cores\nalone",
    "knee-noise": "knee cores\n+ noise on surplus",
}


def figure(rec: dict):
    fig, ax = plots.figure()
    cases = rec["result"]["cases"]
    xs = list(range(len(cases)))
    med = [c["median"] for c in cases]
    low = [c["median"] - c["min"] for c in cases]
    high = [c["max"] - c["median"] for c in cases]
    colours = [plots.PALETTE[1] if c["noise"] else plots.PALETTE[0] for c in cases]
    ax.bar(xs, med, color=colours, alpha=0.8)
    ax.errorbar(xs, med, yerr=[low, high], fmt="none", ecolor="black", capsize=4)
    for x, c in zip(xs, cases):
        ax.plot([x] * len(c["values"]), c["values"], "k.", alpha=0.6)
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{LABELS[c['case']]}\n({c['cores']})" for c in cases], fontsize=8)
    ax.set_ylabel(rec["result"]["unit"])
    ax.set_ylim(bottom=0)
    ax.set_title(rec["result"]["verdict"]["text"], fontsize=9)
    return fig
