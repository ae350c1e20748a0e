"""--threads auto (feedback-driven threading): stream, the pipeline and iso3dfd run and record
config.threads_choice (candidates, rates, the rule, the count chosen and why); a stored sweep of this
topology is used when there is one; bad input is refused. No speed is asserted: which count wins on
this machine is the measurement's business."""

from __future__ import annotations

import json
import os

import pytest

from bandwall.core import decide, records, store, topo
from bandwall.kernels import sweep

NCPU = len(os.sched_getaffinity(0))


def run_json(run, *args):
    p = run(*args, "--format", "json", "--no-store")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def check_choice(rec: dict, how: str = "feedback") -> dict:
    records.validate(rec)
    ch = rec["config"]["threads_choice"]
    counts = [c["threads"] for c in ch["candidates"]]
    assert ch["how"] == how and counts == sorted(counts) and counts[-1] == ch["max_threads"]
    assert ch["chosen"] in counts and ch["why"]
    # the decision rule applied to the record's own rates gives the count it chose
    again = decide.choose_fewest(counts, [c["rates"] for c in ch["candidates"]])
    assert (counts[again.chosen], again.decisive) == (ch["chosen"], ch["decisive"])
    assert ch["decisive"] == (ch["chosen"] != counts[-1])
    return ch


@pytest.mark.parametrize(
    "args",
    [
        ("stream", "--kernel", "triad"),
        ("stream", "--kernel", "nstream"),  # accumulates: validation replays the trials too
        ("stream", "--kernel", "dot", "--bind", "scatter"),
    ],
)
def test_stream_auto_records_the_choice(run_bandwall, args):
    rec = run_json(run_bandwall, *args, "--threads", "auto", "--size", "2M", "--reps", "3")
    ch = check_choice(rec)
    if NCPU <= 4:  # every count up to 4 is a candidate
        assert [c["threads"] for c in ch["candidates"]] == list(range(1, NCPU + 1))
    assert all(len(c["rates"]) == ch["rounds"] for c in ch["candidates"])
    assert rec["config"]["threads"] == ch["chosen"] == rec["provenance"]["threads"]
    assert len(rec["result"]["threads_ran_on"]) == ch["chosen"] and rec["validation"]["passed"] is True


def test_pipeline_auto_records_the_choice(run_bandwall):
    rec = run_json(
        run_bandwall,
        "stream",
        "--engine",
        "memcpy",
        "--threads",
        "auto",
        "--size",
        "2M",
        "--reps",
        "3",
        "--block",
        "64K",
    )
    ch = check_choice(rec)
    assert rec["config"]["pipelined"] is True and rec["config"]["threads"] == ch["chosen"]


def test_iso3dfd_auto_records_the_choice(run_bandwall):
    rec = run_json(
        run_bandwall, "iso3dfd", "--grid", "48x48x48", "--iters", "8", "--threads", "auto", "--no-roofline"
    )
    ch = check_choice(rec)
    assert ch["unit"] == "MPoints/s" and rec["config"]["threads"] == ch["chosen"]
    # the trial steps are part of the run but not of its timed steps
    assert rec["result"]["steps"] == 8 - ch["trial_iterations"] and rec["validation"]["passed"] is True
    assert ch["trial_iterations"] == ch["rounds"] * len(ch["candidates"])


def test_stored_sweep_of_this_topology_is_used(run_bandwall, make_record, tmp_path):
    db = tmp_path / "s.db"
    digest = topo.topology()["provenance"]["topology_digest"]
    # one thread at half the bandwidth of two, in every repetition: two threads beyond noise
    points = [
        make_record(
            result={
                "best_GBps": 10.0 * c,
                "median_GBps": 10.0 * c,
                "times_s": [0.1 / c * f for f in (1.0, 1.0, 1.1, 0.9, 1.05, 0.95)],
                "dropped_reps": 1,
                "traffic": {"without_write_allocate": {"bytes_per_rep": 1e9}},
            }
        )
        for c in (1, 2)
    ]
    for c, p in zip((1, 2), points):
        p["config"] = {"threads": c, "stores": "nt", "size_per_array_bytes": 1 << 20, "reps": 3}
        p["provenance"]["topology_digest"] = digest
    if NCPU != 2:
        pytest.skip(f"the stored sweep is written for 2 CPUs; this process may use {NCPU}")
    rec = sweep.sweep_record(
        "triad", points, config={"bind": "compact", "cpus": None, "placement": "first-touch"}
    )
    sweep_id = store.save(rec, db)
    p = run_bandwall(
        "stream", "--threads", "auto", "--size", "2M", "--reps", "3", "--format", "json", "--db", db
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    ch = check_choice(out, how="stored sweep")
    assert ch["record"] == sweep_id and ch["chosen"] == 2 == out["config"]["threads"]
    assert [len(c["rates"]) for c in ch["candidates"]] == [5, 5]


def test_stored_tune_of_this_grid_is_used_by_iso3dfd(run_bandwall, tmp_path):
    """A real tune of the thread count of one grid, then iso3dfd --threads auto on that grid reads
    its trials instead of timing candidates (and so needs no trial steps); another grid does not."""
    if NCPU < 2:
        pytest.skip("a thread count to choose needs two CPUs")
    db = tmp_path / "t.db"
    grid = ("--grid", "40x40x40")
    p = run_bandwall(
        # a small budget: the stored trials are what --threads auto reads, whether or not the
        # tune's final race had its rounds
        "tune", "iso3dfd", *grid, "--iters", "2", "--space", "threads", "--budget", "6",
        "--format", "json", "--db", db,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    tune_id = json.loads(p.stdout)["id"]
    p = run_bandwall(
        "iso3dfd", *grid, "--iters", "2", "--threads", "auto", "--no-roofline", "--format", "json", "--db", db
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    ch = check_choice(out, how="stored tune")
    assert (
        ch["record"] == tune_id and out["config"]["threads"] == ch["chosen"] and out["result"]["steps"] == 2
    )
    # another grid, or another radius of the same grid, has no stored tune: the executable chooses
    # (and needs its trial steps)
    for other in (("--grid", "48x40x40"), (*grid, "--radius", "2")):
        p = run_bandwall(
            "iso3dfd",
            *other,
            "--iters",
            "8",
            "--threads",
            "auto",
            "--no-roofline",
            "--format",
            "json",
            "--db",
            db,
        )
        assert p.returncode == 0, p.stderr
        check_choice(json.loads(p.stdout), how="feedback")


# Five rounds of one level (each round's drift the same for every configuration).
DRIFT = (1.0, 1.2, 0.8, 1.1, 0.9)


@pytest.mark.parametrize(
    "trials, bind, chosen",
    [
        # per count the rates of its best configuration; 1 thread within 3% of 2 in every round: 1
        ([(1, "compact", 99.0), (2, "compact", 100.0), (2, "none", 80.0)], None, 1),
        ([(1, "compact", 90.0), (2, "compact", 100.0)], None, 2),
        # the run's binding, when the tune tried it
        ([(1, "none", 99.0), (1, "compact", 50.0), (2, "compact", 100.0), (2, "none", 100.0)], "compact", 2),
        ([(1, "none", 99.0), (1, "compact", 50.0), (2, "compact", 100.0), (2, "none", 100.0)], "none", 1),
        ([(2, "compact", 100.0)], None, None),  # one count tried: nothing to choose from
    ],
)
def test_choice_from_a_tune_record(trials, bind, chosen):
    from bandwall.kernels import threads_auto

    rec = {
        "id": 7,
        "result": {
            "unit": "MPoints/s",
            "trials": [
                {"config": {"threads": n, "bind": b}, "median": m, "rates": [m * f for f in DRIFT]}
                for n, b, m in trials
            ]
            + [{"config": {"threads": 1, "bind": "compact"}, "failure": "crashed"}],
        },
    }
    ch = threads_auto.choice_from_tune(rec, bind)
    assert (ch and ch["chosen"]) == chosen


# The ring runs as fast on one thread as on two, the default shape does not: a run of the default
# shape reads the default's trials.
SHAPED = [(1, "default", 100.0), (2, "default", 180.0), (1, "8x2-ring", 175.0), (2, "8x2-ring", 176.0)]


@pytest.mark.parametrize(
    "settings, chosen",
    [
        ({"shape": "default"}, 2),
        ({"shape": "8x2-ring"}, 1),
        # a setting the tune did not try does not narrow: the best of each count (ring 175 within 3%
        # of default 180)
        ({"shape": "16x2-ring"}, 1),
        (None, 1),
        ({"isa": "avx2", "shape": "default"}, 2),
    ],
)
def test_choice_from_a_tune_reads_the_trials_run_as_the_run_will_be(settings, chosen):
    from bandwall.kernels import threads_auto

    rec = {
        "id": 9,
        "result": {
            "unit": "MPoints/s",
            "trials": [
                {"config": {"threads": n, "shape": s, "isa": "avx512"}, "median": m, "rates": [m] * 5}
                for n, s, m in SHAPED
            ],
        },
    }
    ch = threads_auto.choice_from_tune(rec, None, settings)
    assert ch["chosen"] == chosen


def test_a_noisy_tune_keeps_every_thread():
    from bandwall.kernels import threads_auto

    # one thread as fast as two on average, but one round in five 20% behind: not shown to be enough
    ones = [100.0, 100.0, 80.0, 100.0, 100.0]
    rec = {
        "id": 8,
        "result": {
            "unit": "MPoints/s",
            "trials": [
                {"config": {"threads": 1}, "median": 100.0, "rates": ones},
                {"config": {"threads": 2}, "median": 100.0, "rates": [100.0] * 5},
            ],
        },
    }
    ch = threads_auto.choice_from_tune(rec, None)
    assert ch["chosen"] == 2 and ch["decisive"] is False


@pytest.mark.parametrize(
    "args, code, message",
    [
        (("stream", "--threads", "fast"), 2, "'fast' is not a valid integer"),
        (("stream", "--threads", "0"), 2, "0 is not in the range x>=1"),
        pytest.param(
            ("iso3dfd", "--grid", "48x48x48", "--iters", "2", "--threads", "auto"),
            2,
            "the steps must be at least",
            marks=pytest.mark.cpus(2),  # one CPU: one candidate, one trial step is enough
        ),
        (
            ("iso3dfd", "--grid", "48x48x48", "--iters", "8", "--threads", "auto", "--ranks", "1"),
            2,
            "with --ranks",
        ),
        (("balance", "--threads", "auto"), 2, "auto"),
    ],
)
def test_bad_auto_input(run_bandwall, args, code, message):
    p = run_bandwall(*args, "--no-store")
    assert p.returncode == code, p.stderr
    assert message in p.stderr and "Traceback" not in p.stderr
