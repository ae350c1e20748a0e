#!/usr/bin/env python3
"""bandwall sensitivity on four one-thread programs of known kind, each on the CPU at hand:

  - triad:   bandwall-stream's triad on one thread, 64 MiB arrays, 150 repetitions (it prints its
             own bandwidth: the estimate is checked against it, within 25%);
  - fma:     bandwall-peak on one thread: FMA chains in registers, no memory traffic;
  - chase:   one pointer chase through 512 MiB in a random cycle (bench/programs/memory_probes.c);
  - random:  independent loads at random lines of 8 MiB (the same file);
  - random-held (when the pirate held less than twice 8 MiB): random loads over half of what it
             held, so that a cache-bound program exists on this machine too.

Expected verdicts: bandwidth-bound, insensitive, latency-bound, cache-bound. Each program then runs
alone (what it prints itself), and the triad runs as 1, 2, ... copies at once on as many CPUs (what
the node really feeds, against result.copies). The figures go to stdout as a Markdown table with the
CPU (--results FILE appends it).

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
    "random-held": "cache-bound",
}


def parse() -> argparse.Namespace:
    p = common.parser(__doc__, rounds=None, results=True)
    p.add_argument(
        "--cpu", type=int, default=ALL_CPUS[0], help="the programs' CPU (the others take the bandit)"
    )
    p.add_argument("--only", default=None, help="comma-separated programs to run (default: all)")
    p.add_argument("--records", default=None, help="write the sensitivity records to this file (JSON)")
    return common.parse(p)


def programs(bindir: Path, cpu: int, exe: str) -> dict[str, list[str]]:
    return {
        "triad": [
            common.tool(bindir, "bandwall-stream"),
            "--threads",
            "1",
            "--cpus",
            str(cpu),
            "--size",
            "64M",
            "--reps",
            "150",
        ],
        "fma": [
            common.tool(bindir, "bandwall-peak"),
            "--threads",
            "1",
            "--cpus",
            str(cpu),
            "--reps",
            "3",
            "--seconds",
            "0.3",
        ],
        "chase": [exe, "chase", "512", "5"],
        "random": [exe, "random", "8", "100"],
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


def row(name: str, rec: dict) -> str:
    r = rec["result"]
    top = r["curve"][-1]
    cache = [p for p in r["cache_curve"] if p.get("kept")]
    worst = max(cache, key=lambda p: p["slowdown"]["median"], default=None)
    bw = f"{r['bandwidth_GBps']:.1f}" if r.get("bandwidth_GBps") is not None else "-"
    ws = r.get("working_set_MiB")
    ws_text = (
        f"[{ws[0]:.3g}, {ws[1]:.3g}]"
        if ws and ws[1] is not None
        else ("-" if not ws else f"[{ws[0]:.3g}, -]")
    )
    s = top["slowdown"]
    cs = worst["slowdown"] if worst else None
    return (
        f"| {name} | {EXPECTED[name]} | **{r['verdict']}** | {s['median']:.3f}x [{s['lo']:.3f}-{s['hi']:.3f}] at "
        f"{top['taken_GBps']:.1f} GB/s | "
        + (
            f"{cs['median']:.3f}x [{cs['lo']:.3f}-{cs['hi']:.3f}] at {worst['left_MiB']:.3g} MiB left"
            if cs
            else "-"
        )
        + f" | {bw} | {ws_text} | {r['copies'].get('advice', '-')} |"
    )


def main() -> None:
    args = parse()
    exe = str(common.compile_c(HERE / "programs" / "memory_probes.c", ["-O2"]))
    progs = programs(args.bindir, args.cpu, exe)
    only = set(args.only.split(",")) if args.only else None
    title = f"### bandwall sensitivity on {common.cpu_name()}"
    out = [
        f"Programs on CPU {args.cpu}, the bandit and the pirate on the others; "
        "slowdowns as median [interval] of the paired ratios.",
        "",
        "| program | expected | verdict | slowdown at the top dose | worst cache dose | own GB/s (est.) "
        "| working set MiB | copies advised |",
        "|---|---|---|---|---|---|---|---|",
    ]
    recs = {}
    for name, argv in progs.items():
        if only and name not in only:
            continue
        recs[name] = sensitivity(args.bindir, args.cpu, argv)
        out.append(row(name, recs[name]))
    held = next(
        (r["result"]["cache_held_MiB"] for r in recs.values() if r["result"].get("cache_held_MiB")), None
    )
    if held and held < 16 and (not only or "random-held" in only or "random" in only):
        size = f"{held / 2:.3g}"
        recs["random-held"] = sensitivity(args.bindir, args.cpu, [exe, "random", size, "100"])
        out.append(
            row("random-held", recs["random-held"]).replace("| random-held |", f"| random over {size} MiB |")
        )
    notes = []
    for name, rec in recs.items():
        r = rec["result"]
        notes.append(f"- {name}: {r['why']}")
        if r.get("cache_note"):
            notes.append(f"  - cache: {r['cache_note']}")
        if r.get("bandwidth_note"):
            notes.append(f"  - bandwidth: {r['bandwidth_note']}")
    out += ["", *notes]
    if "triad" in recs:
        own = own_triad(progs["triad"], args.cpu)
        est = recs["triad"]["result"]["bandwidth_GBps"]
        med = statistics.median(own)
        ratio = f"{est / med:.2f}x" if est is not None else "no estimate"
        out += [
            "",
            f"Triad: estimated {est if est is None else round(est, 1)} GB/s; it prints {med:.1f} GB/s "
            f"(median of {len(own)} runs alone: {', '.join(f'{x:.1f}' for x in own)}): {ratio} "
            f"({'within' if est is not None and abs(est / med - 1) <= 0.25 else 'not within'} 25%).",
        ]
        argv_of = lambda c: programs(args.bindir, c, exe)["triad"]  # noqa: E731
        totals = [copies(argv_of, n) for n in range(1, len(ALL_CPUS) + 1)]
        c = recs["triad"]["result"]["copies"]
        out += [
            f"Copies of the triad at once: {', '.join(f'{n + 1}: {t:.1f} GB/s' for n, t in enumerate(totals))} "
            f"(bandwall: {c['text']}).",
        ]
    if args.records:
        Path(args.records).write_text(json.dumps(recs, indent=1) + "\n")
    text = "\n".join(out) + "\n"
    sys.stdout.write(f"{title}\n\n{text}")
    if args.results:
        common.append_results(args.results, text, title)


if __name__ == "__main__":
    main()
