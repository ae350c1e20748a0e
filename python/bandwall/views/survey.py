"""Terminal views of survey records: one node's figures and settings, or the nodes side by side with
the outliers named."""

from __future__ import annotations

from bandwall.output import fmt_cell, table

NAMES = {
    "stream_triad_all_GBps": "STREAM triad, all cores",
    "stream_triad_knee_GBps": "STREAM triad, knee",
    "peak_gflops_dp": "FMA peak (double)",
    "iso3dfd_mpoints_per_s": "ISO3DFD",
}


def figure(f: dict) -> str:
    return f"{fmt_cell(f['median'])} ({fmt_cell(f['min'])}-{fmt_cell(f['max'])}) {f.get('unit', '')}".rstrip()


def render_node(con, rec: dict) -> None:
    r = rec["result"]
    con.print(f"node {r['node']} ({r['cpu_model']}), topology {r['digest']}, knee at {r['knee_cores']} cores")
    rows = [[NAMES.get(k, k), figure(f)] for k, f in r["figures"].items()]
    con.print(table("Figures: median (min-max)", ["figure", "value"], rows))
    con.print(table("Settings", ["setting", "value"], [[k, str(v)] for k, v in r["settings"].items()]))


def render(con, rec: dict) -> None:
    r = rec["result"]
    nodes = r["nodes"]
    keys = sorted({k for n in nodes for k in n["figures"]})
    rows = [
        [n["node"], *[figure(n["figures"][k]) if k in n["figures"] else "-" for k in keys]]
        + ["flagged" if n["node"] in r["flagged"] else ""]
        for n in nodes
    ]
    con.print(
        table(
            f"Survey of {len(nodes)} nodes ({r['judged']})",
            ["node", *[NAMES.get(k, k) for k in keys], ""],
            rows,
        )
    )
    if r["outliers"]:
        con.print(
            table(
                "Outliers",
                ["node", "metric", "value", "median", "reason"],
                [
                    [o["node"], o["metric"], str(o["value"]), str(o["population_median"]), o["reason"]]
                    for o in r["outliers"]
                ],
            )
        )
    else:
        con.print("no node stands out")
