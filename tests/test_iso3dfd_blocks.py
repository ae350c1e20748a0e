"""Cache blocks chosen for the CPU (bandwall-iso3dfd's auto and search, `bandwall iso3dfd --blocks`):
what the record says about the choice, that a user's blocks win, and that the search leaves the
run's answer alone."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from bandwall.core import native
from bandwall.kernels import iso3dfd
from iso3dfd_tool import record as tool_record

GRID = [37, 29, 41]


def test_auto_takes_the_model_of_the_caches(microarch):
    rec = tool_record(*GRID, 2, "auto", "auto", "auto", "compact", 1)
    c = rec["config"]
    choice = c["blocks_choice"]
    assert choice["how"] == "auto" and choice["requested"] == ["auto"] * 3
    assert c["blocks"] == choice["model"]["blocks"] == [c["n1_block"], c["n2_block"], c["n3_block"]]
    # The blocks are those of the row kernel that ran, whichever variant the choice made.
    assert choice["isa"] == c["isa"]
    # Whole rows; y at least 24 (8 for a split row kernel, which re-reads only the halo rows) or the
    # interior (13 here); z 128 or the interior (25 here).
    assert c["blocks"] == [37, 8 if choice["model"]["split"] else 13, 25]
    assert "not refined by measurement" in choice["why"] and "candidates" not in choice
    assert rec["validation"]["passed"]


def test_given_dimensions_are_kept():
    rec = tool_record(*GRID, 2, 13, "auto", 9, "compact", 1)
    assert rec["config"]["blocks"][0] == 13 and rec["config"]["blocks"][2] == 9
    assert rec["config"]["blocks_choice"]["requested"] == [13, "auto", 9]
    user = tool_record(*GRID, 2, 13, 7, 9, "compact", 1)["config"]
    assert user["blocks"] == [13, 7, 9] and user["blocks_choice"]["how"] == "user"


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="the search runs on 2 threads")
def test_search_records_its_candidates_and_leaves_the_answer_alone():
    """The search times every candidate in every round on its own grid; the run that follows gives
    the same wavefield as a run given the chosen blocks outright."""
    rec = tool_record(*GRID, 3, "search", "search", "search", "compact", 2)
    choice = rec["config"]["blocks_choice"]
    assert choice["how"] == "search"
    ys = [cand["blocks"][1] for cand in choice["candidates"]]
    assert rec["config"]["blocks"][1] in ys and choice["model"]["blocks"][1] in ys
    for cand in choice["candidates"]:
        assert len(cand["mpoints_per_cpu_s"]) == choice["search"]["rounds"]
        assert all(r > 0 for r in cand["mpoints_per_cpu_s"])
    assert any(c["blocks"] == rec["config"]["blocks"] for c in choice["candidates"])
    # the decision rule's record, whichever way this machine's timing went: the model's y block, or
    # another only where the rule found it faster beyond noise
    d = choice["decision"]
    assert (
        d["default"] == f"y{choice['model']['blocks'][1]}" and d["chosen"] == f"y{rec['config']['blocks'][1]}"
    )
    assert (rec["config"]["blocks"] != choice["model"]["blocks"]) is (
        d["decisive"] and d["chosen"] != d["default"]
    )
    same = tool_record(*GRID, 3, *rec["config"]["blocks"], "compact", 2)
    assert same["result"]["norm"] == rec["result"]["norm"]


@pytest.mark.parametrize("blocks, how", [(None, "auto"), ("search", "search"), ("13x7x9", "user")])
def test_front_end_blocks(run_bandwall, blocks, how):
    extra = [] if blocks is None else ["--blocks", blocks]
    p = run_bandwall(
        "iso3dfd",
        "--grid",
        "37x29x41",
        "--iters",
        "2",
        "--threads",
        "1",
        "--no-roofline",
        "--no-store",
        *extra,
    )
    assert p.returncode == 0, p.stderr
    p = run_bandwall(
        "iso3dfd",
        *(
            "--grid",
            "37x29x41",
            "--iters",
            "2",
            "--threads",
            "1",
            "--no-roofline",
            "--no-store",
            "--format",
            "json",
        ),
        *extra,
    )
    assert json.loads(p.stdout)["config"]["blocks_choice"]["how"] == how


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--blocks", "automatic"], "not three whole numbers"),
        (["--blocks", ""], "'--blocks': is empty"),
    ],
)
def test_front_end_bad_blocks(run_bandwall, args, fragment):
    p = run_bandwall("iso3dfd", "--grid", "37x29x41", "--iters", "1", "--no-store", *args)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and fragment in lines[0], p.stderr


def test_native_bad_block_word():
    proc = subprocess.run(
        [native.executable(iso3dfd.TOOL), *map(str, [*GRID, 1, "auto", "fast", "auto"])],
        capture_output=True,
        text=True,
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "n2_block" in lines[0], proc.stderr
