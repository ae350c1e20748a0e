"""Terminal and CSV views of sensitivity records: the bandit's curve, the pirate's, the verdict with
its reason, the program's bandwidth and how many copies the node feeds."""

from __future__ import annotations

from bandwall.output import table


def _interval(s: dict) -> str:
    return f"{s['median']:.3f}x [{s['lo']:.3f}-{s['hi']:.3f}]"


def render(con, rec: dict) -> None:
    c, r = rec["config"], rec["result"]
    rows = [
        [f"{p['dose']:g}", p["taken_GBps"], p["bandit_alone_GBps"], _interval(p["slowdown"])]
        for p in r["curve"]
    ]
    con.print(
        table(
            f"sensitivity: {' '.join(c['command'])} on CPU(s) {c['cpus']}, bandit on {c['bandit_cpus']}",
            ["dose", "taken GB/s", "bandit alone GB/s", "time / time alone"],
            rows,
            caption=f"{r['program_s']:.3g} s a run ({c['repeat_source']}); {c['rounds']} rotated rounds; {c['rule']}",
        )
    )
    if r.get("cache_curve"):
        con.print(
            table(
                f"cache: the pirate on CPU {c['pirate_cpu']}, of {r['cache_held_MiB']:.3g} MiB it can hold",
                ["pirate MiB", "left MiB", "pirate ns alone", "ns beside", "kept", "time / time alone"],
                [
                    [
                        p["pirate_MiB"],
                        p["left_MiB"],
                        p["pirate_alone_ns"],
                        p["pirate_beside_ns"],
                        "yes" if p["kept"] else "no",
                        _interval(p["slowdown"]),
                    ]
                    for p in r["cache_curve"]
                ],
            )
        )
    con.print(f"[bold]verdict: {r['verdict']}[/bold]: {r['why']}")
    if r.get("bandwidth_GBps") is not None:
        ref = r["reference"]
        con.print(
            f"its bandwidth: about {r['bandwidth_GBps']:.1f} GB/s (the bandit lost {r['bandit_loss_GBps']:.2f} GB/s "
            f"beside it, {ref['bandit_loss_GBps']:.2f} beside a {ref['reader_GBps']:.1f} GB/s STREAM triad)"
        )
    if r.get("bandwidth_note"):
        con.print(f"  {r['bandwidth_note']}")
    ws = r.get("working_set_MiB")
    if ws:
        hi = f"{ws[1]:.3g}" if ws[1] is not None else "?"
        con.print(f"working set: {ws[0]:.3g} to {hi} MiB")
    if r.get("cache_note"):
        con.print(f"cache: {r['cache_note']}")
    con.print(f"copies: {r['copies']['text']}")
    for note in r.get("notes", []):
        con.print(f"note: {note}")


def csv_rows(rec: dict):
    r = rec["result"]
    rows = [
        [
            "bandwidth",
            p["dose"],
            p["taken_GBps"],
            "",
            p["slowdown"]["median"],
            p["slowdown"]["lo"],
            p["slowdown"]["hi"],
        ]
        for p in r["curve"]
    ]
    rows += [
        [
            "cache",
            p["pirate_MiB"],
            "",
            p["left_MiB"],
            p["slowdown"]["median"],
            p["slowdown"]["lo"],
            p["slowdown"]["hi"],
        ]
        for p in r.get("cache_curve", [])
        if p.get("kept")
    ]
    return ["kind", "dose", "taken_GBps", "left_MiB", "slowdown", "slowdown_lo", "slowdown_hi"], rows
