"""Report section `iso3dfd`: the 16th-order stencil of Intel's NUMA 3DFD article on this machine — throughput of the
article's four variants (serial / first-touch initialisation x static / dynamic schedule), where the
best stands against the memory and in-core bounds of the same cores, and the page map of each
array (the article's "memory objects" view)."""

from __future__ import annotations

from bandwall.core import decide, manifest
from bandwall.core.spread import Spread
from bandwall.display import table
from bandwall.kernels import iso3dfd
from bandwall.report import Context, of_tool, plots, sections
from bandwall.report.render import facts, html_table, note
from bandwall.views.iso3dfd import ARRAYS, COLUMNS, page_map_rows, render, row

QUICK = {"grid": (144, 144, 144), "iters": 20}
FULL = {"grid": (272, 272, 272), "iters": 20}
ROUNDS = (
    decide.rule().rounds
)  # the four variants alternate, the first rotating each round: the decision rule's rounds
SPREAD_COLUMNS = ["init", "schedule", "MPoints/s: median (min, max, rounds)"]


def variants(recs: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """The iso3dfd records of each (init, schedule), in the article's order."""
    out: dict[tuple[str, str], list[dict]] = {}
    for r in of_tool(recs, "iso3dfd"):
        out.setdefault((r["config"]["init"], r["config"]["schedule"]), []).append(r)
    return out


def median_run(runs: list[dict]) -> dict:
    """The run whose throughput is the median of its variant's (the lower middle one of an even count)."""
    ranked = sorted(runs, key=lambda r: r["result"]["mpoints_per_s"])
    return ranked[(len(ranked) - 1) // 2]


def spread_of(runs: list[dict]) -> Spread:
    return Spread.of([r["result"]["mpoints_per_s"] for r in runs], "MPoints/s")


class Iso3dfdSection:
    title = "ISO3DFD stencil"
    order = 60

    def collect(self, ctx: Context) -> None:
        size = QUICK if ctx.quick else FULL
        threads = max(1, ctx.threads)
        roof = iso3dfd.Roofline(quick=ctx.quick)
        ablation = iso3dfd.ablation_variants()
        default = (manifest.iso3dfd_word_names("init")[0], manifest.iso3dfd_word_names("schedule")[0])
        n = len(ablation)
        recs = []
        rounds = decide.rule().rounds  # the four variants alternate, the first rotating each round
        for k in range(rounds):
            for i in range(n):
                init, schedule = ablation[(i + k) % n]
                ctx.step(
                    f"ISO3DFD {'x'.join(map(str, size['grid']))}, {init} init, {schedule} schedule, "
                    f"round {k + 1} of {rounds}"
                )
                verify = k == 0 and (init, schedule) == default
                recs.append(
                    iso3dfd.run(
                        size["grid"],
                        size["iters"],
                        threads=threads,
                        init=init,
                        schedule=schedule,
                        verify=verify,
                    )
                )
        ctx.step("ISO3DFD roofline: stream copy and triad, FMA peak on the same cores")
        for r in recs:
            ctx.save(roof.place(r))

    def build(self, ctx: Context, recs: list[dict]) -> dict:
        runs = variants(recs)
        ablation = iso3dfd.ablation_variants()
        order = [v for v in ablation if v in runs] + [v for v in runs if v not in ablation]
        return {
            "records": [median_run(runs[v]) for v in order],
            "spreads": [[*v, spread_of(runs[v]).text()] for v in order],
            "checked": [r for r in of_tool(recs, "iso3dfd") if "max_abs_error" in r["validation"]],
        }

    def terminal(self, ctx: Context, data: dict) -> None:
        render(ctx.console, data["records"])
        ctx.console.print(
            table(
                "Spread over the rounds (the runs above are the median ones)", SPREAD_COLUMNS, data["spreads"]
            )
        )

    def html(self, ctx: Context, data: dict) -> str:
        recs = data["records"]
        best = max(recs, key=lambda r: r["result"]["mpoints_per_s"])
        c, r = best["config"], best["result"]
        roof = r.get("roofline", {})
        checked = data["checked"]  # verified against the reference
        parts = [
            facts(
                [
                    (
                        "grid",
                        f"{c['n1']}x{c['n2']}x{c['n3']} with halo, {c['nb_iter']} steps, blocks "
                        f"{c['n1_block']}x{c['n2_block']}x{c['n3_block']}",
                    ),
                    ("threads", f"{c['threads']} ({c['affinity']}, CPUs {best['provenance']['cpus']})"),
                    (
                        "best",
                        f"{r['mpoints_per_s']:.0f} MPoints/s, {r['gflops']:.1f} GFlops ({c['init']}, {c['schedule']})",
                    ),
                    (
                        "memory bound",
                        _bound(
                            roof,
                            "memory",
                            "stream_best_GBps",
                            f"GB/s stream {roof.get('stream_kernel', '')}".rstrip(),
                        ),
                    ),
                    ("in-core bound", _bound(roof, "incore", "peak_gflops_sp", "GFlops FMA peak")),
                    (
                        "validation",
                        "; ".join(
                            f"max rel error {x['validation']['max_rel_error']:.2e} against the plain "
                            f"reference"
                            for x in checked
                        )
                        or best["validation"].get("method", "not checked"),
                    ),
                ]
            )
        ]
        parts.append(self._plot(recs, roof))
        parts.append(
            html_table(COLUMNS, [row(x) for x in recs], caption="The article's four variants (median runs)")
        )
        parts.append(html_table(SPREAD_COLUMNS, data["spreads"], caption="Spread over the rounds"))
        parts.append(
            html_table(
                ["init", "schedule", *ARRAYS],
                page_map_rows(recs),
                caption="Where each array's pages are after initialisation",
            )
        )
        nodes = {k for x in recs for pm in x["placement"]["page_map"].values() for k in pm if k != "absent"}
        if len(nodes) <= 1:
            parts.append(
                note(
                    "Every page is on one NUMA node, so serial and first-touch initialisation place the "
                    "arrays alike here; the article's 2x gain needs a machine with several nodes."
                )
            )
        return "\n".join(parts)

    @staticmethod
    def _plot(recs: list[dict], roof: dict) -> str:
        fig, ax = plots.figure(6.4, 3.2)
        labels = [f"{x['config']['init']}\n{x['config']['schedule']}" for x in recs]
        values = [x["result"]["mpoints_per_s"] for x in recs]
        ax.bar(range(len(values)), values, color=plots.PALETTE[0])
        ax.set_xticks(range(len(values)), labels, fontsize=8)
        ax.set_ylabel("MPoints/s")
        for key, name, colour in (
            ("memory_bound_mpoints_per_s", "memory bound", plots.PALETTE[3]),
            ("incore_bound_mpoints_per_s", "in-core bound", plots.PALETTE[2]),
        ):
            if key in roof:
                ax.axhline(roof[key], color=colour, linestyle="--", linewidth=1)
                ax.text(
                    len(values) - 0.5,
                    roof[key],
                    f" {name} {roof[key]:.0f}",
                    color=colour,
                    fontsize=8,
                    va="bottom",
                    ha="right",
                )
        return plots.img_tag(fig, alt="ISO3DFD throughput of the four variants against the roofline")


def _bound(roof: dict, which: str, input_key: str, unit: str) -> str:
    pct = roof.get(f"percent_of_{which}_bound")
    if pct is None:
        return roof.get(which, "not measured")
    bound = roof[f"{'memory' if which == 'memory' else 'incore'}_bound_mpoints_per_s"]
    return f"{bound:.0f} MPoints/s from {roof[input_key]:.1f} {unit}; the best run reaches {pct:.0f}%"


sections.register("iso3dfd")(Iso3dfdSection())
