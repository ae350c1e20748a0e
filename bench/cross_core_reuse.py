#!/usr/bin/env python3
"""Why a helper core does or does not speed up a streaming core: what the helper engine (touch
mode) relies on, measured without bandwall's pipeline around it.

cross_core_reuse.c, compiled here, times CPU A reading a 4 MiB buffer straight from DRAM, again
after reading it itself (its L3), and after CPU B read it (B's L2 or the shared L3), plus the round
trip of one cache line between A and B; then the bare concurrent pattern of the helper engine's
touch mode with the split strategy: A sums two 128 MiB arrays chunk by chunk while B loads one
line in eight of the second array's chunks at most 4 MiB ahead of A ("dot_helped"), against A
alone ("dot_alone"). Rounds are separated by a pause, because a virtual machine's CPUs may be
moved between host cores (and caches) while it runs: each round is classed by its round trip.

    .venv/bin/python bench/cross_core_reuse.py --rounds 8
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import common

HERE = Path(__file__).resolve().parent
FIELDS = ("dram", "own", "other", "other-l3", "dot_alone", "dot_helped")
SHARED_NS = 150.0  # a round trip below this: A and B share a cache (same L3); above: they do not


def main() -> int:
    ap = common.parser(__doc__, rounds=8, bindir=False)
    ap.add_argument("--cpus", default="0,1", help="A,B (default 0,1)")
    ap.add_argument("--pause", type=float, default=15.0, help="seconds between rounds (default 15)")
    ap.add_argument("--json", help="also write every round here")
    a = common.parse(ap)
    cpu_a, cpu_b = a.cpus.split(",")
    exe = common.compile_c(HERE / "cross_core_reuse.c", ["-O3", "-march=native"], ["-lpthread"])
    rows = []
    for r in range(a.rounds):
        row = common.record([exe, cpu_a, cpu_b, 4 << 20, 1])
        rows.append(row)
        print(
            f"round {r + 1}: " + ", ".join(f"{k} {row[k]:.1f}" for k in (*FIELDS, "pingpong_ns")), flush=True
        )
        if r + 1 < a.rounds:
            time.sleep(a.pause)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    print(f"\nCPU A {cpu_a}, B {cpu_b}; GB/s read by A, medians of the rounds in each class")
    print(
        "| rounds | A-B round trip ns | DRAM | own L3 | after B read it | after B read and evicted it "
        "| dot alone | dot with B touching ahead | helped / alone |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, keep in (
        ("shared cache", lambda x: x["pingpong_ns"] < SHARED_NS),
        ("no shared cache", lambda x: x["pingpong_ns"] >= SHARED_NS),
    ):
        sel = [x for x in rows if keep(x)]
        if not sel:
            continue
        med = {k: statistics.median(x[k] for x in sel) for k in (*FIELDS, "pingpong_ns")}
        ratio = statistics.median(x["dot_helped"] / x["dot_alone"] for x in sel)
        print(
            f"| {label}: {len(sel)} | {med['pingpong_ns']:.0f} | {med['dram']:.1f} | {med['own']:.1f} "
            f"| {med['other']:.1f} | {med['other-l3']:.1f} | {med['dot_alone']:.1f} | {med['dot_helped']:.1f} "
            f"| {ratio:.2f}x |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
