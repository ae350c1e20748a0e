"""Terminal and CSV views of sweep records."""

from __future__ import annotations

from bandwall.display import table
from bandwall.views.host import steal_notes


def render(con, rec: dict) -> None:
    r, c = rec["result"], rec["config"]
    rows = [
        [p["cores"], p["best_GBps"], p["median_GBps"], "knee" if p["cores"] == r["knee_cores"] else ""]
        for p in r["points"]
    ]
    con.print(
        table(
            f"sweep of {c['kernel']} ({c['bind']}, {c['stores']} stores)",
            ["cores", "best GB/s", "median GB/s", ""],
            rows,
        )
    )
    if r.get("verdict"):  # rendered from the record's claims (the decision rule on the repetitions)
        con.print(f"knee: {r['knee_cores']} cores; {r['verdict']}", markup=False)
    else:
        con.print(
            f"knee: {r['knee_cores']} cores reach {c['knee_share']:.0%} of the best "
            f"{r['best_GBps']:.2f} GB/s; surplus cores: {r['surplus_cores']}"
        )
    for note in steal_notes([rec]):
        con.print(note)


def csv_rows(rec: dict):
    knee = rec["result"]["knee_cores"]
    return (
        ["cores", "best_GBps", "median_GBps", "knee"],
        [[p["cores"], p["best_GBps"], p["median_GBps"], p["cores"] == knee] for p in rec["result"]["points"]],
    )
