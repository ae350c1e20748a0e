"""Views of the flat-MPI bandwidth sweep: aggregate bandwidth against ranks per node, the knee."""

from __future__ import annotations

from bandwall.display import table
from bandwall.views.host import steal_notes


def render(con, rec: dict) -> None:
    r, c = rec["result"], rec["config"]
    rows = [
        [p["ranks"], p["best_GBps"], p["median_GBps"], "knee" if p["ranks"] == r["knee_ranks"] else ""]
        for p in r["points"]
    ]
    con.print(
        table(
            f"flat-MPI {c['kernel']} per node ({c['stores']} stores, ranks bound by {c['bind']}, "
            f"{c['launcher']['name']}, {c['mpi_library']})",
            ["ranks/node", "best GB/s", "median GB/s", ""],
            rows,
        )
    )
    con.print(
        f"knee: {r['knee_ranks']} ranks per node reach {c['knee_share']:.0%} of the best "
        f"{r['best_GBps']:.2f} GB/s; surplus cores: {r['surplus_cores']}"
    )
    for note in steal_notes([rec]):
        con.print(note)


def csv_rows(rec: dict):
    r = rec["result"]
    return (
        ["ranks_per_node", "best_GBps", "median_GBps", "knee"],
        [[p["ranks"], p["best_GBps"], p["median_GBps"], p["ranks"] == r["knee_ranks"]] for p in r["points"]],
    )
