#!/usr/bin/env python3
"""Builds of bandwall-iso3dfd against each other: the same arguments, rounds alternated.

For a kernel change, copy the executable aside before it (cp build/py/bin/bandwall-iso3dfd
/tmp/before), rebuild, and run both; or build one executable per register shape. Every round runs
each build once (every other round in the reverse order, so that none always follows the same
one); the script prints each build's median and range of MPoints/s and the median and range of its
per-round ratios to the first build (a pair of runs in one round sees the same state of a noisy
host). A build whose run fails or whose record does not pass its check stops the comparison.

    python3 bench/iso3dfd_builds.py --rounds 12 /tmp/before build/py/bin/bandwall-iso3dfd
    python3 bench/iso3dfd_builds.py --rounds 12 --threads 1 --args "272 272 272 20 272 8 128" A B C
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import common


def parse() -> argparse.Namespace:
    p = common.parser(__doc__, rounds=10, min_rounds=3, bindir=False)
    p.add_argument("builds", nargs="+", help="bandwall-iso3dfd executables; the first is the baseline")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--args",
        default="272 272 272 20 auto auto auto",
        help="the positional arguments: n1 n2 n3 steps n1_block n2_block n3_block",
    )
    a = common.parse(p)
    if len(a.builds) < 2:
        p.error("give at least two builds")
    for b in a.builds:
        if not Path(b).is_file():
            p.error(f"no executable {b}")
    return a


def run(build: str, args: list[str], threads: int) -> float:
    rec = common.record([build, *args, "--threads", str(threads), "--json"], valid=True)
    return float(rec["result"]["mpoints_per_s"])


def main() -> None:
    a = parse()
    args = a.args.split()
    mp = common.alternate(
        {b: (lambda b=b: run(b, args, a.threads)) for b in a.builds},
        a.rounds,
        reverse=True,
        after=lambda r, mp: print(
            f"round {r + 1}: " + ", ".join(f"{mp[b][-1]:.1f}" for b in a.builds), file=sys.stderr
        ),
    )
    print(f"bandwall-iso3dfd {a.args} --threads {a.threads}, {a.rounds} alternated rounds (MPoints/s)")
    print(f"{'build':<40}{'median':>10}{'range':>20}{'per round vs first':>26}")
    for b in a.builds:
        xs = mp[b]
        ratios = common.ratios(xs, mp[a.builds[0]])
        print(
            f"{b:<40}{statistics.median(xs):>10.1f}{f'{min(xs):.1f}-{max(xs):.1f}':>20}"
            f"{common.spread(ratios, '{:.3f}', 'x'):>26}"
        )


if __name__ == "__main__":
    main()
