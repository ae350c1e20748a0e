"""Report section `stream`: a core sweep of every STREAM kernel (bandwidth against cores under
compact binding and first-touch placement), with the knee and the surplus cores of each."""

from __future__ import annotations

from bandwall.core import decide
from bandwall.core.spread import Spread
from bandwall.display import table
from bandwall.kernels import stream, sweep
from bandwall.report import Context, of_tool, plots, sections
from bandwall.report.render import facts, html_table, note

QUICK_KERNELS = ("triad",)
FULL_REPS = 20
BIND = "compact"


def _cut(ctx: Context, kernels: list[str], reps: int) -> str:
    if not ctx.quick or set(kernels) >= set(stream.kernel_names()):
        return ""
    skipped = [k for k in stream.kernel_names() if k not in kernels]
    return (
        f"quick: only {', '.join(kernels)} was swept ({', '.join(skipped)} skipped) with {reps} repetitions "
        f"instead of {FULL_REPS}; arrays keep their full size (4x the last-level cache)"
    )


class StreamSection:
    title = "STREAM bandwidth, knee and surplus cores"
    order = 20

    def collect(self, ctx: Context) -> None:
        kernels = [k for k in stream.kernel_names() if not ctx.quick or k in QUICK_KERNELS]
        # quick: the first repetition is dropped and the rest are the decision rule's rounds, so that
        # the knee and efficiency cards can decide on a quick report too
        reps = decide.rule().rounds + 1 if ctx.quick else FULL_REPS
        cores = list(range(1, ctx.threads + 1))
        for k in kernels:
            recs, ids = [], []
            for n in cores:
                ctx.step(f"{k} on {n} of {cores[-1]} cores")
                rec = stream.run(k, threads=n, bind=BIND, reps=reps)
                rid = ctx.save(rec)
                recs.append(rec)
                if rid is not None:
                    ids.append(rid)
            ctx.save(
                sweep.sweep_record(k, recs, config={"bind": BIND, "placement": "first-touch"}, point_ids=ids)
            )

    def build(self, ctx: Context, recs: list[dict]) -> dict:
        sweeps = [
            {
                "kernel": s["config"]["kernel"],
                **s["result"],
                "stores": s["config"]["stores"],
                "size_per_array_bytes": s["config"]["size_per_array_bytes"],
                "spreads": [Spread.of_stream(p).text() for p in _points(s, recs)],
            }
            for s in of_tool(recs, "sweep")
        ]
        top = max(sweeps, key=lambda s: s["best_GBps"])
        first = of_tool(recs, "sweep")[0]["config"]
        return {
            "sweeps": sweeps,
            "reps": first["reps"],
            "bind": first.get("bind", BIND),
            "knee_share": first.get("knee_share", sweep.DEFAULT_KNEE_SHARE),
            "cut": _cut(ctx, [s["kernel"] for s in sweeps], first["reps"]),
            "best": {"kernel": top["kernel"], "cores": top["best_cores"], "GBps": top["best_GBps"]},
        }

    @staticmethod
    def rows(data: dict) -> list[list]:
        return [
            [
                s["kernel"],
                s["stores"],
                s["best_GBps"],
                s["best_cores"],
                s["knee_cores"],
                s["knee_GBps"],
                s["surplus_cores"],
                ", ".join(f"{p['best_GBps']:.1f}" for p in s["points"]),
            ]
            for s in data["sweeps"]
        ]

    @staticmethod
    def spread_rows(data: dict) -> list[list]:
        return [
            [s["kernel"], p["cores"], text]
            for s in data["sweeps"]
            for p, text in zip(s["points"], s["spreads"])
        ]

    COLUMNS = [
        "kernel",
        "stores",
        "best GB/s",
        "at cores",
        "knee cores",
        "knee GB/s (median)",
        "surplus cores",
        "GB/s on 1, 2, ... cores",
    ]

    def terminal(self, ctx: Context, data: dict) -> None:
        ctx.console.print(
            table(
                "STREAM core sweeps",
                self.COLUMNS,
                self.rows(data),
                caption=f"{data['bind']} binding, first-touch, {data['reps']} reps; {knee_words(data)}",
            )
        )
        ctx.console.print(table("Spread of each point", SPREAD_COLUMNS, self.spread_rows(data)))
        if data["cut"]:
            ctx.console.print(data["cut"])

    def html(self, ctx: Context, data: dict) -> str:
        b = data["best"]
        parts = [
            facts(
                [
                    ("best bandwidth", f"{b['GBps']:.2f} GB/s ({b['kernel']}, {b['cores']} cores)"),
                    ("knee", knee_words(data)),
                    (
                        "surplus cores",
                        "cores beyond the knee: they add no bandwidth and are free for other work (Boku's T2K cluster study)",
                    ),
                    (
                        "runs",
                        f"{data['bind']} binding, first-touch placement, {data['reps']} repetitions "
                        f"(first dropped), GB/s = 1e9 B/s without write-allocate",
                    ),
                ]
            )
        ]
        if data["cut"]:
            parts.append(note(data["cut"], "warn"))
        parts.append(html_table(self.COLUMNS, self.rows(data), caption="Core sweeps"))
        parts.append(html_table(SPREAD_COLUMNS, self.spread_rows(data), caption="Spread of each point"))
        parts.append(plot(data))
        return "\n".join(parts)


SPREAD_COLUMNS = ["kernel", "cores", "GB/s: median (min, max, timed repetitions)"]


def _points(sweep_rec: dict, recs: list[dict]) -> list[dict]:
    """The stream records of a sweep's points, in its points' order: by id when stored, else the
    section's stream records of its kernel."""
    ids = sweep_rec["result"].get("point_record_ids")
    by_id = {r["id"]: r for r in recs if r.get("id") is not None}
    if ids and all(i in by_id for i in ids):
        found = [by_id[i] for i in ids]
    else:
        found = [r for r in of_tool(recs, "stream") if r["config"]["kernel"] == sweep_rec["config"]["kernel"]]
    return sorted(found, key=lambda r: r["config"]["threads"])


def knee_words(data: dict) -> str:
    """What the knee is: the decision rule's, on the repetitions the spreads show."""
    tol = 1 / data["knee_share"] - 1
    return (
        f"knee = fewest cores that no other count beats by more than {tol:.0%} by the decision rule "
        "on the repetitions (their medians shown), every core when undecided"
    )


def plot(data: dict) -> str:
    fig, ax = plots.figure()
    top = 0.0
    for i, s in enumerate(data["sweeps"]):
        xs = [p["cores"] for p in s["points"]]
        ys = [p["best_GBps"] for p in s["points"]]
        top = max(top, *ys)
        ax.plot(xs, ys, "o-", color=plots.PALETTE[i % len(plots.PALETTE)], label=s["kernel"])
        ky = next(p["best_GBps"] for p in s["points"] if p["cores"] == s["knee_cores"])  # on its curve
        plots.mark(ax, s["knee_cores"], ky, f"{s['kernel']} knee", plots.PALETTE[i % len(plots.PALETTE)])
    ax.set_xlabel("cores")
    ax.set_ylabel("best GB/s")
    ax.set_xticks(sorted({p["cores"] for s in data["sweeps"] for p in s["points"]}))
    ax.set_ylim(0, top * 1.25)
    ax.legend(loc="lower right", fontsize=8)
    return plots.img_tag(fig, alt="STREAM bandwidth against cores, knees marked")


sections.register("stream")(StreamSection())
