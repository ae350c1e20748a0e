"""The heat map of an engine sweep (the figure of Intel's DSA article): speed-up of engine + CPU over CPU only,
compute cores by kernel."""

from __future__ import annotations

from bandwall.report import plots
from bandwall.views.engine import heatmap_cells


def figure(rec: dict):
    """The DSA article's heat map: speed-up of engine + CPU over CPU only, compute cores by kernel."""
    cores, labels, values = heatmap_cells(rec["result"]["rows"])
    fig, ax = plots.figure(width=max(4.0, 1.3 * len(labels) + 2), height=max(2.4, 0.45 * len(cores) + 1.2))
    plots.heatmap(ax, values, cores, labels, fmt="{:.2f}", cmap="RdYlGn", label="speed-up (x)")
    ax.set_ylabel("compute cores")
    ax.set_title(f"{rec['config']['engine']} engine + CPU over CPU only", fontsize=10)
    return fig
