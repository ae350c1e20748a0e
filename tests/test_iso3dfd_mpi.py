"""ISO3DFD over MPI ranks: the distributed wavefield equals one process's (its own --verify and the
single-process executable's norm), with mpirun on 2 and 4 ranks and with srun on the test
session's one-node Slurm; every rank's record part says where it ran; bad rank counts and launchers
are one line and exit 2 or 1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

import procs
from bandwall.core import native
from bandwall.core.errors import Unavailable, UsageError
from bandwall.mpi import flavours as mpi
from bandwall.mpi import iso3dfd_mpi, launchers
from conftest import run

# 32 interior planes: 16 per rank on 2 ranks (boundary slabs and an interior), 8 on 4 (the halo
# exactly, no interior left to overlap).
GRID = "40x36x48"
ITERS = 6
ROUNDING = 1e-6


def built() -> str | None:
    try:
        return native.executable(iso3dfd_mpi.TOOL)
    except Exception:
        return None


pytestmark = pytest.mark.skipif(
    built() is None,
    reason=f"{iso3dfd_mpi.TOOL} is not built: no MPI found at build time "
    f"(apt-get install {mpi.flavours.get('openmpi').packages})",
)


@pytest.fixture(scope="module")
def single_norm():
    out = run("iso3dfd", "--grid", GRID, "--iters", ITERS, "--no-roofline", "--format", "json", "--no-store")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["result"]["norm"]


def distributed(run_bandwall, ranks, *extra, env=None, prefix=None):
    out = run_bandwall(
        "iso3dfd",
        "--grid",
        GRID,
        "--iters",
        ITERS,
        "--ranks",
        ranks,
        "--verify",
        "--format",
        "json",
        "--no-store",
        *extra,
        env=env,
        prefix=prefix,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("ranks", [2, 4])
def test_mpirun_gives_the_single_process_norm(run_bandwall, single_norm, ranks):
    rec = distributed(run_bandwall, ranks, "--launcher", "mpirun")
    assert rec["tool"] == "iso3dfd-mpi"
    assert rec["config"]["ranks"] == ranks
    assert rec["config"]["launcher"]["name"] == "mpirun"
    assert rec["validation"]["passed"] and rec["validation"]["checked"]
    assert rec["validation"]["max_rel_error"] <= ROUNDING
    assert rec["result"]["norm"] == pytest.approx(single_norm, rel=ROUNDING)
    assert rec["validation"]["single_process_norm"] == pytest.approx(single_norm, rel=ROUNDING)
    parts = rec["result"]["ranks"]
    assert [p["rank"] for p in parts] == list(range(ranks))
    # The slabs tile the interior planes in rank order.
    assert [p["z0"] for p in parts] == [8 + i * 32 // ranks for i in range(ranks)]
    assert rec["config"]["dims"] == [1, 1, ranks] and rec["config"]["decomposition"] == "z-slabs"
    assert all(p["planes"] == 32 // ranks for p in parts)
    assert 0 <= rec["result"]["comm_share"] <= 1
    assert all(0 <= p["wait_s"] <= p["time_s"] for p in parts)


def test_srun_gives_the_single_process_norm(run_bandwall, single_norm, slurm_cluster):
    rec = distributed(run_bandwall, 2, "--launcher", "srun", env=slurm_cluster.env)
    assert rec["config"]["launcher"]["name"] == "srun"
    assert rec["validation"]["passed"]
    assert rec["result"]["norm"] == pytest.approx(single_norm, rel=ROUNDING)
    assert {p["host"] for p in rec["result"]["ranks"]} == {slurm_cluster.node}


def test_weak_scaling_grows_the_grid_with_the_ranks(run_bandwall):
    rec = distributed(run_bandwall, 2, "--launcher", "mpirun", "--scaling", "weak")
    assert rec["config"]["scaling"] == "weak"
    assert rec["config"]["n3"] == 2 * 32 + 16
    assert rec["config"]["planes_per_rank"] == 32
    assert rec["validation"]["passed"]


def test_ranks_sharing_a_node_share_its_cpus():
    """numa binding: with one NUMA node, two ranks get disjoint parts of its CPUs (when it has two)."""
    cpus = len(os.sched_getaffinity(0))
    rec = iso3dfd_mpi.run((40, 36, 48), 2, 2, launcher="mpirun")
    parts = rec["result"]["ranks"]
    used = [set(p["thread_cpus"]) for p in parts]
    if cpus >= 2:
        assert not used[0] & used[1]
    assert rec["config"]["threads_per_rank"] == max(1, cpus // 2)


BAD = [
    (["--ranks", "5"], 2, "5 ranks along z leave a rank 6 interior points there, fewer than the halo of 8"),
    (["--ranks", "8"], 2, "fewer than the halo of 8"),
    (["--ranks", "2,8"], 2, "fewer than the halo of 8"),
    (["--ranks", "8", "--dims", "2x2"], 2, "--dims '2x2' is not three whole numbers like 2x2x2"),
    (["--ranks", "8", "--dims", "2x2x3"], 2, "--dims 2x2x3 makes 12 ranks, but 8 run"),
    (["--ranks", "8", "--dims", "8x1x1"], 2, "8 ranks along x leave a rank 3 interior points there"),
    (["--ranks", "2,4", "--dims", "1x1x2"], 2, "--dims 1x1x2 fits one rank count"),
    (["--dims", "1x1x2"], 2, "--dims shapes the grid of MPI ranks: give --ranks with it"),
    (["--ranks", "64", "--dims", "auto"], 2, "64 ranks cannot share grid 40x36x48 in any shape"),
    (["--ranks", "0"], 2, "must be at least 1"),
    (["--ranks", "two"], 2, "is not whole numbers"),
    (["--ranks", ""], 2, "empty"),
    (["--ranks", "2", "--launcher", "qsub"], 2, "Invalid value for '--launcher'"),
    (["--ranks", "2", "--scaling", "weak", "--grid", "40x36x20"], 2, "fewer than the halo of 8"),
    (
        ["--ranks", "2", "--time-block", "3"],
        2,
        "fewer than the halo of 24 its neighbours need for sweeps of 3",
    ),
    (
        ["--ranks", "8", "--dims", "auto", "--time-block", "3"],
        2,
        "in any shape that leaves every rank the halo of 24",
    ),
]


@pytest.mark.parametrize("args,code,fragment", BAD)
def test_bad_input(run_bandwall, args, code, fragment):
    out = run_bandwall("iso3dfd", "--grid", GRID, "--iters", "2", "--no-store", *args)
    assert out.returncode == code
    assert fragment in out.stderr
    assert "Traceback" not in out.stderr
    assert out.stderr.strip().count("\n") == 0 or "Usage:" in out.stderr


def test_native_refuses_the_same_decompositions_as_the_front_end():
    """Run directly under mpirun, the executable itself refuses, in one line from rank 0 only."""
    plan = launchers.plan(iso3dfd_mpi.TOOL, 5, "mpirun")
    argv = [*plan.prefix, native.executable(iso3dfd_mpi.TOOL), "40", "36", "48", "2", "40", "36", "48"]
    out = procs.run(argv, text=True, env={**os.environ, **plan.env}, timeout=120)
    assert out.returncode == 2
    assert out.stderr.count("5 ranks along z leave a rank 6 interior points there") == 1
    assert out.stdout == ""


# Odd extents in every dimension: interior 41 x 27 x 47, cut unevenly.
ODD = (57, 43, 63)


@pytest.mark.parametrize(
    "ranks,dims,want",
    [
        (8, "2x2x2", [2, 2, 2]),
        (8, "1x2x4", [1, 2, 4]),
        (8, "4x2x1", [4, 2, 1]),
        (6, "auto", None),
        (4, "2x1x2", [2, 1, 2]),
        (3, None, [1, 1, 3]),
        (1, "1x1x1", [1, 1, 1]),
    ],
)
def test_3d_grids_of_ranks_give_the_single_process_wavefield(ranks, dims, want):
    """Every shape, odd extents: the gathered wavefield equals one process's to the last bit (the
    same row kernel on the same points), the boxes tile the interior, and the record gives each
    rank's halo bytes and the share of its exchange the inner update hid."""
    rec = iso3dfd_mpi.run(ODD, 4, ranks, threads=1, bind="none", launcher="mpirun", verify=True, dims=dims)
    c, r = rec["config"], rec["result"]
    assert c["dims"] == (want or c["dims"]) and c["dims"][0] * c["dims"][1] * c["dims"][2] == ranks
    assert c["decomposition"] == ("z-slabs" if c["dims"][:2] == [1, 1] else "3-D")
    assert rec["validation"]["passed"] is True and rec["validation"]["max_rel_error"] == 0.0
    assert r["norm"] == pytest.approx(rec["validation"]["single_process_norm"], rel=1e-12)
    boxes = [(p["origin"], p["extent"]) for p in r["ranks"]]
    assert sum(e[0] * e[1] * e[2] for _, e in boxes) == 41 * 27 * 47
    for p in r["ranks"]:
        faces = sum(2 if d > 1 else 0 for d in c["dims"])
        assert 0 <= p["neighbours"] <= faces and 0 <= p["hidden_share"] <= 1
        assert (p["halo_bytes_per_step"] > 0) is (ranks > 1)


def test_auto_dims_take_the_shape_of_least_halo():
    """6 ranks on 41 x 27 x 47: 2x1x3 sends least a rank (the native's choice, the same the front end
    accepts)."""
    rec = iso3dfd_mpi.run(ODD, 2, 6, threads=1, bind="none", launcher="mpirun", dims="auto")
    assert rec["config"]["dims"] == [2, 1, 3] and rec["config"]["dims_how"] == "auto"


# Interior 40 x 48 x 56: room for halos 24 deep along y and z on 2 ranks, 16 along every axis on 8.
DEEP = (56, 64, 72)
TWO = min(2, len(os.sched_getaffinity(0)))


@pytest.mark.parametrize(
    "grid,ranks,dims,depth,threads",
    [
        (ODD, 2, "1x1x2", 2, 1),  # odd extents, one face
        (ODD, 4, "2x1x2", 2, 1),  # x cut too: the rows' halos, their edges
        (DEEP, 4, "1x2x2", 3, 1),  # y and z: edges between the faces
        (DEEP, 8, "2x2x2", 2, 1),  # every axis: corners
        (DEEP, 2, "1x1x2", 3, TWO),  # a rank's threads: slabs shrunk at the rank's face, or the team
    ],
)
def test_sweeps_over_ranks_give_the_single_process_wavefield(grid, ranks, dims, depth, threads):
    """--time-block N over ranks: halos 8 N deep exchanged once a sweep, each rank sweeping its part
    and N - 1 steps of its halo; 7 steps (not a multiple of N, so the last sweep is shorter) give one
    process's wavefield to the last bit, and the record counts the exchanges and the points computed
    again."""
    rec = iso3dfd_mpi.run(
        grid,
        7,
        ranks,
        threads=threads,
        bind="none",
        launcher="mpirun",
        verify=True,
        dims=dims,
        time_block=depth,
    )
    c, r = rec["config"], rec["result"]
    tb = c["time_block"]
    assert (tb["depth"], tb["how"], tb["halo_layers"]) == (depth, "user", 8 * depth)
    assert tb["exchanges"] == -(-7 // depth)
    assert tb["sweep"]["team"] in ("slabs", "shared")
    probe = tb["llc_probe"]  # rank 0's team, probed before the model fits its sweeps
    if threads == 1:
        assert probe == {"ran": False, "why": "one thread"}
    elif probe["ran"] and probe["cpus"][0] != probe["cpus"][1]:
        assert probe["shared"] == (probe["round_trip_ns"] < probe["one_llc_below_ns"]), probe["why"]
    assert c["overlap"] is False
    assert rec["validation"]["passed"] is True and rec["validation"]["max_rel_error"] == 0.0
    assert r["norm"] == pytest.approx(rec["validation"]["single_process_norm"], rel=1e-12)
    for p in r["ranks"]:
        assert p["redundant_share"] > 0 and p["exchange_bytes"] > 0
        assert p["halo_bytes_per_step"] == pytest.approx(p["exchange_bytes"] / depth)


# 2 parts of 80 x 80 x 64 with their halo, 4.9 MB of arrays each: more than half the L2 of any CPU met
PARTS_BEYOND_L2 = (80, 80, 112)
# The caches every rank's model reads, held fixed so that each branch runs on any CPU: a Zen guest's
# (the model proposes sweeps of these parts) and an L2 that holds a part (it proposes none).
ZEN_CACHES = {"BANDWALL_CACHES": "L2=1M,L3=32M"}
HUGE_L2 = {"BANDWALL_CACHES": "L2=64M,L3=480M"}


@pytest.mark.parametrize(
    ("iters", "caches", "why"),
    [(10, ZEN_CACHES, "too short to race"), (40, HUGE_L2, "the model proposes no sweeps")],
)
def test_auto_over_ranks_too_short_to_race_says_why(iters, caches, why):
    """auto on a run too short to race (10 steps, the CLI's default), or whose parts leave the model
    nothing to save (they fit the L2): step by step, and the record says why."""
    rec = iso3dfd_mpi.run(
        PARTS_BEYOND_L2, iters, 2, threads=1, bind="none", launcher="mpirun", time_block="auto", env=caches
    )
    tb = rec["config"]["time_block"]
    assert (tb["depth"], tb["how"], tb["requested"], tb["exchanges"]) == (1, "model", "auto", iters)
    assert why in tb["why"] and tb["caches_forced"] == f"BANDWALL_CACHES={caches['BANDWALL_CACHES']}"
    assert "sweep" not in tb and tb["halo_layers"] == 8 and rec["result"]["steps_timed"] == iters
    assert tb["llc_probe"] == {"ran": False, "why": "one thread"}
    assert all(p["redundant_share"] == 0 for p in rec["result"]["ranks"])


def test_auto_over_ranks_races_as_one_process_does():
    """auto over ranks, where the model proposes sweeps: the race of sweeps (halos as deep as the
    race's) against single steps, every round timed by the slowest rank; the race's steps advance the
    wavefield, the rest are timed at the depth it chose, and the answer is one process's to the last
    bit."""
    rec = iso3dfd_mpi.run(
        PARTS_BEYOND_L2,
        40,
        2,
        threads=1,
        bind="none",
        launcher="mpirun",
        verify=True,
        time_block="auto",
        env=ZEN_CACHES,
    )
    tb, r = rec["config"]["time_block"], rec["result"]
    assert tb["requested"] == "auto" and tb["how"] == "race" and tb["why"]
    assert rec["validation"]["passed"] is True and rec["validation"]["max_rel_error"] == 0.0
    race = tb["race_steps"]
    assert r["steps_timed"] + race == 40
    (raced,) = [name for name in tb["race"]["rates"] if name != "1"]
    rounds = tb["race"]["rule"]["rounds_run"]
    assert race == 1 + (int(raced) + tb["race_single_steps"]) * rounds <= 40 * 3 // 4
    assert tb["halo_layers"] == 8 * int(raced)
    assert tb["depth"] == (int(raced) if tb["race"]["chosen"] == raced else 1)
    assert rec["config"]["overlap"] is (tb["depth"] == 1)
    assert tb["exchanges"] == (-(-r["steps_timed"] // tb["depth"]))


NATIVE_BAD = [
    (["--time-block", "3"], "fewer than the halo of 24 its neighbours need for sweeps of 3 steps"),
    (["--time-block", "0"], "--time-block '0' must be auto, measure or a whole number from 1 to 64"),
    (["--time-block", "deep"], "--time-block 'deep' must be auto, measure or a whole number from 1 to 64"),
    (
        ["--dims", "auto", "--time-block", "3"],
        "cannot share grid 40x36x48 in any shape that leaves every rank the halo of 24",
    ),
]


@pytest.mark.parametrize("args,fragment", NATIVE_BAD)
def test_native_refuses_a_sweep_the_parts_cannot_hold(args, fragment):
    """Run directly under mpirun: a depth whose halo is deeper than a rank's part is refused in one
    line from rank 0 (16 planes a rank; sweeps of 2 fit)."""
    plan = launchers.plan(iso3dfd_mpi.TOOL, 2, "mpirun")
    base = [*plan.prefix, native.executable(iso3dfd_mpi.TOOL), "40", "36", "48", "2", "40", "36", "48"]
    out = procs.run(
        [*base, *args],
        text=True,
        env={**os.environ, **plan.env},
        timeout=120,
    )
    assert out.returncode == 2
    assert out.stderr.count(fragment) == 1
    assert out.stdout == ""


@pytest.mark.parametrize("depth", ["1", "2", "auto"])
def test_native_refuses_a_bad_ceiling_on_every_rank_in_one_line(depth):
    """A BANDWALL_MAX_ISA that names no variant: every rank stops with exit 2 before anything runs,
    one line from one rank, whatever the sweep (a sweep's first dispatch is in a parallel region)."""
    plan = launchers.plan(iso3dfd_mpi.TOOL, 2, "mpirun")
    base = [*plan.prefix, native.executable(iso3dfd_mpi.TOOL), "40", "36", "48", "4", "40", "36", "48"]
    out = subprocess.run(
        [*base, "--time-block", depth],
        capture_output=True,
        text=True,
        env={**os.environ, **plan.env, "BANDWALL_MAX_ISA": "avx"},
        timeout=120,
    )
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("BANDWALL_MAX_ISA='avx' is not a variant (use generic, avx2 or avx512)") == 1
    assert out.stdout == ""


def test_missing_launcher_names_its_package(run_bandwall, tmp_path):
    """A PATH without the launcher: one line naming the Debian package, exit 1."""
    for name in ("srun", "mpirun"):
        out = run_bandwall(
            "iso3dfd",
            "--grid",
            GRID,
            "--iters",
            "2",
            "--ranks",
            "2",
            "--launcher",
            name,
            "--no-store",
            env={"PATH": str(tmp_path)},
        )
        assert out.returncode == 1, out.stderr
        assert "is not installed (Debian package" in out.stderr
        assert "Traceback" not in out.stderr


def test_unbuilt_executable_names_the_mpi_package(monkeypatch):
    def missing(name):
        raise native.RunFailed(f"native executable {name!r} not found")

    monkeypatch.setattr(native, "executable", missing)
    with pytest.raises(Unavailable, match="MPI was not found when bandwall was built.*libopenmpi-dev"):
        launchers.plan(iso3dfd_mpi.TOOL, 2)


def test_auto_launcher_is_srun_inside_an_allocation(monkeypatch):
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    expected = "srun" if shutil.which("srun") else "mpirun"
    assert launchers.choose("auto") == expected
    monkeypatch.delenv("SLURM_JOB_ID")
    assert launchers.choose("auto") == "mpirun"


@pytest.mark.cpus(2)
def test_the_exchange_model_stands_beside_the_measurement(run_bandwall):
    """bandwall iso3dfd --ranks: a ping-pong between two ranks started alike gives each rank's
    modelled exchange (a message per face with a neighbour: latency + bytes / bandwidth) beside the
    exchange measured alone and within the steps, and the update it could hide behind."""
    rec = distributed(run_bandwall, 4, "--launcher", "mpirun", "--dims", "1x2x2")
    m = rec["result"]["exchange_model"]
    assert m["pingpong"]["latency_us"] >= 0 and m["pingpong"]["bandwidth_GBps"] > 0
    assert [r["rank"] for r in m["ranks"]] == [0, 1, 2, 3]
    for r, part in zip(m["ranks"], rec["result"]["ranks"]):
        assert r["messages"] == part["neighbours"] == 2  # one neighbour along y, one along z
        assert r["halo_bytes"] == part["halo_bytes_per_step"] > 0
        lat, bw = m["pingpong"]["latency_us"] * 1e-6, m["pingpong"]["bandwidth_GBps"] * 1e9
        assert r["predicted_s"] == pytest.approx(2 * lat + r["halo_bytes"] / bw)
        assert r["alone_s"] > 0 and r["compute_s"] > 0
    assert m["hideable"] == (m["predicted_max_s"] <= m["compute_min_s"])


def test_one_cpu_gives_no_exchange_model_and_says_why(run_bandwall):
    """Under one CPU the ping-pong's two ranks would take turns: the model is not measured."""
    one = str(min(os.sched_getaffinity(0)))
    rec = distributed(run_bandwall, 2, "--launcher", "mpirun", prefix=["taskset", "-c", one])
    assert rec["result"]["exchange_model"]["unavailable"].startswith("one CPU")


def test_the_front_end_asks_the_tool_how_ranks_share_a_grid():
    """--plan is the one model of the decomposition: the shape each --dims gives, its halo bytes, and
    every shape that holds the halo, least halo bytes first (auto's the first); no MPI is started."""
    slabs = iso3dfd_mpi.plan((40, 36, 48), 4)
    assert (slabs["dims"], slabs["dims_how"], slabs["global"]) == ([1, 1, 4], "z-slabs", [40, 36, 48])
    halos = [s["halo_bytes"] for s in slabs["shapes"]]
    assert halos == sorted(halos) and len(halos) >= 2
    auto = iso3dfd_mpi.plan((40, 36, 48), 4, dims="auto")
    assert auto["dims"] == slabs["shapes"][0]["dims"] and auto["dims_how"] == "auto"
    assert iso3dfd_mpi.shapes((40, 36, 48), 4) == [tuple(s["dims"]) for s in slabs["shapes"]]
    weak = iso3dfd_mpi.plan((40, 36, 48), 2, scaling="weak")
    assert weak["global"] == [40, 36, 2 * (48 - 16) + 16] and weak["shapes"] == []
    with pytest.raises(UsageError, match="64 ranks cannot share grid 40x36x48"):
        iso3dfd_mpi.plan((40, 36, 48), 64, dims="auto")
