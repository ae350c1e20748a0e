"""Plots for the report: matplotlib (Agg) figures embedded in the HTML page as base64 PNG data URIs.

Every section draws with these helpers so the page looks of one piece:
  fig, ax = plots.figure()            a figure in the house style
  plots.heatmap(ax, values, rows, cols)   an annotated matrix (distances, placement, engine gains)
  plots.mark(ax, x, y, "knee")        an annotated point on a curve
  html += plots.img_tag(fig, alt="bandwidth against cores")   embeds and closes the figure
"""

from __future__ import annotations

import base64
import functools
import html
import io
from collections.abc import Sequence

DPI = 110
# Colours in the order sections should use them for series (colour-blind-safe, Okabe–Ito).
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]


@functools.cache
def _pyplot():
    """matplotlib's pyplot on the Agg backend, imported on the first plot: importing it takes
    seconds, and every bandwall command (even --help) loads this module."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    return matplotlib.pyplot


def __getattr__(name: str):
    if name == "plt":
        return _pyplot()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def figure(width: float = 6.4, height: float = 3.6, ncols: int = 1, nrows: int = 1):
    """A new figure and its axes in the house style: light grid, no top/right frame."""
    fig, axes = _pyplot().subplots(nrows, ncols, figsize=(width, height), squeeze=False, layout="constrained")
    for ax in axes.flat:
        ax.grid(True, color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    return fig, (axes[0][0] if ncols * nrows == 1 else axes)


def img_tag(fig, alt: str = "") -> str:
    """The figure as an <img> with an embedded PNG; closes the figure."""
    buf = io.BytesIO()
    try:
        # bbox "tight": titles and labels wider than a small figure are kept, not clipped.
        fig.savefig(
            buf, format="png", dpi=DPI, bbox_inches="tight", pad_inches=0.08, metadata={"Software": None}
        )
    finally:
        _pyplot().close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt, quote=True)}">'


def heatmap(
    ax,
    values: Sequence[Sequence[float]],
    row_labels: Sequence,
    col_labels: Sequence,
    fmt: str = "{:.0f}",
    cmap: str = "viridis",
    label: str | None = None,
    reverse: bool = False,
):
    """An annotated matrix on ax: one coloured cell per value, the value written in it.

    None or NaN cells stay blank; each value is written in black or white, whichever its cell's
    colour shows better. reverse=True uses the colour map reversed.
    """
    import numpy as np

    data = np.array([[np.nan if v is None else float(v) for v in row] for row in values], dtype=float)
    cmap_obj = _pyplot().get_cmap(cmap + ("_r" if reverse else ""))
    im = ax.imshow(data, cmap=cmap_obj, aspect="auto")
    ax.grid(False)
    ax.set_xticks(range(len(col_labels)), [str(c) for c in col_labels])
    ax.set_yticks(range(len(row_labels)), [str(r) for r in row_labels])
    for i in range(data.shape[0]):
        for j in range(data.shape[1]):
            v = data[i, j]
            if not np.isfinite(v):
                continue
            r, g, b, _ = im.cmap(im.norm(v))
            light = 0.299 * r + 0.587 * g + 0.114 * b > 0.5
            ax.text(
                j, i, fmt.format(v), ha="center", va="center", fontsize=9, color="black" if light else "white"
            )
    if label:
        ax.figure.colorbar(im, ax=ax, label=label, shrink=0.8)
    return im


def mark(ax, x: float, y: float, text: str, color: str = "#D55E00") -> None:
    """Marks one point of a curve with a ring and a label above it."""
    ax.plot([x], [y], "o", markersize=11, markerfacecolor="none", markeredgecolor=color, markeredgewidth=2)
    ax.annotate(
        text, (x, y), textcoords="offset points", xytext=(0, 12), ha="center", color=color, fontsize=9
    )
