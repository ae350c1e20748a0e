#!/usr/bin/env python3
"""bandwall-stream against likwid-bench, side by side, round by round.

For each round, kernel and thread count, both programs run once (in alternating order) on the
same CPUs (bandwall --bind compact, likwid -w S0:...:N, which both take the first N CPUs of the
socket) with the same array sizes and repetitions. Reported: the median over rounds of each
program's bandwidth, their ratio, and the median of the per-round ratios (each round's two runs
are back to back, so this one is less sensitive to load that drifts over minutes). Both count bytes the STREAM way (no write-allocate):
likwid's "MByte/s" is 1e6 B/s of load + store bytes over all iterations, so it is compared with
bandwall's avg_GBps (bytes over the average repetition time), not with its best.

Peers: copy ~ copy_mem_avx, triad ~ stream_mem_avx (likwid's "triad" has four arrays), dot ~
ddot_avx; with --stores regular, copy_avx and stream_avx (dot stores nothing: ddot_avx again).
likwid-bench has no scale, add or nstream: they are set against the test with the same loads and
stores per element (scale ~ copy, add ~ stream, nstream ~ likwid's four-array triad).
--isa avx512 uses likwid's *_avx512 variants instead.

    ./bootstrap setup && bench/setup
    python3 bench/stream_vs_likwid.py --rounds 7 --stores nt
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import sys

import common

PEERS = {  # (bandwall kernel, stores) -> likwid test, without the ISA suffix
    ("copy", "nt"): "copy_mem",
    ("triad", "nt"): "stream_mem",
    ("dot", "nt"): "ddot",
    ("copy", "regular"): "copy",
    ("triad", "regular"): "stream",
    ("dot", "regular"): "ddot",
    # likwid-bench 5.2 has no scale, add or nstream: the test that moves the same bytes per
    # element with the same loads and stores (scale 1 load + 1 store as copy, add 2 + 1 as stream,
    # nstream 3 + 1 as likwid's four-array triad)
    ("scale", "nt"): "copy_mem",
    ("add", "nt"): "stream_mem",
    ("nstream", "nt"): "triad_mem",
    ("scale", "regular"): "copy",
    ("add", "regular"): "stream",
    ("nstream", "regular"): "triad",
}
ARRAYS = {"copy": 2, "scale": 2, "add": 3, "triad": 3, "nstream": 4, "dot": 2}  # likwid's arrays


def bandwall(exe: str, kernel: str, threads: int, stores: str, size: int, reps: int) -> float:
    cmd = [exe, "--kernel", kernel, "--threads", threads, "--bind", "compact", "--stores", stores]
    return common.record([*cmd, "--size", size, "--reps", reps])["result"]["avg_GBps"]


def likwid(test: str, threads: int, total_bytes: int, reps: int) -> float:
    cmd = ["likwid-bench", "-t", test, "-i", str(reps), "-w", f"S0:{total_bytes // 1000}kB:{threads}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"^MByte/s:\s+([0-9.]+)", proc.stdout, re.M)
    if proc.returncode != 0 or not m:
        raise RuntimeError(
            f"{' '.join(cmd)} failed: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}"
        )
    return float(m.group(1)) / 1000.0


def main() -> int:
    ap = common.parser(__doc__, rounds=5, summary=True)
    ap.add_argument("--threads", default="1,2", help="thread counts, comma separated")
    ap.add_argument("--kernels", default="copy,scale,add,triad,nstream,dot")
    ap.add_argument("--stores", choices=("nt", "regular"), default="nt")
    ap.add_argument("--isa", choices=("avx", "avx512"), default="avx", help="likwid variant to compare with")
    ap.add_argument(
        "--size", type=int, default=0, help="bytes per array (default 4x the LLC, as bandwall-stream)"
    )
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--json", default=None, help="also write every measurement to this file")
    a = common.parse(ap)
    if not shutil.which("likwid-bench"):
        print("likwid-bench is not installed (Debian package likwid)", file=sys.stderr)
        return 2
    exe = common.tool(a.bindir, "bandwall-stream")
    threads = [int(t) for t in a.threads.split(",")]
    kernels = a.kernels.split(",")
    size = a.size or _default_size(exe, max(threads))
    size -= size % 4096
    runs: dict = {}
    for rnd in range(a.rounds):
        for kernel in kernels:
            test = PEERS[(kernel, a.stores)] + ("_avx512" if a.isa == "avx512" else "_avx")
            for t in threads:
                for who in common.order(("bandwall", "likwid"), rnd, reverse=True):
                    if who == "bandwall":
                        v = bandwall(exe, kernel, t, a.stores, size, a.reps)
                    else:
                        v = likwid(test, t, size * ARRAYS[kernel], a.reps)
                    runs.setdefault((kernel, test, t), {}).setdefault(who, []).append(v)
                    print(f"round {rnd + 1}: {kernel:5s} {t} threads {who:8s} {v:7.2f} GB/s", file=sys.stderr)
    print(
        f"bandwall-stream ({a.stores} stores) vs likwid-bench, {a.rounds} alternated rounds, "
        f"{size / 2**20:.0f} MiB per array, {a.reps} repetitions; medians of GB/s (1e9 B/s, no write-allocate)"
    )
    print(
        "| kernel | likwid test | threads | bandwall GB/s | likwid GB/s | ratio of medians | median of paired ratios |"
        " bandwall range | likwid range |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    table = []
    for (kernel, test, t), v in runs.items():
        b, lk = statistics.median(v["bandwall"]), statistics.median(v["likwid"])
        paired = statistics.median(common.ratios(v["bandwall"], v["likwid"]))
        table.append(
            {
                "kernel": kernel,
                "likwid_test": test,
                "threads": t,
                "bandwall": v["bandwall"],
                "likwid": v["likwid"],
                "ratio": b / lk,
                "paired_ratio": paired,
            }
        )
        print(
            f"| {kernel} | {test} | {t} | {b:.2f} | {lk:.2f} | {b / lk:.2f}x | {paired:.2f}x | "
            f"{min(v['bandwall']):.1f}-{max(v['bandwall']):.1f} | {min(v['likwid']):.1f}-{max(v['likwid']):.1f} |"
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(
                {"stores": a.stores, "size_per_array": size, "reps": a.reps, "rows": table}, f, indent=1
            )
    return 0


def _default_size(exe: str, threads: int) -> int:
    """bandwall-stream's default bytes per array (4x the LLC of the CPUs) for this thread count."""
    rec = common.record([exe, "--kernel", "copy", "--threads", threads, "--reps", 1])
    return int(rec["config"]["size_per_array_bytes"])


if __name__ == "__main__":
    sys.exit(main())
