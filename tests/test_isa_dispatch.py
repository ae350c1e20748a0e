"""Run-time instruction-set dispatch of bandwall-stream and bandwall-peak (and through them
`bandwall stream` and `bandwall balance`): every variant runs and checks itself where this CPU has
it, and is refused with exit 2 and one line where it does not."""

from __future__ import annotations

import json
import os
import subprocess
from functools import lru_cache

import pytest

from bandwall.core import manifest, native, records

ISAS = manifest.manifest()["isa"]["names"]


@lru_cache(maxsize=1)
def offered() -> list[str]:
    proc = subprocess.run([native.executable("bandwall-topo")], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)["result"]["isa"]["offered"]


# Two threads where the machine gives two, else one.
THREADS = min(2, len(os.sched_getaffinity(0)))


def tool(name: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [native.executable(name), *map(str, args)], capture_output=True, text=True, timeout=120
    )


def refused_or_record(name: str, isa: str, *args) -> dict:
    """The record of one run with --isa isa; when this CPU lacks isa, checks the refusal and skips."""
    proc = tool(name, *args, "--isa", isa)
    if isa not in offered():
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and "not supported by this CPU" in lines[0], (
            proc.stderr
        )
        assert proc.stdout == ""
        pytest.skip(f"this CPU lacks {isa}: {name} refuses it with exit 2 as it must")
    assert proc.returncode == 0, proc.stderr
    return records.validate(json.loads(proc.stdout))


@pytest.mark.parametrize("kernel", ["triad", "dot"])
@pytest.mark.parametrize("isa", ISAS)
def test_stream_variant_validates(isa, kernel):
    """STREAM's validation of a storing kernel (non-temporal stores) and of dot's sum, per variant
    (every kernel of every variant is held to the reference in the native tests)."""
    rec = refused_or_record(
        "bandwall-stream", isa, "--kernel", kernel, "--size", "1M", "--reps", "3", "--threads", THREADS
    )
    c = rec["config"]
    assert (c["isa"], c["isa_requested"]) == (isa, isa)
    assert rec["validation"]["passed"] is True
    if isa != "generic":
        assert c["vector_bits"] == (512 if isa == "avx512" else 256)


@pytest.mark.parametrize("isa", ISAS)
def test_peak_variant_counts_its_lanes(isa):
    rec = refused_or_record("bandwall-peak", isa, "--reps", 1, "--seconds", "0.01", "--threads", 1)
    c, r = rec["config"], rec["result"]
    assert (c["isa"], c["isa_requested"]) == (isa, isa)
    assert r["lanes_dp"] * 64 == c["vector_bits"] and r["lanes_sp"] == 2 * r["lanes_dp"]
    if isa != "generic":
        assert c["fma_instruction"] is True and c["vector_bits"] == (512 if isa == "avx512" else 256)
    assert r["per_core_gflops_dp"] > 0 and r["per_core_gflops_sp"] > 0


@pytest.mark.parametrize("name", ["bandwall-stream", "bandwall-peak"])
def test_auto_is_one_offered_and_says_how(name):
    extra = ["--size", "1M", "--reps", 2] if name == "bandwall-stream" else ["--reps", 1, "--seconds", "0.01"]
    proc = tool(name, *extra, "--threads", 1)
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)["config"]
    # auto: by speed (the table of measured choices, a cached or a short measurement), else the widest
    assert c["isa_requested"] == "auto" and c["isa"] == c["isa_choice"]["isa"] and c["isa"] in offered()
    assert c["isa_choice"]["how"] in ("table", "cached", "measured", "model", "only")
    if c["isa_choice"]["how"] == "model":
        assert c["isa"] == offered()[0]


def test_balance_runs_both_kernels_with_the_isa_asked(run_bandwall):
    isa = offered()[-1]  # generic: every CPU has it, and it is not what auto picks on a vector machine
    p = run_bandwall(
        "balance",
        *("--size", "1M", "--reps", "3", "--peak-reps", "1", "--peak-seconds", "0.01", "--threads", "1"),
        *("--isa", isa, "--no-store", "--format", "json"),
    )
    assert p.returncode == 0, p.stderr
    c = json.loads(p.stdout)["config"]
    assert (c["isa"], c["stream_isa"], c["isa_requested"]) == (isa, isa, isa)


def test_stream_front_end_passes_isa(run_bandwall):
    isa = offered()[0]
    p = run_bandwall("stream", "--size", "1M", "--reps", "2", "--isa", isa, "--no-store", "--format", "json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["config"]["isa"] == isa


BAD_FRONT = [
    (["stream", "--isa", "sse9"], "'sse9' is not one of"),
    (["balance", "--isa", "neon"], "'neon' is not one of"),
    (["stream", "--engine", "memcpy", "--isa", "generic"], "--isa chooses the CPU-only kernels"),
]


@pytest.mark.parametrize("args,fragment", BAD_FRONT, ids=[" ".join(a) for a, _ in BAD_FRONT])
def test_bad_isa_front_end(run_bandwall, args, fragment):
    p = run_bandwall(*args, "--no-store")
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and fragment in lines[0], p.stderr


BAD_NATIVE = [
    ("bandwall-stream", ["--isa", "sse9"], "unknown isa 'sse9'"),
    ("bandwall-stream", ["--isa", ""], "--isa is empty"),
    ("bandwall-peak", ["--isa", "neon"], "unknown isa 'neon'"),
    ("bandwall-peak", ["--isa", " "], "--isa is empty"),
]


@pytest.mark.parametrize(
    "name,args,fragment", BAD_NATIVE, ids=[f"{n} {' '.join(a)}" for n, a, _ in BAD_NATIVE]
)
def test_bad_isa_native(name, args, fragment):
    p = tool(name, *args)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and fragment in lines[0], p.stderr
    assert p.stdout == ""
