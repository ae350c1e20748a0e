#!/usr/bin/env python3
"""What the row kernel's memory accesses alone cost one core, beside the kernel itself with its grid
in cache: the part of the kernel's cycles a vector that its operation mix (the record's
incore_model.mix, loads and arithmetic from L1) does not count.

access_pattern.c, compiled here for this CPU, times named patterns of accesses a vector step: lines
read from streams beyond L1, written, read and written back (next's update), vector loads that hit
L1, prefetches and scalar loads of the stack, with no arithmetic, its streams sized for L2
(--l2-kib) and for L3 (--l3-kib), at the clock of a chain of dependent FMAs. The "ring-like" pattern
counts what the traffic model (the record's traffic_model.l1_fills) gives the 8x2 ring at radius 4
(6 lines a vector from L2: a row of the y window, the partial sums, the z window's lead and its
share of the column's first planes, vel; the partial sums written, next updated; 8 loads from L1);
"one-pass-like" the 2x4 shape at radius 3 (4 lines of prev's z window and y window, vel; next
updated; 10 loads from L1). Then `bandwall-iso3dfd` runs each --kernels entry on one core, its grid
(256 + 2R) x (40 + 2R) x (40 + 2R) in L3, step by step, and its cycles a vector are set beside its
operation mix's. Every round runs the patterns and the kernels once, in an order rotated round by
round; medians of the rounds [range].

    python3 bench/access_pattern.py --bindir build/py/bin --rounds 3
"""

from __future__ import annotations

import statistics
from pathlib import Path

import common

HERE = Path(__file__).resolve().parent
DEFAULT_KERNELS = "3:2x4,4:8x2-ring"


def kernels(p, text: str) -> list[tuple[int, str]]:
    """--kernels as given ("3:2x4,4:8x2-ring"): radius and shape pairs, else p.error (exit 2)."""
    out = []
    for item in text.split(","):
        r, sep, shape = item.partition(":")
        if not sep or not r.isdigit() or not 1 <= int(r) <= 8 or not shape:
            p.error(f"--kernels {text!r}: each entry is RADIUS:SHAPE with RADIUS 1-8, as 4:8x2-ring")
        out.append((int(r), shape))
    return out


def kernel_cycles(rec: dict) -> dict:
    """The record's rate as cycles a vector at the clock its operation mix measured, beside the mix's
    own cycles a vector."""
    model = rec["result"]["incore_model"]
    mix = model["mix"]
    mp = float(rec["result"]["mpoints_per_s"])
    return {
        "mpoints_per_s": mp,
        "cycles_per_vector": mix["clock_ghz"] * 1e3 * model["lanes"] / mp,
        "mix_cycles_per_vector": mix["cycles_per_vector"],
    }


def kernel_command(exe: str, cpu: str, radius: int, shape: str, steps: int) -> list:
    n1, n = 256 + 2 * radius, 40 + 2 * radius
    return [
        exe, n1, n, n, steps, "auto", "auto", "auto",
        "--cpus", cpu, "--radius", radius, "--time-block", 1, "--row-shape", shape, "--json",
    ]  # fmt: skip


def main() -> int:
    ap = common.parser(__doc__, rounds=3, results=True)
    ap.add_argument("--cpu", default="0", help="the CPU every run is pinned to (default 0)")
    ap.add_argument("--l2-kib", type=int, default=768, help="the streams' KiB in all for L2 (default 768)")
    ap.add_argument("--l3-kib", type=int, default=8192, help="the streams' KiB in all for L3 (default 8192)")
    ap.add_argument(
        "--kernels",
        default=DEFAULT_KERNELS,
        help=f"RADIUS:SHAPE entries run in cache (default {DEFAULT_KERNELS})",
    )
    ap.add_argument("--steps", type=int, default=1000, help="time steps of each kernel run (default 1000)")
    a = common.parse(ap)
    runs = kernels(ap, a.kernels)
    if min(a.l2_kib, a.l3_kib) < 64:
        ap.error("--l2-kib and --l3-kib must be at least 64")
    exe = common.compile_c(HERE / "access_pattern.c", ["-O2", "-march=native"])
    iso = common.tool(a.bindir, "bandwall-iso3dfd")
    work = common.scratch()
    jobs = [("L2", a.l2_kib), ("L3", a.l3_kib)] + [(f"r{r} {s}", (r, s)) for r, s in runs]
    pattern: dict[tuple[str, str], list[float]] = {}
    kernel: dict[str, list[dict]] = {}
    meta: dict[str, object] = {}
    for r in range(a.rounds):
        for label, what in common.order(jobs, r):
            if isinstance(what, int):
                rec = common.record([exe, a.cpu, what])
                meta = {"vector_bits": rec["vector_bits"], "ghz": rec["ghz"]}
                for row in rec["patterns"]:
                    pattern.setdefault((row["name"], label), []).append(row["cycles_per_step"])
            else:
                env = {"BANDWALL_CACHE_DIR": str(work / f"cache-{label}-{r}".replace(" ", "-"))}
                rec = common.record(kernel_command(iso, a.cpu, *what, a.steps), env=env, valid=True)
                kernel.setdefault(label, []).append(kernel_cycles(rec))
        print(f"round {r + 1} done", flush=True)
    lines = [
        f"One core (CPU {a.cpu}), {meta.get('vector_bits')}-bit vectors, about {meta.get('ghz', 0):.2f} GHz; "
        f"cycles a vector step, median of {a.rounds} rounds [range]",
        "",
        f"| pattern | in L2 ({a.l2_kib} KiB) | in L3 ({a.l3_kib} KiB) |",
        "|---|---:|---:|",
    ]
    names = list(dict.fromkeys(name for name, _ in pattern))
    for name in names:
        cells = [common.spread(pattern[(name, lvl)]) for lvl in ("L2", "L3")]
        lines.append(f"| {name} | {cells[0]} | {cells[1]} |")
    lines += [
        "",
        "| kernel, grid in L3 | MPoints/s | cycles a vector | its operation mix | mix / kernel |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, got in kernel.items():
        cyc = [g["cycles_per_vector"] for g in got]
        mix = statistics.median(g["mix_cycles_per_vector"] for g in got)
        lines.append(
            f"| {label} | {common.spread([g['mpoints_per_s'] for g in got], '{:.0f}')} | "
            f"{common.spread(cyc)} | {mix:.1f} | {100 * mix / statistics.median(cyc):.0f}% |"
        )
    common.publish("\n".join(lines), a.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
