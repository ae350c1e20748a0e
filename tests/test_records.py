"""The record schema that ships with the package: every native executable's record fits it, broken
records do not, and the numbers of a record are found where compare and the report look."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from bandwall.core import native, records
from bandwall.core.errors import RunFailed
from bandwall.mpi import launchers

FIRST_CPU = str(min(os.sched_getaffinity(0)))  # a CPU this process may use (taskset may leave out 0)
# A small, fast invocation of each native executable that prints a record.
SAMPLES = {
    "bandwall-topo": [],
    "bandwall-stream": ["--kernel", "triad", "--size", "2M", "--reps", "2", "--threads", "1"],
    "bandwall-peak": ["--threads", "1", "--reps", "1", "--seconds", "0.05"],
    "bandwall-iso3dfd": ["24", "24", "24", "2", "16", "8", "8", "none", "1", "--json"],
    "bandwall-place": ["--size", "2M", "--threads", "1"],
    "bandwall-launch": ["--proc", f"{FIRST_CPU}@default", "--", "true"],
    "bandwall-counters": ["--", "true"],
    "bandwall-pin": ["--cpus", FIRST_CPU, "--", "true"],
    "bandwall-bandit": ["--cpus", FIRST_CPU, "--buffer", "1M", "--seconds", "0.05"],
    "bandwall-pirate": ["--cpu", FIRST_CPU, "--size", "1M", "--seconds", "0.05"],
    "bandwall-pipeline": [
        "--kernel",
        "triad",
        "--cpus",
        FIRST_CPU,
        "--engine",
        "memcpy",
        "--size",
        "2M",
        "--reps",
        "2",
    ],
}
# MPI executables run on 2 ranks through the launcher the front end would use.
MPI_SAMPLES = {
    "bandwall-mpi-stream": ["--kernel", "triad", "--size", "2M", "--reps", "2"],
    "bandwall-iso3dfd-mpi": ["40", "24", "40", "2", "40", "8", "8", "1"],
    "bandwall-mpi-pingpong-openmpi": ["--max-size", "64", "--reps", "1", "--max-iterations", "10"],
    "bandwall-mpi-pingpong-mpich": ["--max-size", "64", "--reps", "1", "--max-iterations", "10"],
}
# bandwall-pin-probe is an OpenMP test program: it prints its own line, not a record.
# The manifest is the tables the front end reads (tests/test_manifest.py), not a run's record.
NOT_RECORD_MAKERS = {"bandwall-native-tests", "bandwall-pin-probe", "bandwall-manifest"}
# What each sample worked on and how often it repeated it: provenance.sizes, provenance.repetitions.
MIB2 = 2 << 20
SAMPLE_SIZES = {
    "bandwall-topo": ({}, 0),
    "bandwall-stream": ({"a": MIB2, "b": MIB2, "c": MIB2}, 2),
    "bandwall-peak": ({}, 1),
    "bandwall-iso3dfd": ({"n1": 24, "n2": 24, "n3": 24}, 2),
    "bandwall-place": ({"a": MIB2, "b": MIB2, "c": MIB2}, 1),
    "bandwall-launch": ({}, 1),
    "bandwall-counters": ({}, 1),
    "bandwall-pin": ({}, 1),
    "bandwall-bandit": ({"buffer": 1 << 20}, 1),
    "bandwall-pirate": ({"lines": 1 << 20}, 1),
    "bandwall-pipeline": ({"a": MIB2, "b": MIB2, "c": MIB2}, 2),
    "bandwall-mpi-stream": ({"a": MIB2, "b": MIB2, "c": MIB2}, 2),
    "bandwall-iso3dfd-mpi": ({"n1": 40, "n2": 24, "n3": 40}, 2),
    "bandwall-mpi-pingpong-openmpi": ({"buffer": 64}, 1),
    "bandwall-mpi-pingpong-mpich": ({"buffer": 64}, 1),
}


def _bindirs() -> list[Path]:
    dirs = [Path(os.environ["BANDWALL_BINDIR"])] if os.environ.get("BANDWALL_BINDIR") else []
    return dirs + [Path(sys.executable).parent]


def _found() -> set[str]:
    return {
        p.name
        for d in _bindirs()
        if d.is_dir()
        for p in d.glob("bandwall-*")
        if os.access(p, os.X_OK) and p.name not in NOT_RECORD_MAKERS
    }


def _mpi_record(exe: str) -> dict:
    plan = launchers.plan(exe, 2, "mpirun")
    p = subprocess.run(
        [*plan.prefix, native.executable(exe), *MPI_SAMPLES[exe]],
        capture_output=True,
        text=True,
        env={**os.environ, **plan.env},
        timeout=120,
    )
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert p.returncode == 0 and lines, p.stderr[-2000:]
    return json.loads(lines[-1])


@pytest.mark.parametrize("exe", sorted(set(SAMPLES) | set(MPI_SAMPLES) | _found()))
def test_native_record_fits_the_schema(exe):
    try:
        native.executable(exe)
    except RunFailed:
        pytest.skip(f"{exe} is not built here")
    assert exe in SAMPLES or exe in MPI_SAMPLES, f"{exe} prints records: give it a sample invocation here"
    if exe in MPI_SAMPLES:
        rec = records.finish(_mpi_record(exe))
    else:
        rec = records.finish(native.run_record(exe, SAMPLES[exe], timeout=120))
    assert records.problems(rec) == []
    v = rec["validation"]
    # No record says passed without having checked; one that checks nothing says so.
    assert (v["checked"], v["passed"]) in ((True, True), (False, records.NOT_APPLICABLE)), v
    assert v["method"], v
    assert rec["provenance"]["bandwall_version"]
    assert "steal" in rec["provenance"]  # every executable says what the host took, or null
    sizes, repetitions = SAMPLE_SIZES[exe]
    assert rec["provenance"]["sizes"] == sizes and rec["provenance"]["repetitions"] == repetitions


def test_schema_requires_the_run_provenance():
    required = set(records.schema()["properties"]["provenance"]["required"])
    assert {"threads", "cpus", "binding", "placement", "sizes", "repetitions", "date"} <= required


def test_schema_ships_with_the_package_and_is_valid():
    text = resources.files("bandwall").joinpath(records.SCHEMA_FILE).read_text()
    assert '"schema_version"' in text
    jsonschema.Draft202012Validator.check_schema(records.schema())
    assert records.schema()["properties"]["schema_version"]["const"] == records.SCHEMA_VERSION


def _good(make_record) -> dict:
    rec = make_record(result={"best_GBps": 10.0})
    rec["placement"] = {"policy": "first-touch", "page_map": {"a": {"0": 0.75, "1": 0.25}}}
    return rec


def _without(path: str):
    def change(rec):
        *parents, last = path.split("/")
        for p in parents:
            rec = rec[p]
        del rec[last]

    return change


def _set(path: str, value):
    def change(rec):
        *parents, last = path.split("/")
        for p in parents:
            rec = rec[p]
        rec[last] = value

    return change


@pytest.mark.parametrize(
    "change, where",
    [
        (_without("schema_version"), "record"),
        (_set("schema_version", 2), "schema_version"),
        (_without("tool"), "record"),
        (_set("tool", ""), "tool"),
        (_set("tool", "Has Spaces"), "tool"),
        (_set("result", [1, 2]), "result"),
        (_without("validation/passed"), "validation"),
        (_set("validation/passed", "yes"), "validation/passed"),
        (_without("provenance/git_revision"), "provenance"),
        (_set("provenance/threads", -1), "provenance/threads"),
        (_set("provenance/threads", 1.5), "provenance/threads"),
        (_set("provenance/date", "yesterday"), "provenance/date"),
        (_without("provenance/sizes"), "provenance"),
        (_without("provenance/repetitions"), "provenance"),
        (_set("provenance/sizes", [1 << 20]), "provenance/sizes"),
        (_set("provenance/sizes/a", -1), "provenance/sizes/a"),
        (_set("provenance/sizes/a", "1M"), "provenance/sizes/a"),
        (_set("provenance/repetitions", -1), "provenance/repetitions"),
        (_set("provenance/repetitions", 2.5), "provenance/repetitions"),
        (_set("provenance/steal", {"share": 1.5, "seconds": 0.1}), "provenance/steal/share"),
        (_set("provenance/steal", {"share": 0.1}), "provenance/steal"),
        (_set("provenance/steal", 0.1), "provenance/steal"),
        (_set("placement/page_map/a/0", 1.5), "placement/page_map/a/0"),
        (_set("id", 0), "id"),
    ],
)
def test_broken_records_are_refused(make_record, change, where):
    rec = _good(make_record)
    assert records.problems(rec) == []
    bad = copy.deepcopy(rec)
    change(bad)
    found = records.problems(bad)
    assert found and found[0].split(": ")[0] == where, found
    with pytest.raises(RunFailed, match=f"malformed at {where}"):
        records.validate(bad)


@pytest.mark.parametrize("thing", [[], "text", None, 3])
def test_non_objects_are_refused(thing):
    with pytest.raises(RunFailed, match="malformed at record"):
        records.validate(thing)
    with pytest.raises(RunFailed):
        records.finish(thing)


def test_finish_adds_front_end_provenance(make_record):
    rec = records.finish(make_record(), launcher="test")
    assert rec["provenance"]["launcher"] == "test"
    assert rec["provenance"]["bandwall_version"] and rec["provenance"]["python"]


def test_numbers_by_dotted_path():
    data = {
        "best_GBps": 9.5,
        "ok": True,
        "name": "triad",
        "nan": float("nan"),
        "points": [{"cores": 1, "best_GBps": 5.0}],
        "nested": {"x": {"y": 2}},
        "matrix": [[1, 2]],
    }
    assert records.numbers(data) == {
        "best_GBps": 9.5,
        "points.0.cores": 1,
        "points.0.best_GBps": 5.0,
        "nested.x.y": 2,
        "matrix.0.0": 1,
        "matrix.0.1": 2,
    }
