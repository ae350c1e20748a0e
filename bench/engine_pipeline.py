#!/usr/bin/env python3
"""One compute core with a helper core as copy engine, against one and two compute cores CPU only.

The one-core case of Intel's DSA article on a machine without DSA: bandwall-pipeline with the helper engine on
CPU 1 computing on CPU 0, against bandwall-stream on CPU 0 alone and on CPUs 0,1. Each round runs
every program once per kernel, in an order rotated round by round; reported are each program's
median best GB/s over rounds, the ratios of the medians, and the median of the per-round ratios.
To say why a target is missed, it also reports, from the pipeline's own record, the share of the
time the compute core waited for the engine and the rate the helper moved data while it was busy
(what the helper alone fetches), and, as the compute side's ceiling, one core's CPU-only rate on
arrays that fit in the last-level cache.

    ./bootstrap setup
    .venv/bin/python bench/engine_pipeline.py --rounds 11
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import common

KERNELS = ("triad", "scale", "dot")


def programs(bindir: Path, kernel: str, size: str, reps: int, modes: list[str]) -> dict[str, list[str]]:
    stream, pipeline = common.tool(bindir, "bandwall-stream"), common.tool(bindir, "bandwall-pipeline")
    args = ["--kernel", kernel, "--size", size, "--reps", str(reps)]
    out = {
        "cpu 1 core": [stream, *args, "--cpus", "0"],
        "cpu 2 cores": [stream, *args, "--cpus", "0,1"],
    }
    for mode in modes:
        for strat in ("all", "split") if kernel != "scale" else ("all",):
            out[f"1 core + helper {mode} {strat}"] = [
                pipeline, *args, "--cpus", "0", "--engine", "helper", "--engine-cpus", "1",
                "--engine-mode", mode, "--strategy", strat,
            ]  # fmt: skip
    return out


def main() -> None:
    ap = common.parser(__doc__, rounds=7, summary=True)
    ap.add_argument("--size", default="32M", help="bytes per array (default 32M: 4x the 8 MiB L3 here)")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--modes", default="copy,touch")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--json", help="also write every measurement here")
    a = common.parse(ap)
    stream = common.tool(a.bindir, "bandwall-stream")
    kernels, modes = a.kernels.split(","), a.modes.split(",")
    runs: dict = {k: {} for k in kernels}
    extra: dict = {k: {} for k in kernels}
    for r in range(a.rounds):
        for k in kernels:
            progs = programs(a.bindir, k, a.size, a.reps, modes)
            for name, cmd in common.order(progs.items(), r):
                rec = common.record(cmd)
                runs[k].setdefault(name, []).append(rec["result"]["best_GBps"])
                e = rec["result"].get("engine")
                if e:
                    h = e["info"]["helpers"][0]
                    extra[k].setdefault(name, []).append((e["wait_share"], h["busy_GBps"]))
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    # The compute side alone: one core on arrays that stay in the 8 MiB L3.
    cached = {k: common.record([stream, "--kernel", k, "--size", "1M", "--reps", "50", "--cpus", "0"])[
        "result"]["best_GBps"] for k in kernels}  # fmt: skip

    cpu = common.record([stream, "--kernel", "triad", "--size", "1M", "--reps", "2"])["provenance"][
        "cpu_model"
    ]
    print(f"CPU: {cpu}; {a.rounds} rounds, {a.size} per array, {a.reps} reps per run, best GB/s per run")
    for k in kernels:
        one = runs[k]["cpu 1 core"]
        two = runs[k]["cpu 2 cores"]
        print(f"\n{k}: CPU only 1 core median {statistics.median(one):.2f}, 2 cores {statistics.median(two):.2f} GB/s; "
              f"1 core on L3-resident arrays {cached[k]:.2f} GB/s")  # fmt: skip
        for name, vals in runs[k].items():
            if not name.startswith("1 core + helper"):
                continue
            per_round = common.ratios(vals, one)
            waits = [w for w, _ in extra[k][name]]
            helper = [g for _, g in extra[k][name]]
            print(
                f"  {name:28s} median {statistics.median(vals):6.2f} GB/s  x{statistics.median(vals) / statistics.median(one):.2f} "
                f"of 1 core (per-round median x{statistics.median(per_round):.2f}, range {min(per_round):.2f}-{max(per_round):.2f}), "
                f"x{statistics.median(vals) / statistics.median(two):.2f} of 2 cores; core waited {100 * statistics.median(waits):.0f}% "
                f"of the time, helper moved {statistics.median(helper):.1f} GB/s while busy"
            )  # fmt: skip
    if a.json:
        with open(a.json, "w") as f:
            json.dump(
                {"cpu": cpu, "runs": runs, "engine": extra, "cached": cached, "args": vars(a)},
                f,
                indent=1,
                default=str,
            )


if __name__ == "__main__":
    main()
