"""`bandwall counters` and `--counters GROUP`: software events counted for real here (page faults
follow touched memory, a sleeping program switches context, exit codes pass through), hardware
events as numbers or "unavailable: <reason>", and bad input as one line with exit 2."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from bandwall.core import native
from bandwall.counters import groups as countergroups

SOFTWARE = ("task_clock_s", "page_faults", "context_switches", "cpu_migrations")


def count(*command: str, events: str | None = None) -> tuple[dict, int]:
    args = [native.executable("bandwall-counters"), *(["--events", events] if events else []), "--", *command]
    p = subprocess.run(args, capture_output=True, text=True)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith('{"')]
    assert lines, p.stderr
    return json.loads(lines[-1]), p.returncode


def stream_cmd(size: str) -> list[str]:
    # base pages: every 4 KiB of the three arrays is one fault when first touched
    return [
        native.executable("bandwall-stream"),
        "--size",
        size,
        "--pages",
        "base",
        "--reps",
        "1",
        "--threads",
        "1",
    ]


def test_page_faults_follow_touched_memory_through_a_shell_child():
    small, _ = count("sh", "-c", " ".join(stream_cmd("4M")) + " >/dev/null")
    large, _ = count("sh", "-c", " ".join(stream_cmd("36M")) + " >/dev/null")
    extra_pages = 3 * (36 - 4) * (1 << 20) // 4096
    grown = large["result"]["software"]["page_faults"] - small["result"]["software"]["page_faults"]
    assert grown >= 0.9 * extra_pages, (grown, extra_pages)


def test_a_sleeping_program_switches_context():
    rec, code = count("sleep", "0.2")
    sw = rec["result"]["software"]
    assert code == 0 and rec["result"]["exit_code"] == 0
    if sw["kernel_mode_counted"]:
        assert sw["context_switches"] >= 1
    else:  # switches happen in the kernel: not countable in user mode, and said so
        assert sw["context_switches"].startswith("unavailable: ")
    # the task clock is counted (no comparison with the sleep's length: that would be a time window)
    assert isinstance(sw["task_clock_s"], float) and sw["task_clock_s"] > 0
    assert set(SOFTWARE) <= set(sw)


def paranoid() -> int:
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        return int(f.read())


@pytest.mark.skipif(
    os.geteuid() != 0 or paranoid() < 2 or not shutil.which("runuser"),
    reason="needs root (to run as nobody) and kernel.perf_event_paranoid >= 2",
)
def test_an_unprivileged_user_gets_reasons_not_zeros():
    p = subprocess.run(
        ["runuser", "-u", "nobody", "--", native.executable("bandwall-counters"), "--", "sleep", "0.05"],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0 and "Permission denied" in p.stderr:
        pytest.skip(f"nobody cannot run the build tree's executables: {p.stderr.strip()}")
    sw = json.loads([ln for ln in p.stdout.splitlines() if ln.startswith('{"')][-1])["result"]["software"]
    assert sw["kernel_mode_counted"] is False
    for field in ("context_switches", "cpu_migrations"):
        assert sw[field].startswith("unavailable: ") and "perf_event_paranoid" in sw[field], sw
    assert sw["task_clock_s"] > 0


@pytest.mark.parametrize("code", [0, 3, 42])
def test_the_commands_exit_code_passes_through(code):
    rec, rc = count("sh", "-c", f"exit {code}")
    assert rc == code and rec["result"]["exit_code"] == code and rec["result"]["signal"] == 0


def test_a_killed_command_reads_128_plus_signal():
    rec, rc = count("sh", "-c", "kill -TERM $$")
    assert rc == 128 + 15 and rec["result"]["signal"] == 15


def test_hardware_events_are_counts_or_a_stated_reason():
    rec, _ = count("true", events="PAPI_TOT_INS,PAPI_NO_SUCH_EVENT")
    hw = rec["result"]["hardware"]
    assert set(hw) == {"PAPI_TOT_INS", "PAPI_NO_SUCH_EVENT"}
    assert hw["PAPI_NO_SUCH_EVENT"].startswith("unavailable: PAPI_event_name_to_code: ")
    v = hw["PAPI_TOT_INS"]
    assert (isinstance(v, int) and v > 0) or (
        v.startswith("unavailable: ") and len(v) > len("unavailable: ") + 3
    )


def test_front_end_counters_record_is_stored_with_the_exit_code(run_bandwall, tmp_path):
    db = str(tmp_path / "c.db")
    p = run_bandwall(
        "counters", "--group", "MEM", "--format", "json", "--db", db, "--", "sh", "-c", "echo hi; exit 5"
    )
    assert p.returncode == 5, p.stderr
    rec = json.loads(p.stdout)  # the command's "hi" went to stderr
    assert "hi" in p.stderr
    assert rec["tool"] == "counters" and rec["result"]["exit_code"] == 5 and rec["id"] >= 1
    assert rec["config"]["group"] == "MEM"
    group = countergroups.load("MEM")
    hw = rec["result"]["hardware"]
    for metric in group.metric_names():
        values = [v for k, v in hw.items() if k.startswith(f"{metric}[")]
        assert values, metric
        for v in values:
            assert isinstance(v, float) or v.startswith("unavailable: ")


def test_without_a_group_perf_stats_hardware_events_are_counted_or_say_why(run_bandwall):
    p = run_bandwall("counters", "--format", "json", "--no-store", "--", "true")
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert (rec["config"]["group"], rec["config"]["scope"]) == ("DEFAULT", "task")
    group = countergroups.load("DEFAULT")
    sets = {es.label: es for es in group.eventsets}
    hw = rec["result"]["hardware"]
    assert set(group.metric_names()) <= set(hw)
    if rec["config"]["eventset"] is None:  # PAPI lists none of the sets: every metric says why
        assert all(hw[m].startswith("unavailable: ") for m in group.metric_names()), hw
        return
    es = sets[rec["config"]["eventset"]]
    assert rec["config"]["events"] == list(es.events.values())
    assert set(hw) == set(es.events.values()) | set(es.metrics)
    no_pmu = "no hardware PMU" in rec["validation"]["papi"]
    for name, value in hw.items():
        if no_pmu:  # this machine when it is a guest without PMU: a reason for every event and metric
            assert value.startswith("unavailable: ") and "no hardware PMU is exposed here" in value, (
                name,
                value,
            )
        elif name in es.events.values():
            assert (isinstance(value, int) and value >= 0) or value.startswith("unavailable: "), (name, value)


def test_stream_with_counters_carries_them_in_its_record(run_bandwall):
    p = run_bandwall(
        "stream", "--size", "1M", "--reps", "2", "--counters", "NUMA", "--format", "json", "--no-store"
    )
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    c = rec["counters"]
    assert c["group"] == "NUMA" and c["software"]["page_faults"] > 0
    assert set(SOFTWARE) <= set(c["software"])
    for v in c["hardware"].values():
        assert isinstance(v, (int, float)) or v.startswith("unavailable: ")


BAD = [
    (["counters", "--group", "NOPE", "--", "true"], 2, "unknown counter group 'NOPE'"),
    (["counters", "--", "/no/such/command"], 2, "'/no/such/command' not found or not an executable file"),
    (["counters", "--", "no-such-command-anywhere"], 2, "not found or not an executable file"),
    (["counters", "--", "/"], 2, "not found or not an executable file"),
    (["counters", "--group", "", "--", "true"], 2, "empty"),
    (["counters"], 2, "Missing argument"),
    (["counters", "--grup", "MEM", "--", "true"], 2, "no such option '--grup'"),
    (["stream", "--counters", "NOPE", "--no-store"], 2, "unknown counter group 'NOPE'"),
    (["iso3dfd", "--counters", "NOPE", "--no-store", "--no-roofline"], 2, "unknown counter group 'NOPE'"),
    (["iso3dfd", "--counters", "MEM", "--ablation", "--no-store"], 2, "does not go with --ablation"),
]


@pytest.mark.parametrize("args,code,fragment", BAD, ids=[" ".join(a) for a, _, _ in BAD])
def test_bad_input(run_bandwall, args, code, fragment):
    p = run_bandwall(*args)
    assert p.returncode == code, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], p.stderr
    assert p.stdout == ""


BAD_NATIVE = [
    ([], "no command to count"),
    (["--events", "", "--", "true"], "--events must not be empty"),
    (["--events", "A,,B", "--", "true"], "empty event name"),
    (["--bogus", "--", "true"], "unknown option '--bogus'"),
    (["--", "/no/such"], "not found or not an executable file"),
    (["--output", "/no/such/dir/rec.json", "--", "true"], "cannot write --output"),
]


@pytest.mark.parametrize("args,fragment", BAD_NATIVE, ids=[" ".join(a) or "none" for a, _ in BAD_NATIVE])
def test_bad_input_native(args, fragment):
    p = subprocess.run([native.executable("bandwall-counters"), *args], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], p.stderr
    assert p.stdout == ""


def test_the_commands_openmp_variables_reach_it_unchanged():
    env = {**os.environ, "OMP_NUM_THREADS": "3", "GOMP_CPU_AFFINITY": "0"}
    p = subprocess.run(
        [
            native.executable("bandwall-counters"),
            "--",
            "sh",
            "-c",
            'echo "$OMP_NUM_THREADS $GOMP_CPU_AFFINITY" >&2',
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert p.returncode == 0 and p.stderr.strip() == "3 0"
    rec = json.loads(p.stdout.splitlines()[-1])
    assert "passed to the launched command" in rec["provenance"]["openmp_env"]["OMP_NUM_THREADS"]["action"]


def test_report_section_counts_around_one_stream_run(run_bandwall, tmp_path):
    p = run_bandwall(
        "report", "--sections", "counters", "--quick", "--no-store", "--out", tmp_path, "--format", "json"
    )
    assert p.returncode == 0, p.stderr
    *recs, report = json.loads(p.stdout)  # the report's records, the report record last
    sec = report["result"]["sections"][0]
    assert sec["name"] == "counters" and sec["status"] == "ok", sec
    from bandwall.views.counters import rows

    (rec,) = recs
    names = {row[1]: row[2] for row in rows(rec["counters"])}
    assert names["page_faults"] > 0 and names["task_clock_s"] > 0
    hardware = [row for row in rows(rec["counters"]) if row[0] == "hardware"]
    assert hardware and all(
        isinstance(v, (int, float)) or v.startswith("unavailable: ") for _, _, v in hardware
    )


def _wait_for_member(p: subprocess.Popen, comm: str, limit_s: float = 120) -> bool:
    """True once a process named `comm` runs in p's process group (False if p ends or the limit passes)."""
    deadline = time.monotonic() + limit_s
    while p.poll() is None and time.monotonic() < deadline:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            name = stat[stat.index("(") + 1 : stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2 :].split()
            if name == comm and int(fields[2]) == p.pid:
                return True
        time.sleep(0.05)
    return False


def test_ctrl_c_ends_the_command_and_keeps_its_record(tmp_path):
    # A terminal's Ctrl-C goes to the whole foreground process group: bandwall, bandwall-counters and
    # the command. The command ends; bandwall still stores and prints the record of what ran.
    db = tmp_path / "db.sqlite"
    p = subprocess.Popen(
        [native.executable("bandwall"), "counters", "--format", "json", "--db", str(db), "--", "sleep", "99"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    # Wait for a state, not a time: the command is running once `sleep` exists in the group.
    assert _wait_for_member(p, "sleep"), "the command never started"
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    rec = json.loads(out)
    assert rec["result"]["signal"] == signal.SIGINT or rec["result"]["exit_code"] == 130
    # ended by the signal, not by running to its end (the record says so; no time window asserted)
    assert rec["result"]["wall_s"] > 0 and rec["result"].get("exit_code") != 0
    assert rec["id"] >= 1  # stored
