#!/usr/bin/env python3
"""Distributed ISO3DFD on one node: 2 MPI ranks x 1 thread against 1 rank x 2 threads.

The same grid (272^3 with the halo: 256^3 interior), steps and cache blocks, run by
bandwall-iso3dfd-mpi under the mpirun of the MPI it is linked with, round by round (2x1, 1x2, and
the single-process bandwall-iso3dfd with 2 threads as the baseline without MPI), the order rotated
from round to round. The median of
the rounds is kept and the ratios printed. Throughput counts interior points x steps per second
of the slowest rank; the 2-rank run also reports the share of its time spent posting and waiting
for the halo exchange.

  ./bootstrap setup
  .venv/bin/python bench/iso3dfd_ranks_vs_threads.py --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import sys

import common
from bandwall.mpi import launchers


def parse() -> argparse.Namespace:
    p = common.parser(__doc__, rounds=5, min_rounds=3)
    p.add_argument("--grid", type=int, default=272, help="points per dimension with the halo (default 272)")
    p.add_argument("--steps", type=int, default=20, help="time steps (default 20)")
    p.add_argument("--blocks", default="272x24x128", help="cache blocks (default 272x24x128)")
    return common.parse(p)


def grid_args(a: argparse.Namespace) -> list[str]:
    return [str(a.grid)] * 3 + [str(a.steps)] + a.blocks.split("x")


def mpi_run(a: argparse.Namespace, ranks: int, threads: int) -> dict:
    plan = launchers.plan("bandwall-iso3dfd-mpi", ranks, "mpirun")
    argv = [*plan.prefix, common.tool(a.bindir, "bandwall-iso3dfd-mpi"), *grid_args(a), str(threads)]
    r = common.record([*argv, "--bind", "numa"], env=plan.env)["result"]
    return {"mpoints_per_s": r["mpoints_per_s"], "norm": r["norm"], "comm_share": r["comm_share"]}


def single_run(a: argparse.Namespace, threads: int) -> dict:
    argv = [common.tool(a.bindir, "bandwall-iso3dfd"), *grid_args(a), "compact", str(threads), "--json"]
    rec = common.record(argv)
    return {"mpoints_per_s": rec["result"]["mpoints_per_s"], "norm": rec["result"]["norm"], "comm_share": 0.0}


def main() -> None:
    a = parse()
    programs = {
        "2 ranks x 1 thread": lambda: mpi_run(a, 2, 1),
        "1 rank x 2 threads": lambda: mpi_run(a, 1, 2),
        "no MPI, 2 threads": lambda: single_run(a, 2),
    }
    samples = common.alternate(
        programs,
        a.rounds,
        after=lambda r, got: print(
            f"round {r + 1}: " + ", ".join(f"{k} {v[-1]['mpoints_per_s']:.0f}" for k, v in got.items()),
            file=sys.stderr,
        ),
    )
    med = {k: statistics.median(s["mpoints_per_s"] for s in v) for k, v in samples.items()}
    comm = {k: statistics.median(s["comm_share"] for s in v) for k, v in samples.items()}
    base = med["1 rank x 2 threads"]
    print(
        f"ISO3DFD {a.grid}^3 with halo, {a.steps} steps, blocks {a.blocks}, median of {a.rounds} rounds "
        f"({launchers.plan('bandwall-iso3dfd-mpi', 2, 'mpirun').mpi})"
    )
    print(f"{'program':<22}{'MPoints/s':>12}{'vs 1 rank x 2 threads':>24}{'comm share':>12}{'norm':>16}")
    for k in programs:
        norm = samples[k][-1]["norm"]
        print(f"{k:<22}{med[k]:>12.1f}{med[k] / base:>23.2f}x{100 * comm[k]:>11.1f}%{norm:>16.9g}")


if __name__ == "__main__":
    main()
