"""Report section `counters`: what the kernel and the memory system did during one stream triad,
counted around it: software events (task clock, page faults, context switches, migrations) and
the MEM group's DRAM bandwidth per socket where the PMU offers it, otherwise its stated reason."""

from __future__ import annotations

from bandwall.display import table
from bandwall.kernels import stream
from bandwall.report import Context, last_of, sections
from bandwall.report.render import facts, html_table, note
from bandwall.views.counters import rows

GROUP = "MEM"


class CountersSection:
    title = "Counters around a stream run"
    order = 30

    def collect(self, ctx: Context) -> None:
        ctx.step(f"stream triad on {ctx.threads} cores, counting group {GROUP}")
        ctx.save(stream.run("triad", threads=ctx.threads, reps=5 if ctx.quick else 20, counters=GROUP))

    def build(self, ctx: Context, recs: list[dict]) -> dict:
        rec = last_of(recs, "stream")
        return {
            "group": rec["counters"].get("group", GROUP),
            "eventset": rec["counters"].get("eventset"),
            "threads": rec["config"]["threads"],
            "best_GBps": rec["result"]["best_GBps"],
            "rows": rows(rec["counters"]),
        }

    def terminal(self, ctx: Context, data: dict) -> None:
        ctx.console.print(
            table(
                f"Counters: stream triad, {data['threads']} threads, {data['best_GBps']:.2f} GB/s best",
                ["kind", "event or metric", "value"],
                data["rows"],
            )
        )

    def html(self, ctx: Context, data: dict) -> str:
        unavailable = [r for r in data["rows"] if isinstance(r[2], str) and r[2].startswith("unavailable")]
        parts = [
            facts(
                [
                    ("run", f"stream triad, {data['threads']} threads, best {data['best_GBps']:.2f} GB/s"),
                    ("group", f"{data['group']} (event set: {data['eventset'] or 'none for this machine'})"),
                ]
            ),
            html_table(
                ["kind", "event or metric", "value"], data["rows"], caption="Counted around the whole run"
            ),
        ]
        if unavailable:
            parts.append(
                note(
                    f"{len(unavailable)} hardware fields are unavailable here; each says why (no PMU, or "
                    "no event set of the group among the events PAPI lists)."
                )
            )
        return "\n".join(parts)


sections.register("counters")(CountersSection())
