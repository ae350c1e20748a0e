"""ISO3DFD over MPI ranks: checks the decomposition (z-slabs of equal planes, at least the halo of
8 each) before launching, runs bandwall-iso3dfd-mpi through a launcher (mpirun or srun), and sums
strong or weak scaling over rank counts (speed-up, efficiency, share of time in communication)."""

from __future__ import annotations

from collections.abc import Sequence

from bandwall.core import native, records
from bandwall.core.errors import UsageError
from bandwall.kernels import iso3dfd
from bandwall.mpi import launchers

TOOL = "bandwall-iso3dfd-mpi"
SCALINGS = ("strong", "weak")
BINDINGS = ("numa", "core", "none")


def check_decomposition(grid: Sequence[int], ranks: int, scaling: str) -> int:
    """Interior planes per rank along z, or UsageError when ranks cannot share the grid."""
    half = iso3dfd.HALF_LENGTH
    n3 = grid[2]
    if n3 < 2 * half + 1:
        raise UsageError(
            f"n3 {n3} is below the minimum {2 * half + 1} (the halo of 8 on each side and one plane)"
        )
    interior = n3 - 2 * half
    if scaling == "weak":
        planes = interior
    else:
        if interior % ranks:
            raise UsageError(
                f"n3 {n3} has {interior} interior planes, which {ranks} ranks do not divide "
                "(z-slabs need equal parts)"
            )
        planes = interior // ranks
    if ranks > 1 and planes < half:
        raise UsageError(
            f"{ranks} ranks leave each rank {planes} planes along z, fewer than the halo of {half} "
            "its neighbours need (use fewer ranks or a larger n3)"
        )
    return planes


def native_args(
    grid,
    iters: int,
    blocks,
    threads: int | None,
    bind: str,
    scaling: str,
    pages: str | None,
    verify: bool,
    cpus: str | None = None,
) -> list[str]:
    """bind is a rank binding (BINDINGS) or a thread-binding policy, and cpus a CPU list: the CPUs of
    a node's ranks, which they divide in contiguous parts in rank order (bandwall-iso3dfd-mpi)."""
    args = [*grid, iters, *blocks]
    if threads is not None:
        args.append(threads)
    args += ["--bind", bind, "--scaling", scaling]
    if cpus is not None:
        args += ["--cpus", cpus]
    if pages is not None:
        args += ["--pages", pages]
    if verify:
        args.append("--verify")
    return [str(a) for a in args]


def run(
    grid,
    iters: int,
    ranks: int,
    blocks=None,
    threads: int | None = None,
    bind: str = "numa",
    scaling: str = "strong",
    launcher: str = launchers.AUTO,
    pages: str | None = None,
    verify: bool = False,
    env: dict | None = None,
    timeout: float | None = None,
    cpus: str | None = None,
) -> dict:
    """One distributed run; returns its record (validated, not stored), with the launch plan in
    config.launcher."""
    check_decomposition(grid, ranks, scaling)
    blocks = blocks or iso3dfd.default_blocks(grid)
    plan = launchers.plan(TOOL, ranks, launcher)
    rec = native.run_record(
        TOOL,
        native_args(grid, iters, blocks, threads, bind, scaling, pages, verify, cpus),
        env={**plan.env, **(env or {})},
        prefix=plan.prefix,
        timeout=timeout,
    )
    rec["config"]["launcher"] = {"name": plan.launcher, "argv": plan.prefix, "mpi": plan.mpi}
    return records.finish(rec)


def scaling_rows(recs: Sequence[dict]) -> list[dict]:
    """Per record: ranks, MPoints/s, speed-up and efficiency against the fewest ranks (strong: the
    same grid; weak: throughput per rank), share of time in communication."""
    recs = sorted(recs, key=lambda r: r["config"]["ranks"])
    base = recs[0]
    b_ranks, b_rate = base["config"]["ranks"], base["result"]["mpoints_per_s"]
    rows = []
    for r in recs:
        n, rate = r["config"]["ranks"], r["result"]["mpoints_per_s"]
        speedup = rate / b_rate if b_rate else 0.0
        rows.append(
            {
                "ranks": n,
                "threads_per_rank": r["config"]["threads_per_rank"],
                "mpoints_per_s": rate,
                "speedup": speedup,
                "efficiency": speedup * b_ranks / n,
                "comm_share": r["result"]["comm_share"],
                "norm": r["result"]["norm"],
            }
        )
    return rows


def parse_ranks(text: str) -> list[int]:
    """'4' or '1,2,4' -> ascending unique rank counts (UsageError otherwise)."""
    try:
        counts = sorted({int(t) for t in text.split(",")})
    except ValueError:
        raise UsageError(f"rank list {text!r} is not whole numbers like 4 or 1,2,4") from None
    if counts[0] < 1:
        raise UsageError(f"rank count {counts[0]} in {text!r} must be at least 1")
    return counts


def checked(grid: Sequence[int], counts: Sequence[int], scaling: str) -> list[int]:
    """counts, once every one of them is known to decompose grid (before anything is launched)."""
    for n in counts:
        check_decomposition(grid, n, scaling)
    return list(counts)
