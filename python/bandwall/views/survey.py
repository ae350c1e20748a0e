"""Terminal views of survey records: one node's figures and settings, or the nodes side by side with
the outliers named. Every sentence comparing a node's figure with the others' (or a baseline's) is
the words of the decision rule's claim that the record carries (result.comparisons, and each
outlier's claims); a survey with no outlier says so with the count of its claims by direction, and
names the nodes slower by their median alone but not beyond noise in their own words."""

from __future__ import annotations

from collections import Counter

from bandwall.core.claims import RISES, Claim
from bandwall.core.spread import NOISE
from bandwall.display import fmt_cell, table
from bandwall.survey.node import NAMES


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


def tally(r: dict) -> str:
    """The comparisons the decision rule made, counted by their claims' directions: '24 comparisons
    by the decision rule: 22 no difference beyond noise (3 of them too few rounds to decide), 2
    falls', or '' when none was made."""
    compared = r.get("comparisons", [])
    if not compared:
        return ""
    claims = [Claim.from_json(c) for k in compared for c in k["claims"]]
    count = Counter(c.direction for c in claims)
    few = sum(1 for c in claims if c.direction == NOISE and not c.enough)
    parts = []
    for direction, n in sorted(count.items(), key=lambda dn: (dn[0] != NOISE, dn[0])):
        text = f"{n} {direction}"
        if direction == NOISE and few:
            text += f" ({few} of them too few rounds to decide)"
        parts.append(text)
    return f"{len(claims)} comparisons by the decision rule: {', '.join(parts)}"


def near(r: dict) -> list[str]:
    """The words of the comparisons that are not outliers though the item's median lies beyond the
    limit or its claim goes the bad way: they say why (no difference beyond noise, too few rounds, or
    an interval not wholly beyond the limit)."""
    out = []
    for k in r.get("comparisons", []):
        if k["outlier"] or not k["claims"]:
            continue
        c = Claim.from_json(k["claims"][0])
        past = c.end.value > k["limit"] if k["worse"] == RISES else c.end.value < k["limit"]
        if past or c.direction == k["worse"]:
            out.append(k["words"])
    return out


def verdict_lines(r: dict) -> list[str]:
    """Why each outlier is one, what is said when no node stands out (the claims counted by
    direction), and the words of the comparisons close to an outlier that are not one."""
    lines = [why(o) for o in r["outliers"]]
    if not r["outliers"]:
        count = tally(r)
        lines.append("no node stands out" + (f" ({count})" if count else ""))
    return lines + near(r)


def why(o: dict) -> str:
    """An outlier's reason as a line: a figure's is its claim's words (which name the node and the
    figure), a fact of the node is prefixed with the node."""
    return o["reason"] if o.get("claims") else f"{o['node']}: {o['reason']}"


def render(con, rec: dict) -> None:
    r = rec["result"]
    columns, rows = node_table(r)
    con.print(table(f"Survey of {len(r['nodes'])} nodes ({r['judged']}): {NODE_TITLE}", columns, rows))
    if r.get("links"):
        con.print(table("Links, a ring of ping-pongs: median (min-max)", LINK_COLUMNS, link_rows(r)))
    for line in notes(r):
        con.print(line)
    if r["outliers"]:
        rows = [row[:-1] for row in outlier_rows(r)]
        con.print(table("Outliers", OUTLIER_COLUMNS[:-1], rows))
    for line in verdict_lines(r):
        con.print(line)
