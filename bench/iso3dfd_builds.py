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
import json
import shlex
import statistics
import subprocess
import sys
from pathlib import Path


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("builds", nargs="+", help="bandwall-iso3dfd executables; the first is the baseline")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--args",
        default="272 272 272 20 auto auto auto",
        help="the positional arguments: n1 n2 n3 steps n1_block n2_block n3_block",
    )
    a = p.parse_args()
    if a.rounds < 3:
        p.error("--rounds must be at least 3")
    if len(a.builds) < 2:
        p.error("give at least two builds")
    for b in a.builds:
        if not Path(b).is_file():
            p.error(f"no executable {b}")
    return a


def run(build: str, args: list[str], threads: int) -> float:
    cmd = [build, *args, "--threads", str(threads), "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]
        sys.exit(f"{shlex.join(cmd)} failed: {last}")
    rec = json.loads(out.stdout)
    if not rec.get("validation", {}).get("passed", False):
        sys.exit(f"{shlex.join(cmd)}: its check did not pass")
    return float(rec["result"]["mpoints_per_s"])


def main() -> None:
    a = parse()
    args = a.args.split()
    mp: dict[str, list[float]] = {b: [] for b in a.builds}
    for r in range(a.rounds):
        for b in a.builds if r % 2 == 0 else a.builds[::-1]:
            mp[b].append(run(b, args, a.threads))
        print(f"round {r + 1}: " + ", ".join(f"{mp[b][-1]:.1f}" for b in a.builds), file=sys.stderr)
    print(f"bandwall-iso3dfd {a.args} --threads {a.threads}, {a.rounds} alternated rounds (MPoints/s)")
    print(f"{'build':<40}{'median':>10}{'range':>20}{'per round vs first':>26}")
    for b in a.builds:
        ratios = sorted(x / y for x, y in zip(mp[b], mp[a.builds[0]]))
        xs = mp[b]
        print(
            f"{b:<40}{statistics.median(xs):>10.1f}{f'{min(xs):.1f}-{max(xs):.1f}':>20}"
            f"{f'{statistics.median(ratios):.3f}x [{ratios[0]:.2f}-{ratios[-1]:.2f}]':>26}"
        )


if __name__ == "__main__":
    main()
