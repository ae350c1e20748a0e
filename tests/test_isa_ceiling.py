"""The dispatch ceiling, BANDWALL_MAX_ISA=generic|avx2|avx512: under each ceiling this CPU allows,
every dispatching executable (STREAM, the peak, ISO3DFD in one process and over ranks, the engines'
pipeline) runs a variant no wider than it and says so in config.isa_choice.ceiling; an explicit
--isa above it is refused in one line; a value that is no variant exits 2 with one line, from the
executables and from the front end."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from bandwall.core import native

THREADS = min(2, len(os.sched_getaffinity(0)))
WIDTH = {"generic": 128, "avx2": 256, "avx512": 512}

# One short run of each dispatching executable, its record printed on stdout.
RUNS = {
    "bandwall-stream": ["--kernel", "triad", "--size", "1M", "--reps", "2", "--threads", THREADS],
    "bandwall-peak": ["--reps", "1", "--seconds", "0.01", "--threads", "1"],
    "bandwall-iso3dfd": [37, 29, 41, 3, 13, 7, 9, "compact", THREADS, "--verify", "--json"],
    "bandwall-pipeline": [
        *("--kernel", "triad", "--size", "1M", "--reps", "2"),
        *("--threads", "1", "--engine", "none"),
    ],
}


def tool(name: str, *args, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [native.executable(name), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **(env or {})},
    )


def offered() -> list[str]:
    """The variants the executables offer now (under the ceiling in force)."""
    return json.loads(tool("bandwall-topo").stdout)["result"]["isa"]["offered"]


@pytest.mark.parametrize("name", sorted(RUNS))
def test_each_executable_runs_under_the_ceiling_and_says_it(name, isa_ceiling):
    allowed = offered()
    assert allowed and all(WIDTH[v] <= WIDTH[isa_ceiling] for v in allowed)
    p = tool(name, *RUNS[name])
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    choice = rec["config"]["isa_choice"]
    assert choice["isa"] in allowed and choice["ceiling"] == isa_ceiling, choice
    assert rec["validation"]["passed"] is True


def test_iso3dfd_over_ranks_runs_under_the_ceiling(isa_ceiling, run_bandwall):
    if not shutil.which("mpirun"):
        pytest.skip("no mpirun")
    p = run_bandwall(
        *("iso3dfd", "--grid", "40x40x48", "--iters", "2", "--ranks", "2", "--threads", "1"),
        *("--no-store", "--format", "json"),
    )
    assert p.returncode == 0, p.stderr
    c = json.loads(p.stdout)["config"]
    assert WIDTH[c["isa"]] <= WIDTH[isa_ceiling] and c["isa_ceiling"] == isa_ceiling, c


def test_topology_says_the_ceiling_and_what_the_cpu_runs(isa_ceiling):
    isa = json.loads(tool("bandwall-topo").stdout)["result"]["isa"]
    assert isa["ceiling"] == isa_ceiling
    assert isa["offered"] == [v for v in isa["cpu_offered"] if WIDTH[v] <= WIDTH[isa_ceiling]]


def test_no_ceiling_is_the_cpu_itself():
    isa = json.loads(tool("bandwall-topo").stdout)["result"]["isa"]
    assert isa["ceiling"] is None and isa["offered"] == isa["cpu_offered"]


@pytest.mark.parametrize("name", ["bandwall-stream", "bandwall-peak", "bandwall-iso3dfd"])
def test_a_variant_above_the_ceiling_is_refused_in_one_line(name):
    args = RUNS[name]
    cpu = json.loads(tool("bandwall-topo").stdout)["result"]["isa"]["cpu_offered"]
    wide = [v for v in cpu if v != "generic"]
    if not wide:
        pytest.skip("this CPU runs only the generic variant: nothing is above a generic ceiling")
    p = tool(name, *args, "--isa", wide[0], env={"BANDWALL_MAX_ISA": "generic"})
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and p.stdout == "" and len(lines) == 1, p.stderr
    assert f"isa '{wide[0]}' is above the ceiling BANDWALL_MAX_ISA=generic (allowed: generic)" in lines[0]


BAD = ["avx", "sse2", "avx512f", "native", "AVX-512"]


@pytest.mark.parametrize("value", BAD)
@pytest.mark.parametrize("name", ["bandwall-stream", "bandwall-topo", "bandwall-manifest"])
def test_a_ceiling_that_is_no_variant_exits_2_in_one_line(name, value):
    p = tool(name, env={"BANDWALL_MAX_ISA": value})
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert f"BANDWALL_MAX_ISA='{value}' is not a variant (use generic, avx2 or avx512)" in lines[0]


@pytest.mark.parametrize("value", BAD[:2])
@pytest.mark.parametrize("args", [["stream", "--size", "1M", "--no-store"], ["topo"]])
def test_the_front_end_says_a_bad_ceiling_in_one_line(run_bandwall, args, value):
    p = run_bandwall(*args, env={"BANDWALL_MAX_ISA": value})
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and "BANDWALL_MAX_ISA" in lines[0], p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("engine", ["none", "memcpy"])
def test_the_pipelined_dot_is_the_cpu_only_kernels_bit_for_bit(engine, isa_ceiling):
    """An odd size, so every variant's head and tail run; the record says the comparison."""
    args = (
        "--kernel",
        "dot",
        "--size",
        str(8 * 1000003),
        "--reps",
        "2",
        "--threads",
        THREADS,
        "--engine",
        engine,
    )
    p = tool("bandwall-pipeline", *args)
    assert p.returncode == 0, p.stderr
    v = json.loads(p.stdout)["validation"]
    assert v["passed"] is True and v["cpu_only_dot"]["bit_identical"] is True, v
    assert "bit for bit" in v["method"]


def test_bandwall_topo_says_a_ceiling_that_caps(run_bandwall):
    p = run_bandwall("topo", env={"BANDWALL_MAX_ISA": "generic"})
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stdout.split())  # the terminal view wraps long lines
    cpu = json.loads(tool("bandwall-topo").stdout)["result"]["isa"]["cpu_offered"]
    said = "instruction sets for the kernels: generic"
    if cpu == ["generic"]:
        assert said in text and "BANDWALL_MAX_ISA" not in text
    else:
        assert f"{said} (BANDWALL_MAX_ISA=generic; the CPU runs {', '.join(cpu)})" in text
