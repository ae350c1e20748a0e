"""Views of engine records: the pipelined run's engine line, the engine sweep's table in the shape of
Intel's DSA article (CPU only, engine + CPU, speed-up per kernel and core count) and its heat map."""

from __future__ import annotations

from collections.abc import Sequence

from bandwall.display import table
from bandwall.views.host import steal_notes


def engine_line(rec: dict) -> str:
    """One line on how a pipelined run used its engine."""
    c, e = rec["config"], rec["result"]["engine"]
    where = f" on CPUs {','.join(map(str, c['engine_cpus']))}" if c.get("engine_cpus") else ""
    line = (
        f"engine {c['engine']} ({c['engine_mode']}){where}: strategy {c['strategy']}"
        f"{' (' + c['strategy_reason'] + ')' if c.get('strategy_reason') else ''}, depth {c['queue_depth']}, "
        f"blocks of {c['block_bytes'] / 2**20:g} MiB, engine fetches {c['engine_inputs']}; the cores waited "
        f"{100 * e['wait_share']:.0f}% of the time"
    )
    helpers = e.get("info", {}).get("helpers") or []
    if helpers:
        rates = ", ".join(f"CPU {h['cpu']} {h['busy_GBps']:.1f} GB/s while busy" for h in helpers)
        line += f"; helpers moved {rates}"
    if e.get("page_faults"):
        line += f"; {e['page_faults']} page faults resumed"
    if c.get("dsa_hardware_verified") is False:
        line += "; the DSA hardware path is unverified until run on a machine with DSA"
    return line


SWEEP_COLUMNS = [
    "kernel",
    "cores",
    "helpers",
    "strategy",
    "CPU only GB/s",
    "engine + CPU GB/s",
    "speed-up",
    "wait",
]


def sweep_rows(rows: Sequence[dict]) -> list[list]:
    return [
        [
            r["kernel"],
            r["cores"],
            r["helpers"] if r["helpers"] is not None else "-",
            r["strategy"] or "-",
            r["cpu_GBps"],
            r["engine_GBps"],
            f"{r['speedup']:.2f}x" if r["speedup"] else "-",
            f"{100 * r['engine_wait_share']:.0f}%" if r["engine_wait_share"] is not None else "-",
        ]
        for r in rows
    ]


def render_sweep(con, rec: dict) -> None:
    c, r = rec["config"], rec["result"]
    con.print(
        table(
            f"engine sweep: {c['engine']} against CPU only",
            SWEEP_COLUMNS,
            sweep_rows(r["rows"]),
            caption=f"{c['reps']} reps, {c['size_per_array_bytes'] / 2**20:.0f} MiB per array; "
            f"'wait' = share of the compute time spent waiting for the engine",
        )
    )
    for s in r["summary"]:
        con.print(s["statement"])
    for note in steal_notes([rec]):
        con.print(note)


def heatmap_cells(rows: Sequence[dict]) -> tuple[list, list, list[list]]:
    """(row labels: compute cores, column labels: kernel with helpers and strategy, speed-ups) for
    the heat map; the best strategy of each cell."""
    cols = sorted(
        {(r["kernel"], r["helpers"]) for r in rows if r["speedup"]}, key=lambda x: (x[0], x[1] or 0)
    )
    cores = sorted({r["cores"] for r in rows})
    values = []
    for n in cores:
        line = []
        for k, h in cols:
            s = [
                r["speedup"]
                for r in rows
                if r["kernel"] == k and r["helpers"] == h and r["cores"] == n and r["speedup"]
            ]
            line.append(max(s) if s else None)
        values.append(line)
    labels = [f"{k}" + (f"\n+{h} helper" if h else "") for k, h in cols]
    return cores, labels, values
