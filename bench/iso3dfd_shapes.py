#!/usr/bin/env python3
"""ISO3DFD's register shapes against each other (`--row-shape`), on a grid whose arrays fit the
cores' L2 and on one in memory.

Every case (grid x threads) runs bandwall-iso3dfd once per shape and round, the order rotating from
round to round; for each shape: the median and range of MPoints/s, the median and range of the
per-round ratio to the first shape, and the bytes a point the record's model says come from L2 into
L1 (result.traffic_model.l1_fills) with the loads a vector of its counts. The blocks are `auto`:
each shape gets the model's blocks for its own window of planes.

The default cases: 272x24x24 (256 x 8 x 8 interior, 1.9 MiB: one core's L2 on the CPUs met) on one
thread, 3000 steps; 272^3 on one and on two threads, 20 steps.

    python3 bench/iso3dfd_shapes.py --bindir build/py/bin --rounds 5
    python3 bench/iso3dfd_shapes.py --shapes default,8x2-ring --cases 272x272x272:20:2
"""

from __future__ import annotations

import argparse
import statistics
import sys

import common


def parse() -> argparse.Namespace:
    p = common.parser(__doc__, rounds=5, min_rounds=3)
    p.add_argument(
        "--shapes", default="default,8x2-ring,16x2-ring", help="register shapes; the first is the baseline"
    )
    p.add_argument(
        "--cases",
        default="272x24x24:3000:1,272x272x272:20:1,272x272x272:20:2",
        help="grid:steps:threads, comma separated",
    )
    p.add_argument("--isa", default="avx512", help="the instruction set whose shapes are named")
    a = common.parse(p)
    a.exe = common.tool(a.bindir, "bandwall-iso3dfd")
    a.shape_list = [s.strip() for s in a.shapes.split(",") if s.strip()]
    a.case_list = []
    for c in a.cases.split(","):
        grid, steps, threads = c.split(":")
        a.case_list.append(([int(n) for n in grid.split("x")], int(steps), int(threads)))
    return a


def run(a: argparse.Namespace, dims: list[int], steps: int, threads: int, shape: str) -> dict:
    cmd = [a.exe, *map(str, dims), str(steps), "auto", "auto", "auto", "--threads", str(threads)]
    cmd += ["--isa", a.isa, "--row-shape", shape, "--time-block", "1", "--json"]
    return common.record(cmd, valid=True)


def main() -> None:
    a = parse()
    cpu = None
    for dims, steps, threads in a.case_list:
        rates: dict[str, list[float]] = {s: [] for s in a.shape_list}
        last: dict[str, dict] = {}
        for r in range(a.rounds):
            for shape in common.order(a.shape_list, r):
                rec = run(a, dims, steps, threads, shape)
                rates[shape].append(rec["result"]["mpoints_per_s"])
                last[shape] = rec
                cpu = rec.get("provenance", {}).get("cpu_model", cpu)
            print(
                f"round {r + 1}: " + ", ".join(f"{s} {rates[s][-1]:.0f}" for s in a.shape_list),
                file=sys.stderr,
            )
        grid = "x".join(map(str, dims))
        print(f"ISO3DFD {grid}, {steps} steps, {threads} thread(s), {a.rounds} rounds; {cpu}")
        print(
            f"{'shape':>14}  {'MPoints/s median [range]':>26}  {'/ first per round':>22}  "
            f"{'B/pt L2->L1':>11}  {'loads/vec':>9}  blocks"
        )
        base = rates[a.shape_list[0]]
        for s in a.shape_list:
            v = rates[s]
            ratio = common.ratios(v, base)
            rec = last[s]
            fills = rec["result"]["traffic_model"]["l1_fills"]["bytes_per_point"]
            loads = rec["result"]["incore_model"].get("per_vector", {}).get("loads", float("nan"))
            name = rec["config"]["row_shape"]["name"]
            label = name if s == name else f"{s} ({name})"
            print(
                f"{label:>14}  {statistics.median(v):9.1f} [{min(v):.1f}-{max(v):.1f}]  "
                f"{common.spread(ratio, '{:.3f}', 'x')}  "
                f"{fills:11.1f}  {loads:9.2f}  {'x'.join(map(str, rec['config']['blocks']))}"
            )
        print()


if __name__ == "__main__":
    main()
