"""Report section `mpiprof`: where an MPI program spends its communication time (call-time shares),
its message sizes (log2 histograms) and who talks to whom (partner heat map), from the latest
stored mpiprof record, or from a short profiled run of bandwall's own ping-pong."""

from __future__ import annotations

from bandwall.core import native
from bandwall.core.errors import Unavailable
from bandwall.display import table
from bandwall.mpi import flavours as mpi
from bandwall.mpi import mpiprof
from bandwall.report import Context, last_of, plots, sections
from bandwall.report.render import facts, figures, html_table, note


def _small_run() -> dict:
    avail = mpi.available()
    if not avail:
        raise Unavailable(mpi.NO_MPI)
    impl = avail[0]
    exe = native.executable(f"bandwall-mpi-pingpong-{impl}")
    return mpiprof.run(
        [*mpi.launcher(impl, 2), exe, "--max-size", "64K", "--reps", "1", "--max-iterations", "100"],
        timeout=120,
        capture=True,
    )


class MpiprofSection:
    title = "MPI communication profile"
    order = 80

    def collect(self, ctx: Context) -> None:
        stored = ctx.store.list(tool="mpiprof", limit=1) if ctx.store is not None else []
        if stored:
            ctx.use(stored[0])
        else:
            ctx.step("profiling bandwall's MPI ping-pong on 2 ranks")
            ctx.save(_small_run())
        pingpong = ctx.store.list(tool="mpi-pingpong", limit=1) if ctx.store is not None else []
        if pingpong:  # a rail model for the advice on rails
            ctx.use(pingpong[0])

    def build(self, ctx: Context, recs: list[dict]) -> dict:
        return {"record": last_of(recs, "mpiprof")}

    def terminal(self, ctx: Context, data: dict) -> None:
        rec = data["record"]
        ctx.console.print(f"profile: {rec['config'].get('program', '')} ({rec['config']['ranks']} ranks)")
        ctx.console.print(table("MPI calls", mpiprof.CALL_COLUMNS, mpiprof.call_rows(rec)[:8]))

    def html(self, ctx: Context, data: dict) -> str:
        rec = data["record"]
        r = rec["result"]
        parts = [
            facts(
                [
                    ("program", f"{rec['config'].get('program', '')} on {rec['config']['ranks']} ranks"),
                    ("MPI", rec["config"].get("mpi_library", "")),
                    ("clock", f"{r['clock']['source']}, resolution {r['clock']['resolution_ns']:.2f} ns"),
                ]
            ),
            html_table(mpiprof.CALL_COLUMNS, mpiprof.call_rows(rec), caption="MPI calls, summed over ranks"),
            figures(_shares(rec), _sizes(rec), _partners(rec)),
            note("Text histograms in the format of the T2K study's MPI-PROF: " + r["text_report"]),
        ]
        return "\n".join(parts)


def _shares(rec: dict) -> str:
    rows = mpiprof.call_rows(rec)[:10]
    fig, ax = plots.figure(4.8, 3.0)
    ax.barh([row[0] for row in rows][::-1], [row[5] for row in rows][::-1], color=plots.PALETTE[0])
    ax.set_xlabel("share of MPI time (%)")
    return plots.img_tag(fig, alt="share of MPI time per call")


def _sizes(rec: dict) -> str:
    fig, ax = plots.figure(4.8, 3.0)
    calls = sorted(rec["result"]["calls"], key=lambda c: -c["count"])[:4]
    for i, c in enumerate(calls):
        lows = sorted(int(k) for k in c["size_hist"])
        xs = [max(k, 0.5) for k in lows]
        ax.plot(xs, [c["size_hist"][str(k)] for k in lows], "o-", color=plots.PALETTE[i], label=c["name"])
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size, lower bound of the power-of-two bin (bytes)")
    ax.set_ylabel("messages")
    ax.legend(fontsize=8)
    return plots.img_tag(fig, alt="message size histograms")


def _partners(rec: dict) -> str:
    m = rec["result"]["partners"]
    n = len(m)
    fig, ax = plots.figure(3.6, 3.0)
    plots.heatmap(ax, m, list(range(n)), list(range(n)), fmt="{:.0f}", label="bytes sent")
    ax.set_xlabel("to rank")
    ax.set_ylabel("from rank")
    return plots.img_tag(fig, alt="bytes sent between ranks")


sections.register("mpiprof")(MpiprofSection())
