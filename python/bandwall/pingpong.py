"""`bandwall mpi-pingpong`: latency and bandwidth between two MPI ranks, the one-rail model of the
mpiprof rail advisor."""

from __future__ import annotations

from bandwall import mpi, native, records

COLUMNS = ["bytes", "latency us", "bandwidth GB/s"]


def run(
    impl: str | None = None,
    max_size: str = "4M",
    reps: int = 5,
    max_iterations: int = 2000,
    launcher: list[str] | None = None,
) -> dict:
    """Runs bandwall-mpi-pingpong-<impl> on two ranks (mpirun of impl, or the given launcher)."""
    impl = impl or (mpi.available() or ["openmpi"])[0]
    mpi.profiler_library(impl)  # refuses an implementation bandwall was not built for
    prefix = launcher if launcher else mpi.launcher(impl, 2)
    rec = native.run_record(
        f"bandwall-mpi-pingpong-{impl}",
        ["--max-size", max_size, "--reps", reps, "--max-iterations", max_iterations],
        prefix=prefix,
    )
    rec["config"]["mpi"] = impl
    return records.finish(rec)


def rows(rec: dict) -> list[list]:
    return [[p["bytes"], p["latency_us"], p["bandwidth_GBps"]] for p in rec["result"]["points"]]
