#!/usr/bin/env python3
"""The default, portable build (baseline x86-64-v2, wider kernels chosen at run time) against a build
for this CPU only (BANDWALL_ARCH=native), side by side: ISO3DFD, STREAM and the FMA peak.

Each round runs every measurement with both builds, in an order alternated from round to round;
the figures are the medians over the rounds of default / native, with their min and max. The
portable build must stay at or above 0.97x.

  cmake -S . -B build/native -G Ninja -DBANDWALL_ARCH=native -DBANDWALL_TESTS=OFF
  cmake --build build/native -j2 --target bandwall-iso3dfd bandwall-stream bandwall-peak
  python3 bench/portable_vs_native.py --default build/py/bin --native build/native/bin --rounds 5
"""

from __future__ import annotations

import argparse
import statistics

import common

# name -> (executable, arguments, the record's figure)
MEASUREMENTS = {
    "iso3dfd 256^3 interior, 20 steps, 2 threads (MPoints/s)": (
        "bandwall-iso3dfd",
        ["272", "272", "272", "20", "auto", "auto", "auto", "--threads", "2", "--json"],
        ("result", "mpoints_per_s"),
    ),
    "stream triad NT, 2 threads (GB/s)": (
        "bandwall-stream",
        ["--kernel", "triad", "--threads", "2", "--stores", "nt", "--size", "256M"],
        ("result", "best_GBps"),
    ),
    "stream copy NT, 2 threads (GB/s)": (
        "bandwall-stream",
        ["--kernel", "copy", "--threads", "2", "--stores", "nt", "--size", "256M"],
        ("result", "best_GBps"),
    ),
    "FMA peak single precision, 2 threads (GFlop/s)": (
        "bandwall-peak",
        ["--threads", "2", "--reps", "3"],
        ("result", "total_gflops_sp"),
    ),
}


def parse() -> argparse.Namespace:
    # two folders of executables, not one: --default (the shared --bindir's default) and --native
    p = common.parser(__doc__, rounds=5, min_rounds=3, bindir=False)
    p.add_argument(
        "--default",
        default=str(common.default_bindir()),
        help=f"the default build's executables (default: $BANDWALL_BINDIR, else {common.DEFAULT_BINDIR})",
    )
    p.add_argument(
        "--native", default="build/native/bin", help="the BANDWALL_ARCH=native build's executables"
    )
    return common.parse(p)


def figure(bindir: str, exe: str, args: list[str], path: tuple[str, ...]) -> tuple[float, dict]:
    rec = common.record([common.tool(bindir, exe), *args])
    v = rec
    for k in path:
        v = v[k]
    return float(v), rec


def main() -> None:
    a = parse()
    builds = {"default": a.default, "native": a.native}
    values: dict[str, dict[str, list[float]]] = {m: {b: [] for b in builds} for m in MEASUREMENTS}
    flags: dict[str, str] = {}
    for r in range(a.rounds):
        for name, (exe, args, path) in MEASUREMENTS.items():
            for b in common.order(builds, r, reverse=True):
                v, rec = figure(builds[b], exe, args, path)
                values[name][b].append(v)
                flags[b] = rec["provenance"]["flags"]
        print(f"round {r + 1}/{a.rounds} done", flush=True)
    print()
    for b, f in flags.items():
        print(f"{b}: {f}")
    print()
    print(f"{'measurement':58} {'default':>9} {'native':>9} {'ratio':>7} {'min':>6} {'max':>6}")
    for name, by in values.items():
        ratios = common.ratios(by["default"], by["native"])
        print(
            f"{name:58} {statistics.median(by['default']):9.1f} {statistics.median(by['native']):9.1f} "
            f"{statistics.median(ratios):7.3f} {min(ratios):6.3f} {max(ratios):6.3f}"
        )


if __name__ == "__main__":
    main()
