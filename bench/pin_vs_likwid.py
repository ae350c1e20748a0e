#!/usr/bin/env python3
"""bandwall pin against likwid-pin on an OpenMP program: start-up cost and thread placement.

Start-up: each round runs, in rotating order, the probe program with almost no work (1 round of 1
multiply-add per thread) as
  plain        the program alone (OMP_PROC_BIND=false, so nothing binds),
  preload      MP_BIND=yes MP_BLIST=LIST LD_PRELOAD=libbandwall-pin.so (the library by hand),
  bandwall-pin bandwall-pin --cpus LIST (launcher, library, record; no sampling),
  likwid-pin   likwid-pin -q -c LIST,
and takes the wall time of each from fork to exit. Reported: medians over rounds, each one's median
extra time over plain, and the ratio of bandwall's extra to likwid-pin's (per-round ratios, median).

Placement: the probe (GNU OpenMP, and the LLVM and gfortran twins when built) runs under both with the
same list; the CPU each OpenMP thread ended on must be the same, and the list's.

    ./bootstrap setup
    python3 bench/pin_vs_likwid.py --rounds 41 --cpus 1,0
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import common

REPO = common.ROOT


def run(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
    return wall, proc.stdout


def thread_cpus(stdout: str) -> list[int]:
    lines = [ln for ln in stdout.splitlines() if ln.startswith('{"probe"')]
    if lines:
        return json.loads(lines[-1])["thread_cpus"]
    rec = json.loads([ln for ln in stdout.splitlines() if ln.startswith("{")][-1])
    return thread_cpus(rec["result"]["stdout"])


def main() -> None:
    ap = common.parser(__doc__, rounds=21)
    ap.add_argument("--cpus", default="1,0", help="CPU list for both (plain commas)")
    args = common.parse(ap)
    pin, lib = common.tool(args.bindir, "bandwall-pin"), str(args.bindir / "libbandwall-pin.so")
    likwid = shutil.which("likwid-pin")
    if not likwid:
        sys.exit("likwid-pin not found (apt-get install likwid)")
    probes = {"gcc": common.tool(args.bindir, "bandwall-pin-probe")}
    for kind in ("clang", "fortran"):
        p = REPO / "build" / "py" / "bin" / f"pin-probe-{kind}"
        if p.exists():
            probes[kind] = str(p)
    n = len(args.cpus.split(","))
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_", "KMP_", "MP_"))}
    base["OMP_NUM_THREADS"] = str(n)
    tiny = ["1", "1"]
    gcc = probes["gcc"]
    variants = {
        "plain": ([gcc, *tiny], dict(base, OMP_PROC_BIND="false")),
        "preload": ([gcc, *tiny], dict(base, MP_BIND="yes", MP_BLIST=args.cpus, LD_PRELOAD=lib)),
        "bandwall-pin": ([pin, "--cpus", args.cpus, "--", gcc, *tiny], base),
        "likwid-pin": ([likwid, "-q", "-c", args.cpus, gcc, *tiny], base),
    }
    names = list(variants)
    times = common.alternate({k: (lambda v=v: run(*v)[0]) for k, v in variants.items()}, args.rounds)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"CPU: {common.cpu_name()}; {args.rounds} rounds, list {args.cpus}, {n} OpenMP threads")
    print(f"{'variant':14} {'median ms':>10} {'extra ms':>9}")
    for k in names:
        print(f"{k:14} {1e3 * med[k]:10.2f} {1e3 * (med[k] - med['plain']):9.2f}")
    extra = {k: [t - p for t, p in zip(times[k], times["plain"])] for k in names}
    for k in ("preload", "bandwall-pin"):
        ratios = [a / b for a, b in zip(extra[k], extra["likwid-pin"]) if b > 0]
        if ratios:
            print(f"extra time {k} / likwid-pin: median of per-round ratios {statistics.median(ratios):.3f}")
    print("placement (CPU each OpenMP thread ended on):")
    ok = True
    expect = [int(c) for c in args.cpus.split(",")]
    for kind, exe in probes.items():
        work = [] if kind == "fortran" else ["5", "20000"]
        ours = thread_cpus(run([pin, "--cpus", args.cpus, "--", exe, *work], base)[1])
        theirs = thread_cpus(run([likwid, "-q", "-c", args.cpus, exe, *work], base)[1])
        same = ours == theirs == expect
        ok &= same
        print(f"  {kind:8} bandwall-pin {ours}  likwid-pin {theirs}  {'identical' if same else 'DIFFERENT'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
