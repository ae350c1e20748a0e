"""bandwall sensitivity: the mechanics of a small real run (doses recorded, the bandit's own
bandwidth measured, the record stored), the co-processes and their end, the verdict's rule on
constructed curves, and bad input as a table. No speed and no verdict of a real run is asserted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from bandwall.core import records
from bandwall.core.errors import RunFailed
from bandwall.sensitivity import copies as copies_mod
from bandwall.sensitivity import coprocess, verdict
from bandwall.sensitivity.program import repeat_for

NCPU = len(os.sched_getaffinity(0))
CPU = sorted(os.sched_getaffinity(0))[0]
SHORT = [sys.executable, "-c", "sum(range(20000))"]


def children(pid: int) -> list[int]:
    """The pids whose parent is pid."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.cpus(2)
def test_small_run_records_every_dose_and_stores(run_bandwall, tmp_path):
    db, plot = tmp_path / "s.db", tmp_path / "s.png"
    p = run_bandwall(
        "sensitivity",
        "--rounds",
        "2",
        "--doses",
        "0.5,1",
        "--db",
        db,
        "--plot",
        plot,
        "--format",
        "json",
        "--",
        *SHORT,
    )
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    records.validate(rec)
    c, r = rec["config"], rec["result"]
    assert rec["tool"] == "sensitivity" and rec["id"] >= 1 and c["command"] == SHORT
    assert c["doses"] == [0.5, 1.0] and [x["dose"] for x in r["curve"]] == [0.5, 1.0]
    assert (c["repeat"] > 1) == ("under 50 ms" in c["repeat_source"])  # a program under 50 ms is repeated
    for x in r["curve"]:
        assert x["bandit_alone_GBps"] > 0 and x["taken_GBps"] > 0  # the bandit measured its own bandwidth
        assert len(x["times_s"]) == 2 and x["slowdown"]["rounds"] == 2
    assert len(r["base_times_s"]) == 2 and r["reference"]["reader_GBps"] > 0
    # the controls ran in the same rounds, at the same doses; the copies ran at once, 1 and more
    bwc = r["controls"]["bandwidth"]
    assert [p["dose"] for p in bwc["points"]] == [0.5, 1.0] and bwc["alone_GBps"] > 0
    assert all(p["slowdown"]["rounds"] == 2 for p in bwc["points"])
    assert len(r["controls"]["placebo"]["points"][0]["times_s"]) == 2
    assert r["controls"]["cache"]["ran"] == bool(r["cache_curve"])
    assert [p["copies"] for p in r["copies"]["measured"]][:2] == [1, 2] and r["copies"]["advice"] >= 1
    assert all(len(p["times_s"]) == 2 for p in r["copies"]["measured"])
    if r["verdict"] == verdict.INSENSITIVE:  # only where both positive controls were slowed
        assert bwc["passed"] and r["controls"]["cache"]["passed"]
    assert r["verdict"] in verdict.VERDICTS and r["why"]
    assert r["working_set_MiB"] is not None or r["cache_note"]  # a working set, or why none is claimed
    assert rec["validation"]["checked"] is False and plot.stat().st_size > 0
    shown = run_bandwall("db", "show", rec["id"], "--db", db, "--format", "json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["tool"] == "sensitivity"


def test_bandit_measures_itself_and_ends_with_its_stdin():
    with coprocess.Bandit([CPU]) as b:
        assert b.ready["state"] == "ready" and b.ready["cpus"] == [CPU]
        for duty in (0.25, 1.0):
            b.run(duty)
            got = b.stop()
            assert got["duty"] == duty and got["GBps"] >= 0 and got["seconds"] > 0
        with pytest.raises(RunFailed, match="not running"):
            b.stop()
        with pytest.raises(RunFailed, match="unknown command"):
            b.ask("dance")
    assert b.proc.returncode == 0


def test_pirate_holds_and_probes():
    with coprocess.Pirate(CPU, 2 << 20) as p:
        assert p.hold(1 << 20) > 0
        got = p.stop()
        assert got["accesses"] > 0 and got["ns_per_access"] > 0
        probe = p.probe(CPU, 1 << 20)
        assert min(probe["own_ns"], probe["shared_ns"], probe["flushed_ns"]) > 0
        with pytest.raises(RunFailed, match="hold"):
            p.hold(64 << 20)
    assert p.proc.returncode == 0


@pytest.mark.cpus(2)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_leaves_no_process_behind(tmp_path, sig):
    """Stopped while the program runs beside the bandit: bandwall, the bandit, the pirate and the
    program all end. Waits for states (the program running), never for a time."""
    first, marker = tmp_path / "first", tmp_path / "started"
    # the first run (alone, before the bandit starts) lasts 0.1 s; the second, beside the bandit, waits
    prog = [
        "sh",
        "-c",
        f"if [ -e {first} ]; then touch {marker}; exec sleep 600; fi; touch {first}; sleep 0.1",
    ]
    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, "-m", "bandwall", "sensitivity", "--no-store", "--repeat", "1", "--", *prog],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # however the suite was started
    )
    try:
        deadline = time.monotonic() + 300
        while not marker.exists():
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "the program never started"
            time.sleep(0.05)
        helpers = children(proc.pid)
        assert (
            len(helpers) >= 2
        )  # the bandit, the reference triad, the pirate (where a CPU shares the cache) and the program
        proc.send_signal(sig)
        assert proc.wait(timeout=120) != 0
        assert "interrupted" in proc.stderr.read()
        for pid in helpers:
            deadline = time.monotonic() + 60
            while alive(pid):
                assert time.monotonic() < deadline, f"process {pid} outlived bandwall"
                time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_short_program_is_repeated_or_refused():
    assert repeat_for(0.2, None) == (1, "one run lasts 0.2 s")
    n, why = repeat_for(0.001, None)
    assert n == 250 and "under 50 ms" in why
    assert repeat_for(0.001, 60)[0] == 60
    with pytest.raises(Exception, match="give --repeat 50 or more"):
        repeat_for(0.001, 10)


# ---- the verdict's rule on constructed records ----------------------------------------------------


def slow(median, lo=None, hi=None, rounds=5):
    lo = median if lo is None else lo
    return {
        "median": median,
        "lo": lo,
        "hi": median if hi is None else hi,
        "rounds": rounds,
        "enough": rounds >= 5,
    }


def record(curve, cache=(), bw=None, node=40.0, held=8.0, llc=8.0, cpus="0"):
    pts = [{"dose": d, "taken_GBps": t, "bandit_alone_GBps": t, "slowdown": slow(*s)} for d, t, s in curve]
    cc = [
        {
            "pirate_MiB": held - left,
            "left_MiB": left,
            "slowdown": slow(*s),
            "pirate_alone_ns": 2.0,
            "pirate_beside_ns": ns,
        }
        for left, s, ns in cache
    ]
    verdict.mark_kept(cc)
    scan = [
        {
            "bytes": int(held * 2**20),
            "held": True,
            "shared": True,
            "own_ns": 10,
            "shared_ns": 11,
            "flushed_ns": 100,
        }
    ]
    rec = {
        "config": {"cpus": cpus, "pirate_cpu": 1, "llc_bytes": int(llc * 2**20)},
        "result": {
            "curve": pts,
            "cache_curve": cc,
            "bandwidth_GBps": bw,
            "node_GBps": node,
            "cache_held_MiB": held,
            "cache_scan": scan,
            "cache_shared": True,
            "notes": [],
            "controls": {  # both positive controls slowed, the placebo not: the method works here
                name: {"passed": True, "slowed": name != "placebo", "why": None}
                for name in ("bandwidth", "cache", "placebo")
            },
        },
    }
    rec["result"].update(verdict.working_set(rec))
    rec["result"].update(verdict.verdict(rec))
    return rec


FLAT = [(0.25, 2.0, (1.0, 0.99)), (1.0, 8.0, (1.01, 0.98))]
KNEE = [(0.25, 2.0, (1.0, 0.99)), (1.0, 8.0, (1.4, 1.3))]
EARLY = [(0.25, 2.0, (1.2, 1.1)), (1.0, 8.0, (1.3, 1.2))]
CACHE_STEP = [(6.0, (1.0, 0.98), 2.0), (4.0, (1.01, 0.99), 2.0), (2.0, (1.5, 1.3), 2.1)]
CACHE_FLAT = [(6.0, (1.0, 0.98), 2.0), (2.0, (1.02, 0.99), 2.0)]


@pytest.mark.parametrize(
    "curve, cache, bw, expected",
    [
        (KNEE, CACHE_FLAT, 20.0, verdict.BANDWIDTH),  # slowed, half the node's bandwidth its own
        (EARLY, CACHE_FLAT, 0.5, verdict.LATENCY),  # slowed, its own bandwidth small
        (KNEE, CACHE_FLAT, None, verdict.BANDWIDTH),  # bandwidth not told: slowed only near the top
        (EARLY, CACHE_FLAT, None, verdict.LATENCY),  # bandwidth not told: slowed from the lowest dose
        (FLAT, CACHE_STEP, 0.5, verdict.CACHE),
        (EARLY, CACHE_STEP, 0.5, verdict.CACHE),  # the pirate slows it more, its bandwidth small
        (FLAT, CACHE_FLAT, 0.5, verdict.INSENSITIVE),
        (FLAT, CACHE_FLAT, 20.0, verdict.BANDWIDTH),  # the bandit could not leave it less than it uses
        (FLAT, (), None, verdict.INSENSITIVE),
    ],
)
def test_verdict_rule(curve, cache, bw, expected):
    rec = record(curve, cache, bw)
    assert rec["result"]["verdict"] == expected, rec["result"]["why"]


def test_a_slowdown_counts_only_beyond_the_margin_with_enough_rounds():
    assert not verdict.slows({"slowdown": slow(1.3, 1.01)})  # the interval reaches within the 2% margin
    assert not verdict.slows({"slowdown": slow(1.3, 1.2, rounds=3)})  # too few rounds for 90%
    assert verdict.slows({"slowdown": slow(1.3, 1.03)})


@pytest.mark.parametrize(
    "cache, expected, note",
    [
        (CACHE_STEP, [2.0, 4.0], None),
        ([(6.0, (1.3, 1.2), 2.0)], [6.0, None], "or more"),  # slowed by the smallest dose: no top measured
        (CACHE_FLAT, None, "no slowdown with as little as 2 MiB"),
        ([(6.0, (1.0, 0.98), 2.0), (2.0, (1.5, 1.3), 9.0)], None, "left out"),  # the pirate lost its lines
    ],
)
def test_working_set(cache, expected, note):
    r = record(FLAT, cache, 0.5)["result"]
    assert r["working_set_MiB"] == expected
    assert (note is None and r["cache_note"] is None) or note in r["cache_note"]


def test_cache_notes_say_why_no_working_set_is_claimed():
    rec = record(FLAT, CACHE_STEP, 0.5, held=4.0, llc=32.0)
    assert "held at most 4 MiB of the 32 MiB" in rec["result"]["cache_note"]
    rec["result"]["cache_scan"][0]["shared"] = rec["result"]["cache_shared"] = False
    assert "does not share the pirate's cache" in verdict.cache_note(rec)
    rec["config"]["pirate_cpu"] = None
    rec["result"]["notes"] = ["no free CPU shares the last-level cache of CPU 0 (its CPUs: 0)"]
    assert verdict.cache_note(rec).startswith("no free CPU shares")


def test_bandwidth_estimate_scales_by_the_reference():
    alone = [10.0, 10.2, 9.9, 10.1, 10.0]
    est = verdict.bandwidth_estimate(
        alone, [9.0, 9.2, 8.9, 9.1, 9.0], alone, [8.0, 8.2, 7.9, 8.1, 8.0], [30.0] * 5
    )
    assert est["bandwidth_GBps"] == pytest.approx(15.0) and est["bandwidth_beyond_noise"]
    flat = verdict.bandwidth_estimate(alone, alone, alone, alone, [30.0] * 5)
    assert flat["bandwidth_GBps"] is None and "cannot be told" in flat["bandwidth_note"]


@pytest.mark.parametrize(
    "bw, node, cpus, ncpu, advice, words",
    [
        (10.0, 40.0, "0", 8, 4, "feeds about 4.0 copies"),
        (10.0, 40.0, "0", 2, 2, "feeds about 4.0 copies"),  # capped by the copies the CPUs hold
        (10.0, 25.0, "0-1", 8, 2, "feeds about 2.5 copies"),
        (None, 40.0, "0", 4, None, "could not be told"),
    ],
)
def test_copies_the_node_feeds(bw, node, cpus, ncpu, advice, words):
    rec = {"config": {"cpus": cpus}, "result": {"bandwidth_GBps": bw, "node_GBps": node}}
    per = len(cpus.split("-")) if "-" in cpus else 1
    c = copies_mod.estimate(rec, ncpu // per)
    assert c.get("advice") == advice and words in c["text"]


# ---- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, code, message",
    [
        ([], 2, "give the program after --"),
        (["--", "no-such-program-x"], 2, "program not found"),
        (["--", "/"], 2, "program not found"),
        (["--repeat", "0", "--", "true"], 2, "0"),
        (["--rounds", "0", "--", "true"], 2, "0"),
        (["--doses", "0,2", "--", "true"], 2, "--doses"),
        (["--doses", "", "--", "true"], 2, "--doses"),
        (["--cpus", "", "--", "true"], 2, "--cpus"),
        (["--cpus", "0-9999", "--", "true"], 2, ""),
        (["--bandit", "loud", "--", "true"], 2, "loud"),
        pytest.param(
            ["--cpus", ",".join(map(str, sorted(os.sched_getaffinity(0)))), "--", "true"],
            2,
            "no CPU is left free",
            marks=pytest.mark.cpus(1),
        ),
        pytest.param(
            ["--no-store", "--", "sh", "-c", "exit 3"], 1, "failed (exit code 3)", marks=pytest.mark.cpus(2)
        ),
    ],
)
def test_bad_input(run_bandwall, args, code, message, tmp_path):
    p = run_bandwall("sensitivity", "--db", tmp_path / "s.db", *args)
    assert p.returncode == code, p.stderr
    lines = p.stderr.strip().splitlines()
    assert "Traceback" not in p.stderr and lines and message in lines[-1]
    assert not (tmp_path / "s.db").exists() or "sensitivity" not in (tmp_path / "s.db").read_bytes().decode(
        errors="replace"
    )


def test_one_cpu_is_refused_before_anything_runs(run_bandwall, tmp_path):
    marker = tmp_path / "ran"
    p = run_bandwall(
        "sensitivity", "--no-store", "--", "sh", "-c", f"touch {marker}", prefix=["taskset", "-c", str(CPU)]
    )
    assert p.returncode == 2 and "no CPU is left free" in p.stderr and not marker.exists()


@pytest.mark.parametrize(
    "exe, args, message",
    [
        ("bandwall-bandit", [], "--cpus is required"),
        ("bandwall-bandit", ["--cpus", "99999"], "99999"),
        ("bandwall-bandit", ["--cpus", str(CPU), "--duty", "0"], "must lie in (0, 1]"),
        ("bandwall-bandit", ["--cpus", str(CPU), "--duty", "half"], "not a finite number"),
        ("bandwall-bandit", ["--cpus", str(CPU), "--seconds", "inf"], "not a finite number"),
        ("bandwall-bandit", ["--cpus", str(CPU), "--pattern", "zigzag"], "unknown pattern 'zigzag'"),
        ("bandwall-bandit", ["--cpus", str(CPU), "--seconds", "-1"], "must not be negative"),
        ("bandwall-bandit", ["--cpus", str(CPU), "--buffer", "1k"], "at least one page"),
        ("bandwall-pirate", [], "--cpu is required"),
        ("bandwall-pirate", ["--cpu", str(CPU)], "--size"),
        ("bandwall-pirate", ["--cpu", str(CPU), "--size", "0"], "--size"),
        ("bandwall-pirate", ["--cpu", str(CPU), "--size", "2M", "--max", "1M"], "below --size"),
        ("bandwall-pirate", ["--cpu", "99999", "--size", "1M"], "99999"),
    ],
)
def test_native_bad_input(exe, args, message):
    from bandwall.core import native

    p = subprocess.run([native.executable(exe), *args], capture_output=True, text=True, timeout=60)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and message in lines[0], p.stderr


def test_the_report_shows_each_programs_newest_record():
    from bandwall.report import advice

    rec = record(KNEE, CACHE_FLAT, 20.0)
    est = copies_mod.estimate(rec, 8)
    rec["result"]["copies"] = {"measured": [], "estimate": est, "advice": est["advice"], "text": est["text"]}
    rec["tool"], rec["config"]["command"] = "sensitivity", ["./solver", "in.dat"]
    older = json.loads(json.dumps(rec))
    rec["id"], older["id"] = 7, 3
    lines = [
        line
        for line in advice.recommend(advice.Evidence({advice.STORED: [rec, older]}))
        if line.topic.startswith("your program")
    ]
    assert len(lines) == 1 and lines[0].topic == "your program: ./solver in.dat"
    assert lines[0].verdict.startswith("bandwidth-bound") and "#7" in lines[0].evidence
    assert lines[0].fix.startswith("run 2 cop")


def test_a_bandwidth_within_noise_does_not_limit_the_copies():
    rec = {
        "config": {"cpus": "0"},
        "result": {"bandwidth_GBps": 3.0, "node_GBps": 40.0, "bandwidth_beyond_noise": False},
    }
    c = copies_mod.estimate(rec, 4)
    assert c["advice"] == 4 and "below what the bandit tells" in c["text"]


def test_the_bandit_and_the_pirate_end_when_bandwall_is_killed():
    """SIGKILL leaves bandwall no way out: the co-processes end by themselves (their stdin ends, and
    the kernel sends them SIGTERM)."""
    code = (
        "import sys, time\n"
        "from bandwall.sensitivity import coprocess\n"
        f"b = coprocess.Bandit([{CPU}]); p = coprocess.Pirate({CPU}, 1 << 20)\n"
        "b.run(1.0); p.hold(1 << 19)\n"
        "print(b.proc.pid, p.proc.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(x) for x in proc.stdout.readline().split()]
        assert len(pids) == 2 and all(alive(pid) for pid in pids)
    finally:
        proc.kill()
        proc.wait()
    for pid in pids:
        deadline = time.monotonic() + 60
        while alive(pid):
            assert time.monotonic() < deadline, f"process {pid} outlived bandwall"
            time.sleep(0.05)


def test_the_bandits_losses_are_told_by_their_claims():
    """What the bandit lost beside the triad and beside the program is a claim on the paired rounds
    (its rate alone against beside), and the note that it lost nothing carries that claim's words."""
    from bandwall.core.claims import FALLS, Claim, say

    alone = [10.0, 10.2, 9.9, 10.1, 10.0]
    est = verdict.bandwidth_estimate(
        alone, [9.0, 9.2, 8.9, 9.1, 9.0], alone, [8.0, 8.2, 7.9, 8.1, 8.0], [30.0] * 5
    )
    ref, prog = (Claim.from_json(c) for c in est["bandit_claims"])
    assert ref.direction == prog.direction == FALLS and ref.end.label == "beside the STREAM triad"
    flat = verdict.bandwidth_estimate(alone, alone, alone, alone, [30.0] * 5)
    (ref, _) = (Claim.from_json(c) for c in flat["bandit_claims"])
    assert ref.direction != FALLS and say(ref) in flat["bandwidth_note"]
