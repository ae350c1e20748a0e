"""Views of page maps (which NUMA node holds each array) and of bandwall-place records."""

from __future__ import annotations

from bandwall.display import table


def page_map_rows(page_map: dict) -> tuple[list[str], list[list]]:
    """Columns (node 0, node 1, ..., absent) and one row per array, shares in percent."""
    keys = sorted(
        {k for m in page_map.values() for k in m},
        key=lambda k: (not k.isdigit(), int(k) if k.isdigit() else 0, k),
    )
    cols = [f"node {k}" if k.isdigit() else k for k in keys]
    return cols, [[name] + [100.0 * m.get(k, 0.0) for k in keys] for name, m in page_map.items()]


def moved_notes(recs: list[dict]) -> list[str]:
    """Each distinct note of pages that moved during a run (automatic NUMA balancing), once."""
    notes = [r.get("placement", {}).get("note") for r in recs]
    return list(dict.fromkeys(n for n in notes if n))


def render(con, rec: dict) -> None:
    r = rec["result"]
    cols, rows = page_map_rows(rec["placement"]["page_map"])
    con.print(
        table(
            f"pages per NUMA node, % ({rec['placement']['policy']}, touch {r['touch']})",
            ["array"] + cols,
            rows,
        )
    )
    con.print(
        f"threads on CPUs {r['thread_cpus']} (nodes {r['thread_nodes']}); transparent huge pages: "
        f"{r['thp']['enabled']}; memory policy of the process: {r['memory_policy']['mode']}"
    )
