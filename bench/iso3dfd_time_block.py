#!/usr/bin/env python3
"""ISO3DFD's temporal blocking: time steps per sweep (depth) 1, 2, 4, 8 and auto, alternated round by
round, with the model's figures beside each.

Every round runs bandwall-iso3dfd once per depth, the order rotating from round to round (a noisy
host's state is shared by the runs of one round). For each depth it prints the median and range of
MPoints/s, the median and range of the per-round ratio to depth 1, the bytes a point and step the
record's model says cross memory and the cache level it expects to hold a tile's wavefront; for
auto and measure, the depths they chose ("kept": a race an earlier round settled beyond noise,
taken without racing; the bench keeps them in a folder of its own, so the first auto run races as a
new user's does). With --roofline (bandwall's Python package importable, e.g. .venv/bin/python)
the ceilings are measured once on the same cores and each depth's three-level estimate (ports +
L2-to-L1 fills + memory at its bytes a point) is printed beside its median: the model's prediction.
With --oracle, a calibrated prediction too: depth 1's measured time a point split into the in-cache
time (the oracle's ratio) and a memory part that scales with the depth's memory bytes a point. With
auto among the depths, the prediction of the model its race calibrated (the last auto run's
config.time_block.calibrated) beside each depth.

With --oracle it first runs the experiment that says whether memory is worth sparing at all: the
same rows and blocks on a grid whose three arrays fit the last-level cache (few planes) against the
run's grid, step by step, alternated: if the small grid is not faster per point, a sweep of several
steps has nothing to gain but its cost.

A depth may name who sweeps (`4:slabs`, `4:shared`: --sweep-team). With --topology, every run reads
the machine from an hwloc XML file (HWLOC_XMLFILE, HWLOC_THISSYSTEM=1: binding still works); with
--caches L2,L3 (e.g. 1M,32M), every run's models read those cache sizes (BANDWALL_CACHES=L2=..,L3=..):
the model then sizes blocks and tiles for another CPU's caches, while the timings stay this CPU's
(its real caches still hold what they hold).

    python3 bench/iso3dfd_time_block.py --bindir build/py/bin --rounds 7
    python3 bench/iso3dfd_time_block.py --bindir build/py/bin --radius 1 --grid 514x514x514 --depths 1,5,7,8,auto
    .venv/bin/python bench/iso3dfd_time_block.py --bindir build/py/bin --rounds 7 --oracle --roofline
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import common


def parse() -> argparse.Namespace:
    p = common.parser(__doc__, rounds=7, min_rounds=3)
    p.add_argument(
        "--pause",
        type=float,
        default=3.0,
        help="seconds of rest before each run (default 3): a virtual machine's guest hands the memory the "
        "last run freed back to its host in the next seconds, on the same vCPUs",
    )
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--grid", default="272x272x272", help="n1xn2xn3, halo included")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument(
        "--radius", type=int, default=8, help="the stencil's radius, 1-8 (default 8, the article's)"
    )
    p.add_argument(
        "--depths",
        default="1,2,4,8,auto",
        help="each N, N:slabs, N:shared, auto (a race settled beyond noise is kept for the later rounds, as for a "
        "user's later runs) or measure (auto racing every time)",
    )
    p.add_argument("--topology", help="an hwloc XML file every run reads the machine from")
    p.add_argument("--caches", help="L2,L3: the cache sizes the models read (e.g. 1M,32M)")
    p.add_argument("--oracle", action="store_true", help="first, the in-cache grid against the run's grid")
    p.add_argument("--oracle-planes", type=int, default=48, help="n3 of the in-cache grid (halo included)")
    p.add_argument(
        "--roofline", action="store_true", help="measure the ceilings once; print each depth's estimate"
    )
    a = common.parse(p)
    if not 1 <= a.radius <= 8:
        p.error("--radius must lie in 1..8")
    a.exe = common.tool(a.bindir, "bandwall-iso3dfd")
    # the races auto settles are kept in a folder of this run's own, not the user's
    a.cache = str(common.scratch("bandwall-bench-cache-"))
    a.cache_measure = str(common.scratch("bandwall-bench-cache-"))
    a.dims = [int(n) for n in a.grid.split("x")]
    a.depth_list = [d.strip() for d in a.depths.split(",") if d.strip()]
    for d in a.depth_list:
        depth, _, team = d.partition(":")
        if not (depth in ("auto", "measure") or depth.isdigit()) or team not in ("", "slabs", "shared"):
            p.error(f"--depths: '{d}' is not N, N:slabs, N:shared, auto or measure")
    if a.topology and not Path(a.topology).is_file():
        p.error(f"no topology file {a.topology}")
    if a.caches:
        parts = a.caches.split(",")
        if len(parts) != 2 or not all(parts):
            p.error(f"--caches '{a.caches}': give L2,L3 sizes such as 1M,32M")
        a.forced_caches = f"L2={parts[0]},L3={parts[1]}"
    else:
        a.forced_caches = ""
    return a


def run(a: argparse.Namespace, dims: list[int], depth: str, blocks: list[str] | None = None) -> dict:
    blk = blocks or ["auto"] * 3
    steps, _, team = depth.partition(":")
    cmd = [
        a.exe,
        *map(str, dims),
        str(a.steps),
        *blk,
        "--threads",
        str(a.threads),
        "--radius",
        str(a.radius),
        "--time-block",
        steps,
        *(["--sweep-team", team] if team else []),
        "--json",
    ]
    # measure races every run: what it keeps goes to a folder of its own, which auto does not read
    env = {"BANDWALL_CACHE_DIR": a.cache_measure if steps == "measure" else a.cache}
    if a.topology:
        env.update(HWLOC_XMLFILE=str(Path(a.topology).resolve()), HWLOC_THISSYSTEM="1")
    if a.forced_caches:
        env["BANDWALL_CACHES"] = a.forced_caches  # a malformed size: the executable refuses it, exit 2
    time.sleep(a.pause)
    return common.record(cmd, env=env, valid=True)


def ratio_text(values: list[float]) -> str:
    return common.spread(values, "{:.3f}", "x")


def oracle(a: argparse.Namespace) -> float:
    """Step by step, the same rows and blocks: the run's grid against one of few planes. Returns the
    median per-round ratio in-cache / run's grid."""
    big = run(a, a.dims, "1")
    blocks = [str(b) for b in big["config"]["blocks"]]
    blocks[2] = str(min(int(blocks[2]), (a.oracle_planes - 16) // max(a.threads, 1)))
    small_dims = [a.dims[0], a.dims[1], a.oracle_planes]
    rates: dict[str, list[float]] = {"run's grid": [], "in-cache grid": []}
    for r in range(a.rounds):
        order = [("run's grid", a.dims), ("in-cache grid", small_dims)]
        for name, dims in common.order(order, r, reverse=True):
            rec = run(a, dims, "1", blocks)
            rates[name].append(float(rec["result"]["step_mpoints_per_s"]["median"]))
    ratios = common.ratios(rates["in-cache grid"], rates["run's grid"])
    print(f"oracle: blocks {'x'.join(blocks)}, step by step, median step rate (MPoints/s)")
    for name, dims in (("run's grid", a.dims), ("in-cache grid", small_dims)):
        arrays = 3 * dims[0] * dims[1] * dims[2] * 4 / 2**20
        print(f"  {name:14s} {'x'.join(map(str, dims)):12s} {arrays:7.0f} MiB  {common.spread(rates[name])}")
    print(f"  in-cache / run's grid, per round: {ratio_text(ratios)}")
    return statistics.median(ratios)


def calibrated(rate1: float, in_cache: float, bytes1: float, bytes_d: float) -> float:
    """The rate at depth d from two measurements and the traffic model: a point's time step by step
    (1 / rate1) is the in-cache time (the oracle's ratio less) plus a memory part, and the memory
    part scales with the memory bytes a point and step (bytes_d against bytes1)."""
    t1 = 1.0 / rate1
    tc = t1 / max(in_cache, 1.0)
    return 1.0 / (tc + (t1 - tc) * bytes_d / bytes1)


def ceilings(a: argparse.Namespace, rec: dict):
    """The Roofline placer of bandwall's Python package, ceilings measured once on the same cores."""
    try:
        from bandwall.kernels import iso3dfd
    except ImportError:
        sys.exit("bench: --roofline needs bandwall's Python package (run with .venv/bin/python)")
    return iso3dfd.Roofline()


def main() -> None:
    a = parse()
    in_cache = oracle(a) if a.oracle else None
    rates: dict[str, list[float]] = {d: [] for d in a.depth_list}
    last: dict[str, dict] = {}
    chosen: dict[str, list[str]] = {}
    for r in range(a.rounds):
        for d in common.order(a.depth_list, r):
            rec = run(a, a.dims, d)
            rates[d].append(float(rec["result"]["mpoints_per_s"]))
            last[d] = rec
            if d in ("auto", "measure"):
                tb = rec["config"]["time_block"]
                team = rec["result"]["traffic_model"]["time_block"].get("team", "slabs")
                pick = f"{tb['depth']}:{team}" if int(tb["depth"]) > 1 else "1"
                chosen.setdefault(d, []).append(pick + (" (kept)" if tb["how"] == "cached" else ""))
    roof = ceilings(a, next(iter(last.values()))) if a.roofline else None
    cpu = next(iter(last.values()))["provenance"].get("cpu_model", "")
    print(
        f"ISO3DFD {a.grid}, radius {a.radius}, {a.steps} steps, {a.threads} threads, {a.rounds} rounds; {cpu}"
    )
    print(
        f"{'depth':>8} {'MPoints/s median [range]':>28} {'/ depth 1 per round':>26} {'B/pt mem':>9} "
        f"{'tile in':>8} {'model MPoints/s':>16} {'calibrated':>16} {'by auto race':>16}"
    )
    by_race = {}
    racer = next(
        (d for d in ("measure", "auto") if d in last and "calibrated" in last[d]["config"]["time_block"]),
        None,
    )
    if racer:
        cal = last[racer]["config"]["time_block"]["calibrated"]
        by_race = {str(p["depth"]): p["mpoints_per_s"] for p in cal.get("predicted", [])}
    base = rates.get("1")
    for d in a.depth_list:
        rec = last[d]
        res = rec["result"]
        model = res["traffic_model"]["time_block"]
        ratio = ratio_text(common.ratios(rates[d], base)) if base else "-"
        estimate = "-"
        if roof is not None:
            placed = roof.place(json.loads(json.dumps(rec)))
            ecm = placed["result"].get("roofline", {}).get("ecm_mpoints_per_s")
            if ecm:
                estimate = f"{ecm:.0f} ({100 * statistics.median(rates[d]) / ecm:.0f}%)"
        fitted = "-"
        if in_cache is not None and base and d not in ("auto", "measure"):
            b1 = last["1"]["result"]["bytes_per_point"]
            c = calibrated(statistics.median(base), in_cache, b1, res["bytes_per_point"])
            fitted = f"{c:.0f} ({100 * statistics.median(rates[d]) / c:.0f}%)"
        raced = (
            f"{by_race[d]:.0f} ({100 * statistics.median(rates[d]) / by_race[d]:.0f}%)"
            if d in by_race
            else "-"
        )
        print(
            f"{d:>8} {common.spread(rates[d]):>28} {ratio:>26} {res['bytes_per_point']:9.2f} {model['level']:>8} "
            f"{estimate:>16} {fitted:>16} {raced:>16}"
        )
    for d, picks in chosen.items():
        print(f"{d} chose depths {', '.join(picks)}; last why: {last[d]['config']['time_block']['why']}")


if __name__ == "__main__":
    main()
