#!/usr/bin/env python3
"""bandwall sensitivity on four one-thread programs of known kind, each on the CPU at hand:

  - triad:   bandwall-stream's triad on one thread, 64 MiB arrays, 150 repetitions (it prints its
             own bandwidth: where the bandwidth control passed, the estimate is checked against it,
             within 25%);
  - fma:     bandwall-peak on one thread: FMA chains in registers, no memory traffic;
  - chase:   one pointer chase through 512 MiB in a random cycle (bench/programs/memory_probes.c);
  - random:  independent loads at random lines of half of what the pirate held in the runs before
             (8 MiB where no pirate held anything; the same file).

Expected verdicts: bandwidth-bound, insensitive, latency-bound, cache-bound. Each verdict is judged
right, `undetermined` with its failed control named (what the method owes where it cannot work), or
WRONG. The controls' own outcomes are printed, and each program's copies curve (run by bandwall,
1, 2, ... at once). The triad then runs alone (what it prints itself), and as 1, 2, ... copies at
once on as many CPUs (what the node really feeds). The figures go to stdout as Markdown with the
CPU (--results FILE appends them).

  ./bootstrap setup
  .venv/bin/python bench/sensitivity.py --results bench/results/FILE.md
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

import common

HERE = Path(__file__).resolve().parent
ALL_CPUS = sorted(os.sched_getaffinity(0))
EXPECTED = {
    "triad": "bandwidth-bound",
    "fma": "insensitive",
    "chase": "latency-bound",
    "random": "cache-bound",
}


def parse() -> argparse.Namespace:
    p = common.parser(__doc__, rounds=None, results=True)
    p.add_argument(
        "--cpu", type=int, default=ALL_CPUS[0], help="the programs' CPU (the others take the bandit)"
    )
    p.add_argument("--only", default=None, help="comma-separated programs to run (default: all)")
    p.add_argument("--records", default=None, help="write the sensitivity records to this file (JSON)")
    return common.parse(p)


def programs(bindir: Path, exe: str) -> dict[str, list[str]]:
    """The programs, none naming its CPUs: each runs where it is started (bandwall's CPUs for it, or
    its own for each copy)."""
    return {
        "triad": [
            common.tool(bindir, "bandwall-stream"),
            "--threads",
            "1",
            "--size",
            "64M",
            "--reps",
            "150",
        ],
        "fma": [
            common.tool(bindir, "bandwall-peak"),
            "--threads",
            "1",
            "--reps",
            "3",
            "--seconds",
            "0.3",
        ],
        "chase": [exe, "chase", "512", "5"],
        "random": [exe, "random", "8", "100"],  # sized to the pirate in main() once it has held
    }


def run_json(cmd: list[str], cpus: list[int] | None = None) -> dict:
    pin = (lambda: os.sched_setaffinity(0, set(cpus))) if cpus else None
    return common.record(cmd, preexec_fn=pin)


def sensitivity(bindir: Path, cpu: int, argv: list[str]) -> dict:
    print(f"bench: bandwall sensitivity -- {shlex.join(argv)}", file=sys.stderr)
    return run_json(
        [
            common.tool(bindir, "bandwall"),
            "sensitivity",
            "--cpus",
            str(cpu),
            "--no-store",
            "--format",
            "json",
            "--",
            *argv,
        ]
    )


def own_triad(argv: list[str], cpu: int, n: int = 3) -> list[float]:
    return [run_json(argv, [cpu])["result"]["median_GBps"] for _ in range(n)]


def copies(argv_of, n: int) -> float:
    """n copies of the triad at once, one a CPU: the sum of what they print."""
    procs = []
    for c in ALL_CPUS[:n]:
        argv = argv_of(c)
        procs.append(
            subprocess.Popen(
                argv, stdout=subprocess.PIPE, text=True, preexec_fn=lambda c=c: os.sched_setaffinity(0, {c})
            )
        )
    total = 0.0
    for p in procs:
        out, _ = p.communicate()
        total += json.loads(out.strip().splitlines()[-1])["result"]["median_GBps"]
    return total


def judge(name: str, rec: dict) -> str:
    """right, undetermined (with a failed control named in why) or WRONG."""
    r = rec["result"]
    if r["verdict"] == EXPECTED[name]:
        return "right"
    if r["verdict"] == "undetermined":
        named = any(w in r["why"] for w in ("control", "placebo", "does not share", "not shown to share"))
        return "undetermined, control named" if named else "undetermined, NO CONTROL NAMED"
    return "WRONG"


def _iv(s: dict) -> str:
    return f"{s['median']:.3f}x [{s['lo']:.3f}-{s['hi']:.3f}]"


def row(name: str, rec: dict) -> str:
    r = rec["result"]
    top = r["curve"][-1]
    cache = [p for p in r["cache_curve"] if p.get("kept")]
    worst = max(cache, key=lambda p: p["slowdown"]["median"], default=None)
    bw = r.get("bandwidth") or {}
    bw_text = (
        "-"
        if bw.get("GBps") is None
        else f"{bw['GBps']:.1f}" + (" (bound)" if bw.get("kind") == "upper bound" else "")
    )
    ws = r.get("working_set_MiB")
    ws_text = (
        f"[{ws[0]:.3g}, {ws[1]:.3g}]"
        if ws and ws[1] is not None
        else ("-" if not ws else f"[{ws[0]:.3g}, -]")
    )
    ctl = r["controls"]
    ctl_text = " ".join(f"{n[:2]}:{'ok' if c['passed'] else 'FAIL'}" for n, c in ctl.items())
    cs = worst["slowdown"] if worst else None
    return (
        f"| {name} | {EXPECTED[name]} | **{r['verdict']}** | {judge(name, rec)} | {ctl_text} | "
        f"{_iv(top['slowdown'])} at {top['taken_GBps']:.1f} GB/s | "
        + (f"{_iv(cs)} at {worst['left_MiB']:.3g} MiB left" if cs else "-")
        + f" | {bw_text} | {ws_text} | {r['copies'].get('advice', '-')} |"
    )


def controls_lines(name: str, rec: dict) -> list[str]:
    out = []
    for n, c in rec["result"]["controls"].items():
        pts = ", ".join(
            (
                f"bandit {p['dose']:g}: "
                if "dose" in p
                else (f"{p['left_MiB']:.3g} MiB left: " if p.get("left_MiB") is not None else "")
            )
            + _iv(p["slowdown"])
            for p in c["points"]
        )
        out.append(f"  - {n} control {'passed' if c['passed'] else 'FAILED'}: {pts or 'not run'}")
    return out


def copies_line(rec: dict) -> str:
    cp = rec["result"]["copies"]
    pts = "; ".join(
        f"{p['copies']}: throughput {_iv(p['throughput'])}, each {_iv(p['slowdown'])}" for p in cp["measured"]
    )
    return f"  - copies at once: {pts or 'none'} -> advice {cp.get('advice')} ({cp.get('advice_why', '')})"


def main() -> None:
    args = parse()
    exe = str(common.compile_c(HERE / "programs" / "memory_probes.c", ["-O2"]))
    progs = programs(args.bindir, exe)
    only = set(args.only.split(",")) if args.only else None
    title = f"### bandwall sensitivity on {common.cpu_name()}"
    out = [
        f"Programs on CPU {args.cpu}, the bandit and the pirate on the others; "
        "slowdowns as median [interval] of the paired ratios; controls: ba(ndwidth), ca(che), pl(acebo).",
        "",
        "| program | expected | verdict | judged | controls | slowdown at the top dose | worst cache dose "
        "| own GB/s | working set MiB | copies advised |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    recs = {}
    for name, argv in progs.items():
        if only and name not in only:
            continue
        if name == "random":
            held = next(
                (r["result"]["cache_held_MiB"] for r in recs.values() if r["result"].get("cache_held_MiB")),
                None,
            )
            if held:
                argv = [exe, "random", f"{held / 2:.3g}", "100"]
        recs[name] = sensitivity(args.bindir, args.cpu, argv)
        label = name if name != "random" else f"random over {argv[2]} MiB"
        out.append(row(name, recs[name]).replace(f"| {name} |", f"| {label} |", 1))
    notes = []
    for name, rec in recs.items():
        r = rec["result"]
        notes.append(f"- {name}: {r['verdict']}: {r['why']}")
        notes += controls_lines(name, rec)
        notes.append(copies_line(rec))
        if r.get("cache_note"):
            notes.append(f"  - cache: {r['cache_note']}")
        bw = r.get("bandwidth") or {}
        notes.append(f"  - bandwidth: {bw.get('kind') or 'none'}: {bw.get('why', '')}")
    out += ["", *notes]
    if "triad" in recs:
        own = own_triad(progs["triad"], args.cpu)
        r = recs["triad"]["result"]
        est = r["bandwidth_GBps"]
        med = statistics.median(own)
        passed = r["controls"]["bandwidth"]["passed"]
        ratio = f"{est / med:.2f}x" if est is not None else "no estimate"
        out += [
            "",
            f"Triad: bandwidth control {'passed' if passed else 'failed'}; estimated "
            f"{est if est is None else round(est, 1)} GB/s; it prints {med:.1f} GB/s "
            f"(median of {len(own)} runs alone: {', '.join(f'{x:.1f}' for x in own)}): {ratio} "
            f"({'within' if est is not None and abs(est / med - 1) <= 0.25 else 'not within'} 25%).",
        ]
        argv_of = lambda c: programs(args.bindir, exe)["triad"]  # noqa: E731
        totals = [copies(argv_of, n) for n in range(1, len(ALL_CPUS) + 1)]
        out += [
            f"Copies of the triad at once, as it prints them: "
            f"{', '.join(f'{n + 1}: {t:.1f} GB/s' for n, t in enumerate(totals))} "
            f"(bandwall: {r['copies']['text']}).",
        ]
    if args.records:
        Path(args.records).write_text(json.dumps(recs, indent=1) + "\n")
    text = "\n".join(out) + "\n"
    sys.stdout.write(f"{title}\n\n{text}")
    if args.results:
        common.append_results(args.results, text, title)


if __name__ == "__main__":
    main()
