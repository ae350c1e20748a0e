"""bandwall tune through the command line: bad input as a table, a user's program that fails on some
configurations, a figure of merit that never matches, resuming from stored trials, Ctrl-C keeping
the finished trials and printing the best so far (SIGTERM too), a stored knee pruning thread counts, and a tiny
real run of a kernel whose record fits the schema."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from bandwall.core import native, policies, records, topo
from bandwall.core.store import Store
from bandwall.tune import command
from bandwall.tune.space import Machine, bindings, placements

NCPU = len(os.sched_getaffinity(0))
# A program whose figure of merit is 10 x its OpenMP threads, exactly (no noise).
BY_THREADS = ["sh", "-c", 'echo "rate $((OMP_NUM_THREADS * 10))"']
FOM = ["--fom", r"rate ([0-9]+)"]


def _trials(db: str) -> list[dict]:
    try:
        with Store(db, readonly=True) as s:
            return s.list("tune-trial")
    except Exception:  # not created yet
        return []


BAD = [
    ([], 2, "name a kernel"),
    (["triad", "--budget", "0"], 2, "--budget 0 must be at least 1 run"),
    (["triad", "--time", "0"], 2, "--time 0.0 must be more than 0 seconds"),
    (["triad", "--budget", "many"], 2, "not a valid integer"),
    (["triad", "--space", "threads,warp"], 2, "'warp' is not a knob of triad"),
    (["triad", "--space", "threads,,bind"], 2, "name knobs separated by commas"),
    (["triad", "--fom", "x"], 2, "--fom goes with a command"),
    (["--lower-is-better", "--", "true"], 2, "--lower-is-better goes with --fom"),
    (["--fom", "(", "--", "true"], 2, "is not a regular expression"),
    (["iso3dfd", "--grid", "12x12"], 2, "not three whole numbers"),
    (["pipeline", "--kernel", "daxpy"], 2, "unknown kernel 'daxpy'"),
    (["triad", "--ranks", "2"], 2, "--ranks tunes iso3dfd over MPI ranks: it goes with iso3dfd"),
    (
        ["iso3dfd", "--ranks", "64", "--grid", "40x36x48"],
        2,
        "64 ranks cannot share grid 40x36x48 in any shape",
    ),
    (
        ["--fom", "never ([0-9]+)", "--", "echo", "hi"],
        1,
        "gave a rate: --fom 'never ([0-9]+)' matched nothing",
    ),
    (
        ["--budget", "2", "--", "false"],
        1,
        "no configuration of command gave a rate: 'false' exited with code 1",
    ),
]


@pytest.mark.parametrize("args, code, message", BAD)
def test_bad_input(run_bandwall, tmp_path, args, code, message):
    p = run_bandwall("tune", *args, "--db", str(tmp_path / "t.db"))
    assert p.returncode == code, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert message in last and "Traceback" not in p.stderr, p.stderr


@pytest.mark.skipif(NCPU < 2, reason="needs two thread counts")
def test_a_program_failing_on_some_configurations_is_recorded_and_the_search_goes_on(run_bandwall, tmp_path):
    db = str(tmp_path / "t.db")
    prog = ["sh", "-c", 'test "$OMP_NUM_THREADS" -ge 2 || exit 3; echo "rate 7"']
    p = run_bandwall("tune", *FOM, "--budget", "8", "--format", "json", "--db", db, "--", *prog)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)["result"]
    failed = [t for t in r["trials"] if "failure" in t]
    assert failed and all(t["config"]["threads"] == 1 for t in failed)
    assert "exited with code 3" in failed[0]["failure"]
    assert r["best"]["config"]["threads"] >= 2
    stored = _trials(db)
    assert len(stored) == r["runs"] and any("failure" in t["result"] for t in stored)


@pytest.mark.skipif(NCPU < 2, reason="needs two thread counts")
def test_the_record_names_the_best_and_the_commands_and_a_second_tune_resumes(run_bandwall, tmp_path):
    db = str(tmp_path / "t.db")
    args = ["tune", *FOM, "--space", "threads", "--format", "json", "--db", db, "--", *BY_THREADS]
    first = run_bandwall(*args)
    assert first.returncode == 0, first.stderr
    rec = json.loads(first.stdout)
    assert records.problems(rec) == []
    r = rec["result"]
    assert r["best"]["config"] == {"threads": NCPU} and r["best"]["median"] == 10 * NCPU
    assert r["space_size"] == NCPU and r["surplus_cores"] == 0 and r["runs"] == len(_trials(db))
    assert f"--threads {NCPU}" in r["command"]["bandwall"]
    assert f"OMP_NUM_THREADS={NCPU}" in r["command"]["plain"] and "OMP_PLACES=" in r["command"]["plain"]
    second = run_bandwall(*args)
    assert second.returncode == 0, second.stderr
    again = json.loads(second.stdout)["result"]
    assert again["resumed_trials"] == r["runs"] and again["runs"] == 0
    assert again["best"]["config"] == r["best"]["config"]


@pytest.mark.skipif(NCPU < 2, reason="needs two trials before the interrupted one")
@pytest.mark.parametrize(
    "sig, code, said", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated by SIGTERM")]
)
def test_ctrl_c_or_sigterm_keeps_the_finished_trials_and_prints_the_best_so_far(tmp_path, sig, code, said):
    db = str(tmp_path / "t.db")
    # The third run of the program marks that it started, then waits to be interrupted (shell
    # builtins only: the pin library is preloaded into every program the shell starts).
    script = (
        f"n=0; [ -f {tmp_path}/count ] && read n < {tmp_path}/count; n=$((n+1)); echo $n > {tmp_path}/count; "
        f"if [ $n -ge 3 ]; then : > {tmp_path}/blocked; exec sleep 600; fi; "
        'echo "rate $((OMP_NUM_THREADS * 10))"'
    )
    cmd = [
        sys.executable,
        "-m",
        "bandwall",
        "tune",
        *FOM,
        "--format",
        "json",
        "--db",
        db,
        "--",
        "sh",
        "-c",
        script,
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "blocked").exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()[1]
        os.killpg(proc.pid, sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == code, err
    r = json.loads(out)["result"]
    assert f"{said} after {r['runs']} runs" in err and "Traceback" not in err
    assert r["stopped"] == "interrupted" and r["runs"] >= 2 and r["best"]["rounds"] >= 1
    assert len(_trials(db)) == r["runs"]


@pytest.mark.skipif(NCPU < 2, reason="needs two thread counts to prune")
def test_a_stored_knee_prunes_thread_counts(run_bandwall, make_record, tmp_path):
    db = str(tmp_path / "t.db")
    digest = topo.topology()["provenance"]["topology_digest"]
    points = [{"cores": n, "best_GBps": 10.0 * min(n, NCPU), "median_GBps": 9.0} for n in range(1, NCPU + 1)]
    sweep = make_record(
        "sweep",
        result={"points": points, "knee_cores": NCPU, "surplus_cores": 0, "best_GBps": 10.0 * NCPU},
        config={"kernel": "triad"},
        topology_digest=digest,
    )
    with Store(db) as s:
        s.add(sweep)
    p = run_bandwall(
        "tune",
        "triad",
        "--space",
        "threads",
        "--size",
        "1M",
        "--reps",
        "2",
        "--budget",
        "2",
        "--format",
        "json",
        "--db",
        db,
    )
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["config"]["knobs"]["threads"] == [NCPU]
    assert any("knee at" in n for n in rec["config"]["notes"])


def test_a_tiny_kernel_tune_stores_schema_valid_records(run_bandwall, tmp_path):
    db = str(tmp_path / "t.db")
    p = run_bandwall(
        "tune", "triad", "--size", "1M", "--reps", "2", "--budget", "3", "--format", "json", "--db", db
    )
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    r = rec["result"]
    assert r["runs"] == 3 and r["stopped"] == "budget"
    assert set(r["best"]) == {"config", "median", "min", "max", "rounds"}
    assert r["command"]["bandwall"].startswith("bandwall stream --kernel triad")
    with Store(db, readonly=True) as s:
        assert len(s.list("tune-trial")) == 3 and len(s.list("tune")) == 1


def test_iso3dfd_over_ranks_searches_the_shapes(run_bandwall, tmp_path):
    """tune iso3dfd --ranks 4: the shapes that can cut the grid, the least-halo one first (the
    guess); every trial's shape is one of them and the command to run it names it."""
    from bandwall.mpi import iso3dfd_mpi

    try:
        native.executable(iso3dfd_mpi.TOOL)
    except Exception:
        pytest.skip(f"{iso3dfd_mpi.TOOL} is not built: no MPI found at build time")
    db = str(tmp_path / "t.db")
    grid = "40x36x48"
    p = run_bandwall(
        "tune",
        "iso3dfd",
        "--ranks",
        "4",
        "--grid",
        grid,
        "--iters",
        "2",
        "--budget",
        "3",
        "--format",
        "json",
        "--db",
        db,
    )
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)["result"]
    shapes = ["x".join(map(str, d)) for d in iso3dfd_mpi.shapes((40, 36, 48), 4)]
    assert shapes[0] == "1x1x4"  # 32 planes along z: the fewest halo bytes a rank
    assert {t["config"]["dims"] for t in r["trials"]} <= set(shapes)
    assert r["best"]["config"]["dims"] in shapes
    assert f"--ranks 4 --dims {r['best']['config']['dims']}" in r["command"]["bandwall"]


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r.pop("best"),
        lambda r: r["best"].pop("rounds"),
        lambda r: r.update(trials=[{"config": {}}]),
        lambda r: r.update(command={}),
        lambda r: r.update(surplus_cores=-1),
    ],
)
def test_the_schema_holds_the_tune_result(make_record, change):
    result = {
        "best": {"config": {"threads": 2}, "median": 5.0, "min": 4.0, "max": 6.0, "rounds": 3},
        "trials": [{"config": {"threads": 2}, "rates": [4.0, 5.0, 6.0], "median": 5.0, "rounds": 3}],
        "space_size": 4,
        "runs": 3,
        "surplus_cores": 0,
        "command": {"bandwall": "bandwall stream --threads 2"},
    }
    rec = make_record("tune", result=result)
    assert records.problems(rec) == []
    change(rec["result"])
    assert records.problems(rec)


def _two_nodes(cpus=(0, 1, 2, 3)) -> Machine:
    rec = topo.topology()
    rec["result"]["numa_nodes"] = [{"os_index": 0, "cpus": [0, 1]}, {"os_index": 1, "cpus": [2, 3]}]
    return Machine(tuple(cpus), rec)


def test_on_two_nodes_the_space_takes_the_node_policies_from_the_tables():
    m = _two_nodes()
    table = policies.table()
    words = [r["name"] for r in table["binding"] if r["syntax"] == r["name"]]
    assert set(words) | {"node:0", "node:1"} == set(bindings(m))
    places = placements(m)
    assert {"first-touch", "serial", "interleave", "bind:0", "bind:1", "preferred:0", "preferred:1"} <= set(
        places
    )
    assert "serial" not in placements(m, without=("serial",))
    one = topo.topology()
    one["result"]["numa_nodes"] = [{"os_index": 0, "cpus": [0, 1]}]
    assert placements(Machine((0, 1), one)) == ()  # one node: every policy puts every page on it


@pytest.mark.parametrize(
    "placement, words",
    [
        (None, []),
        ("first-touch", []),
        ("bind:1", ["numactl", "--membind=1"]),
        ("interleave", ["numactl", "--interleave=all"]),
        ("preferred:0", ["numactl", "--preferred=0"]),
    ],
)
def test_the_plain_command_places_memory_with_numactl(placement, words):
    assert command.numactl(placement) == words
    m = Machine((0,), topo.topology())
    o = {"threads": 1, "bind": "none", "command": ["./app", "-n", "2"], "placement": placement}
    plain = command.for_program(o, m)["plain"]
    assert plain == " ".join(["OMP_NUM_THREADS=1", "OMP_PROC_BIND=false", *words, "./app", "-n", "2"])


# -- the verdict: claims made with the record, and the words rendered from them -------------------


def _tune_record(rates: dict[int, list[float]], tied: tuple[int, ...] = (), best: int | None = None) -> dict:
    """A tune record of thread counts measured in these rounds (in the order they ran): the best the
    given count, else the highest median; tied: the counts the search found within noise of it."""
    import statistics

    from bandwall.tune import verdict

    rows = [
        {
            "config": {"threads": n},
            "rates": v,
            "median": statistics.median(v),
            "min": min(v),
            "max": max(v),
            "rounds": len(v),
        }
        for n, v in rates.items()
    ]
    top = (
        next(t for t in rows if t["config"]["threads"] == best)
        if best
        else max(rows, key=lambda t: t["median"])
    )
    rec = {
        "tool": "tune",
        "config": {"target": "triad", "notes": [], "left_out": {}},
        "result": {
            "best": {k: top[k] for k in ("config", "median", "min", "max", "rounds")},
            "unit": "GB/s",
            "why": "the model's guess",
            "indistinguishable": [t for t in rows if t["config"]["threads"] in tied],
            "trials": rows,
            "space_size": len(rows),
            "runs": sum(len(v) for v in rates.values()),
            "resumed_trials": 0,
            "exhaustive_runs": 3 * len(rows),
            "surplus_cores": 0,
            "stopped": "converged",
            "command": {"bandwall": "bandwall stream --kernel triad"},
        },
    }
    verdict.add_claims(rec)
    return rec


def _shown(rec: dict) -> str:
    import io

    from bandwall.display import console
    from bandwall.views.tune import render

    con = console(file=io.StringIO(), width=400)
    render(con, rec)
    return con.file.getvalue()


CLEAR = {1: [10.0, 10.1, 9.9, 10.0, 10.2, 10.0], 2: [20.0, 20.2, 19.8, 20.1, 20.0, 19.9]}
TIE = {1: [20.0, 20.3, 19.8, 20.1, 20.0, 19.9], 2: [20.1, 20.0, 19.9, 20.2, 19.8, 20.0]}


def test_a_clear_winner_rises_beyond_noise_and_is_called_best():
    from bandwall.core.claims import RISES, Claim, say
    from bandwall.tune import verdict

    rec = _tune_record(CLEAR)
    (c,) = verdict.stored_claims(rec)
    assert (c.start.label, c.end.label, c.direction) == ("threads=1", "threads=2", RISES)
    assert c.enough and c.rounds == 6 and c.ratio == pytest.approx(2.0, rel=0.02)
    assert rec["result"]["claims_said"] == [say(Claim.from_json(rec["result"]["claims"][0]))]
    shown = _shown(rec)
    assert f"verdict: {say(c)}" in shown and "rate (GB/s) rises from threads=1 to threads=2" in shown
    assert "\nbest: threads=2: 20.00 GB/s" in shown and "no difference beyond noise" not in shown


def test_a_tie_is_no_difference_beyond_noise_and_no_winner():
    from bandwall.core.claims import NOISE, say
    from bandwall.tune import verdict

    rec = _tune_record(TIE, tied=(1,), best=2)
    (c,) = verdict.stored_claims(rec)
    assert (c.start.label, c.end.label, c.direction) == ("threads=1", "threads=2", NOISE) and c.enough
    shown = _shown(rec)
    assert f"verdict: {say(c)}" in shown
    assert "no difference beyond noise in rate (GB/s) between threads=1 and threads=2" in shown
    assert f"\n{verdict.NO_DIFFERENCE}: threads=2" in shown and "\nbest:" not in shown


def test_one_round_is_too_few_rounds_to_call_a_winner():
    from bandwall.core.claims import NOISE
    from bandwall.tune import verdict

    rec = _tune_record({1: [10.0], 2: [20.0]})
    (c,) = verdict.stored_claims(rec)
    assert c.direction == NOISE and c.rounds == 1 and not c.enough
    shown = _shown(rec)
    assert "too few for a" in rec["result"]["claims_said"][0] and rec["result"]["claims_said"][0] in shown
    assert verdict.standing(verdict.stored_claims(rec)) == verdict.NO_DIFFERENCE and "\nbest:" not in shown


def test_a_cheaper_choice_slower_beyond_noise_says_so():
    from bandwall.core.claims import FALLS
    from bandwall.tune import verdict

    rec = _tune_record(CLEAR, best=1)  # chosen for its cost: the runner-up is faster beyond noise
    (c,) = verdict.stored_claims(rec)
    assert (c.start.label, c.end.label, c.direction) == ("threads=2", "threads=1", FALLS)
    assert verdict.standing([c]) == verdict.NOT_FASTEST
    assert f"\n{verdict.NOT_FASTEST}: threads=1" in _shown(rec)


def test_a_record_of_one_configuration_has_no_claims_and_is_best():
    from bandwall.tune import verdict

    rec = _tune_record({2: [20.0, 20.1]})
    assert rec["result"]["claims"] == [] and rec["result"]["claims_said"] == []
    assert verdict.standing([]) == verdict.BEST and "verdict:" not in _shown(rec)


def test_the_constructed_verdict_fits_the_schema(make_record):
    rec = _tune_record(TIE, tied=(1,), best=2)
    stored = make_record("tune", result=rec["result"], config=rec["config"])
    assert records.problems(stored) == []
    stored["result"]["claims"][0].pop("direction")
    assert records.problems(stored)


@pytest.mark.skipif(NCPU < 2, reason="needs two thread counts")
def test_the_stored_tune_record_carries_the_claims_its_output_shows(run_bandwall, tmp_path):
    """The claims are made with the record, so the stored one holds what --format json shows; the
    program's rate is exactly 10 x its threads, and the search's final race gives each pair the
    decision rule's rounds within the default budget, so every claim rises and the choice is best."""
    from bandwall.core import decide
    from bandwall.core.claims import RISES, say
    from bandwall.tune import verdict

    db = str(tmp_path / "t.db")
    p = run_bandwall("tune", *FOM, "--space", "threads", "--format", "json", "--db", db, "--", *BY_THREADS)
    assert p.returncode == 0, p.stderr
    shown = json.loads(p.stdout)
    with Store(db, readonly=True) as s:
        (stored,) = s.list("tune")
    r = stored["result"]
    assert r["claims"] and r["claims"] == shown["result"]["claims"]
    assert r["claims_said"] == shown["result"]["claims_said"]
    claims = verdict.stored_claims(stored)
    assert r["claims_said"] == [say(c) for c in claims]
    best = " ".join(f"{k}={v}" for k, v in r["best"]["config"].items())
    for c in claims:
        assert c.end.label == best and c.direction == RISES and c.enough
        assert c.rounds >= decide.rule().rounds
    assert verdict.standing(claims) == verdict.BEST and f"\nbest: {best}: " in _shown(stored)
    final = r["final_race"]
    assert final["finished"] and "cut_short" not in final
    assert all(p["paired_rounds"] >= decide.rule().rounds for p in final["pairs"])
