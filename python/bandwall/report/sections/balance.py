"""Report section `balance`: the FMA peak, the byte/flop balance of the node (best STREAM
bandwidth / peak) and what that leaves applications that need more bytes per flop."""

from __future__ import annotations

from bandwall.core import records
from bandwall.display import table
from bandwall.kernels import balance, stream
from bandwall.report import Context, last_of, plots, sections
from bandwall.report.render import facts, html_table, note
from bandwall.views.balance import APP_COLUMNS, app_rows, summary_lines

QUICK_PEAK = {"reps": 3, "seconds": 0.07}  # 3 rounds: every figure of the page has a spread


def _best_stream_record(ctx: Context) -> dict | None:
    recs = [r for r in ctx.records if r.get("tool") == "stream" and records.passed(r)]
    return max(recs, key=lambda r: r["result"]["best_GBps"]) if recs else None


class BalanceSection:
    title = "Machine balance (bytes per flop)"
    order = 25

    def collect(self, ctx: Context) -> None:
        s = _best_stream_record(ctx)
        if s is None:
            ctx.step(f"stream triad on {ctx.threads} cores")
            s = stream.run("triad", threads=ctx.threads, reps=5 if ctx.quick else 20)
            ctx.save(s)
        ctx.step("FMA peak, double and single precision")
        p = balance.run_peak(threads=ctx.threads, **(QUICK_PEAK if ctx.quick else {}))
        ctx.save(p)
        ctx.save(balance.balance_record(s, p))

    def build(self, ctx: Context, recs: list[dict]) -> dict:
        rec = last_of(recs, "balance")
        c = rec["config"]
        return {
            **rec["result"],
            "kernel": c["kernel"],
            "stream_threads": c["stream_threads"],
            "isa": c["isa"],
        }

    def terminal(self, ctx: Context, data: dict) -> None:
        for line in summary_lines(data):
            ctx.console.print(line)
        ctx.console.print(table("Byte/flop balance", APP_COLUMNS, app_rows(data)))

    def html(self, ctx: Context, data: dict) -> str:
        parts = [
            facts(
                [
                    (
                        "bandwidth",
                        f"{data['bandwidth_GBps']:.2f} GB/s (best stream {data['kernel']}, "
                        f"{data['stream_threads']} cores)",
                    ),
                    (
                        "FMA peak",
                        f"{data['peak_gflops_dp']:.1f} GFlop/s double, {data['peak_gflops_sp']:.1f} single "
                        f"({data['per_core_gflops_dp']:.1f} / {data['per_core_gflops_sp']:.1f} per core, "
                        f"{data['isa']})",
                    ),
                    (
                        "machine balance",
                        f"{data['bytes_per_flop_dp']:.3f} B/F double, {data['bytes_per_flop_sp']:.3f} "
                        f"B/F single",
                    ),
                ]
            )
        ]
        parts.append(html_table(APP_COLUMNS, app_rows(data), caption="What applications need"))
        parts.append(
            note(
                "An application needing more bytes per flop than the machine gives is memory-bound: it "
                "reaches at most machine B/F / needed B/F of the flop peak, however many cores run it."
            )
        )
        parts.append(plot(data))
        return "\n".join(parts)


def plot(data: dict) -> str:
    names = [a["name"] for a in data["applications"]] + [c["name"] for c in data["contrast"]]
    values = [a["bytes_per_flop"] for a in data["applications"]] + [
        c["bytes_per_flop"] for c in data["contrast"]
    ]
    fig, ax = plots.figure(6.4, 2.8)
    colours = [plots.PALETTE[1]] * len(data["applications"]) + [plots.PALETTE[4]] * len(data["contrast"])
    ax.barh(names, values, color=colours)
    ax.set_xscale("log")
    for prec, style in (("dp", "-"), ("sp", "--")):
        ax.axvline(
            data[f"bytes_per_flop_{prec}"],
            color=plots.PALETTE[0],
            linestyle=style,
            label=f"this machine ({prec})",
        )
    ax.set_xlim(left=min(values + [data["bytes_per_flop_sp"]]) / 4)
    ax.set_xlabel("bytes per flop (log scale)")
    ax.legend(fontsize=8)
    return plots.img_tag(fig, alt="bytes per flop needed by applications against this machine's balance")


sections.register("balance")(BalanceSection())
