#!/usr/bin/env python3
"""The added cost per MPI call of libbandwall-mpiprof, against no profiler and Open MPI's own
monitoring (pml monitoring), on a message-rate loop (mpi_msgrate.c: 2 ranks, or 1 sending to
itself, 8-byte Irecv + Isend + Waitall, 3 calls per iteration and rank). The figure is rank 0's
CPU time per call (--wall: wall time): on a machine shared with other jobs, CPU time does not count
the time slices the ranks wait for a core.

Each round runs every configuration once, in an order rotated from round to round; reported are
the median ns per call over rounds and the median of each round's difference to the unprofiled
run of the same round (the added cost per call). mpiP is not packaged by Debian (apt-cache search
mpip finds nothing), so it is not among the peers.

    ./bootstrap setup
    python3 bench/mpiprof_overhead.py --rounds 9 --iterations 200000
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import common

HERE = Path(__file__).parent
LIB = {"openmpi": "libbandwall-mpiprof-openmpi.so", "mpich": "libbandwall-mpiprof-mpich.so"}
TOOLS = {"openmpi": ("mpicc.openmpi", "mpirun.openmpi"), "mpich": ("mpicc.mpich", "mpiexec.mpich")}
METRIC = "cpu_ns_per_call"
ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def library(impl: str, bindir: Path) -> Path:
    """The profiler library beside --bindir (its lib folder), else in the build tree."""
    for d in (bindir.parent / "lib", common.ROOT / "build" / "py" / "lib"):
        if (d / LIB[impl]).is_file():
            return d / LIB[impl]
    print(f"bench: {LIB[impl]} not found in {bindir.parent / 'lib'} (run ./bootstrap setup)", file=sys.stderr)
    raise SystemExit(2)


def configs(impl: str, exe: Path, iters: int, out: Path, np: int, bindir: Path) -> dict[str, list[str]]:
    lib = library(impl, bindir)
    if impl == "openmpi":
        base = [TOOLS[impl][1], "-np", str(np), "--bind-to", "core"]
        return {
            "none": [*base, exe, iters],
            "bandwall": [*base, "-x", f"LD_PRELOAD={lib}", "-x", f"BANDWALL_MPIPROF_DIR={out}", exe, iters],
            "pml-monitoring": [*base, "--mca", "pml_monitoring_enable", "1", exe, iters],
        }
    base = [TOOLS[impl][1], "-np", str(np), "-bind-to", "core"]
    return {
        "none": [*base, exe, iters],
        "bandwall": [*base, "-genv", "LD_PRELOAD", lib, "-genv", "BANDWALL_MPIPROF_DIR", out, exe, iters],
    }


def run(cmd: list) -> float:
    return common.record(cmd, env=ENV)[METRIC]


def main() -> None:
    ap = common.parser(__doc__, rounds=9, summary=True)
    ap.add_argument("--iterations", type=int, default=200000)
    ap.add_argument("--np", type=int, default=2, choices=[1, 2], help="ranks (1: messages to itself)")
    ap.add_argument("--wall", action="store_true", help="wall time per call instead of CPU time")
    ap.add_argument("--mpi", choices=list(TOOLS), action="append", help="implementations (default: both)")
    args = common.parse(ap)
    global METRIC
    METRIC = "ns_per_call" if args.wall else "cpu_ns_per_call"
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for impl in args.mpi or list(TOOLS):
            if not shutil.which(TOOLS[impl][0]):
                print(f"{impl}: {TOOLS[impl][0]} not installed, skipped", file=sys.stderr)
                continue
            exe = Path(tmp) / f"msgrate_{impl}"
            subprocess.run([TOOLS[impl][0], "-O2", "-o", exe, HERE / "mpi_msgrate.c"], check=True)
            cfg = configs(impl, exe, args.iterations, Path(tmp), args.np, args.bindir)
            names = list(cfg)
            ns = common.alternate(
                {n: (lambda cmd=cfg[n]: run(cmd)) for n in names},
                args.rounds,
                after=lambda r, ns, impl=impl: print(
                    f"{impl} round {r + 1}: " + ", ".join(f"{n} {v[-1]:.1f}" for n, v in ns.items()),
                    file=sys.stderr,
                ),
            )
            results[impl] = {
                n: {
                    "median_ns_per_call": statistics.median(ns[n]),
                    "median_added_ns_per_call": statistics.median(a - b for a, b in zip(ns[n], ns["none"])),
                }
                for n in names
            }
    print(
        json.dumps(
            {
                "cpu": common.cpu_name(),
                "rounds": args.rounds,
                "iterations": args.iterations,
                "results": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
