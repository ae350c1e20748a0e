#!/usr/bin/env python3
"""ISO3DFD's array layouts against each other at every radius: the default (`--row-pitch auto`: rows
padded to an odd number of 64-byte lines, planes too, and the arrays led by as many floats as start
every row's interior on a line, and next and vel a third and two thirds of a 4 KiB page after prev),
the same without that offset (`no-offset`: `--array-offset 0`), the same pitches without the lead
(`no-lead`: the padded pitch given as a number), and rows and planes packed (`packed`, the
article's layout).

Every case (interior grid x steps x threads) runs bandwall-iso3dfd once per layout and round at each
radius, the order rotating from round to round; for each layout: the median and range of the
median step's MPoints/s (result.step_mpoints_per_s: the first step after the first touch and a
slow step on a noisy host weigh nothing), and the median and range of the per-round ratio to the
first layout. `--time-block 1` (step by step) unless --time-block says otherwise; every run from an
empty cache folder.

The default cases: 256 x 64 x 64 interior (13-14 MiB: L3 holds it) on one thread, 300 steps; 256^3
on two threads, 40 steps.

    python3 bench/iso3dfd_layouts.py --bindir build/py/bin --rounds 5
    python3 bench/iso3dfd_layouts.py --radii 4,8 --cases 256x256x256:40:2 --time-block auto
    python3 bench/iso3dfd_layouts.py --layouts auto,no-offset --cases 248x248x248:40:2 --time-block auto

(The offset pays where a row's interior ends in a part of a vector, as 248 does, the article's 256^3
with its halo at radius 4, and not on interiors of whole vectors.)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile

import common

LINE = 16  # floats a 64-byte line holds


def padded_pitch(n1: int) -> int:
    """The pitch `--row-pitch auto` gives (iso3dfd/dims.cpp): an odd number of lines."""
    lines = -(-n1 // LINE)
    return (lines + (lines % 2 == 0)) * LINE


def layout_args(layout: str, n1: int) -> list[str]:
    if layout == "auto":
        return []
    if layout == "no-offset":
        return ["--array-offset", "0"]
    if layout == "no-lead":
        return ["--row-pitch", str(padded_pitch(n1))]
    if layout == "packed":
        return ["--row-pitch", "packed", "--plane-pitch", "packed"]
    raise SystemExit(f"iso3dfd_layouts: unknown layout {layout!r} (auto, no-offset, no-lead, packed)")


def parse() -> argparse.Namespace:
    p = common.parser(__doc__, rounds=5, min_rounds=3)
    p.add_argument(
        "--layouts", default="auto,no-offset,no-lead,packed", help="layouts; the first is the baseline"
    )
    p.add_argument("--radii", default="1,2,3,4,5,6,7,8", help="radii, comma-separated")
    p.add_argument(
        "--cases", default="256x64x64:300:1,256x256x256:40:2", help="interior:steps:threads, comma separated"
    )
    p.add_argument("--time-block", default="1", help="--time-block for every run (default 1: step by step)")
    a = common.parse(p)
    a.exe = common.tool(a.bindir, "bandwall-iso3dfd")
    a.layout_list = [s.strip() for s in a.layouts.split(",") if s.strip()]
    for layout in a.layout_list:
        layout_args(layout, 64)
    a.radius_list = [int(r) for r in a.radii.split(",")]
    a.case_list = []
    for c in a.cases.split(","):
        grid, steps, threads = c.split(":")
        a.case_list.append(([int(n) for n in grid.split("x")], int(steps), int(threads)))
    return a


def run(
    a: argparse.Namespace, interior: list[int], steps: int, threads: int, radius: int, layout: str
) -> dict:
    dims = [n + 2 * radius for n in interior]
    cmd = [a.exe, *map(str, dims), str(steps), "auto", "auto", "auto", "--threads", str(threads)]
    cmd += ["--radius", str(radius), "--time-block", a.time_block, *layout_args(layout, dims[0]), "--json"]
    with tempfile.TemporaryDirectory() as cache:  # every run from an empty cache folder
        return common.record(cmd, valid=True, env={"BANDWALL_CACHE_DIR": cache})


def main() -> None:
    a = parse()
    print(common.header())
    print()
    for interior, steps, threads in a.case_list:
        grid = "x".join(map(str, interior))
        print(f"## {grid} interior, {steps} steps, {threads} thread(s), --time-block {a.time_block}\n")
        print("| radius | " + " | ".join(f"{s} (MPoints/s)" for s in a.layout_list) + " |")
        print("|---" * len(a.layout_list) + "|---|")
        for radius in a.radius_list:
            rates: dict[str, list[float]] = {s: [] for s in a.layout_list}
            for r in range(a.rounds):
                for layout in common.order(a.layout_list, r):
                    rec = run(a, interior, steps, threads, radius, layout)
                    rates[layout].append(rec["result"]["step_mpoints_per_s"]["median"])
                print(
                    f"radius {radius} round {r + 1}: "
                    + ", ".join(f"{s} {rates[s][-1]:.0f}" for s in a.layout_list),
                    file=sys.stderr,
                )
            base = rates[a.layout_list[0]]
            cells = [f"{statistics.median(base):.0f} [{min(base):.0f}-{max(base):.0f}]"]
            for s in a.layout_list[1:]:
                v = rates[s]
                cells.append(
                    f"{statistics.median(v):.0f}, {common.spread(common.ratios(v, base), '{:.2f}', 'x')}"
                )
            print(f"| {radius} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main()
