"""The terminal view of a numa-matrix record."""

from __future__ import annotations

from bandwall.display import table


def render(con, rec: dict) -> None:
    r = rec["result"]
    rows = [[f"CPUs of node {i}"] + row for i, row in zip(r["cpu_nodes"], r["matrix"])]
    con.print(
        table(
            f"{r['kernel']} bandwidth, {r['unit']} (threads on node i, memory on node j)",
            ["threads \\ memory"] + [f"node {j}" for j in r["memory_nodes"]],
            rows,
        )
    )
    if "remote_over_local" in r:
        con.print(f"remote memory gives {r['remote_over_local']:.2f}x the local bandwidth")
