"""ISO3DFD over MPI ranks: checks the decomposition (a 3-D grid of ranks, z-slabs by default, each
part at least the halo, R layers (the stencil's radius) a step of a sweep, along every dimension it shares) before
launching, runs bandwall-iso3dfd-mpi through a launcher (mpirun or srun), and sums strong or weak
scaling over rank counts (speed-up, efficiency, share of time in communication)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from bandwall.core import manifest, native, records
from bandwall.core.errors import UsageError
from bandwall.kernels import iso3dfd
from bandwall.mpi import launchers, mpi_pingpong, mpi_rails

TOOL = "bandwall-iso3dfd-mpi"


def plan(
    grid: Sequence[int],
    ranks: int,
    scaling: str | None = None,
    dims: str | None = None,
    depth: int = 1,
    radius: int | None = None,
) -> dict:
    """How ranks would share grid, as bandwall-iso3dfd-mpi decides it (--plan: the one model of the
    decomposition, no MPI started): dims (the shape: dims PxQxR, auto, or None for z-slabs), dims_how,
    global, radius, depth, halo_bytes a rank, and every shape that holds the halo, least halo bytes
    first (shapes, strong scaling). UsageError, with the tool's one line, when the shape cannot cut
    the grid: every part at least the halo of R (the radius) a step of a sweep (depth)."""
    args = [*grid, 0, 1, 1, 1, "--plan", ranks, "--time-block", depth]
    if scaling is not None:
        args += ["--scaling", scaling]
    if dims is not None:
        args += ["--dims", dims]
    if radius is not None:
        args += ["--radius", radius]
    return native.table(TOOL, *map(str, args))


def shapes(
    grid: Sequence[int], ranks: int, depth: int = 1, radius: int | None = None
) -> list[tuple[int, int, int]]:
    """Every shape (ranks along x, y, z) that can cut grid for sweeps of depth steps, least halo bytes
    first (ties: more ranks along z, then y): the first is what --dims auto takes. UsageError, saying
    why, when none can."""
    return [tuple(s["dims"]) for s in plan(grid, ranks, dims="auto", depth=depth, radius=radius)["shapes"]]


def check_decomposition(
    grid: Sequence[int],
    ranks: int,
    scaling: str,
    dims: str | None = None,
    depth: int = 1,
    radius: int | None = None,
) -> None:
    """UsageError when ranks cannot share the grid in the shape asked for (dims PxQxR, auto, or None:
    z-slabs), before anything is launched (plan)."""
    plan(grid, ranks, scaling, dims, depth, radius)


def native_args(
    grid,
    iters: int,
    blocks,
    threads: int | None,
    bind: str | None,
    scaling: str,
    pages: str | None,
    verify: bool,
    cpus: str | None = None,
    dims: str | None = None,
    time_block: int | str | None = None,
    radius: int | None = None,
) -> list[str]:
    """bind is a rank binding (the manifest's rank_bindings) or a thread-binding policy (None: the tool's default), and cpus a CPU list: the CPUs of
    a node's ranks, which they divide in contiguous parts in rank order (bandwall-iso3dfd-mpi);
    time_block: steps per sweep (auto and measure run step by step over ranks)."""
    args = [*grid, iters, *blocks]
    if threads is not None:
        args.append(threads)
    if bind is not None:
        args += ["--bind", bind]
    args += ["--scaling", scaling]
    if cpus is not None:
        args += ["--cpus", cpus]
    if pages is not None:
        args += ["--pages", pages]
    if verify:
        args.append("--verify")
    if dims is not None:
        args += ["--dims", dims]
    if time_block is not None:
        args += ["--time-block", time_block]
    if radius is not None:
        args += ["--radius", radius]
    return [str(a) for a in args]


def run(
    grid,
    iters: int,
    ranks: int,
    blocks=None,
    threads: int | None = None,
    bind: str | None = None,
    scaling: str | None = None,
    launcher: str = launchers.AUTO,
    pages: str | None = None,
    verify: bool = False,
    env: dict | None = None,
    timeout: float | None = None,
    cpus: str | None = None,
    dims: str | None = None,
    model: bool = False,
    time_block: int | str | None = None,
    radius: int | None = None,
) -> dict:
    """One distributed run; returns its record (validated, not stored), with the launch plan in
    config.launcher. dims: PxQxR, auto, or None for z-slabs. model: a ping-pong between two ranks
    started the same way gives result.exchange_model (exchange_model). time_block: steps per sweep
    (halos R a step deep, exchanged once a sweep); radius: the stencil's (None: the tool's default)."""
    scaling = scaling or manifest.scalings()[0]["name"]
    check_decomposition(grid, ranks, scaling, dims, sweep_depth(time_block), radius)
    blocks = blocks or iso3dfd.default_blocks(grid)
    plan = launchers.plan(TOOL, ranks, launcher)
    rec = native.run_record(
        TOOL,
        native_args(
            grid, iters, blocks, threads, bind, scaling, pages, verify, cpus, dims, time_block, radius
        ),
        env={**plan.env, **(env or {})},
        prefix=plan.prefix,
        timeout=timeout,
    )
    rec["config"]["launcher"] = {"name": plan.launcher, "argv": plan.prefix, "mpi": plan.mpi}
    if model and ranks > 1:
        if len(os.sched_getaffinity(0)) < 2:
            rec["result"]["exchange_model"] = {
                "unavailable": "one CPU: the two ranks of a ping-pong would take turns on it, and its latency "
                "would be the scheduler's"
            }
        else:
            rec["result"]["exchange_model"] = exchange_model(rec, pingpong(plan.mpi, launcher))
    return records.finish(rec)


_PINGPONGS: dict[tuple[str, str], dict] = {}


def pingpong(impl: str, launcher: str) -> dict:
    """A ping-pong between two ranks started as the run's are, measured once per process."""
    key = (impl, launcher)
    if key not in _PINGPONGS:
        short = {"reps": 3, "max_iterations": 200}
        if launchers.choose(launcher) == "srun":
            plan = launchers.plan(f"bandwall-mpi-pingpong-{impl}", 2, launcher)
            _PINGPONGS[key] = mpi_pingpong.run(impl, launcher=plan.prefix, **short)
        else:  # its own mpirun, run as root where needed
            _PINGPONGS[key] = mpi_pingpong.run(impl, **short)
    return _PINGPONGS[key]


def exchange_model(rec: dict, pp: dict) -> dict:
    """What one halo exchange should cost each rank, from the ping-pong's latency and bandwidth: a
    message per face with a neighbour and array sent (one array step by step, two with sweeps), one
    after the other (latency + bytes / bandwidth each, the faces' bytes together), beside what it took
    alone, what it took within the run (post and wait), and the update it can hide behind (the rank's
    compute between two exchanges: a step, or a sweep, which does not hide it)."""
    rail = mpi_rails.rail_from_pingpong(pp)
    steps = max(int(rec["config"]["nb_iter"]), 1)
    depth = int(rec["config"].get("time_block", {}).get("depth", 1))
    exchanges = max(-(-steps // depth), 1)
    rows = []
    for p in rec["result"]["ranks"]:
        messages = int(p.get("neighbours", 0)) * (2 if depth > 1 else 1)
        sent = float(p.get("exchange_bytes", p.get("halo_bytes_per_step", 0)))
        predicted = messages * rail.latency_s + sent / rail.bandwidth_Bps
        rows.append(
            {
                "rank": p["rank"],
                "messages": messages,
                "halo_bytes": sent,
                "predicted_s": predicted,
                "alone_s": p.get("exchange_alone_s"),
                "in_steps_s": p.get("exchange_in_steps_s"),
                "compute_s": p["compute_s"] / exchanges,
            }
        )
    worst = max(rows, key=lambda r: r["predicted_s"])
    return {
        "pingpong": {"latency_us": rail.latency_s * 1e6, "bandwidth_GBps": rail.bandwidth_Bps * 1e-9},
        "steps_per_exchange": depth,
        "ranks": rows,
        "predicted_max_s": worst["predicted_s"],
        "alone_max_s": max((r["alone_s"] or 0) for r in rows),
        "compute_min_s": min(r["compute_s"] for r in rows),
        "hideable": bool(rec["config"].get("overlap", True))
        and worst["predicted_s"] <= min(r["compute_s"] for r in rows),
    }


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


def sweep_depth(time_block: int | str | None) -> int:
    """The steps a sweep over ranks takes: the number given, else 1 (auto and measure race in one
    process only)."""
    return time_block if isinstance(time_block, int) else 1


def checked(
    grid: Sequence[int],
    counts: Sequence[int],
    scaling: str,
    dims: str | None = None,
    time_block=None,
    radius: int | None = None,
) -> list[int]:
    """counts, once every one of them is known to decompose grid (before anything is launched)."""
    for n in counts:
        check_decomposition(grid, n, scaling, dims, sweep_depth(time_block), radius)
    return list(counts)
