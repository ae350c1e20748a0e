"""Flat-MPI bandwidth per node (the T2K study, University of Tsukuba): bandwall-mpi-stream at 1..N ranks per node, each rank
running one STREAM kernel on its own core at the same time, the aggregate bandwidth against ranks
per node, and the knee and surplus cores of bandwall.kernels.sweep over that curve."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Callable

from bandwall.core import native, records
from bandwall.core.errors import UsageError
from bandwall.kernels import stream, sweep
from bandwall.mpi import launchers

TOOL = "bandwall-mpi-stream"


def native_args(
    kernel: str, stores: str | None, size: str | None, reps: int, bind: str | None, pages: str | None
) -> list[str]:
    """bandwall-mpi-stream's arguments; stores, size, bind and pages None leave the executable's default."""
    args = ["--kernel", kernel, "--reps", str(reps)]
    if bind is not None:
        args += ["--bind", bind]
    if stores is not None:
        args += ["--stores", stores]
    if size is not None:
        args += ["--size", size]
    if pages is not None:
        args += ["--pages", pages]
    return args


def run(
    kernel: str,
    ranks: int,
    launcher: str = launchers.AUTO,
    stores: str | None = None,
    size: str | None = None,
    reps: int = 20,
    bind: str | None = None,
    pages: str | None = None,
    env: dict | None = None,
) -> dict:
    """One flat-MPI STREAM run on ranks ranks (one node); returns its record (not stored)."""
    if kernel not in stream.kernel_names():
        raise UsageError(f"unknown kernel {kernel!r} (known: {', '.join(stream.kernel_names())})")
    plan = launchers.plan(TOOL, ranks, launcher)
    rec = native.run_record(
        TOOL,
        native_args(kernel, stores, size, reps, bind, pages),
        env={**plan.env, **(env or {})},
        prefix=plan.prefix,
    )
    rec["config"]["launcher"] = {"name": plan.launcher, "argv": plan.prefix, "mpi": plan.mpi}
    return records.finish(rec)


def point(rec: dict) -> dict:
    return {
        "ranks": int(rec["config"]["ranks_per_node"]),
        "best_GBps": rec["result"]["best_GBps_per_node"],
        "median_GBps": rec["result"]["median_GBps"] / rec["config"]["nodes"],
    }


def run_points(
    kernel: str, counts: Sequence[int], on_point: Callable[[dict], None] | None = None, **options
) -> list[dict]:
    recs = []
    for n in counts:
        rec = run(kernel, n, **options)
        if on_point:
            on_point(rec)
        recs.append(rec)
    return recs


def sweep_record(
    kernel: str,
    point_records: Sequence[dict],
    share: float = sweep.DEFAULT_KNEE_SHARE,
    point_ids: Sequence[int] | None = None,
) -> dict:
    """The flat-MPI sweep record (tool "mpi-stream-sweep"): result.points of {ranks, best_GBps},
    knee_ranks and surplus_cores from bandwall.kernels.sweep's knee over ranks per node."""
    points = sorted((point(r) for r in point_records), key=lambda p: p["ranks"])
    k = sweep.knee(points, share, key="ranks")
    last = max(point_records, key=lambda r: r["config"]["ranks"])
    best = max(points, key=lambda p: p["best_GBps"])
    result = {
        "points": points,
        "knee_ranks": k,
        "surplus_cores": sweep.surplus(points, k, key="ranks"),
        "best_GBps": best["best_GBps"],
        "best_ranks": best["ranks"],
        "knee_GBps": next(p["best_GBps"] for p in points if p["ranks"] == k),
    }
    if point_ids:
        result["point_record_ids"] = list(point_ids)
    cfg = {
        "kernel": kernel,
        "ranks_per_node": [p["ranks"] for p in points],
        "knee_share": share,
        "stores": last["config"]["stores"],
        "size_per_array_bytes": last["config"]["size_per_array_bytes"],
        "reps": last["config"]["reps"],
        "bind": last["config"]["bind"],
        "launcher": last["config"]["launcher"],
        "mpi_library": last["config"]["mpi_library"],
    }
    rec = {
        "schema_version": records.SCHEMA_VERSION,
        "tool": "mpi-stream-sweep",
        "config": cfg,
        "result": result,
        "validation": records.of_parts(point_records, "points"),
        "provenance": records.provenance_of_parts(last, list(point_records)),
    }
    return records.finish(rec)
