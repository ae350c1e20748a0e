"""Report section `pinning`: seed 004's experiment on a small built-in OpenMP program (bandwall-pin-probe,
compute rounds between barriers): one thread per CPU, every thread on one CPU, and unbound, through
libbandwall-pin.so, scored by the program's own time."""

from __future__ import annotations

import os

from bandwall import native, numacheck, pin
from bandwall.errors import Unavailable
from bandwall.output import table
from bandwall.report import Context, sections
from bandwall.report.render import facts, html_table, note

FULL = {"rounds": 3, "args": ["60", "200000"]}
QUICK = {"rounds": 1, "args": ["20", "100000"]}
COLUMNS = ["mode", "what", "median runs/s", "rounds"]


def rows(data: dict) -> list[list]:
    return [
        [name, m["title"], m["value"], " ".join(f"{v:.3g}" for v in m["rounds"])]
        for name, m in data["modes"].items()
    ]


class PinningSection:
    title = "Pinning (seed 004: bound, one CPU, unbound)"
    order = 70

    def collect(self, ctx: Context) -> dict:
        if len(os.sched_getaffinity(0)) < 2:
            raise Unavailable("one CPU only: binding threads apart needs two")
        plan = QUICK if ctx.quick else FULL
        ctx.step("pin --compare on the OpenMP probe")
        fom = numacheck.Fom.from_regex(r"time ([0-9.]+) s", lower_is_better=True)
        rec = pin.compare(
            [native.executable("bandwall-pin-probe"), *plan["args"]], fom, rounds=plan["rounds"], timeout=60
        )
        ctx.save(rec)
        return rec["result"]

    def terminal(self, ctx: Context, data: dict) -> None:
        ctx.console.print(table(f"pin --compare, {data['threads']} threads", COLUMNS, rows(data)))
        ctx.console.print(summary(data))

    def html(self, ctx: Context, data: dict) -> str:
        return "\n".join(
            [
                facts([("threads", data["threads"]), ("scored by", data["fom"])]),
                html_table(COLUMNS, rows(data), caption="The same OpenMP program, three placements"),
                note(summary(data)),
            ]
        )


def summary(data: dict) -> str:
    return (
        f"Bound one thread per CPU runs {data['bound_over_one_cpu']:.2f}x as fast as every thread on one "
        f"CPU (seed 004: NPB FT 1232 against 684 Mop/s, 1.8x) and {data['bound_over_unbound']:.2f}x as fast "
        "as unbound."
    )


sections.register("pinning")(PinningSection())
