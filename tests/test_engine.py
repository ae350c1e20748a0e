"""Copy engines: which exist here, the pipelined kernels' records over every registered engine, the
strategy choice, the engine sweep, and bad input."""

from __future__ import annotations

import json
import os
import socket

import pytest

from bandwall.core import manifest, records
from bandwall.core.store import Store, save
from bandwall.engine import pipeline as engine

NCPU = len(os.sched_getaffinity(0))
SMALL = ["--size", "4M", "--reps", "2"]
BLOCK = ["--block", "256K"]  # 16 blocks per array: most go through the engine
ENGINES = {e["name"]: e for e in engine.engines()}


def engine_args(name: str) -> list[str]:
    """Compute on the first CPU this process may use; an engine that runs on CPUs of its own on the
    second."""
    cpus = sorted(os.sched_getaffinity(0))
    args = ["--engine", name, "--cpus", str(cpus[0])]
    if ENGINES[name]["takes_cpus"]:
        if len(cpus) < 2:
            pytest.skip(f"{name} runs on a CPU of its own: needs a second CPU")
        args += ["--engine-cpus", str(cpus[1])]
    return args


def needs(name: str):
    e = ENGINES[name]
    if not e["available"]:
        pytest.skip(f"{name}: unavailable: {e['reason']}")


def piped(run, *args, db=None):
    extra = ["--db", db] if db else ["--no-store"]
    p = run("stream", *args, *SMALL, *BLOCK, "--format", "json", *extra)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_every_engine_registered_and_topo_says_which_exist(run_bandwall):
    assert {"dsa", "helper", "memcpy", "none"} <= set(ENGINES)
    p = run_bandwall("topo", "--format", "json")
    assert p.returncode == 0, p.stderr
    here = json.loads(p.stdout)["result"]["engines"]
    for name, e in ENGINES.items():
        assert e["available"] or e["reason"], f"{name} is unavailable without a reason"
        if e["hidden"]:  # test-only (dsa-model): out of the record users see
            assert name not in here
        else:
            assert here[name] == ("available" if e["available"] else f"unavailable: {e['reason']}")


@pytest.mark.parametrize("name", sorted(ENGINES))
@pytest.mark.parametrize("kernel", ["scale", "triad", "dot"])
def test_pipelined_record_over_every_engine(run_bandwall, tmp_path, name, kernel):
    needs(name)
    if name == "helper" and NCPU < 2:
        pytest.skip("helper: needs a second CPU")
    db = str(tmp_path / "r.db")
    rec = piped(run_bandwall, "--kernel", kernel, *engine_args(name), "--strategy", "all", db=db)
    records.validate(rec)
    c, r = rec["config"], rec["result"]
    assert rec["tool"] == "stream" and rec["validation"]["passed"] is True
    assert c["pipelined"] is True and c["engine"] == name and c["strategy"] == "all"
    assert c["queue_depth"] == (2 if kernel == "triad" else 4) and c["block_bytes"] == 256 << 10
    assert c["engine_cpus"] == ([1] if name == "helper" else [])
    assert r["best_GBps"] > 0 and r["engine"]["blocks"] > 0
    # The engine moved every block after the first queue-depth ones, each input once per repetition.
    per_rep = (r["engine"]["blocks"] - r["engine"]["direct_blocks"]) // 2 * len(c["engine_inputs"])
    assert r["engine"]["requests"] == per_rep * 2
    if name == "dsa-model":
        assert r["engine"]["page_faults"] > 0
    # an engine on a device (the manifest's hardware, no CPUs of its own) is flagged unverified
    assert c.get("dsa_hardware_verified") == (False if engine.needs_device(name) else None)
    with Store(db, readonly=True) as s:
        assert s.count() == 1


@pytest.mark.parametrize("kernel", ["triad", "dot"])
def test_split_strategy_leaves_src1_to_the_core(run_bandwall, kernel):
    rec = piped(run_bandwall, "--kernel", kernel, *engine_args("memcpy"), "--strategy", "split")
    assert rec["config"]["strategy"] == "split"
    assert rec["config"]["engine_inputs"] == ("c" if kernel == "triad" else "b")


def test_failed_validation_stores_nothing(run_bandwall, tmp_path):
    db = str(tmp_path / "r.db")
    p = run_bandwall(
        "stream",
        "--kernel",
        "triad",
        *engine_args("memcpy"),
        *SMALL,
        "--db",
        db,
        env={"BANDWALL_STREAM_INJECT_ERROR": "1"},
    )
    assert p.returncode == 1 and "validation of pipelined triad failed" in p.stderr
    with Store(db, readonly=True) as s:
        assert s.count() == 0


def test_auto_strategy_follows_the_stored_knee(run_bandwall, tmp_path):
    db = str(tmp_path / "r.db")
    rec = piped(run_bandwall, "--kernel", "dot", *engine_args("memcpy"), db=db)
    assert rec["config"]["strategy_requested"] == "auto" and rec["config"]["strategy"] == "all"
    assert "no stored sweep" in rec["config"]["strategy_reason"]
    # A CPU-only sweep whose knee is at one core: one compute core is at the knee, so split.
    p = run_bandwall("sweep", "dot", "--cores", "1", *SMALL, "--db", db, "--format", "json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["result"]["knee_cores"] == 1
    rec = piped(run_bandwall, "--kernel", "dot", *engine_args("memcpy"), db=db)
    assert rec["config"]["strategy"] == "split" and "knee at 1 cores" in rec["config"]["strategy_reason"]
    one = piped(run_bandwall, "--kernel", "scale", *engine_args("memcpy"), db=db)
    assert one["config"]["strategy"] == "all" and "one array" in one["config"]["strategy_reason"]


def sweep_with_rounds(make_record, rounds: dict[str, list[float] | None], cores: int = 2) -> dict:
    """An engine-sweep record of this host measuring triad on cores compute cores with each strategy
    of rounds (its engine rate in each interleaved round, or None: a row without them)."""
    rows = [
        {
            "kernel": "triad",
            "cores": cores,
            "helpers": 0,
            "strategy": name,
            "cpu_GBps": 20.0,
            "engine_GBps": max(rates) if rates else 21.0 + i,
            "speedup": None,
            "engine_wait_share": 0.1,
            **({"engine_rounds_GBps": rates} if rates else {}),
        }
        for i, (name, rates) in enumerate(rounds.items())
    ]
    return make_record(
        "engine-sweep",
        {"rows": rows, "summary": []},
        config={"kernels": ["triad"], "engine": "memcpy", "strategies": list(rounds)},
        host=socket.gethostname(),
    )


def stored(tmp_path, *recs) -> str:
    db = str(tmp_path / "r.db")
    for rec in recs:
        save(rec, db)
    return db


def test_auto_strategy_keeps_the_default_on_a_tie(make_record, tmp_path):
    default, other = manifest.strategy_names()[:2]
    tie = {default: [20.0, 20.4, 19.8, 20.1, 20.2, 19.9], other: [20.1, 20.2, 20.0, 19.9, 20.3, 20.0]}
    db = stored(tmp_path, sweep_with_rounds(make_record, tie))
    chosen, why = engine.choose_strategy("triad", 2, db, "memcpy")
    assert chosen == default and f"the default {default} stands" in why and "within noise" in why


def test_auto_strategy_switches_on_a_clear_win(make_record, tmp_path):
    default, other = manifest.strategy_names()[:2]
    win = {default: [20.0, 20.4, 19.8, 20.1, 20.2, 19.9], other: [24.0, 24.5, 23.9, 24.2, 24.4, 24.1]}
    db = stored(tmp_path, sweep_with_rounds(make_record, win))
    chosen, why = engine.choose_strategy("triad", 2, db, "memcpy")
    assert chosen == other and f"{other} faster than the default {default} beyond noise" in why


def test_auto_strategy_without_per_round_rates_keeps_the_default(make_record, tmp_path):
    # one best rate per strategy, however far apart, is no evidence beyond noise
    default, other = manifest.strategy_names()[:2]
    db = stored(tmp_path, sweep_with_rounds(make_record, {default: None, other: None}))
    chosen, why = engine.choose_strategy("triad", 2, db, "memcpy")
    assert chosen == default and "without per-round rates" in why and f"the default {default} stands" in why
    # a sweep of another engine or core count says nothing about this run
    assert "no stored sweep" in engine.choose_strategy("triad", 2, db, "helper")[1]
    assert "no stored sweep" in engine.choose_strategy("triad", 3, db, "memcpy")[1]


def test_auto_strategy_needs_enough_rounds(make_record, tmp_path):
    default, other = manifest.strategy_names()[:2]
    few = {default: [20.0, 20.1], other: [30.0, 30.2]}  # too few rounds for the rule's confidence
    db = stored(tmp_path, sweep_with_rounds(make_record, few))
    chosen, why = engine.choose_strategy("triad", 2, db, "memcpy")
    assert chosen == default and "too few paired rounds" in why


def test_engine_sweep_table_summary_heatmap_and_records(run_bandwall, tmp_path):
    db, png = str(tmp_path / "r.db"), tmp_path / "heat.png"
    name = "helper" if NCPU >= 2 else "memcpy"
    p = run_bandwall(
        "engine", "sweep", "--kernels", "triad,scale", "--cores", "1", "--engine", name, *SMALL, *BLOCK,
        "--heatmap", str(png), "--db", db, "--format", "json",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    records.validate(rec)
    rows = rec["result"]["rows"]
    assert rec["tool"] == "engine-sweep"
    assert sorted((r["kernel"], r["strategy"]) for r in rows) == [
        ("scale", "all"),
        ("triad", "all"),
        ("triad", "split"),
    ]
    for r in rows:
        assert r["cores"] == 1 and r["helpers"] == (1 if name == "helper" else 0)
        assert r["speedup"] == pytest.approx(r["engine_GBps"] / r["cpu_GBps"])
    assert {s["kernel"] for s in rec["result"]["summary"]} == {"triad", "scale"}
    assert png.stat().st_size > 0
    with Store(db, readonly=True) as s:
        # 2 CPU-only points, 3 engine points, the sweep
        assert s.count() == 6 and len(rec["result"]["point_record_ids"]) == 5


def test_engine_sweep_summary_counts_cores():
    rows = [
        {"kernel": "triad", "cores": 1, "helpers": 1, "cpu_GBps": 10.0, "engine_GBps": 16.0, "speedup": 1.6},
        {
            "kernel": "triad",
            "cores": 2,
            "helpers": 1,
            "cpu_GBps": 15.0,
            "engine_GBps": 17.0,
            "speedup": 17 / 15,
        },
        {
            "kernel": "triad",
            "cores": 3,
            "helpers": None,
            "cpu_GBps": 15.5,
            "engine_GBps": None,
            "speedup": None,
        },
    ]
    from bandwall.engine import engine_sweep

    (s,) = engine_sweep.summary(rows)
    assert (s["cpu_best_cores"], s["engine_cores"], s["engine_helpers"]) == (3, 1, 1)
    assert s["statement"] == "triad: with the engine, 1 core + 1 helper core give what the CPU needs 3 for"


BAD = [
    (["stream", "--engine", "blitter"], "unknown engine 'blitter'"),
    (["stream", "--engine", "memcpy", "--queue-depth", "0"], "--queue-depth"),
    (["stream", "--engine", "memcpy", "--block", "0"], "must be greater than zero"),
    (["stream", "--engine", "memcpy", "--block", "3K"], "not a multiple of 4 KiB"),
    (
        [
            "stream",
            "--engine",
            "memcpy",
            "--cpus",
            str(min(os.sched_getaffinity(0))),
            "--block",
            "64M",
            "--size",
            "8M",
        ],
        "larger than each thread's share",
    ),
    (["stream", "--engine", "memcpy", "--engine-cpus", "1"], "is for the helper engine"),
    (["stream", "--engine", "none", "--engine-mode", "copy"], "no copy mode"),
    (["stream", "--engine-cpus", "1"], "need --engine"),
    (["stream", "--engine", "memcpy", "--strategy", "half"], "'half' is not one of"),
    (["engine", "sweep", "--engine", "blitter"], "unknown engine 'blitter'"),
    (["engine", "sweep", "--kernels", "axpy"], "unknown kernel 'axpy'"),
]


@pytest.mark.parametrize("args,fragment", BAD)
def test_bad_input_one_line_exit_2(run_bandwall, args, fragment):
    p = run_bandwall(*args, "--no-store")
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], p.stderr


def test_overlapping_helper_cores_refused(run_bandwall):
    p = run_bandwall("stream", "--engine", "helper", "--cpus", "0", "--engine-cpus", "0", "--no-store")
    if not ENGINES["helper"]["available"]:
        assert p.returncode == 2 and "helper: unavailable" in p.stderr
        return
    assert p.returncode == 2 and "engine CPU 0 is also a compute CPU" in p.stderr


def test_unavailable_engine_exit_2_with_reason(run_bandwall):
    needs_absent = ENGINES["dsa"]
    if needs_absent["available"]:
        pytest.skip("this machine has a DSA work queue")
    p = run_bandwall("stream", "--engine", "dsa", "--no-store")
    assert p.returncode == 2
    assert p.stderr.strip() == f"bandwall: error: dsa: unavailable: {needs_absent['reason']}"


def test_report_section_quick(run_bandwall, tmp_path):
    p = run_bandwall(
        "report", "--sections", "engine", "--quick", "--no-store", "--out", tmp_path, "--format", "json"
    )
    assert p.returncode == 0, p.stderr
    *recs, report = json.loads(p.stdout)  # the report's records, the report record last
    sec = report["result"]["sections"][0]
    if sec["status"] == "unavailable":
        assert NCPU < 2 and "no copy engine here" in sec["reason"]
        return
    assert sec["status"] == "ok", sec.get("reason")
    rec = recs[-1]
    assert rec["tool"] == "engine-sweep" and rec["config"]["engine"] in ("dsa", "helper")
    assert [(r["kernel"], r["cores"]) for r in rec["result"]["rows"]] == [("triad", 1)]
    assert "<img" in (tmp_path / "index.html").read_text()


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")
def test_helper_is_unavailable_when_the_process_may_use_one_cpu():
    import subprocess

    from bandwall.core import native

    one = str(min(os.sched_getaffinity(0)))
    p = subprocess.run(
        ["taskset", "-c", one, native.executable("bandwall-pipeline"), "--list-engines"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    helper = {e["name"]: e for e in json.loads(p.stdout.splitlines()[-1])}["helper"]
    assert helper["available"] is False and "only one CPU this process may use" in helper["reason"]
