"""Flat-MPI bandwidth per node: every rank on its own core at once, the aggregate over the slowest
rank's time, the sweep's knee and surplus cores over ranks per node (as in seed 003's figure), with
mpirun and with srun."""

from __future__ import annotations

import json
import os

import pytest

from bandwall.core import native
from bandwall.kernels import sweep
from bandwall.mpi import flavours as mpi
from bandwall.mpi import mpi_stream

SIZE = "2M"
REPS = 3


def built() -> bool:
    try:
        native.executable(mpi_stream.TOOL)
        return True
    except Exception:
        return False


pytestmark = pytest.mark.skipif(
    not built(),
    reason=f"{mpi_stream.TOOL} is not built: no MPI found at build time "
    f"(apt-get install {mpi.flavours.get('openmpi').packages})",
)


def point_record(ranks: int, gbps: float, make_record) -> dict:
    return make_record(
        tool="mpi-stream",
        config={
            "kernel": "triad",
            "ranks": ranks,
            "ranks_per_node": ranks,
            "nodes": 1,
            "stores": "nt",
            "size_per_array_bytes": 1 << 20,
            "reps": 3,
            "bind": "core",
            "launcher": {"name": "mpirun", "argv": [], "mpi": "openmpi"},
            "mpi_library": "Open MPI v4.1",
        },
        result={"best_GBps": gbps, "best_GBps_per_node": gbps, "median_GBps": gbps},
    )


def test_knee_of_a_curve_flat_beyond_8_of_16(make_record):
    """Seed 003's T2K node: bandwidth stops growing at 8 processes of 16."""
    curve = {n: 5.0 * min(n, 8) for n in range(1, 17)}
    rec = mpi_stream.sweep_record("triad", [point_record(n, g, make_record) for n, g in curve.items()])
    r = rec["result"]
    assert r["points"][0] == {"ranks": 1, "best_GBps": 5.0, "median_GBps": 5.0}
    assert r["knee_ranks"] == 8 and r["surplus_cores"] == 8
    # The same knee as the core sweep's logic over the same numbers.
    assert r["knee_ranks"] == sweep.knee([{"cores": n, "best_GBps": g} for n, g in curve.items()])


def test_every_rank_runs_on_its_own_core_at_once():
    cpus = len(os.sched_getaffinity(0))
    rec = mpi_stream.run("triad", 2, launcher="mpirun", size=SIZE, reps=REPS)
    assert rec["tool"] == "mpi-stream" and rec["validation"]["passed"]
    parts = rec["result"]["ranks"]
    assert [p["rank"] for p in parts] == [0, 1]
    if cpus >= 2:
        assert parts[0]["thread_cpus"] != parts[1]["thread_cpus"]
    # Aggregate: every rank's bytes over the slowest rank's best repetition (first dropped).
    moved = rec["config"]["elements"] * rec["result"]["bytes_per_element"] * 2
    best = min(rec["result"]["times_s"][rec["result"]["dropped_reps"] :])
    assert rec["result"]["best_GBps"] == pytest.approx(moved / best / 1e9)


@pytest.mark.cpus(2)
def test_sweep_command_stores_points_and_knee(run_bandwall, tmp_path):
    db = tmp_path / "b.db"
    out = run_bandwall(
        "mpi-stream",
        "triad",
        "--ranks-per-node",
        "1,2",
        "--size",
        SIZE,
        "--reps",
        REPS,
        "--launcher",
        "mpirun",
        "--format",
        "json",
        "--db",
        db,
        "--plot",
        tmp_path / "flat.png",
    )
    assert out.returncode == 0, out.stderr
    rec = json.loads(out.stdout)
    r = rec["result"]
    assert rec["tool"] == "mpi-stream-sweep"
    assert [p["ranks"] for p in r["points"]] == [1, 2]
    assert r["knee_ranks"] in (1, 2) and r["surplus_cores"] == 2 - r["knee_ranks"]
    assert len(r["point_record_ids"]) == 2
    assert (tmp_path / "flat.png").stat().st_size > 0


def test_srun_runs_the_ranks(slurm_cluster):
    rec = mpi_stream.run("triad", 2, launcher="srun", size=SIZE, reps=REPS, env=slurm_cluster.env)
    assert rec["config"]["launcher"]["name"] == "srun"
    assert rec["config"]["ranks"] == 2 and rec["validation"]["passed"]


BAD = [
    (["--ranks-per-node", "0"], 2, "out of range"),
    (["--ranks-per-node", "1-999"], 2, "out of range"),
    (["--launcher", "pbsrun"], 2, "Invalid value for '--launcher'"),
    (["--reps", "0"], 2, "Invalid value for '--reps'"),
]


@pytest.mark.parametrize("args,code,fragment", BAD)
def test_bad_input(run_bandwall, args, code, fragment):
    out = run_bandwall("mpi-stream", "triad", "--no-store", *args)
    assert out.returncode == code
    assert fragment in out.stderr
    assert "Traceback" not in out.stderr


def test_unknown_kernel(run_bandwall):
    out = run_bandwall("mpi-stream", "quad", "--ranks-per-node", "1", "--no-store")
    assert out.returncode == 2 and "unknown kernel 'quad'" in out.stderr
