"""Report section `orders`: the stencil at every order the vector kernels are compiled for (radius 1,
2, 4 and 8; space order 2 to 16), step by step and at bandwall's defaults (sweeps in time where its
model and a race on the run's data say they pay), against the memory wall of the same cores (STREAM
triad over the 16 bytes a point a step by step moves) and the compute roof (the FMA peak over the
radius's flops a point). At low order the wall binds and sweeps can pass it; at the article's 16th order the
kernel is near its in-core limit and the wall is thin."""

from __future__ import annotations

import statistics

from bandwall.core import decide
from bandwall.display import table
from bandwall.kernels import iso3dfd
from bandwall.report import Context, of_tool, plots, sections
from bandwall.report.render import html_table, note

# The grid lies well beyond the last-level cache in both, or the wall would not be the memory's.
QUICK = {"interior": 192, "iters": 40}  # steps enough for the race of a sweep
FULL = {"interior": 256, "iters": 40}
MODES = (("swept", None), ("step by step", 1))  # --time-block: bandwall's default (auto), then 1
COLUMNS = [
    "radius (order)",
    "memory wall",
    "step by step",
    "defaults (depth)",
    "compute roof",
    "x wall",
    "x step by step",
]


def radii() -> list[int]:
    """The radii the vector kernels are compiled for (the manifest's)."""
    return [int(r) for r in iso3dfd.stencil()["kernel_radii"]]


def _mode(rec: dict) -> str:
    return "step by step" if rec["config"].get("time_block", {}).get("how") == "user" else "swept"


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def rows_of(recs: list[dict]) -> list[dict]:
    """Per radius, in order: the medians of each mode's runs, the memory wall and the compute roof
    of the same cores, and the swept run's ratio to each (median of the per-round ratios)."""
    by: dict[int, dict[str, list[dict]]] = {}
    for r in of_tool(recs, "iso3dfd"):
        by.setdefault(int(r["config"]["radius"]), {}).setdefault(_mode(r), []).append(r)
    out = []
    for radius in sorted(by):
        runs = by[radius]
        swept, steps = runs.get("swept", []), runs.get("step by step", [])
        walls = [
            x["result"]["roofline"]["memory_wall"]["mpoints_per_s"]
            for x in swept + steps
            if "mpoints_per_s" in x["result"].get("roofline", {}).get("memory_wall", {})
        ]
        roofs = [
            x["result"]["roofline"]["incore_bound_mpoints_per_s"]
            for x in swept + steps
            if "incore_bound_mpoints_per_s" in x["result"].get("roofline", {})
        ]
        rate = [x["result"]["mpoints_per_s"] for x in swept]
        step = [x["result"]["mpoints_per_s"] for x in steps]
        depths = sorted({int(x["config"]["time_block"]["depth"]) for x in swept})
        out.append(
            {
                "radius": radius,
                "order": iso3dfd.order_name(radius),
                "wall": _median(walls),
                "step": _median(step),
                "swept": _median(rate),
                "depths": depths,
                "roof": _median(roofs),
                "x_wall": _median([a / w for a, w in zip(rate, walls)]) if walls else float("nan"),
                "x_step": _median([a / b for a, b in zip(rate, step)]) if step else float("nan"),
                "shape": swept[-1]["config"].get("row_shape", {}).get("name", "") if swept else "",
                "isa": swept[-1]["config"].get("isa", "") if swept else "",
            }
        )
    return out


def _row(x: dict) -> list:
    depth = "/".join(map(str, x["depths"])) or "-"
    return [
        f"{x['radius']} ({x['order']})",
        f"{x['wall']:.0f}",
        f"{x['step']:.0f}",
        f"{x['swept']:.0f} ({depth})",
        f"{x['roof']:.0f}",
        f"{x['x_wall']:.2f}x",
        f"{x['x_step']:.2f}x",
    ]


class OrdersSection:
    title = "ISO3DFD at every order: the memory wall and past it"
    order = 62

    def collect(self, ctx: Context) -> None:
        size = QUICK if ctx.quick else FULL
        threads = max(1, ctx.threads)
        grid = (size["interior"],) * 3
        roof = iso3dfd.Roofline(quick=ctx.quick)
        runs = [(r, mode, depth) for r in radii() for mode, depth in MODES]
        rounds = decide.rule().rounds  # every radius and mode alternate, the first rotating each round
        recs = []
        for k in range(rounds):
            for i in range(len(runs)):
                radius, mode, depth = runs[(i + k) % len(runs)]
                halo = [n + 2 * radius for n in grid]
                ctx.step(
                    f"ISO3DFD radius {radius} ({iso3dfd.order_name(radius)}), {mode}, "
                    f"{size['interior']}^3 interior, round {k + 1} of {rounds}"
                )
                recs.append(
                    iso3dfd.run(
                        halo, size["iters"], threads=threads, radius=radius, time_block=depth, verify=False
                    )
                )
        ctx.step("ISO3DFD orders: stream copy and triad, FMA peak on the same cores")
        for r in recs:
            ctx.save(roof.place(r))

    def build(self, ctx: Context, recs: list[dict]) -> dict:
        return {"rows": rows_of(recs)}

    def terminal(self, ctx: Context, data: dict) -> None:
        ctx.console.print(
            table(
                "ISO3DFD at every order, MPoints/s (medians of alternated rounds; x: median of per-round ratios)",
                COLUMNS,
                [_row(x) for x in data["rows"]],
            )
        )

    def html(self, ctx: Context, data: dict) -> str:
        rows = data["rows"]
        parts = [
            html_table(
                COLUMNS, [_row(x) for x in rows], caption="MPoints/s by radius, medians of alternated rounds"
            ),
            self._plot(rows),
        ]
        beaten = [x for x in rows if x["x_wall"] > 1.0]
        if beaten:
            parts.append(
                note(
                    "Past the memory wall: "
                    + "; ".join(f"radius {x['radius']} at {x['x_wall']:.2f}x" for x in beaten)
                    + ". No run step by step exceeds the wall with its grid in memory; these reuse each "
                    "tile in cache for several time steps."
                )
            )
        return "\n".join(parts)

    @staticmethod
    def _plot(rows: list[dict]) -> str:
        fig, ax = plots.figure(6.4, 3.4)
        xs = [x["radius"] for x in rows]
        ax.plot(
            xs,
            [x["swept"] for x in rows],
            "o-",
            color=plots.PALETTE[0],
            label="defaults (sweeps where they pay)",
        )
        ax.plot(xs, [x["step"] for x in rows], "s--", color=plots.PALETTE[1], label="step by step")
        ax.plot(xs, [x["roof"] for x in rows], ":", color=plots.PALETTE[2], label="compute roof (FMA peak)")
        ax.plot(
            xs, [x["wall"] for x in rows], "-", color=plots.PALETTE[3], label="memory wall (triad / 16 B)"
        )
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [f"{x['radius']}\n({2 * x['radius']})" for x in rows])
        ax.set_yscale("log")
        from matplotlib.ticker import FuncFormatter  # matplotlib loads with the first plot (plots.py)

        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0f}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        ax.set_xlabel("radius (space order)")
        ax.set_ylabel("MPoints/s")
        ax.legend(fontsize=8)
        return plots.img_tag(
            fig, alt="ISO3DFD throughput against radius with the memory wall and the compute roof"
        )


sections.register("orders")(OrdersSection())
