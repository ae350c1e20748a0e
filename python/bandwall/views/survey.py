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


def figure(f: dict, unit: bool = True) -> str:
    text = f"{_num(f['median'])} ({_num(f['min'])}-{_num(f['max'])})"
    return f"{text} {f.get('unit', '')}".rstrip() if unit else text


def _num(v) -> str:
    """Three significant figures at least, no decimals beyond them."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"
    return fmt_cell(v)


def heading(key: str, nodes: list[dict]) -> str:
    unit = next((n["figures"][key].get("unit") for n in nodes if key in n["figures"]), "")
    return f"{NAMES.get(key, key)} {unit}".rstrip()


def render_node(con, rec: dict) -> None:
    r = rec["result"]
    con.print(f"node {r['node']} ({r['cpu_model']}), topology {r['digest']}, knee at {r['knee_cores']} cores")
    rows = [[NAMES.get(k, k), figure(f)] for k, f in r["figures"].items()]
    con.print(table("Figures: median (min-max)", ["figure", "value"], rows))
    con.print(table("Settings", ["setting", "value"], [[k, str(v)] for k, v in r["settings"].items()]))
    if "load" in r:
        con.print(busy_line(r["load"]))


def busy_line(load: dict) -> str:
    who = ", ".join(f"{p['command']} (pid {p['pid']}) {p['cpus']:.2g}" for p in load["processes"])
    return (
        f"other processes used {load['busy_cpus']:.2g} of its CPUs over {load['window_s']:.2g} s before the runs"
        + (f": {who}" if who else "")
    )


NODE_TITLE = "median (min-max)"
LINK_COLUMNS = ["link", "latency us", "bandwidth GB/s", ""]
OUTLIER_COLUMNS = ["node", "metric", "value", "median", "reason"]


def node_table(r: dict) -> tuple[list[str], list[list]]:
    """The nodes side by side: columns and rows (each figure's median (min-max), CPUs busy with
    other processes, flagged)."""
    nodes = r["nodes"]
    keys = sorted({k for n in nodes for k in n["figures"]})
    rows = [
        [n["node"], *[figure(n["figures"][k], unit=False) if k in n["figures"] else "-" for k in keys]]
        + [f"{n['load']['busy_cpus']:.2g}" if "load" in n else "-"]
        + ["flagged" if n["node"] in r["flagged"] else ""]
        for n in nodes
    ]
    return ["node", *[heading(k, nodes) for k in keys], "CPUs busy with others", ""], rows


def link_rows(r: dict) -> list[list]:
    def state(ln: dict) -> str:
        if f"{ln['from']}-{ln['to']}" in r["flagged"]:
            return "flagged"
        return "one machine: not judged" if ln.get("one_machine") else ""

    return [
        [
            f"{ln['from']}-{ln['to']}",
            figure(ln["latency_us"], unit=False),
            figure(ln["bandwidth_GBps"], unit=False),
            state(ln),
        ]
        for ln in r.get("links", [])
    ]


def outlier_rows(r: dict) -> list[list]:
    return [
        [o["node"], o["metric"], _num(o["value"]), _num(o["population_median"]), o["reason"]]
        for o in r["outliers"]
    ]


def notes(r: dict) -> list[str]:
    """What the tables do not say: why there are no links, which nodes are one machine, which files
    were not judged and which nodes gave no record."""
    out = [f"links not measured: {r['links_note']}"] if not r.get("links") and r.get("links_note") else []
    out += [f"{', '.join(g)} are one machine: measured in turns" for g in r.get("shared_hosts", [])]
    out += [f"not judged: {s['file']}: {s['reason']}" for s in r.get("skipped", [])]
    return out + [f"missing: node {m['node']}: {m['reason']}" for m in r.get("missing", [])]


def render(con, rec: dict) -> None:
    r = rec["result"]
    columns, rows = node_table(r)
    con.print(table(f"Survey of {len(r['nodes'])} nodes ({r['judged']}): {NODE_TITLE}", columns, rows))
    if r.get("links"):
        con.print(table("Links, a ring of ping-pongs: median (min-max)", LINK_COLUMNS, link_rows(r)))
    for line in notes(r):
        con.print(line)
    if r["outliers"]:
        con.print(table("Outliers", OUTLIER_COLUMNS, outlier_rows(r)))
    else:
        con.print("no node stands out")
