"""Immunity to the user's OpenMP environment: whatever OMP_*, GOMP_* and KMP_* variables are set
(HPC module files set them), bandwall's kernels run on the CPUs they were asked for (or the
process is allowed), the record lists each variable and what was done about it, and a command
bandwall launches for the user still gets the user's settings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from bandwall.core import native

ALLOWED = sorted(os.sched_getaffinity(0))
HOSTILE = {
    "OMP_PROC_BIND": "true",
    "OMP_PLACES": "cores",
    "GOMP_CPU_AFFINITY": "0",
    "KMP_AFFINITY": "granularity=fine,compact,1,0",
    "OMP_NUM_THREADS": "1",
    "OMP_DYNAMIC": "true",
    "OMP_THREAD_LIMIT": "1",
    "GOMP_SPINCOUNT": "infinite",
    "OMP_WAIT_POLICY": "passive",
}
# Values the runtime would reject with a warning (or not parse): bandwall must not trip on them,
# nor on a value that is not UTF-8.
MALFORMED = {
    "OMP_NUM_THREADS": "abc",
    "OMP_PLACES": "{0:99}:junk",
    "GOMP_CPU_AFFINITY": "x-y",
    "OMP_PROC_BIND": "",
    "KMP_AFFINITY": os.fsdecode(b"\xff\xfe compact"),
}
KEPT = {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME"}
ENVS = {**{name: {name: value} for name, value in HOSTILE.items()}, "all": HOSTILE, "malformed": MALFORMED}


def clean_env(extra: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_", "KMP_"))}
    env.update(extra)
    return env


def run_native(name: str, args: list[str], env: dict, prefix: list[str] | None = None) -> dict:
    p = subprocess.run(
        [*(prefix or []), native.executable(name), *args], capture_output=True, env=clean_env(env)
    )
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err
    assert "libgomp" not in err and "OMP:" not in err, err  # the runtime never saw the variables
    return json.loads(p.stdout.decode().splitlines()[-1])


def shown(value: str) -> str:
    """How the record shows a value: bytes that are not UTF-8 as \\xNN."""
    raw = os.fsencode(value)
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return "".join(chr(b) if b < 0x80 else f"\\x{b:02x}" for b in raw)


def assert_openmp_env(
    rec: dict, env: dict, action: str = "removed before the OpenMP runtime started"
) -> None:
    got = rec["provenance"]["openmp_env"]
    assert set(got) == set(env)
    for name, value in env.items():
        assert got[name]["value"] == shown(value)
        if name in KEPT:  # how idle threads wait is the user's choice and does not move threads
            assert "kept" in got[name]["action"]
        else:
            assert action in got[name]["action"]


def cpu_list(cpus: list[int]) -> str:
    return (
        ",".join(map(str, cpus))
        if len(cpus) < 2 or cpus != list(range(cpus[0], cpus[-1] + 1))
        else f"{cpus[0]}-{cpus[-1]}"
    )


PREFIXES = {"plain": ([], ALLOWED)}
if len(ALLOWED) >= 2:
    last = ALLOWED[-1]
    if shutil.which("taskset"):
        PREFIXES["taskset"] = (["taskset", "-c", str(last)], [last])
    if shutil.which("numactl"):
        PREFIXES["numactl"] = (["numactl", f"--physcpubind={last}"], [last])


STREAM = ["--kernel", "triad", "--size", "1M", "--reps", "2"]


@pytest.mark.parametrize("case", list(ENVS))
def test_stream_runs_on_every_allowed_cpu_whatever_the_variables(case):
    env = ENVS[case]
    rec = run_native("bandwall-stream", STREAM, env)
    assert rec["result"]["threads_ran_on"] == ALLOWED
    assert rec["provenance"]["threads"] == len(ALLOWED)
    assert rec["provenance"]["cpus"] == cpu_list(ALLOWED)
    assert_openmp_env(rec, env)


@pytest.mark.parametrize("where", [w for w in PREFIXES if w != "plain"])
@pytest.mark.parametrize("case", ["all", "malformed"])
def test_the_cpu_set_of_taskset_and_numactl_is_the_one_used(where, case):
    prefix, cpus = PREFIXES[where]
    rec = run_native("bandwall-stream", STREAM, ENVS[case], prefix)
    assert rec["result"]["threads_ran_on"] == cpus
    assert rec["provenance"]["cpus"] == cpu_list(cpus)
    assert_openmp_env(rec, ENVS[case])


def test_no_variables_no_entries():
    rec = run_native("bandwall-stream", STREAM, {})
    assert rec["provenance"]["openmp_env"] == {}


@pytest.mark.skipif(len(ALLOWED) < 2, reason="needs 2 CPUs")
def test_explicit_cpus_win_over_the_variables():
    cpus = [ALLOWED[1], ALLOWED[0]]
    rec = run_native("bandwall-stream", [*STREAM, "--cpus", f"{cpus[0]},{cpus[1]}"], HOSTILE)
    assert rec["result"]["threads_ran_on"] == cpus


@pytest.mark.skipif(len(ALLOWED) < 2, reason="needs 2 CPUs")
def test_iso3dfd_gets_its_two_threads():
    # Before: "2 threads asked for but binding 'compact' has only 1 CPUs".
    args = ["37", "29", "41", "2", "13", "7", "9", "compact", "2", "--json"]
    for env in (HOSTILE, {"GOMP_CPU_AFFINITY": "0"}):
        rec = run_native("bandwall-iso3dfd", args, env)
        assert rec["provenance"]["threads"] == 2
        assert rec["provenance"]["cpus"] == cpu_list(ALLOWED[:2])
        assert_openmp_env(rec, env)


def test_peak_and_place_record_their_cpus_and_the_variables():
    rec = run_native("bandwall-peak", ["--seconds", "0.01", "--reps", "1"], HOSTILE)
    assert rec["result"]["threads_ran_on"] == ALLOWED
    assert_openmp_env(rec, HOSTILE)
    rec = run_native("bandwall-place", ["--size", "1M"], HOSTILE)
    assert rec["result"]["allowed_cpus"] == ALLOWED
    assert rec["result"]["thread_cpus"] == ALLOWED
    assert_openmp_env(rec, HOSTILE)


def test_a_launched_command_keeps_the_users_variables():
    rec = run_native(
        "bandwall-launch",
        ["--proc", "all@default", "--", "sh", "-c", 'echo "$OMP_NUM_THREADS/$OMP_PROC_BIND"'],
        HOSTILE,
    )
    assert rec["result"]["processes"][0]["stdout"].strip() == "1/true"
    assert_openmp_env(rec, HOSTILE)
    assert all(
        "passed to the launched command" in v["action"] for v in rec["provenance"]["openmp_env"].values()
    )


def test_front_end_says_what_it_ignored(run_bandwall):
    env = {"OMP_PROC_BIND": "true", "OMP_PLACES": "cores"}
    p = run_bandwall("stream", *STREAM, "--format", "json", "--no-store", env=env)
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["result"]["threads_ran_on"] == ALLOWED
    assert_openmp_env(rec, env)
    notice = [ln for ln in p.stderr.splitlines() if ln.startswith("bandwall: ignored")]
    assert len(notice) == 1 and "OMP_PROC_BIND" in notice[0] and "OMP_PLACES" in notice[0], p.stderr
