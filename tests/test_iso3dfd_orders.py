"""ISO3DFD at every radius (space order 2R): the stencil as the manifest describes it, --radius through
the executable, `bandwall iso3dfd` and the MPI tool (checked against one process, every radius, under
each dispatch ceiling this CPU allows), the article's command line unchanged at radius 8, the memory
wall in the record, the orders section of the report built from constructed records, and bad input.
The numerics against a reference written apart from the kernels are the native tests'
(native/tests/test_iso3dfd_orders.cpp)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from bandwall.core import native
from bandwall.core.store import Store
from bandwall.kernels import iso3dfd, roofs
from bandwall.mpi import iso3dfd_mpi
from bandwall.report.sections import orders
from bandwall.tune import targets
from iso3dfd_tool import THREADS, record, tool


def test_the_manifest_describes_every_radius():
    s = iso3dfd.stencil()
    assert (s["radius_min"], s["radius_default"], s["radius_max"]) == (1, 8, 8)
    assert s["kernel_radii"] == list(range(1, 9))  # a vector kernel at every radius
    for r in range(1, 9):
        facts = s["radii"][str(r)]
        assert facts["space_order"] == 2 * r and facts["halo"] == r and facts["min_dimension"] == 2 * r + 1
        assert facts["flops_per_point"] == 7 * r + 5 and facts["bytes_per_point"] == 16
        assert facts["templated"] == (r in s["kernel_radii"])
    assert iso3dfd.radius_facts()["flops_per_point"] == 61  # the article's count
    assert iso3dfd.order_name(1) == "2nd order" and iso3dfd.order_name(8) == "16th order"


@pytest.mark.parametrize("radius", range(1, 9))
def test_every_radius_runs_checks_and_says_how(radius, isa_ceiling):
    """Each radius against the plain reference at the same radius, on the kernel the ceiling leaves:
    the vector kernels' own at the radii they are compiled for, the generic loops at the others."""
    n = 2 * radius + 13
    # rows of 40: whole vectors fit at every radius (shorter rows at radius 1 run the generic loops,
    # the native tests' RowsTooShortForVectorsRunTheGenericLoops)
    rec = record(40, n, n + 5, 4, "auto", "auto", "auto", "compact", THREADS, "--radius", radius, "--verify")
    c, r = rec["config"], rec["result"]
    assert rec["validation"]["passed"] and rec["validation"]["checked"]
    assert (c["radius"], c["space_order"], c["half_length"]) == (radius, 2 * radius, radius)
    templated = radius in iso3dfd.stencil()["kernel_radii"] and c["isa"] != "generic"
    assert c["radius_path"] == ("templated" if templated else "generic")
    assert r["flops_per_point"] == 7 * radius + 5
    assert r["interior_points"] == (40 - 2 * radius) * (n - 2 * radius) * (n + 5 - 2 * radius)


@pytest.mark.parametrize("radius", [1, 5, 8])
def test_every_prefetch_distance_gives_the_same_answer_and_says_how_it_was_chosen(radius, isa_ceiling):
    """--prefetch changes only where the row kernel prefetches: none, one row or several rows ahead
    (past a block's last row into the next planes), into L2 or L1, each checked against the reference
    with the same norm, on every variant this CPU runs; auto says whence its setting came (the
    table's row for this CPU, else the default)."""
    n = 2 * radius + 13
    grid = (40, n, n + 9, 3, 40, 4, 8, "compact", THREADS, "--radius", radius, "--verify")
    norms = set()
    for p, rows, cache in (("none", 0, None), ("1", 1, "L2"), ("3:L1", 3, "L1"), ("2:l2", 2, "L2")):
        rec = record(*grid, "--prefetch", p)
        assert rec["validation"]["passed"] and rec["validation"]["checked"]
        pf = rec["config"]["prefetch"]
        assert (pf["how"], pf["rows_ahead"], pf["cache"], pf["requested"]) == ("given", rows, cache, p)
        c = rec["config"]
        assert pf["used"] is (c["radius_path"] == "templated" and "-ring" not in c["row_shape"]["name"])
        norms.add(round(rec["result"]["norm"], 4))
    assert len(norms) == 1
    auto = record(*grid)["config"]["prefetch"]
    assert auto["requested"] == "auto" and auto["how"] in ("table", "default", "tuned")
    if auto["how"] == "default":
        assert auto["rows_ahead"] == (1 if radius > 2 else 0)
        assert auto["setting"] == ("1:L2" if radius > 2 else "0")


def test_what_is_measured_at_one_radius_is_kept_for_that_radius_only():
    """The variant's key in the table of measured choices and the key of a kept race name the radius
    when it is not the article's (whose keys stay those of the records before --radius)."""
    one = record(40, 30, 40, 40, "auto", "auto", "auto", "compact", THREADS, "--radius", 1)
    seed = record(40, 30, 40, 40, "auto", "auto", "auto", "compact", THREADS)
    assert one["config"]["isa_choice"]["kernel"] == "iso3dfd.rows.r1"
    assert seed["config"]["isa_choice"]["kernel"] == "iso3dfd.rows"
    assert "radius 1," in one["config"]["time_block"]["cache_key"]
    assert "radius" not in seed["config"]["time_block"]["cache_key"]


@pytest.mark.parametrize("radius", [1, 2, 4])
def test_sweeps_at_low_radius_give_the_step_by_step_wavefield(radius):
    """Sweeps of 3 steps (the halos are thin, the slabs hold the depth) against step by step: the
    same norm, the depth recorded with the level that holds its window."""
    grid = [40, 30, 34 + 12 * radius, 9, "auto", "auto", "auto", "compact", THREADS, "--radius", radius]
    step = record(*grid, "--time-block", 1)
    swept = record(*grid, "--time-block", 3)
    assert swept["config"]["time_block"]["depth"] == 3
    assert swept["result"]["traffic_model"]["time_block"]["level"] in ("L2", "L3", "memory")
    assert swept["result"]["norm"] == pytest.approx(step["result"]["norm"], rel=1e-5)


def test_the_articles_command_line_prints_what_it_printed():
    """Radius 8 is the default: the article's lines are the same with and without --radius 8, and the
    header still names HALF_LENGTH=8."""
    seed = [40, 36, 44, 3, 40, 12, 16, "compact", 1, "--time-block", 1]

    def lines(*extra) -> list[str]:
        proc = tool(*seed, *extra)
        assert proc.returncode == 0, proc.stderr
        return [x for x in proc.stdout.splitlines() if not re.match(r"\s*(time|throughput|flops)", x)]

    assert lines() == lines("--radius", 8)
    assert "HALF_LENGTH=8" in lines()[0]
    assert "HALF_LENGTH=1" in lines("--radius", 1)[0]


def test_bandwall_iso3dfd_takes_the_radius(run_bandwall):
    proc = run_bandwall(
        "iso3dfd", "--grid", "20x18x22", "--radius", "2", "--iters", "3", "--no-roofline", "--no-store",
        "--format", "json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    assert rec["config"]["radius"] == 2 and rec["config"]["n1"] == 20
    view = run_bandwall(
        "iso3dfd", "--grid", "20x18x22", "--radius", "1", "--iters", "2", "--no-roofline", "--no-store"
    )
    assert view.returncode == 0 and "radius 1 (2nd order" in view.stdout
    # the arrays' layout: padded rows (32 floats for 20) led by 15 floats at radius 1
    assert "arrays: rows 48 floats apart (auto), planes " in view.stdout
    assert "led by 15 floats" in view.stdout


@pytest.mark.parametrize("radius,depth", [(1, 1), (2, 1), (2, 3), (3, 1)])
def test_ranks_give_the_single_process_norm_at_every_radius(run_bandwall, radius, depth):
    """Two ranks (z-slabs) at radius R: halos of R (R x depth with sweeps), the gathered wavefield
    against one process at the same radius."""
    grid = f"24x20x{30 + 8 * radius * depth}"
    proc = run_bandwall(
        "iso3dfd", "--grid", grid, "--radius", str(radius), "--iters", "5", "--ranks", "2", "--launcher", "mpirun",
        "--time-block", str(depth), "--verify", "--no-store", "--format", "json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    assert rec["validation"]["passed"] and rec["validation"]["checked"]
    assert rec["config"]["radius"] == radius
    assert rec["config"]["time_block"]["halo_layers"] == radius * depth
    assert rec["result"]["flops_per_point"] == 7 * radius + 5


def test_the_decomposition_follows_the_radius():
    """A grid too thin for radius 8's halo over 2 ranks along z is cut fine at radius 1."""
    with pytest.raises(Exception, match="fewer than the halo of 8"):
        iso3dfd_mpi.check_decomposition((40, 40, 26), 2, "strong")
    iso3dfd_mpi.check_decomposition((40, 40, 26), 2, "strong", radius=1)
    # the same interior (16 points a side) sends R layers a face: 8 times the bytes at radius 8
    one = iso3dfd_mpi.plan((18, 18, 18), 2, radius=1)
    eight = iso3dfd_mpi.plan((32, 32, 32), 2)
    assert one["dims"] == eight["dims"] == [1, 1, 2]
    assert one["halo_bytes"] * 8 == eight["halo_bytes"] == 2 * 8 * 16 * 16 * 4


def test_the_memory_wall_is_triad_over_sixteen_bytes():
    c = {"stream_kernels_GBps": {"copy": 50.0, "triad": 40.0}}
    wall = roofs.memory_wall(c, {"bytes_per_point_compulsory": 16}, 3750.0)["memory_wall"]
    assert wall["mpoints_per_s"] == pytest.approx(2500.0)
    assert wall["times"] == pytest.approx(1.5) and wall["beats"]
    assert wall["note"].startswith("1.50x the memory wall (2500 MPoints/s")
    below = roofs.memory_wall(c, {}, 1250.0)["memory_wall"]
    assert not below["beats"] and below["note"].startswith("0.50 of the memory wall")
    assert "unavailable" in roofs.memory_wall({}, {}, 1.0)["memory_wall"]


def _orders_record(radius: int, mode: str, rate: float, wall: float, roof: float, depth: int) -> dict:
    how = "user" if mode == "step by step" else "race"
    return {
        "tool": "iso3dfd",
        "config": {
            "radius": radius,
            "time_block": {"depth": depth, "how": how},
            "isa": "avx2",
            "row_shape": {"name": "2x2"},
        },
        "result": {
            "mpoints_per_s": rate,
            "roofline": {"memory_wall": {"mpoints_per_s": wall}, "incore_bound_mpoints_per_s": roof},
        },
    }


def test_the_orders_section_reads_each_radius_against_its_wall_and_roof():
    recs = []
    for k, (swept, step) in enumerate([(3000.0, 2000.0), (3300.0, 2200.0), (2700.0, 1800.0)]):
        recs.append(_orders_record(1, "swept", swept, 2000.0, 20000.0, 8))
        recs.append(_orders_record(1, "step by step", step, 2000.0, 20000.0, 1))
        recs.append(_orders_record(8, "swept", 900.0 + k, 2000.0, 4000.0, 1))
        recs.append(_orders_record(8, "step by step", 900.0, 2000.0, 4000.0, 1))
    one, eight = orders.rows_of(recs)
    assert (one["radius"], one["order"], one["depths"]) == (1, "2nd order", [8])
    assert one["swept"] == 3000.0 and one["step"] == 2000.0 and one["wall"] == 2000.0
    assert one["x_wall"] == pytest.approx(1.5) and one["x_step"] == pytest.approx(1.5)
    assert eight["x_wall"] < 1 and eight["roof"] == 4000.0


def test_a_tune_records_its_radius():
    t = targets.make(["iso3dfd"], None, grid="40x30x30", iters=4, radius=2)
    assert t.options["radius"] == 2
    assert targets._radius_words({"radius": 2}) == ["--radius", "2"]
    assert targets._radius_words({"radius": iso3dfd.default_radius()}) == []
    assert targets.make(["iso3dfd"], None, grid="40x30x30", iters=4).options["radius"] == 8


BAD_NATIVE = [
    ([37, 29, 41, 3, 13, 7, 9, "--radius", 0], "--radius '0' must be a whole number from 1 to 8"),
    ([37, 29, 41, 3, 13, 7, 9, "--radius", 9], "--radius '9' must be a whole number from 1 to 8"),
    ([37, 29, 41, 3, 13, 7, 9, "--radius", "two"], "--radius 'two' must be a whole number from 1 to 8"),
    ([37, 29, 41, 3, 13, 7, 9, "--radius", ""], "--radius is empty"),
    ([37, 29, 41, 3, 13, 7, 9, "--radius", "2.5"], "--radius '2.5' must be a whole number"),
    ([4, 29, 41, 3, 4, 7, 9, "--radius", 2], "n1 '4' is below the minimum 5 at radius 2"),
    ([37, 29, 2, 3, 13, 7, 2, "--radius", 1], "n3 '2' is below the minimum 3 at radius 1"),
]


@pytest.mark.parametrize("args,fragment", BAD_NATIVE)
def test_bad_radius_native(args, fragment):
    proc = tool(*args)
    assert proc.returncode == 2, proc.stderr
    assert fragment in proc.stderr and proc.stderr.count("\n") == 1
    assert proc.stdout == ""


BAD_CLI = [
    (["--radius", "9"], "'9' is not one of"),
    (["--radius", "0"], "'0' is not one of"),
    (["--radius", "x"], "'x' is not one of"),
    (["--radius", "3", "--grid", "6x20x20"], "n1 '6' is below the minimum 7 at radius 3"),
    (["--radius", "4", "--grid", "40x40x14", "--ranks", "2"], "fewer than the halo of 4"),
]


@pytest.mark.parametrize("args,fragment", BAD_CLI)
def test_bad_radius_cli(run_bandwall, args, fragment, tmp_path):
    proc = run_bandwall("iso3dfd", "--iters", "2", "--no-roofline", "--db", tmp_path / "b.db", *args)
    assert proc.returncode == 2, proc.stderr
    assert fragment in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0
    assert not (tmp_path / "b.db").exists() or Store(tmp_path / "b.db").list() == []


def test_the_mpi_tool_refuses_a_bad_radius_on_rank_zero_alone():
    proc = subprocess.run(
        [native.executable(iso3dfd_mpi.TOOL), *map(str, (20, 20, 20, 2, 20, 20, 20)), "--radius", "12"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "--radius '12' must be a whole number from 1 to 8" in proc.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--swept-shape", "9x9"), "--swept-shape 9x9 is not a register shape of any row kernel"),
        (
            ("--swept-shape", "8x2-ring", "--isa", "generic"),
            "is not a register shape of the generic row kernel",
        ),
        (
            ("--swept-shape", "8x2-ring", "--kernel", "reference"),
            "the reference kernel has no register shape",
        ),
        (("--swept-shape", ""), "--swept-shape is empty"),
        (("--row-pitch", "19"), "--row-pitch 19 is below n1 (20): a row must hold its floats"),
        (
            ("--row-pitch", "lines"),
            "--row-pitch 'lines' must be auto, packed or a number of floats from n1 (20) up",
        ),
        (
            ("--row-pitch", "packed", "--plane-pitch", "399"),
            "--plane-pitch 399 is below the row pitch x n2 (400): a plane must hold its rows",
        ),
        (
            ("--row-pitch", "packed", "--plane-pitch", "-4"),
            "--plane-pitch '-4' must be auto, packed or a number of floats from the row pitch x n2 (400) up",
        ),
        (
            ("--array-offset", "1024"),
            "--array-offset '1024' must be auto or a number of floats from 0 to 1008, a multiple of 16",
        ),
        (("--array-offset", "8"), "--array-offset '8' must be auto or a number of floats"),
    ],
)
def test_a_bad_swept_shape_or_pitch_is_refused_in_one_line(args, fragment):
    proc = tool(20, 20, 20, 2, "auto", "auto", "auto", "compact", 1, *args)
    assert proc.returncode == 2, proc.stderr
    assert fragment in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0


@pytest.mark.parametrize("radius", [1, 3, 8])
def test_rows_and_planes_padded_leave_the_wavefield_as_packed_ones_do(radius):
    """By default each row starts on a 64-byte line (an odd count of them: config.row_pitch) and each
    plane spans an odd count of lines (config.plane_pitch), the arrays led so that each row's interior
    starts a line (config.row_pitch.lead), next and vel a third and two thirds of a 4 KiB page after
    prev (config.array_offset); packed rows and planes, and pitches and offsets given (a plane's off a
    line), run the same wavefield, exact against the reference."""
    n = 30 + 2 * radius
    args = (n, n, n, 6, "auto", "auto", "auto", "compact", THREADS, "--radius", radius, "--verify")
    default = record(*args)
    packed = record(*args, "--row-pitch", "packed", "--plane-pitch", "packed", "--array-offset", "0")
    wide = record(*args, "--row-pitch", 3 * 16 * 5, "--plane-pitch", 240 * n + 7, "--array-offset", 1008)
    pitch, plane = default["config"]["row_pitch"], default["config"]["plane_pitch"]
    assert pitch["requested"] == "auto" and pitch["floats"] >= n and pitch["floats"] % 32 == 16
    # led by as many floats as start each row's interior (x = radius) on a line; none otherwise
    assert pitch["lead"] == (16 - radius) % 16
    assert packed["config"]["row_pitch"]["lead"] == 0 and wide["config"]["row_pitch"]["lead"] == 0
    # planes padded to an odd count of lines too, past the rows they hold
    assert plane["requested"] == "auto" and plane["floats"] % 32 == 16
    assert pitch["floats"] * n <= plane["floats"] < pitch["floats"] * n + 32
    assert packed["config"]["row_pitch"]["floats"] == n and wide["config"]["row_pitch"]["floats"] == 240
    assert packed["config"]["plane_pitch"]["floats"] == n * n
    assert wide["config"]["plane_pitch"]["floats"] == 240 * n + 7
    # next and vel a third and two thirds of a page after prev by default; as given otherwise
    offsets = [rec["config"]["array_offset"] for rec in (default, packed, wide)]
    assert offsets[0]["requested"] == "auto" and offsets[0]["floats"] * 4 == 4096 // 3 // 64 * 64
    assert [o["floats"] for o in offsets[1:]] == [0, 1008]
    for rec in (default, packed, wide):
        assert rec["validation"]["passed"] is True
        assert rec["result"]["norm"] == pytest.approx(packed["result"]["norm"], rel=1e-6)
