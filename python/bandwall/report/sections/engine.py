"""Report section `engine`: the experiment of Intel's DSA article on this machine. CPU only against the kernels
pipelined with a copy engine (one on a device, such as DSA, where one is available; the manifest's
default engine otherwise), the speed-up heat map, and how many cores the engine saves."""

from __future__ import annotations

from bandwall.core import decide, manifest
from bandwall.core.errors import Unavailable
from bandwall.display import table
from bandwall.engine import engine_sweep
from bandwall.engine import pipeline as engine
from bandwall.report import Context, engine_plot, last_of, plots, sections
from bandwall.report.render import facts, html_table, note
from bandwall.views.engine import SWEEP_COLUMNS, sweep_rows

QUICK_KERNELS = ("triad",)
FULL_REPS = 10


class EngineSection:
    title = "Copy-engine pipelining (CPU only against engine + CPU)"
    order = 60

    def collect(self, ctx: Context) -> None:
        here = engine.availability()
        devices = [n for n, v in here.items() if v == "available" and engine.needs_device(n)]
        default = manifest.default_engine()
        name = devices[0] if devices else default
        if here.get(name) != "available":
            tried = "; ".join(
                f"{n}: {here.get(n)}" for n in [n for n in here if engine.needs_device(n)] + [default]
            )
            raise Unavailable(f"no copy engine here: {tried}")
        kernels = list(QUICK_KERNELS if ctx.quick else engine_sweep.DEFAULT_KERNELS)
        # quick: the first repetition is dropped and the rest are the decision rule's rounds
        reps = decide.rule().rounds + 1 if ctx.quick else FULL_REPS
        cores = [1] if ctx.quick else list(range(1, ctx.threads + 1))
        helpers = [1] if engine.takes_cpus(name) else []
        strategies = manifest.strategy_names()[:1] if ctx.quick else manifest.strategy_names()
        ids: list[int] = []

        def keep(rec: dict) -> None:
            rid = ctx.save(rec)
            if rid is not None:
                ids.append(rid)

        rows, recs = engine_sweep.run(
            kernels, cores, helpers, name, strategies, on_record=keep, on_step=ctx.step, reps=reps
        )
        rec = engine_sweep.sweep_record(
            rows,
            recs,
            {
                "kernels": kernels,
                "cores": cores,
                "helpers": helpers,
                "engine": name,
                "strategies": strategies,
            },
            ids,
        )
        ctx.save(rec)

    def build(self, ctx: Context, recs: list[dict]) -> dict:
        rec = last_of(recs, "engine-sweep")
        c = rec["config"]
        cut = ""
        if ctx.quick:
            cut = (
                f"quick: {', '.join(c['kernels'])} only, {c['cores'][-1]} compute core(s), strategy "
                f"{', '.join(c['strategies'])}, {c['reps']} repetitions (full: triad, scale and dot on "
                f"1..{ctx.threads} cores, every strategy, {FULL_REPS} repetitions)"
            )
        return {"record": rec, "engine": c["engine"], "engines_here": c.get("engines_here", {}), "cut": cut}

    def terminal(self, ctx: Context, data: dict) -> None:
        rec = data["record"]
        ctx.console.print(
            table("engine + CPU against CPU only", SWEEP_COLUMNS, sweep_rows(rec["result"]["rows"]))
        )
        for s in rec["result"]["summary"]:
            ctx.console.print(s["statement"])
        if data["cut"]:
            ctx.console.print(data["cut"])

    def html(self, ctx: Context, data: dict) -> str:
        rec = data["record"]
        parts = [
            facts(
                [
                    ("engine", data["engine"]),
                    ("engines here", "; ".join(f"{k}: {v}" for k, v in data["engines_here"].items())),
                    (
                        "method",
                        "the engine brings the next blocks into the cache while the cores compute the current "
                        "ones with non-temporal stores; results bit-identical to the CPU-only kernels",
                    ),
                ]
            )
        ]
        if engine.needs_device(data["engine"]):
            parts.append(
                note(
                    f"the {data['engine']} hardware path is unverified until it has run on a machine with "
                    "that device",
                    "warn",
                )
            )
        if data["cut"]:
            parts.append(note(data["cut"], "warn"))
        parts.append(
            html_table(
                SWEEP_COLUMNS, sweep_rows(rec["result"]["rows"]), caption="CPU only against engine + CPU"
            )
        )
        parts.append(
            html_table(["kernel", "cores"], [[s["kernel"], s["statement"]] for s in rec["result"]["summary"]])
        )
        parts.append(plots.img_tag(engine_plot.figure(rec), alt="speed-up of engine + CPU over CPU only"))
        return "\n".join(parts)


sections.register("engine")(EngineSection())
