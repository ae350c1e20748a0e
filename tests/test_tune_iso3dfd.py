"""bandwall tune iso3dfd: the knobs of the stencil engine (register shapes with their variant, the
sweep depth, the team and the sweeps' shape) and the commands it prints for the best."""

from __future__ import annotations

import json
import os
import subprocess

import pytest


def tune_sweeps(run_bandwall, db, space: str, budget: int) -> subprocess.CompletedProcess:
    """tune iso3dfd on a grid where the model proposes sweeps (caches of 1 MiB L2 and 32 MiB L3 told
    through BANDWALL_CACHES, radius 1), on two CPUs at most: the threads' guess is every CPU, and on
    many a slab a thread would be too thin for the proposed depth (a trial the engine refuses)."""
    two = ["taskset", "-c", ",".join(map(str, sorted(os.sched_getaffinity(0))[:2]))]
    return run_bandwall(
        *("tune", "iso3dfd", "--grid", "66x66x66", "--radius", "1", "--iters", "8"),
        *("--space", space, "--budget", budget, "--format", "json", "--db", str(db)),
        env={"BANDWALL_CACHES": "L2=1M,L3=32M"},
        prefix=two,
    )


def test_iso3dfd_searches_the_shapes_with_their_variant(run_bandwall, tmp_path, isa_ceiling):
    """tune iso3dfd: the register shapes knob holds each variant's default and its other shapes
    (from the manifest); a shape runs only with its variant (with another the configuration folds
    into the default), and the command to run the best names its shape when it is not the default.
    Under every ceiling this CPU allows: where no variant left has shapes to choose from (the
    generic loops have one), the shape is refused in one line."""
    from bandwall.core import manifest
    from bandwall.tune.space import machine

    rings = {isa: {s["name"] for s in manifest.row_shapes(isa)} for isa in machine().isas}
    rings = {isa: names if len(names) > 1 else set() for isa, names in rings.items()}
    db = str(tmp_path / "t.db")
    p = run_bandwall(
        "tune",
        "iso3dfd",
        "--grid",
        "64x40x40",
        "--iters",
        "2",
        "--space",
        "isa,shape",
        "--budget",
        "8",
        "--format",
        "json",
        "--db",
        db,
    )
    offered = set().union(*rings.values())
    if not offered:  # no variant under the ceiling in force has a ring (an AVX2-only CPU, or capped)
        assert p.returncode == 2 and "has register shapes" in p.stderr, p.stderr
        return
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["config"]["knobs"]["shape"] == ["default", *sorted(offered)]
    for t in rec["result"]["trials"]:
        c = t["config"]
        assert c["shape"] == "default" or c["shape"] in rings[c["isa"]], c
    best = rec["result"]["best"]["config"]
    named = "--row-shape" in rec["result"]["command"]["bandwall"]
    assert named == (best["shape"] != "default")


@pytest.mark.parametrize(
    "proposal, max_depth, iters, depths, guess",
    [
        (7, 64, 40, (1, 2, 4, 7, 8), 7),  # the proposal among 2, 4 and 8
        (7, 64, 5, (1, 2, 4), 4),  # the run's steps bound the depth: the deepest below the proposal
        (4, 3, 40, (1, 2), 2),  # so do the slabs
        (1, 64, 40, (1,), 1),  # the model proposes no sweep: no knob
        (3, 64, 1, (1,), 1),  # one step: no sweep
    ],
)
def test_iso3dfd_depth_knob_follows_the_model(proposal, max_depth, iters, depths, guess):
    from bandwall.tune.targets import sweep_depths

    model = {
        "config": {"time_block": {"max_depth": max_depth, "proposal": {"depth": proposal, "why": "because"}}}
    }
    got, got_guess, why = sweep_depths(model, iters)
    assert (got, got_guess) == (depths, guess) and why


def test_iso3dfd_searches_the_sweep_team_with_a_sweep(run_bandwall, tmp_path):
    """tune iso3dfd: where the model proposes sweeps (caches of 1 MiB L2 and 32 MiB L3 told through
    BANDWALL_CACHES, radius 1), the team knob holds the model's team, slabs and shared, and every one
    of them runs at the depth the model proposes; step by step (depth 1), or one thread, has no sweep
    to share, so those configurations fold into auto; the command to run the best names
    --sweep-team when it is not auto. On one CPU there is no team to choose, and the knob is refused
    in one line."""

    def tune(space: str, budget: int, db: str) -> subprocess.CompletedProcess:
        return tune_sweeps(run_bandwall, tmp_path / db, space, budget)

    p = tune("team", 4, "team.db")
    if len(os.sched_getaffinity(0)) < 2:
        assert p.returncode == 2 and "one CPU" in p.stderr, p.stderr
        return
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["config"]["knobs"]["team"] == ["auto", "slabs", "shared"]
    assert rec["config"]["fixed"]["depth"] > 1
    assert {t["config"]["team"] for t in rec["result"]["trials"]} == {"auto", "slabs", "shared"}
    best = rec["result"]["best"]["config"]
    command = rec["result"]["command"]["bandwall"]
    assert (f"--sweep-team {best['team']}" in command) == (best["team"] != "auto"), command
    p = tune("depth,team", 6, "depth.db")
    assert p.returncode == 0, p.stderr
    trials = [t["config"] for t in json.loads(p.stdout)["result"]["trials"]]
    assert any(c["depth"] == 1 for c in trials)
    for c in trials:
        assert c["team"] == "auto" or c["depth"] > 1, c


def test_iso3dfd_searches_which_cache_the_tiles_are_sized_for(run_bandwall, tmp_path):
    """tune iso3dfd: where the model proposes sweeps, the tiles knob holds the run's own choice
    (auto), the model's, L2's and the last-level cache's, each run at the depth the model proposes; step by step folds it into
    auto; the command to run the best names --tile-cache when it is not auto."""
    p = tune_sweeps(run_bandwall, tmp_path / "tiles.db", "tiles", 5)
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["config"]["knobs"]["tiles"] == ["auto", "model", "L2", "L3"]
    assert rec["config"]["fixed"]["depth"] > 1
    assert {t["config"]["tiles"] for t in rec["result"]["trials"]} == {"auto", "model", "L2", "L3"}
    best = rec["result"]["best"]["config"]
    command = rec["result"]["command"]["bandwall"]
    assert (f"--tile-cache {best['tiles']}" in command) == (best["tiles"] != "auto"), command
    p = tune_sweeps(run_bandwall, tmp_path / "depth.db", "depth,tiles", 6)
    assert p.returncode == 0, p.stderr
    for t in json.loads(p.stdout)["result"]["trials"]:
        assert t["config"]["tiles"] == "auto" or t["config"]["depth"] > 1, t["config"]


def test_iso3dfd_searches_the_sweeps_shape_with_a_sweep(run_bandwall, tmp_path):
    """tune iso3dfd: where the model proposes sweeps, the swept knob holds the shape the run takes
    (auto) and the variant's shapes; each trial runs its sweeps in the shape it names (the record's
    config.row_shape.swept), step by step folds it into auto, and the command to run the best names
    --swept-shape when it is not auto. Without a variant of shapes (the generic loops), the knob is
    refused in one line."""

    def tune(space: str, budget: int, db: str) -> subprocess.CompletedProcess:
        return tune_sweeps(run_bandwall, tmp_path / db, space, budget)

    p = tune("swept", 3, "swept.db")
    if p.returncode == 2:
        assert "swept" in p.stderr and p.stderr.strip().count("\n") == 0, p.stderr
        return
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    knob = rec["config"]["knobs"]["swept"]
    assert knob[0] == "auto" and len(knob) > 2
    assert rec["config"]["fixed"]["depth"] > 1
    trials = [t["config"] for t in rec["result"]["trials"]]
    assert len({c["swept"] for c in trials}) == len(trials) >= 2
    best = rec["result"]["best"]["config"]
    command = rec["result"]["command"]["bandwall"]
    assert (f"--swept-shape {best['swept']}" in command) == (best["swept"] != "auto"), command
    p = tune("depth,swept", 5, "depth.db")
    assert p.returncode == 0, p.stderr
    for c in (t["config"] for t in json.loads(p.stdout)["result"]["trials"]):
        assert c["swept"] == "auto" or c["depth"] > 1, c
