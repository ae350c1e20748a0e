"""Terminal and CSV views of numa-check records and plans."""

from __future__ import annotations

from bandwall.display import table


def render(con, rec: dict) -> None:
    r = rec["result"]
    rows = [[name, m["title"], " ".join(m["procs"]), m["value"]] for name, m in r["modes"].items()]
    con.print(
        table(
            f"numa-check: {r['fom']}",
            ["mode", "what", "processes (CPUs@memory)", f"median {r['fom_unit']}"],
            rows,
        )
    )
    con.print(f"[bold]{r['verdict']}[/bold]")
    for a in r.get("advice", []):
        con.print(f"  - {a}")


PLAN_COLUMNS = ["mode", "title", "argv"]


def plan_rows(plan: list[dict]) -> list[list]:
    """One row per mode of a plan ({mode, title, argv}), the command line as one string."""
    return [[p["mode"], p["title"], " ".join(p["argv"])] for p in plan]


def render_plan(con, plan: list[dict]) -> None:
    con.print(table("numa-check plan", ["mode", "what", "command"], plan_rows(plan)))
