#!/usr/bin/env python3
"""ISO3DFD cache blocks: the fixed y blocks against each other and against auto and search.

bandwall-iso3dfd on the 272^3 grid (256^3 interior), 10 steps, 2 threads compact, whole rows and
z blocks of 128, once per y block and once with each of the words given (auto: the model of the
CPU's caches; search: the model refined by the short measured search), in an order rotated from
round to round. Two rates per run: the wall-clock MPoints/s and the CPU-time rate (interior
points x steps / CPU seconds of the steps x threads), which other jobs on the machine disturb
less. Medians over the rounds, and each one's ratio to the first y block.

  ./bootstrap setup
  .venv/bin/python bench/iso3dfd_blocks.py --rounds 4 --y 24,16,32,48 --words auto,search
"""

from __future__ import annotations

import argparse
import statistics

import common


def parse() -> argparse.Namespace:
    p = common.parser(__doc__, rounds=4, min_rounds=3)
    p.add_argument("--grid", type=int, default=272, help="points per dimension with the halo (default 272)")
    p.add_argument("--steps", type=int, default=10, help="time steps (default 10)")
    p.add_argument("--threads", type=int, default=2, help="threads (default 2)")
    p.add_argument(
        "--y", default="24,16,32,48", help="y blocks; the first is the baseline (default 24,16,32,48)"
    )
    p.add_argument(
        "--words", default="auto,search", help="block words to run beside them (default auto,search)"
    )
    return common.parse(p)


def run(a: argparse.Namespace, blocks: list[str]) -> dict:
    argv = [common.tool(a.bindir, "bandwall-iso3dfd"), *[str(a.grid)] * 3, str(a.steps), *blocks]
    rec = common.record([*argv, "compact", str(a.threads), "--json"])
    r, c = rec["result"], rec["config"]
    interior = (a.grid - 16) ** 3
    return {
        "wall": r["mpoints_per_s"],
        "cpu": interior * a.steps / r["cpu_s"] * a.threads / 1e6,
        "blocks": "x".join(map(str, c["blocks"])),
        "isa": c["isa"],
    }


def main() -> None:
    a = parse()
    configs = {f"y {y}": [str(a.grid), y, "128"] for y in a.y.split(",")}
    configs.update({w: [w] * 3 for w in a.words.split(",") if w})
    names = list(configs)
    runs: dict[str, list[dict]] = {n: [] for n in names}
    for r in range(a.rounds):
        for n in common.order(names, r):
            res = run(a, configs[n])
            runs[n].append(res)
            print(
                f"round {r + 1}: {n:8s} blocks {res['blocks']:12s} wall {res['wall']:7.1f} cpu-rate {res['cpu']:7.1f}"
            )
    base = names[0]
    med = {n: {k: statistics.median(x[k] for x in runs[n]) for k in ("wall", "cpu")} for n in names}
    print(
        f"\n{a.grid}^3 with the halo, {a.steps} steps, {a.threads} threads, {a.rounds} rounds, isa {runs[base][0]['isa']}"
    )
    print("| blocks | chosen | MPoints/s (wall) | MPoints/s (CPU time) | vs " + base + " (CPU time) |")
    print("|---|---|---:|---:|---:|")
    for n in names:
        chosen = sorted({x["blocks"] for x in runs[n]})
        ratio = med[n]["cpu"] / med[base]["cpu"]
        print(f"| {n} | {', '.join(chosen)} | {med[n]['wall']:.1f} | {med[n]['cpu']:.1f} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
