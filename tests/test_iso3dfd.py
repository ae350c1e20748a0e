"""`bandwall iso3dfd` and bandwall-iso3dfd: the record and its schema, the seed's text lines, the
norm's invariance, --verify catching a perturbed kernel, the ablation and bad input (the roofline:
test_iso3dfd_roofline.py)."""

from __future__ import annotations

import json
import math
import subprocess

import pytest

import thp
from bandwall.core import native, records
from bandwall.core.store import Store
from bandwall.kernels import iso3dfd
from iso3dfd_tool import THREADS, tool
from iso3dfd_tool import record as tool_record

SMALL = ["--grid", "37x29x41", "--iters", "6", "--blocks", "13x7x9", "--no-roofline"]
# Two threads where the machine gives two (a team, not one thread), else one.
FAULT_ENV = "BANDWALL_ISO3DFD_FAULT"
# Why a record may lack the timing of its kernel in L2 on some CPU (iso3dfd/in_l2.cpp's words).
IN_L2_UNAVAILABLE = (
    "the L2 size of this core is unknown",
    "no block of these rows fits in half of L2 with whole vectors",
)


def cli_json(run_bandwall, *args) -> dict | list:
    proc = run_bandwall("iso3dfd", "--format", "json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def offered_isas() -> list[str]:
    proc = subprocess.run([native.executable("bandwall-topo")], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)["result"]["isa"]["offered"]


@pytest.mark.parametrize("isa", ["avx512", "avx2", "generic"])
def test_each_isa_matches_the_reference_or_is_refused(isa):
    """Every row-kernel variant through the executable, 2 threads, against the plain reference; one
    this CPU lacks is refused with exit 2 (its register-block shapes are in the native tests)."""
    args = [37, 29, 41, 5, 13, 7, 9, "compact", THREADS, "--isa", isa, "--verify"]
    if isa not in offered_isas():
        proc = tool(*args)
        assert proc.returncode == 2 and "not supported by this CPU" in proc.stderr, proc.stderr
        pytest.skip(f"this CPU lacks {isa}: refused with exit 2 as it must be")
    rec = tool_record(*args)
    assert rec["config"]["isa"] == isa and rec["config"]["isa_requested"] == isa
    assert rec["validation"]["passed"] and rec["validation"]["checked"]
    model = rec["result"]["incore_model"]
    if isa == "generic":
        assert "unavailable" in model
    else:
        assert model["lanes"] == (16 if isa == "avx512" else 8)
        assert model["points_per_cycle_per_core"] == pytest.approx(
            model["lanes"] / model["cycles_per_vector"]
        )
        # the kernel itself in L2, checked against the generic loops, unless hwloc knows no L2 size or
        # half of this core's L2 holds no block of radius 8's halos (the native tests time it on an
        # L2 of their own)
        k = model["kernel_in_l2"]
        if "unavailable" in k:
            assert k["unavailable"] in IN_L2_UNAVAILABLE, k
        else:
            assert k["checked"] and k["max_rel_difference"] <= 1e-5 and k["mpoints_per_s_per_core"] > 0, k
            assert k["bytes"] <= k["l2_bytes"] / 2


@pytest.mark.parametrize("shape", ["default", "8x2-ring", "5x1-ring-x81"])
def test_register_shape_matches_the_reference_and_is_recorded(shape, monkeypatch, tmp_path):
    """--row-shape runs the shape named (a ring: the second pass marching along z), checked against
    the plain reference; its bytes from L2 in the record's model are below the compiled default's,
    and at the default's x part its loads a vector too. The table of measured choices is empty, so
    the default is the compiled one on any CPU (a CPU's row may name another: test_iso3dfd_table)."""
    if "avx512" not in offered_isas():
        pytest.skip("the ring shapes are AVX-512's (32 registers); this CPU lacks it")
    empty = tmp_path / "no-rows.json"
    empty.write_text(json.dumps({"about": "no rows: the compiled defaults", "rows": []}))
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(empty))
    args = [37, 29, 41, 5, 13, 7, 9, "compact", THREADS, "--isa", "avx512", "--row-shape", shape, "--verify"]
    rec = tool_record(*args)
    assert rec["validation"]["passed"] and rec["validation"]["checked"]
    assert rec["config"]["row_shape"]["requested"] == shape
    model = rec["result"]["incore_model"]
    if shape == "default":
        assert rec["config"]["row_shape"]["name"] == model["shape"] == "4x2-split"
        assert rec["config"]["row_shape"]["how"] == "default"
        return
    assert rec["config"]["row_shape"]["name"] == model["shape"] == shape and model["ring"]
    # without --isa the shape picks its variant, said in the record, with nothing raced
    auto = tool_record(37, 29, 41, 5, 13, 7, 9, "compact", THREADS, "--row-shape", shape)
    assert auto["config"]["isa"] == "avx512" and "widest this CPU runs" in auto["config"]["row_shape"]["why"]
    assert auto["config"]["isa_choice"]["how"] == "forced"
    default = tool_record(37, 29, 41, 5, 13, 7, 9, "compact", THREADS, "--isa", "avx512")
    fills = rec["result"]["traffic_model"]["l1_fills"]
    assert fills["bytes_per_point"] < default["result"]["traffic_model"]["l1_fills"]["bytes_per_point"]
    if shape == "8x2-ring":
        # the same x part: fewer z loads a vector (the 5x1 shape loads two x pairs instead)
        assert model["per_vector"]["loads"] < default["result"]["incore_model"]["per_vector"]["loads"]


def test_auto_isa_is_offered_and_says_how():
    """auto: by speed (docs/guides/variants.md); the widest only when nothing was measured."""
    rec = tool_record(37, 29, 41, 1, 13, 7, 9, "compact", 1)
    c = rec["config"]
    assert c["isa_requested"] == "auto" and c["isa"] == c["isa_choice"]["isa"] and c["isa"] in offered_isas()
    if c["isa_choice"]["how"] == "model":
        assert c["isa"] == offered_isas()[0]


@pytest.mark.parametrize(
    "grid, threads, mode",
    [
        # 64 planes of 64 KiB: 2 threads own 4 MiB each, cut on a huge-page boundary
        pytest.param((128, 128, 128), 2, "huge pages whole to one thread", marks=pytest.mark.cpus(2)),
        # 160 planes of 36 KiB cut after plane 80: inside a huge page, which gets base pages
        pytest.param(
            (96, 96, 160),
            2,
            "base pages in the huge pages that thread parts share",
            marks=pytest.mark.cpus(2),
        ),
        pytest.param(
            (37, 29, 41),
            2,
            "base pages throughout: a thread's part is smaller than a huge page",
            marks=pytest.mark.cpus(2),
        ),
        ((37, 29, 41), 1, "huge pages whole to one thread"),
    ],
)
def test_first_touch_page_split_is_recorded(grid, threads, mode):
    # rows and planes packed, so that the planes are the sizes above, and the arrays at their
    # pages' start, so that a cut on a huge-page boundary in one is in all three
    packed = ("--row-pitch", "packed", "--plane-pitch", "packed", "--array-offset", "0")
    rec = tool_record(*grid, 1, grid[0], 16, 16, "compact", threads, *packed)
    split = rec["placement"]["page_split"]
    assert split["mode"] == mode
    # one huge page a cut falls inside, in each of the three arrays
    assert split["huge_pages_split"] == (3 if mode.startswith("base pages in") else 0)
    assert (
        tool_record(*grid, 1, grid[0], 16, 16, "compact", threads, "--init", "serial", *packed)["placement"][
            "page_split"
        ]["mode"]
        == "serial"
    )


@pytest.mark.cpus(2)
def test_arrays_offset_from_one_another_split_the_huge_page_their_cut_falls_in():
    """By default next and vel start a third and two thirds of a page after prev (config.array_offset):
    where the two threads' cut falls on a huge-page boundary in prev (64 planes of 64 KiB), it falls
    inside one in next and in vel, and those two huge pages get base pages; the record counts the
    three arrays'."""
    packed = ("--row-pitch", "packed", "--plane-pitch", "packed")
    split = tool_record(128, 128, 128, 1, 128, 16, 16, "compact", 2, *packed)["placement"]["page_split"]
    assert split["mode"] == "base pages in the huge pages that thread parts share"
    assert split["huge_pages_split"] == 2


def test_record_fields_and_schema(run_bandwall, tmp_path):
    db = tmp_path / "r.db"
    rec = cli_json(run_bandwall, *SMALL, "--threads", THREADS, "--verify", "--db", db)
    records.validate(rec)
    assert rec["tool"] == "iso3dfd"
    r, c = rec["result"], rec["config"]
    assert (c["n1"], c["n2"], c["n3"], c["nb_iter"]) == (37, 29, 41, 6)
    assert (c["n1_block"], c["n2_block"], c["n3_block"]) == (13, 7, 9)
    assert r["flops_per_point"] == 61 and r["bytes_per_point"] >= 16
    assert r["interior_points"] == 21 * 13 * 25
    assert r["mpoints_per_s"] > 0 and r["time_s"] > 0 and r["cpu_s"] >= 0
    assert r["gflops"] == pytest.approx(r["mpoints_per_s"] * 61 / 1e3)
    assert r["mpoints_per_s"] == pytest.approx(r["interior_points"] * 6 / r["time_s"] / 1e6)
    assert r["norm"] > 0
    v = rec["validation"]
    assert v["passed"] and v["checked"] and v["max_rel_error"] <= v["tolerance"]
    pm = rec["placement"]["page_map"]
    assert set(pm) == {"prev", "next", "vel"}
    for shares in pm.values():
        assert sum(shares.values()) == pytest.approx(1.0)
    assert rec["provenance"]["threads"] == THREADS
    with Store(db) as s:
        stored = s.list(tool="iso3dfd")
    assert len(stored) == 1 and stored[0]["result"]["norm"] == r["norm"]


@pytest.mark.parametrize("pages", [None, "huge", "base", "system"])
def test_pages_are_asked_for_granted_and_leave_the_result_alone(pages):
    # 128^3 floats: arrays of 8 MiB, each thread's part 4 MiB and cut on a huge-page boundary, so
    # first-touch keeps huge pages (parts smaller than a huge page would get base pages).
    extra = [] if pages is None else ["--pages", pages]
    rec = tool_record(128, 128, 128, 2, 128, 24, 128, "compact", THREADS, *extra)
    want = pages or "huge"
    assert rec["config"]["pages"] == want and rec["placement"]["pages"] == want
    shares = rec["placement"]["huge_page_share"]
    assert set(shares) == {"prev", "next", "vel"}
    expect = thp.granted(want)
    if expect is None:
        pytest.skip("no transparent huge page setting on this machine")
    for share in shares.values():
        assert (share > 0) if expect else (share == 0), (want, thp.mode(), shares)
    if pages == "base":
        return
    base = tool_record(128, 128, 128, 2, 128, 24, 128, "compact", THREADS, "--pages", "base")
    assert rec["result"]["norm"] == pytest.approx(base["result"]["norm"], rel=1e-6)


def test_seed_text_lines():
    proc = tool(40, 36, 44, 3, 24, 5, 7, "compact", 1)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    head = dict(kv.split("=") for kv in lines[0].split())
    assert head == {"n1": "40", "n2": "36", "n3": "44", "nreps": "3", "num_threads": "1", "HALF_LENGTH": "8"}
    blocks = dict(kv.split("=") for kv in lines[1].split())
    assert blocks == {"n1_thrd_block": "24", "n2_thrd_block": "5", "n3_thrd_block": "7"}
    words = lines[2].split()
    assert words[:6] == ["allocating", "prev,", "next", "and", "vel:", "total"] and words[7] == "Mbytes"
    # rows padded to 48 floats (three 64-byte lines)
    assert float(words[6]) == pytest.approx(3 * 48 * 36 * 44 * 4 / 2**20, abs=0.05)
    assert set(lines[3]) == {"-"}
    values = {ln.split(":")[0]: ln.split()[1:] for ln in lines[4:7]}
    assert (
        values["time"][1] == "sec"
        and values["throughput"][1] == "MPoints/s"
        and values["flops"][1] == "GFlops"
    )
    mp, gf = float(values["throughput"][0]), float(values["flops"][0])
    assert mp > 0 and gf == pytest.approx(mp * 61 / 1e3, abs=0.01)
    assert len(lines) == 7


def norm(*args) -> float:
    return tool_record(37, 29, 41, 7, *args)["result"]["norm"]


def test_norm_is_invariant():
    base = norm(37, 29, 41, "none", 1, "--kernel", "reference")
    for args in [
        (13, 7, 9, "compact", 1),
        (5, 3, 2, "compact", THREADS, "--schedule", "dynamic"),
        (21, 1, 6, "scatter", THREADS, "--init", "serial"),
        (37, 29, 41, "none", THREADS, "--placement", "serial"),
    ]:
        assert norm(*args) == pytest.approx(base, rel=1e-6), args


def test_zero_steps_give_the_source_norm():
    # 52x56x30 holds the seed's nested cubes (sides 10, 8, 6, 4, 2 of 1, 10, 100, 1e3, 1e4) unclipped.
    rec = tool_record(52, 56, 30, 0, 52, 8, 8, "compact", 1)
    sides, values = [10, 8, 6, 4, 2, 0], [1, 10, 100, 1e3, 1e4]
    expected = math.sqrt(sum((sides[i] ** 3 - sides[i + 1] ** 3) * values[i] ** 2 for i in range(5)))
    assert rec["result"]["norm"] == pytest.approx(expected, rel=1e-12)
    assert rec["result"]["mpoints_per_s"] == 0


def test_verify_fails_on_a_perturbed_kernel_and_stores_nothing(run_bandwall, tmp_path):
    db = tmp_path / "f.db"
    proc = run_bandwall("iso3dfd", *SMALL, "--verify", "--db", db, env={FAULT_ENV: "1"})
    assert proc.returncode == 1
    assert "verification failed" in proc.stderr and "Traceback" not in proc.stderr
    assert "throughput" not in proc.stdout
    assert not db.exists() or Store(db).list() == []


def test_every_run_checks_itself_and_a_perturbed_kernel_stores_nothing(run_bandwall, tmp_path):
    """Without --verify, every run recomputes a sample of its last step with the scalar formula."""
    db = tmp_path / "s.db"
    rec = cli_json(run_bandwall, *SMALL, "--db", db)
    sc = rec["validation"]["self_check"]
    assert sc["checked"] is True and sc["passed"] is True and sc["wrong"] == 0
    assert 100 <= sc["points"] <= 600 and sc["max_rel_error"] <= sc["tolerance"]
    # The run checked itself, and its record says so at the top level (--verify compares the whole field).
    assert rec["validation"]["checked"] is True and rec["validation"]["passed"] is True
    assert rec["validation"]["method"].startswith("self-check")
    proc = run_bandwall("iso3dfd", *SMALL, "--db", db, env={FAULT_ENV: "1"})
    assert proc.returncode == 1, proc.stderr
    assert "self-check failed" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""
    with Store(db) as s:
        assert len(s.list()) == 1  # only the good run
    proc = tool(37, 29, 41, 3, 13, 7, 9, "compact", 1, "--json", env={FAULT_ENV: "1"})
    assert proc.returncode == 1 and proc.stdout == "" and "self-check failed" in proc.stderr
    # Zero steps have no last step to check; the record says so (and that the fault was injected).
    rec = json.loads(tool(37, 29, 41, 0, 13, 7, 9, "compact", 1, "--json", env={FAULT_ENV: "1"}).stdout)
    assert rec["config"]["fault_injected"] is True and rec["validation"]["self_check"]["checked"] is False


def test_ablation_runs_the_four_variants(run_bandwall, tmp_path):
    db = tmp_path / "a.db"
    recs = cli_json(run_bandwall, *SMALL, "--threads", THREADS, "--ablation", "--db", db)
    assert [(r["config"]["init"], r["config"]["schedule"]) for r in recs] == iso3dfd.ablation_variants()
    assert len({round(r["result"]["norm"], 3) for r in recs}) == 1
    for r in recs:
        records.validate(r)
        assert set(r["placement"]["page_map"]) == {"prev", "next", "vel"}
    with Store(db) as s:
        assert len(s.list(tool="iso3dfd")) == 4


BAD_CLI = [
    (["--grid", "16x29x41"], "n1 '16' is below the minimum 17"),
    (["--grid", "37x29x12"], "n3 '12' is below the minimum 17"),
    (["--grid", "37x29"], "not three whole numbers"),
    (["--grid", "37xabcx41"], "not three whole numbers"),
    (["--grid", "-37x29x41"], "not three whole numbers"),
    (["--blocks", "0x7x9"], "n1_block must be at least 1"),
    (["--blocks", "13x30x9"], "n2_block 30 is larger than n2 29"),
    (["--blocks", "13x7"], "not three whole numbers"),
    (["--threads", "0"], "0 is not in the range x>=1"),
    (["--threads", "-2"], "-2 is not in the range x>=1"),
    (["--threads", "4097"], "4097 threads asked for but"),
    (["--threads", "two"], "'two' is not a valid integer"),
    (["--iters", "-1"], "-1 is not in the range"),
    (["--bind", "sideways"], "unknown binding 'sideways' (use compact, scatter, spread"),
    (["--bind", ""], "'--bind': is empty"),
    (["--cpus", "S0:7"], "CPU list 'S0:7'"),
    (["--cpus", "0,0"], "names CPU 0 twice"),
    pytest.param(
        ["--cpus", "0-1", "--threads", "3"],
        "3 threads asked for but CPU list '0-1' has only 2 CPUs",
        marks=pytest.mark.cpus(ids=(0, 1)),
    ),
    (["--cpus", "0", "--ranks", "1", "--rank-bind", "core"], "both place the ranks: give one"),
    (["--init", "parallel"], "'parallel' is not one of"),
    (["--schedule", "guided"], "'guided' is not one of"),
    (["--placement", "nowhere"], "unknown placement 'nowhere'"),
    (["--placement", "bind:9"], "NUMA node 9 in placement 'bind:9' does not exist"),
    (["--placement", "interleave:0,7"], "NUMA node 7"),
    (["--grid", "5000x5000x5000", "--blocks", "16x16x16"], "needs 1.4 TiB but only"),
    (["--grid", ""], "'--grid': is empty"),
    (["--blocks", ""], "'--blocks': is empty"),
    (["--placement", ""], "'--placement': is empty"),
    (["--pages", "giant"], "'giant' is not one of"),
    (["--isa", "sse9"], "'sse9' is not one of"),
    (
        ["--time-block", "0"],
        "--time-block '0' must be auto, measure or a whole number from 1 to 64",
    ),
    (["--time-block", "65"], "--time-block '65' must be auto, measure or a whole number"),
    (["--time-block", "deep"], "--time-block 'deep' must be auto, measure or a whole number"),
    (["--time-block", ""], "--time-block '' must be auto, measure or a whole number"),
    (
        ["--time-block", "3", "--ranks", "2"],
        "fewer than the halo of 24 its neighbours need for sweeps of 3 steps",
    ),
    (
        ["--row-shape", "9x9", "--isa", "generic"],
        "--row-shape 9x9 is not a register shape of the generic row kernel",
    ),
    (["--row-shape", "8x2-ring", "--ranks", "2"], "--row-shape chooses the row kernel of one process"),
    (["--row-shape", ""], "'--row-shape': is empty"),
    (["--prefetch", "2", "--ranks", "2"], "--prefetch chooses the row kernel of one process"),
    (["--swept-shape", "8x2-ring", "--ranks", "2"], "--swept-shape chooses the row kernel of one process"),
    (["--swept-shape", ""], "'--swept-shape': is empty"),
    (["--prefetch", ""], "'--prefetch': is empty"),
    (["--row-pitch", "auto", "--ranks", "2"], "--row-pitch lays out the arrays of one process"),
    (["--row-pitch", ""], "'--row-pitch': is empty"),
    (["--row-pitch", "wide"], "--row-pitch 'wide' must be auto, packed or a number of floats from n1"),
    (["--row-pitch", "3"], "--row-pitch 3 is below n1"),
    (["--plane-pitch", "auto", "--ranks", "2"], "--plane-pitch lays out the arrays of one process"),
    (["--plane-pitch", ""], "'--plane-pitch': is empty"),
    (["--plane-pitch", "tall"], "--plane-pitch 'tall' must be auto, packed or a number of floats"),
    (["--plane-pitch", "16"], "--plane-pitch 16 is below the row pitch x n2"),
    (["--array-offset", "0", "--ranks", "2"], "--array-offset lays out the arrays of one process"),
    (["--array-offset", ""], "'--array-offset': is empty"),
    (
        ["--array-offset", "17"],
        "--array-offset '17' must be auto or a number of floats from 0 to 1008, a multiple of 16",
    ),
    (["--array-offset", "page"], "--array-offset 'page' must be auto or a number of floats"),
    (["--prefetch", "far"], "--prefetch far: expected auto, measure, compiled, none or a number of rows 0-8"),
    (["--sweep-team", "both"], "'both' is not one of"),
    (["--tile-cache", "L4"], "'L4' is not one of"),
    (["--tile-cache", "L2", "--ranks", "2"], "--tile-cache L2: over MPI ranks each rank's sweeps take"),
    (["--sweep-team", "shared", "--ranks", "2"], "--sweep-team shared: over MPI ranks each rank's sweeps"),
    pytest.param(
        ["--time-block", "3", "--threads", "2", "--sweep-team", "slabs"],
        "--time-block 3 needs thicker slabs than 2 threads have in 25 interior planes (at most 2 here; the team",
        marks=pytest.mark.cpus(ids=(0, 1)),
    ),
]


@pytest.mark.parametrize("args,fragment", BAD_CLI)
def test_bad_input_cli(run_bandwall, args, fragment, tmp_path):
    opts = dict(zip(SMALL[0::2], SMALL[1::2]))
    opts.update(zip(args[0::2], args[1::2]))
    argv = [x for kv in opts.items() for x in kv if x != "--no-roofline"] + [
        "--no-roofline",
        "--db",
        tmp_path / "b.db",
    ]
    proc = run_bandwall("iso3dfd", *argv)
    assert proc.returncode == 2, proc.stderr
    assert fragment in proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert not (tmp_path / "b.db").exists() or Store(tmp_path / "b.db").list() == []


BAD_NATIVE = [
    ([37, 29, 41, 3, 13, 7, 9, "sideways"], "unknown binding 'sideways'"),
    ([37, 29, 41, 3, 13, 7, 9, "compact", "--bind", "scatter"], "the affinity is given twice"),
    ([37, 29, 41, 3, 13, 7, 9, "compact", 1, "--threads", "2"], "the thread count is given twice"),
    ([37, 29, 41, 3, 13, 7, 9, "compact", 0], "nb_threads '0' is out of range"),
    ([37, 29, 41, "x", 13, 7, 9], "nb_iter 'x' is not a whole number"),
    ([37, 29, 41, -3, 13, 7, 9], "nb_iter '-3' is out of range"),
    ([37, 29, 4.5, 3, 13, 7, 9], "n3 '4.5' is not a whole number"),
    ([37, 29, 41, 3, 13, 7], "got 6 positional arguments"),
    ([37, 29, 41, 3, 13, 7, 9, "compact", 1, "--init", "lazy"], "unknown init 'lazy'"),
    ([37, 29, 41, 3, 13, 7, 9, "compact", 1, "--kernel", "fast"], "unknown kernel 'fast'"),
    ([37, 29, 41, 3, 13, 7, 42], "n3_block 42 is larger than n3 41"),
    ([37, 29, 41, 3, 13, 7, 9, "compact", 1, "--bogus"], "--bogus"),
    ([37, 29, 41, 3, 13, 7, 9, "compact", 1, "--pages", "giant"], "unknown page size 'giant'"),
    ([37, 29, 41, 3, 13, 7, 9, "compact", 1, "--pages", ""], "--pages is empty"),
    ([37, 29, 41, 3, 13, 7, 9, ""], "affinity '' is empty"),
    ([37, 29, 41, "", 13, 7, 9], "nb_iter '' is not a whole number"),
    ([37, 29, 41, 3, 13, 7, 9, "compact", 1, "--isa", "sse9"], "unknown isa 'sse9'"),
    ([37, 29, 41, 3, 13, 7, 9, "compact", 1, "--isa", ""], "--isa is empty"),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--time-block", "x"],
        "--time-block 'x' must be auto, measure or a",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--time-block", "0"],
        "--time-block '0' must be auto, measure or a",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--time-block", "65"],
        "--time-block '65' must be auto, measure or",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--kernel", "reference", "--time-block", "2"],
        "the reference kernel runs step by step",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--isa", "generic", "--row-shape", "8x2-ring"],
        "--row-shape 8x2-ring is not a register shape of the generic row kernel (default, ",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--kernel", "reference", "--row-shape", "8x2-ring"],
        "the reference kernel has no register shape",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--prefetch", "9"],
        "--prefetch 9: expected auto, measure, compiled, none or a number of rows 0-8",
    ),
    ([37, 29, 41, 3, 13, 7, 9, "compact", 1, "--prefetch", "-1"], "--prefetch -1: expected auto, measure"),
    ([37, 29, 41, 3, 13, 7, 9, "compact", 1, "--prefetch", "far"], "--prefetch far: expected auto, measure"),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--prefetch", "1:L3"],
        "--prefetch 1:L3: expected auto, measure",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--prefetch", "1:"],
        "optionally :L1 or :L2 (the cache they fill)",
    ),
    ([37, 29, 41, 3, 13, 7, 9, "compact", 1, "--prefetch", ":L1"], "--prefetch :L1: expected auto, measure"),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--prefetch", "9:L1"],
        "--prefetch 9:L1: expected auto, measure",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--kernel", "reference", "--prefetch", "1"],
        "--prefetch 1: the reference kernel does not prefetch",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--kernel", "reference", "--prefetch", "measure"],
        "--prefetch measure: the reference kernel does not prefetch",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--kernel", "reference", "--row-shape", "compiled"],
        "--row-shape compiled: the reference kernel has no register shape",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--row-shape", "9x9"],
        "--row-shape 9x9 is not a register shape of any row kernel this CPU runs (",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--isa", "measure", "--row-shape", "9x9-ring"],
        "--row-shape 9x9-ring is not a register shape of any row kernel this CPU runs (",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--row-shape", "measure:"],
        "--row-shape measure:: '' is not the name of a register shape",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--row-shape", "measure:1x1"],
        "--row-shape measure:1x1: a race needs two shapes at least (measure:A,B)",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--row-shape", "measure:1x1,1x1"],
        "--row-shape measure:1x1,1x1: 1x1 is named twice",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--row-shape", "measure:1x1,default"],
        "--row-shape measure:1x1,default: 'default' is not the name of a register shape",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--isa", "generic", "--row-shape", "measure:1x1,8x2-ring"],
        "--row-shape measure:1x1,8x2-ring is not a register shape of the generic row kernel (default, ",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--kernel", "reference", "--row-shape", "measure:2x2,4x1"],
        "--row-shape measure:2x2,4x1: the reference kernel has no register shape",
    ),
    pytest.param(
        [37, 29, 41, 3, 13, 7, 9, "compact", 2, "--time-block", "3", "--sweep-team", "slabs"],
        "needs thicker slabs than 2 threads",
        marks=pytest.mark.cpus(ids=(0, 1)),
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--sweep-team", "together"],
        "unknown --sweep-team 'together' (use auto, slabs or shared)",
    ),
    (
        [37, 29, 41, 3, 13, 7, 9, "compact", 1, "--tile-cache", "l2"],
        "unknown --tile-cache 'l2' (use auto, model, L2 or L3)",
    ),
]


@pytest.mark.parametrize("args,fragment", BAD_NATIVE)
def test_bad_input_native(args, fragment):
    proc = tool(*args)
    assert proc.returncode == 2
    assert fragment in proc.stderr and proc.stderr.count("\n") == 1
    assert proc.stdout == ""


def test_bad_fault_variable_is_refused():
    proc = tool(37, 29, 41, 3, 13, 7, 9, env={FAULT_ENV: "yes"})
    assert proc.returncode == 2 and f"{FAULT_ENV}='yes' must be 0 or 1" in proc.stderr


def _cpuinfo(field: str) -> str | None:
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() == field:
                return value.strip()
    return None


def test_the_record_names_this_cpus_machine_model(run_bandwall, tmp_path):
    """The in-core model is this CPU's row (CPUID family and model as /proc/cpuinfo gives them), and the
    roofline's clock comes from the FMAs per cycle of the peak's own vector width on that row."""
    rec = cli_json(run_bandwall, *SMALL, "--db", tmp_path / "m.db")
    m = rec["result"]["incore_model"]["microarch"]
    assert m["family"] == int(_cpuinfo("cpu family")) and m["model"] == int(_cpuinfo("model"))
    assert m["vendor"] == _cpuinfo("vendor_id")
    if "name" not in m:
        assert m["unavailable"].startswith("no machine model")
        assert "port_bound_mpoints_per_s" not in rec["result"].get("roofline", {})
