"""Report section `variants`: the choices bandwall would otherwise leave to a guess, measured on
this machine: each instruction-set variant this CPU offers per STREAM kernel, and each page size of
the manifest, in alternating rounds (the first variant rotating each round) so drift hits them alike."""

from __future__ import annotations

from bandwall.core import decide, manifest, topo
from bandwall.core.spread import Spread
from bandwall.display import table
from bandwall.kernels import stream
from bandwall.report import Context, of_tool, sections
from bandwall.report.advice import KNOBS
from bandwall.report.render import html_table, note

# quick: the two widest variants this CPU offers; full: every one. Kernels None: every kernel.
QUICK = {"kernels": ("triad", "dot"), "reps": 4, "isas": 2}
FULL = {"kernels": None, "reps": 10, "isas": None}
COLUMNS = ["kernel", "knob", "value", "GB/s: median (min, max, rounds)"]


def described(run: dict) -> str:
    """A run of the plan in words: 'STREAM triad, avx2 variant' or 'STREAM triad, huge pages'."""
    knob = f"{run['isa']} variant" if "isa" in run else f"{run['pages']} pages"
    return f"STREAM {run['kernel']}, {knob}"


def plan(kernels: list[str], isas: list[str]) -> list[dict]:
    """One round's runs: every ISA variant per kernel, then every page size of the manifest for triad."""
    runs = [{"kernel": k, "isa": i} for k in kernels for i in isas]
    return runs + [{"kernel": "triad", "pages": p} for p in manifest.pages()]


class VariantsSection:
    title = "Variants: instruction set per kernel, page size"
    order = 22

    def collect(self, ctx: Context) -> None:
        p = QUICK if ctx.quick else FULL
        kernels = list(p["kernels"] or stream.kernel_names())
        isas = topo.topology()["result"]["isa"]["offered"][: p["isas"]]
        runs = plan(kernels, isas)
        rounds = decide.rule().rounds  # each choice the first section reads is the decision rule's
        for k in range(rounds):
            for i in range(len(runs)):
                run = runs[(i + k) % len(runs)]
                ctx.step(f"{described(run)}, round {k + 1} of {rounds}")
                ctx.save(stream.run(threads=ctx.threads, reps=p["reps"], **run))

    def build(self, ctx: Context, recs: list[dict]) -> dict:
        groups: dict[tuple[str, str, str], list[float]] = {}
        for r in of_tool(recs, "stream"):
            knob, value = next((k, str(get(r))) for k, get in KNOBS.items() if get(r) is not None)
            groups.setdefault((r["config"]["kernel"], knob, value), []).append(r["result"]["median_GBps"])
        return {"rows": [[*key, Spread.of(v, "GB/s").text()] for key, v in groups.items()]}

    def terminal(self, ctx: Context, data: dict) -> None:
        ctx.console.print(
            table("Variants (each a median of its repetitions, per round)", COLUMNS, data["rows"])
        )

    def html(self, ctx: Context, data: dict) -> str:
        return "\n".join(
            [
                html_table(COLUMNS, data["rows"], caption="Variants in alternating rounds"),
                note("The first section reads these: a difference within the spread is no difference."),
            ]
        )


sections.register("variants")(VariantsSection())
