"""ISO3DFD at every radius (space order 2R): the stencil as the manifest describes it, --radius through
the executable, `bandwall iso3dfd` and the MPI tool (checked against one process, every radius, under
each dispatch ceiling this CPU allows), the article's command line unchanged at radius 8, the memory
wall in the record, the orders section of the report built from constructed records, and bad input.
The numerics against a reference written apart from the kernels are the native tests'
(native/tests/test_iso3dfd_orders.cpp)."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from bandwall.core import native, records
from bandwall.core.store import Store
from bandwall.kernels import iso3dfd, roofs
from bandwall.mpi import iso3dfd_mpi
from bandwall.report.sections import orders
from bandwall.tune import targets

THREADS = min(2, len(os.sched_getaffinity(0)))


def tool(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [native.executable(iso3dfd.TOOL), *map(str, args)], capture_output=True, text=True, timeout=120
    )


def record(*args) -> dict:
    proc = tool(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return records.validate(json.loads(proc.stdout))


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
    (past a block's last row into the next planes), each checked against the reference with the same
    norm, on every variant this CPU runs; auto says whence its distance came (the table's row for
    this CPU, else the default)."""
    n = 2 * radius + 13
    grid = (40, n, n + 9, 3, 40, 4, 8, "compact", THREADS, "--radius", radius, "--verify")
    norms = set()
    for p in ("none", "1", "3"):
        rec = record(*grid, "--prefetch", p)
        assert rec["validation"]["passed"] and rec["validation"]["checked"]
        pf = rec["config"]["prefetch"]
        assert pf["how"] == "given" and pf["rows_ahead"] == (0 if p == "none" else int(p))
        c = rec["config"]
        assert pf["used"] is (c["radius_path"] == "templated" and "-ring" not in c["row_shape"]["name"])
        norms.add(round(rec["result"]["norm"], 4))
    assert len(norms) == 1
    auto = record(*grid)["config"]["prefetch"]
    assert auto["requested"] == "auto" and auto["how"] in ("table", "default", "tuned")
    if auto["how"] == "default":
        assert auto["rows_ahead"] == (1 if radius > 2 else 0)


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


# A shape of each vector variant other than its compiled default at radius 3 (rows_avx512.cpp and
# rows_avx2.cpp), which the table below names.
TABLE_SHAPES = {"avx512": "4x2-split", "avx2": "4x1"}


@pytest.mark.parametrize("radius", [3, 8])
def test_the_table_of_measured_choices_names_the_shape_per_cpu_and_radius(radius, monkeypatch, tmp_path):
    """A row of the table for this machine's model (forced: any CPU runs it) with a shape for the
    variant at the run's radius: that shape runs, and the record says table and whence; a radius
    the row has no shape for, or a shape the variant lacks, runs the compiled default and says
    why."""
    topo_rec = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in topo_rec["result"]["isa"]["offered"] if i in TABLE_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU (the guests of tests/vm/isa_cases.py run none either)")
    isa = offered[0]
    key = "iso3dfd.rows" if radius == 8 else f"iso3dfd.rows.r{radius}"
    entries = {
        key: {
            "isa": isa,
            "shapes": {isa: {"shape": TABLE_SHAPES[isa], "measured": "2026-01-02", "command": "c"}},
        },
        "iso3dfd.rows.r5": {"isa": isa, "shapes": {isa: {"shape": "9x9"}}},
    }
    table = tmp_path / "choices.json"
    row = {
        "microarch": "AMD Zen 4",
        "cpu": "test",
        "measured": "2026-01-01",
        "command": "t",
        "kernels": entries,
    }
    table.write_text(json.dumps({"rows": [row]}))
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
    monkeypatch.setenv("BANDWALL_MICROARCH", "AMD Zen 4")
    n = 2 * radius + 40
    args = (n, n, n, 2, "auto", "auto", "auto", "compact", 1, "--isa", isa, "--time-block", 1)
    shape = record(*args, "--radius", radius)["config"]["row_shape"]
    assert (shape["how"], shape["name"]) == ("table", TABLE_SHAPES[isa])
    assert "AMD Zen 4" in shape["from"] and key in shape["from"] and "2026-01-02" in shape["from"]
    for other in (5, 6):  # a shape the variant lacks; no entry at all
        m = 2 * other + 40
        shape = record(m, m, m, 2, *args[4:], "--radius", other)["config"]["row_shape"]
        assert shape["how"] == "default" and "has no shape" in shape["from"]
    given = record(*args, "--radius", radius, "--row-shape", "default")["config"]["row_shape"]
    assert given["how"] == "table"  # "default" asks for the default choice, which the table makes


# A shape of each vector variant for the sweeps, other than its step shape at radius 3.
SWEPT_SHAPES = {"avx512": "8x2-ring", "avx2": "2x2-split"}


def test_the_sweeps_run_the_swept_shape_the_table_names(monkeypatch, tmp_path):
    """A row with swept_shapes for the variant at the run's radius: a run that sweeps runs that shape
    in its sweeps (the record says table and whence, and its in-core model is that shape's) and
    checks its answer; --swept-shape same and a name given win over the table; a row without one
    keeps the step shape and says why."""
    topo_rec = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in topo_rec["result"]["isa"]["offered"] if i in SWEPT_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU (the guests of tests/vm/isa_cases.py run none either)")
    isa, radius = offered[0], 3
    swept = {"shape": SWEPT_SHAPES[isa], "measured": "2026-01-03", "command": "c"}
    row = {
        "microarch": "AMD Zen 4",
        "cpu": "test",
        "measured": "2026-01-01",
        "command": "t",
        "kernels": {"iso3dfd.rows.r3": {"isa": isa, "swept_shapes": {isa: swept}}},
    }
    table = tmp_path / "choices.json"
    table.write_text(json.dumps({"rows": [row]}))
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
    monkeypatch.setenv("BANDWALL_MICROARCH", "AMD Zen 4")
    n = 2 * radius + 40
    args = (n, n, n, 6, "auto", "auto", "auto", "compact", 1, "--isa", isa, "--radius", radius)
    rec = record(*args, "--time-block", 3, "--verify")
    shape = rec["config"]["row_shape"]
    assert (shape["swept"]["how"], shape["swept"]["name"]) == ("table", SWEPT_SHAPES[isa])
    assert "iso3dfd.rows.r3" in shape["swept"]["from"] and "2026-01-03" in shape["swept"]["from"]
    assert shape["name"] != SWEPT_SHAPES[isa]
    assert rec["result"]["time_block"] == 3 and rec["validation"]["passed"] is True
    assert rec["result"]["incore_model"].get("shape", SWEPT_SHAPES[isa]) == SWEPT_SHAPES[isa]
    same = record(*args, "--time-block", 3, "--swept-shape", "same")["config"]["row_shape"]
    assert (same["swept"]["how"], same["swept"]["name"]) == ("same", same["name"])
    given = record(*args, "--time-block", 3, "--swept-shape", shape["name"])["config"]["row_shape"]
    assert given["swept"]["how"] == "given"
    m = 2 * 5 + 40
    other = record(m, m, m, *args[3:-1], 5, "--time-block", 1)["config"]["row_shape"]["swept"]
    assert other["how"] == "same" and "no swept shape" in other["from"]


def test_the_blocks_follow_the_share_of_l2_the_table_names(monkeypatch, tmp_path):
    """A row with blocks for the variant at the run's radius: the model's window of prev may fill the
    share of L2 it names, so the y block grows with it, and config.blocks_choice.model says table
    and whence; a share out of range, or no entry, keeps the model's default and says why."""
    topo_rec = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in topo_rec["result"]["isa"]["offered"] if i in SWEPT_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU")
    isa = offered[0]

    def model(share) -> dict:
        row = {
            "microarch": "AMD Zen 4",
            "cpu": "test",
            "measured": "2026-01-01",
            "command": "t",
            "kernels": {
                "iso3dfd.rows.r3": {
                    "isa": isa,
                    "blocks": {isa: {"l2_share": share, "measured": "2026-01-04"}},
                }
            },
        }
        table = tmp_path / "choices.json"
        table.write_text(json.dumps({"rows": [row]}))
        monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
        monkeypatch.setenv("BANDWALL_MICROARCH", "AMD Zen 4")
        monkeypatch.setenv("BANDWALL_CACHES", "L2=1M,L3=32M")
        rec = record(262, 134, 46, 2, "auto", "auto", "auto", "compact", 1, "--isa", isa, "--radius", 3)
        return rec["config"]["blocks_choice"]["model"]

    default, wide = model("none"), model(2.0)
    assert (default["l2_share"], default["l2_share_how"]) == (0.5, "default")
    assert "no L2 share" in default["l2_share_from"]
    assert (wide["l2_share"], wide["l2_share_how"]) == (2.0, "table")
    assert "iso3dfd.rows.r3" in wide["l2_share_from"] and "2026-01-04" in wide["l2_share_from"]
    assert wide["blocks"][1] > default["blocks"][1] and "200% of the" in wide["why"]
    assert model(9.0)["l2_share_how"] == "default"


@pytest.mark.parametrize("team", ["slabs", "shared"])
def test_the_sweep_team_the_table_names_runs_by_default(team, monkeypatch, tmp_path):
    """A row with teams for the variant at the run's radius: --sweep-team auto on one NUMA node takes
    that team (config.time_block says table and whence) and checks its answer; --sweep-team given
    wins; a row without one leaves the choice to the model and says so."""
    topo_rec = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in topo_rec["result"]["isa"]["offered"] if i in SWEPT_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU")
    isa = offered[0]
    entry = {"isa": isa, "teams": {isa: {"team": team, "measured": "2026-01-06"}}}
    row = {"microarch": "AMD Zen 4", "cpu": "t", "measured": "2026-01-01", "command": "t"}
    table = tmp_path / "choices.json"
    table.write_text(json.dumps({"rows": [{**row, "kernels": {"iso3dfd.rows.r1": entry}}]}))
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
    monkeypatch.setenv("BANDWALL_MICROARCH", "AMD Zen 4")
    monkeypatch.setenv("BANDWALL_CACHES", "L2=1M,L3=32M")
    threads = min(2, len(os.sched_getaffinity(0)))  # a user given one CPU runs the suite too
    grid = (66, 66, 66, 8, "auto", "auto", "auto", "compact", threads)
    args = (*grid, "--isa", isa, "--radius", 1, "--time-block", 4)
    rec = record(*args, "--verify")
    tb = rec["config"]["time_block"]
    if "several NUMA nodes" in tb.get("team_why", ""):
        pytest.skip("the table's team applies on one NUMA node")
    assert (tb["team_how"], tb["teams_considered"]) == ("table", team), tb
    assert "iso3dfd.rows.r1" in tb["team_from"] and "2026-01-06" in tb["team_from"]
    assert rec["validation"]["passed"] is True
    other = "shared" if team == "slabs" else "slabs"
    given = record(*args, "--sweep-team", other)["config"]["time_block"]
    assert given["teams_considered"] == other and "team_how" not in given
    m = 2 * 2 + 62
    none = record(m, m, m, *grid[3:], "--isa", isa, "--radius", 2, "--time-block", 4)["config"]["time_block"]
    assert none["team_how"] == "model" and "no team" in none["team_from"]


def write_sweeps_table(table, isa: str, depth: int | None, slower: bool = False) -> None:
    """A table of one row (AMD Zen 4) whose entry at radius 1 says of sweeps for variant isa: depth
    (None: no entry), slower."""
    sweeps = {isa: {"depth": depth, "slower": slower, "measured": "2026-01-07", "decision": {"why": "w"}}}
    kernels = {} if depth is None else {"iso3dfd.rows.r1": {"isa": isa, "sweeps": sweeps}}
    row = {"microarch": "AMD Zen 4", "cpu": "t", "measured": "2026-01-01", "command": "t", "kernels": kernels}
    table.write_text(json.dumps({"rows": [row]}))


def sweeps_table_run(isa: str, radius: int = 1, *more) -> dict:
    n = 2 * radius + 64
    rec = record(
        n, n, n, 40, "auto", "auto", "auto", "compact", THREADS, "--isa", isa, "--radius", radius, *more
    )
    assert rec["validation"]["passed"] is True
    return rec["config"]["time_block"]


@pytest.fixture
def sweeps_table(monkeypatch, tmp_path):
    """The variant to run (skips without a vector one) and the path of a table of measured choices
    the runs read, on a Zen 4 model of caches."""
    topo_rec = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in topo_rec["result"]["isa"]["offered"] if i in SWEPT_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU")
    table = tmp_path / "choices.json"
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
    monkeypatch.setenv("BANDWALL_MICROARCH", "AMD Zen 4")
    monkeypatch.setenv("BANDWALL_CACHES", "L2=256K,L3=32M")
    return offered[0], table


@pytest.mark.parametrize("entry", ["slower", "the proposal", "within noise", "another depth"])
def test_the_table_says_whether_sweeps_pay_and_a_round_a_run_checks_it(
    entry, sweeps_table, monkeypatch, tmp_path, run_bandwall
):
    """A row with sweeps for the variant at the run's radius: sweeps slower there (depth 1, slower)
    and --time-block auto runs step by step without a race; the depth the run's model proposes (it
    paid there) and the run sweeps at it from the first step, spending one round of a race on its
    own steps to check it (one round alone decides nothing: the depth stands); both say table and
    whence. Depth 1 within noise, or another depth, leaves the race to run as before
    (config.time_block.table cites the entry); --time-block measure races whatever the row says; a
    radius without an entry races as before."""
    isa, table = sweeps_table
    write_sweeps_table(table, isa, None)
    measured = sweeps_table_run(isa, 1, "--time-block", "measure")
    proposed = measured["proposal"]["depth"]
    assert proposed > 1 and measured["how"] != "table" and "race" in measured, measured  # a race would run
    depth = {"slower": 1, "the proposal": proposed, "within noise": 1, "another depth": proposed + 1}[entry]
    write_sweeps_table(table, isa, depth, slower=entry == "slower")
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "checks"))  # no earlier round to pool with
    tb = sweeps_table_run(isa)
    if entry in ("within noise", "another depth"):
        assert tb["how"] != "table" and "race" in tb and tb["table"]["depth"] == depth, tb
        assert "iso3dfd.rows.r1" in tb["table"]["from"] and "2026-01-07" in tb["table"]["from"]
    else:
        assert (tb["depth"], tb["how"]) == (depth, "table") and "race" not in tb, tb
        assert "iso3dfd.rows.r1" in tb["why"] and "2026-01-07" in tb["why"] and ": w" in tb["why"]
        if entry == "slower":
            assert "check" not in tb
        else:
            check = tb["check"]
            assert check["ran"] and (check["rounds"], check["runs"], check["settled"]) == (1, 1, False), check
            assert set(check["this_run"]) == {"1", str(depth)} and "undecided" in check["why"]
            # the view says so, with this run's round
            monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "view"))
            n = 66
            proc = run_bandwall(
                "iso3dfd", "--grid", f"{n}x{n}x{n}", "--iters", 40, "--radius", 1, "--isa", isa,
                "--threads", THREADS, "--no-roofline", "--db", tmp_path / "v.db",
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            assert "the table's depth checked: this run's round step by step " in proc.stdout
            assert "1 round(s) of 1 run(s): undecided over 1 round(s)" in proc.stdout
    again = sweeps_table_run(isa, 1, "--time-block", "measure")
    assert again["how"] != "table" and "race" in again and "check" not in again
    other = sweeps_table_run(isa, 2)
    assert other["how"] != "table" and "table" not in other


@pytest.mark.parametrize("outcome", ["faster", "slower"])
def test_the_checks_of_a_table_depth_keep_it_or_go_step_by_step(outcome, sweeps_table, monkeypatch, tmp_path):
    """The rounds the checks of a table's depth kept under the run's key are decided on with this
    run's own: sweeps faster beyond noise keep the depth as confirmed, and the next run takes it from
    the cache; slower beyond noise send this run step by step from there, and the next run too. The
    kept rounds (19, one short of the rounds that settle) are a billion times apart, so that one round
    of this machine's cannot move the pooled verdict."""
    isa, table = sweeps_table
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "checks"))
    write_sweeps_table(table, isa, None)
    measured = sweeps_table_run(isa, 1, "--time-block", "measure")
    depth, key = measured["proposal"]["depth"], measured["cache_key"]
    files = list((tmp_path / "checks").rglob("time-blocks-*.json"))
    assert len(files) == 1
    stored = json.loads(files[0].read_text())["choices"][key]
    fast, slow = [1e9] * 19, [1.0] * 19
    singles, sweeps = (slow, fast) if outcome == "faster" else (fast, slow)
    entry = {
        "depth": depth,
        "team": stored["team"],
        "raced": depth,
        "decisive": False,
        "runs": 3,
        "cpu": stored["cpu"],
        "why": "a test's checks",
        "race": {"rates": {"1": singles, str(depth): sweeps}},
    }
    files[0].write_text(json.dumps({"choices": {key: entry}}))
    write_sweeps_table(table, isa, depth)
    tb = sweeps_table_run(isa)
    assert tb["how"] == "table" and tb["check"]["runs"] == 4, tb
    assert tb["check"]["settled"] is True and tb["check"]["rounds"] == 20
    kept = json.loads(files[0].read_text())["choices"][key]
    assert kept["decisive"] is True and kept["runs"] == 4
    nxt = sweeps_table_run(isa)
    if outcome == "faster":
        assert tb["depth"] == depth and (kept["depth"], kept["races"]) == (depth, 2)
        assert (nxt["how"], nxt["depth"]) == ("cached", depth)
    else:
        assert tb["depth"] == 1 and "depth 1 from here on" in tb["why"] and kept["depth"] == 1
        assert (nxt["how"], nxt["depth"]) == ("cached", 1)


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
    plane spans an odd count of lines (config.plane_pitch); packed rows and planes, and pitches given
    (a plane's off a line), run the same wavefield, exact against the reference."""
    n = 30 + 2 * radius
    args = (n, n, n, 6, "auto", "auto", "auto", "compact", THREADS, "--radius", radius, "--verify")
    default = record(*args)
    packed = record(*args, "--row-pitch", "packed", "--plane-pitch", "packed")
    wide = record(*args, "--row-pitch", 3 * 16 * 5, "--plane-pitch", 240 * n + 7)
    pitch, plane = default["config"]["row_pitch"], default["config"]["plane_pitch"]
    assert pitch["requested"] == "auto" and pitch["floats"] >= n and pitch["floats"] % 32 == 16
    # planes padded to an odd count of lines too, past the rows they hold
    assert plane["requested"] == "auto" and plane["floats"] % 32 == 16
    assert pitch["floats"] * n <= plane["floats"] < pitch["floats"] * n + 32
    assert packed["config"]["row_pitch"]["floats"] == n and wide["config"]["row_pitch"]["floats"] == 240
    assert packed["config"]["plane_pitch"]["floats"] == n * n
    assert wide["config"]["plane_pitch"]["floats"] == 240 * n + 7
    for rec in (default, packed, wide):
        assert rec["validation"]["passed"] is True
        assert rec["result"]["norm"] == pytest.approx(packed["result"]["norm"], rel=1e-6)


def test_a_shape_the_tune_kept_runs_by_default_on_this_machine():
    """A shape bandwall tune settled beyond noise is kept in the cache folder for its radius and
    variant: later runs take it (how: tuned) before the table's or the compiled default; a tie keeps
    nothing; the default winning keeps nothing either."""
    from bandwall.core import choices
    from bandwall.tune.targets import Iso3dfdTarget

    topo_rec = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    offered = [i for i in topo_rec["result"]["isa"]["offered"] if i in TABLE_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU")
    isa, radius = offered[0], 3
    target = Iso3dfdTarget("iso3dfd", "MPoints/s")
    row = {"median": 1000.0, "rounds": 5, "summary": {"variant_key": "iso3dfd.rows.r3", "isa": isa}}
    best = {"shape": TABLE_SHAPES[isa], "isa": isa}
    assert "not kept" in target.settled(best, row, decided=False)
    assert not choices.shapes_path().exists()
    assert target.settled({**best, "shape": targets.DEFAULT_SHAPE}, row, decided=True) is None
    assert "later runs" in target.settled(best, row, decided=True)
    (kept,) = choices.shape_rows()
    assert (kept["kernel"], kept["isa"], kept["shape"]) == ("iso3dfd.rows.r3", isa, TABLE_SHAPES[isa])
    assert "1000 MPoints/s" in kept["why"] and kept["measured"]
    n = 2 * radius + 40
    args = (
        n,
        n,
        n,
        2,
        "auto",
        "auto",
        "auto",
        "compact",
        1,
        "--isa",
        isa,
        "--time-block",
        1,
        "--radius",
        radius,
    )
    shape = record(*args)["config"]["row_shape"]
    assert (shape["how"], shape["name"]) == ("tuned", TABLE_SHAPES[isa])
    assert "bandwall tune" in shape["from"]
    other = record(n + 2, n, n, *args[3:-1], 5)["config"]["row_shape"]  # another radius: not kept there
    assert other["how"] in ("table", "default")
    choices.keep_row_kernel("iso3dfd.rows.r3", isa, None, "", "")
    assert record(*args)["config"]["row_shape"]["how"] in ("table", "default")
    # a prefetch distance alone: kept beside the shape the run takes anyway
    best = {"shape": targets.DEFAULT_SHAPE, "prefetch": "2", "isa": isa}
    assert "a prefetch of 2 rows ahead not kept" in target.settled(best, row, decided=False)
    assert "later runs" in target.settled(best, row, decided=True)
    (kept,) = choices.shape_rows()
    assert (kept["prefetch"], kept["shape"]) == (2, "")
    c = record(*args)["config"]
    assert (c["prefetch"]["how"], c["prefetch"]["rows_ahead"]) == ("tuned", 2)
    assert c["row_shape"]["how"] in ("table", "default")
    choices.keep_row_kernel("iso3dfd.rows.r3", isa, None, "", "")
