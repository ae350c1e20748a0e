"""Terminal and CSV views of sensitivity records: the bandit's curve, the pirate's, the controls run
in the same rounds with the claim each was decided by, the verdict with its reason (words rendered
from the record's claims when it was made), the program's bandwidth (estimate or bound) and the
copies run at once."""

from __future__ import annotations

from bandwall.core.claims import Claim, say
from bandwall.display import table


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
    ctl = r.get("controls") or {}
    rows = []
    for name in ("bandwidth", "cache", "placebo"):
        c = ctl.get(name)
        if not c:
            continue
        if not c["points"]:
            rows.append([name, "-", "not run", "-"])
        for p in c["points"]:
            dose = (
                f"bandit {p['dose']:g}"
                if "dose" in p
                else (f"{p['left_MiB']:.3g} MiB left" if p.get("left_MiB") is not None else "beside")
            )
            rows.append([name, dose, _interval(p["slowdown"]), "yes" if p["slowed"] else "no"])
    if rows:
        con.print(
            table(
                "controls, in the same rounds (positive ones must be slowed, the placebo must not)",
                ["control", "dose", "slowdown", "beyond noise"],
                rows,
                caption="; ".join(
                    f"{n}: {'passed' if c['passed'] else 'FAILED'}" for n, c in ctl.items() if c
                ),
            )
        )
    for name, c in ctl.items():  # each control's claim, in the words its reason is rendered from
        if c and c.get("claim"):
            con.print(
                f"{name} control {'passed' if c['passed'] else 'FAILED'}: {say(Claim.from_json(c['claim']))}"
            )
    con.print(f"[bold]verdict: {r['verdict']}[/bold]: {r['why']}")
    bw = r.get("bandwidth") or {}
    if bw.get("kind") == "estimate":
        ref = r["reference"]
        con.print(
            f"its bandwidth: about {r['bandwidth_GBps']:.1f} GB/s (the bandit lost {r['bandit_loss_GBps']:.2f} GB/s "
            f"beside it, {ref['bandit_loss_GBps']:.2f} beside a {ref['reader_GBps']:.1f} GB/s STREAM triad)"
        )
    elif bw.get("kind") == "upper bound":
        con.print(f"its bandwidth: at most {bw['GBps']:.1f} GB/s, a bound ({bw['why']})")
    elif bw:
        con.print(f"its bandwidth: not told ({bw['why']})")
    elif r.get("bandwidth_note"):
        con.print(f"  {r['bandwidth_note']}")
    ws = r.get("working_set_MiB")
    if ws:
        hi = f"{ws[1]:.3g}" if ws[1] is not None else "?"
        con.print(f"working set: {ws[0]:.3g} to {hi} MiB")
    if r.get("cache_note"):
        con.print(f"cache: {r['cache_note']}")
    cp = r["copies"]
    if len(cp.get("measured", [])) > 1:
        con.print(
            table(
                "copies of the program at once, each on its own CPUs",
                ["copies", "CPUs", "throughput / one copy's", "each copy's time / alone", "slowed"],
                [
                    [
                        p["copies"],
                        " ".join(p["cpus"]),
                        _interval(p["throughput"]),
                        _interval(p["slowdown"]),
                        "yes" if p["slowed"] else "no",
                    ]
                    for p in cp["measured"]
                ],
                caption=cp.get("advice_why", ""),
            )
        )
    con.print(f"copies: {cp['text']}")
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
    for name, c in (r.get("controls") or {}).items():
        for p in c["points"]:
            rows.append(
                [
                    f"control:{name}",
                    p.get("dose", p.get("pirate_MiB", "")),
                    p.get("taken_GBps", ""),
                    p.get("left_MiB", ""),
                    p["slowdown"]["median"],
                    p["slowdown"]["lo"],
                    p["slowdown"]["hi"],
                ]
            )
    for p in r["copies"].get("measured", []):
        rows.append(
            [
                "copies",
                p["copies"],
                "",
                "",
                p["slowdown"]["median"],
                p["slowdown"]["lo"],
                p["slowdown"]["hi"],
            ]
        )
    return ["kind", "dose", "taken_GBps", "left_MiB", "slowdown", "slowdown_lo", "slowdown_hi"], rows
