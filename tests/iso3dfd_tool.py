"""bandwall-iso3dfd run straight, for the tests that read its record: the process, and the record
checked against the schema."""

from __future__ import annotations

import json
import os
import subprocess

from bandwall.core import native, records
from bandwall.kernels import iso3dfd

# The team of the tests' runs: two threads, or one under a one-CPU mask.
THREADS = min(2, len(os.sched_getaffinity(0)))

# A shape of each vector variant for the sweeps, other than its step shape at radius 3
# (rows_avx512.cpp and rows_avx2.cpp).
SWEPT_SHAPES = {"avx512": "8x2-ring", "avx2": "2x2-split"}


def tool(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    """The executable with these arguments (each made a string), the caller's environment plus env."""
    return subprocess.run(
        [native.executable(iso3dfd.TOOL), *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def record(*args) -> dict:
    """The record of a run that must succeed, validated."""
    proc = tool(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return records.validate(json.loads(proc.stdout))


def offered_isas() -> list[str]:
    """The variants this CPU offers, best first (bandwall-topo's record)."""
    proc = subprocess.run([native.executable("bandwall-topo")], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)["result"]["isa"]["offered"]
