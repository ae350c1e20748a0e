#!/usr/bin/env python3
"""bandwall-iso3dfd against Devito's 16th-order acoustic operator and bandwall's plain reference.

The same equation on the same grid: next = 2*prev - next + vel*lap(prev), lap the 16th-order
central Laplacian with spacing 50, vel = 1500^2 * 0.002^2 in every point, the NUMA 3DFD article's source, a
256^3 interior (272^3 with bandwall's halo), single precision, the same threads pinned the same
way (one per core, compact). The programs run round by round (bandwall, Devito default, Devito
with autotune='aggressive', the plain reference; every other round in the reverse order, so that
none always follows the same program), the median of the rounds is kept and the ratios printed:
the ratio of the medians, and the median and range of the ratios within each round (the pairs see
the same state of a noisy host). Throughput counts interior points x steps per second (JIT compilation and Devito's
autotuning are left out of the timed runs; bandwall's is its whole run, result.run, the races and
checks of its defaults included). The plain reference is single-threaded scalar code,
so it runs fewer steps; MPoints/s is a rate, so the comparison stays fair.

Run with the Python that has Devito (outside bandwall's own environment; bench/setup makes it):
  ./bootstrap setup && bench/setup
  build/devito-venv/bin/python bench/iso3dfd_vs_devito.py --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import common

HALF = 8
SEED_COEFFICIENTS = [
    -3.0548446,
    1.7777778,
    -3.1111111e-1,
    7.572087e-2,
    -1.76767677e-2,
    3.480962e-3,
    -5.180005e-4,
    5.074287e-5,
    -2.42812e-6,
]
ALL_CPUS = os.sched_getaffinity(0)  # Devito's pinned master thread narrows this process's own mask
# What bandwall keeps between runs (a race of --time-block auto settled beyond noise) goes to a folder
# of this bench's own: its first run races as a new user's does, the later rounds take what it kept.
CACHE = str(common.scratch("bandwall-bench-cache-"))


def run_bandwall(cmd: list[str], env: dict | None = None) -> dict:
    """A bandwall executable's record, run on all this process's first CPUs with the bench's cache
    folder (and env's variables besides). bandwall pins its own threads; OMP_PROC_BIND in its
    environment (set for Devito) would pin its initial thread to one CPU before it reads the CPUs it
    may use."""
    return common.record(
        cmd,
        env={"BANDWALL_CACHE_DIR": CACHE, **(env or {})},
        unset=("OMP_PROC_BIND", "OMP_PLACES", "OMP_NUM_THREADS"),
        preexec_fn=lambda: os.sched_setaffinity(0, ALL_CPUS),
    )


def parse() -> argparse.Namespace:
    p = common.parser(__doc__, rounds=3, min_rounds=3)
    p.add_argument("--interior", type=int, default=256, help="interior points per dimension (default 256)")
    p.add_argument("--steps", type=int, default=50, help="time steps of the timed runs (default 50)")
    p.add_argument("--reference-steps", type=int, default=2, help="steps of the plain reference (default 2)")
    p.add_argument("--threads", type=int, default=2, help="OpenMP threads, pinned compact (default 2)")
    p.add_argument(
        "--pause",
        type=float,
        default=3.0,
        help="seconds of rest before each program (default 3): a virtual machine's guest hands the memory the "
        "last one freed back to its host in the next seconds, on the same vCPUs",
    )
    p.add_argument(
        "--blocks",
        default="272x24x128",
        help="bandwall's cache blocks n1xn2xn3, or auto or search as bandwall iso3dfd takes them (default 272x24x128)",
    )
    p.add_argument(
        "--isa", default="auto", help="bandwall's row kernel: auto (default), avx512, avx2 or generic"
    )
    p.add_argument(
        "--time-block",
        default="auto",
        help="bandwall's time steps per sweep: auto (default: bandwall's own choice) or a number",
    )
    a = common.parse(p)
    if a.interior < 1 or a.steps < 1 or a.reference_steps < 1 or a.threads < 1:
        p.error("--interior, --steps, --reference-steps and --threads must be at least 1")
    return a


def pin_openmp(threads: int) -> None:
    # Before Devito's first compiled operator loads the OpenMP runtime.
    os.environ.update(
        OMP_NUM_THREADS=str(threads),
        OMP_PROC_BIND="close",
        OMP_PLACES="cores",
        DEVITO_LANGUAGE="openmp",
        DEVITO_LOGGING="ERROR",
    )


def bandwall_run(
    exe: str,
    n: int,
    steps: int,
    blocks: str,
    threads: int,
    kernel: str,
    isa: str = "auto",
    time_block: str = "auto",
) -> dict:
    b = [blocks] * 3 if blocks in ("auto", "search") else blocks.split("x")
    cmd = [
        exe,
        *(str(n + 2 * HALF),) * 3,
        str(steps),
        *b,
        "compact",
        str(threads),
        "--json",
        "--kernel",
        kernel,
        "--isa",
        isa,
    ]
    if kernel == "optimised":
        cmd += ["--time-block", time_block]
    rec = run_bandwall(cmd)
    tb = rec["config"].get("time_block", {})
    return {
        "mpoints_per_s": common.whole_run_rate(rec),
        "norm": rec["result"]["norm"],
        "isa": rec["config"]["isa"],
        "depth": tb.get("depth", 1),
        "depth_why": tb.get("why", ""),
        "depth_how": tb.get("how", ""),
    }


def rates(samples: list[dict]) -> list[float]:
    return [s["mpoints_per_s"] for s in samples]


class DevitoRun:
    """Devito's operator for the same equation at radius r (space order 2r); u(t) buffers hold the
    wavefield, vel is a Function."""

    def __init__(self, n: int, autotune: str | bool, r: int = HALF):
        import numpy as np  # noqa: PLC0415
        from devito import Eq, Function, Grid, Operator, TimeFunction  # noqa: PLC0415

        self.n, self.r = n, r
        self.autotune = autotune
        spacing = 50.0
        grid = Grid(shape=(n, n, n), extent=((n - 1) * spacing,) * 3, dtype=np.float32)
        self.u = TimeFunction(name="u", grid=grid, space_order=2 * r, time_order=2)
        vel = Function(name="vel", grid=grid, space_order=0)
        vel.data[:] = 2250000.0 * 0.002 * 0.002
        u = self.u
        if r == HALF:
            # The NUMA 3DFD article's coefficients (Devito divides them by the spacing squared); its c3
            # differs from the exact 16th-order weight in the fourth digit, so Devito's own laplace would
            # not be the same equation.
            w = np.array(SEED_COEFFICIENTS[:0:-1] + SEED_COEFFICIENTS, dtype=np.float32)
            lap = u.dx2(weights=w) + u.dy2(weights=w) + u.dz2(weights=w)
        else:
            lap = u.laplace  # Devito's own exact weights of order 2r, as bandwall's --radius r
        self.op = Operator([Eq(u.forward, 2 * u - u.backward + vel * lap)])
        self.tuned = False

    def reset(self) -> None:
        import numpy as np  # noqa: PLC0415

        r, total = self.r, self.n + 2 * self.r
        self.u.data[:] = 0.0
        src = np.zeros((total,) * 3, dtype=np.float32)  # bandwall's (z, y, x) with its halo
        val = 1.0
        for s in range(5, 0, -1):
            c3, c2, c1 = total // 2, total // 4, total // 4
            src[
                max(c3 - s, r) : min(c3 + s, total - r),
                max(c2 - s, r) : min(c2 + s, total - r),
                max(c1 - s, r) : min(c1 + s, total - r),
            ] = val
            val *= 10.0
        # Devito's u[t, x, y, z] has z fastest: bandwall's x (fastest) is Devito's last index.
        self.u.data[1] = src[r:-r, r:-r, r:-r].transpose(0, 1, 2)

    def run(self, steps: int) -> dict:
        import numpy as np  # noqa: PLC0415

        if self.autotune and not self.tuned:
            self.reset()
            self.op.apply(time_m=1, time_M=2, autotune=self.autotune)  # tuning, outside the timed runs
            self.tuned = True
        self.reset()
        t0 = time.perf_counter()
        self.op.apply(time_m=1, time_M=steps)
        seconds = time.perf_counter() - t0
        latest = self.u.data[(steps + 1) % 3]
        return {
            "mpoints_per_s": self.n**3 * steps / seconds / 1e6,
            "norm": float(np.sqrt(np.sum(latest.astype(np.float64) ** 2))),
            "isa": devito_isa(),
        }


def devito_isa() -> str:
    """The platform and instruction set Devito generates code for (its configuration)."""
    from devito import configuration  # noqa: PLC0415

    platform = configuration["platform"]
    return f"{platform} ({getattr(platform, 'isa', '?')})"


def main() -> None:
    a = parse()
    pin_openmp(a.threads)
    exe = common.tool(a.bindir, "bandwall-iso3dfd")
    devito_default = DevitoRun(a.interior, autotune=False)
    devito_tuned = DevitoRun(a.interior, autotune="aggressive")
    devito_default.run(1)  # JIT compilation
    devito_tuned.run(1)
    runs = {
        "bandwall": lambda: bandwall_run(
            exe, a.interior, a.steps, a.blocks, a.threads, "optimised", a.isa, a.time_block
        ),
        "devito default": lambda: devito_default.run(a.steps),
        "devito aggressive": lambda: devito_tuned.run(a.steps),
        "plain reference": lambda: bandwall_run(exe, a.interior, a.reference_steps, a.blocks, 1, "reference"),
    }
    names = list(runs)
    samples = common.alternate(
        runs,
        a.rounds,
        reverse=True,
        pause=a.pause,
        after=lambda r, got: print(
            f"round {r + 1}: " + ", ".join(f"{k} {got[k][-1]['mpoints_per_s']:.0f}" for k in names),
            file=sys.stderr,
        ),
    )
    med = {k: statistics.median(s["mpoints_per_s"] for s in v) for k, v in samples.items()}
    base = med["devito default"]
    n = a.interior
    print(
        f"ISO3DFD {n}^3 interior, {a.steps} steps ({a.reference_steps} for the plain reference, 1 thread), "
        f"{a.threads} threads compact, single precision, median of {a.rounds} rounds"
    )
    print(f"{'program':<20}{'MPoints/s':>12}{'vs Devito default':>20}{'per round':>22}{'norm':>16}  isa")
    for k in names:
        norm = f"{samples[k][-1]['norm']:.7g}" if k != "plain reference" else f"({a.reference_steps} steps)"
        isa = "scalar" if k == "plain reference" else samples[k][-1]["isa"]
        per_round = common.spread(
            common.ratios(rates(samples[k]), rates(samples["devito default"])), "{:.2f}", "x"
        )
        print(f"{k:<20}{med[k]:>12.1f}{med[k] / base:>19.2f}x{per_round:>22}{norm:>16}  {isa}")
    depths = [f"{x['depth']}{' (kept)' if x['depth_how'] == 'cached' else ''}" for x in samples["bandwall"]]
    print(f"bandwall's time steps per sweep, round by round: {', '.join(depths)}")
    print(f"  the last round's why: {samples['bandwall'][-1]['depth_why']}")
    bw_norm, dv_norm = samples["bandwall"][-1]["norm"], samples["devito default"][-1]["norm"]
    print(
        f"norm agreement bandwall vs Devito after {a.steps} steps: relative difference "
        f"{abs(bw_norm - dv_norm) / dv_norm:.1e}"
    )


if __name__ == "__main__":
    main()
