"""The plot of one core sweep (`bandwall sweep --plot`): bandwidth against cores, the knee marked."""

from __future__ import annotations

from collections.abc import Sequence

from bandwall.core.errors import UsageError
from bandwall.report import plots


def figure(
    points: Sequence[dict], knee_cores: int, title: str = "", key: str = "cores", xlabel: str = "cores"
):
    """Bandwidth against cores (or points[key], e.g. ranks per node), best and median, the knee
    marked; returns the figure."""
    fig, ax = plots.figure()
    xs = [p[key] for p in points]
    ax.plot(xs, [p["best_GBps"] for p in points], "o-", color=plots.PALETTE[0], label="best")
    ax.plot(xs, [p["median_GBps"] for p in points], "s--", color=plots.PALETTE[1], label="median", alpha=0.8)
    ky = next(p["best_GBps"] for p in points if p[key] == knee_cores)
    plots.mark(ax, knee_cores, ky, f"knee: {knee_cores} {xlabel}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("GB/s")
    ax.set_xticks(xs)
    ax.set_ylim(bottom=0, top=max(p["best_GBps"] for p in points) * 1.18)
    ax.legend(loc="lower right")
    if title:
        ax.set_title(title, fontsize=10)
    return fig


def save(fig, path: str) -> None:
    try:
        fig.savefig(path, dpi=plots.DPI)
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot write plot {path!r}: {e}") from e
    finally:
        plots.plt.close(fig)
