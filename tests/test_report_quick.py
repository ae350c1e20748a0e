"""One whole `bandwall report --quick` (run once for the module): its terminal output is the
report's own lines only, its first section is the recommendations, and --from-db rebuilds the
same page from the stored records without running anything."""

from __future__ import annotations

import json
import os
import re

import pytest

from bandwall.core import store

# What the programs a report runs print on their own, and must not reach the report's terminal.
FOREIGN = [
    re.compile(r"^\s*[{\[]"),  # a JSON record
    re.compile(r"mpiprof-\S+\.(txt|json)"),  # the profiler's report files
    re.compile(r"libbandwall-"),  # the preloaded libraries' log lines
    re.compile(r"^\s*(OMP|GOMP|KMP)_\w+\s*="),  # an OpenMP runtime's settings dump
]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    from conftest import run

    base = tmp_path_factory.mktemp("quick")
    db = base / "q.db"
    proc = run("report", "--quick", "--db", db, "--out", base / "page", env={"COLUMNS": "200"}, timeout=600)
    return proc, db, base


def test_terminal_carries_only_the_report_s_own_lines(quick):
    proc, _, _ = quick
    assert proc.returncode in (0, 1), proc.stderr  # 1: a section failed, said in its place
    for stream, text in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        for line in text.splitlines():
            assert not any(p.search(line) for p in FOREIGN), f"{stream}: {line!r}"
    for line in proc.stderr.splitlines():  # progress lines, and the failure line when one failed
        assert line.startswith(("report: ", "bandwall: error: ")), line


def test_the_first_section_is_what_to_do(quick):
    proc, db, _ = quick
    out = proc.stdout
    assert out.index("What to do on this machine") < out.index("Topology ─")
    advice = out[out.index("What to do on this machine") : out.index("Topology ─")]
    words = ["measured:", "threshold:", "evidence:", "NUMA placement"]
    if len(os.sched_getaffinity(0)) >= 2:  # a sweep of one core count has no knee to speak of
        words.append("cores per memory-bound process")
    for word in words:
        assert word in advice
    assert re.search(r"min [0-9.]+, max [0-9.]+, [3-9] rounds", advice)  # figures with their spread
    with store.Store(db, readonly=True) as s:
        (report,) = s.list(tool="report")
    assert report["result"]["advice"] and all(line["evidence"] for line in report["result"]["advice"])
    ids = {r["id"] for r in s_list(db)}
    for sec in report["result"]["sections"]:
        assert set(sec["record_ids"]) <= ids


def s_list(db) -> list[dict]:
    with store.Store(db, readonly=True) as s:
        return s.list()


def test_from_db_rebuilds_the_same_page_without_running(quick, run_bandwall):
    proc, db, base = quick
    count = len(s_list(db))
    again = run_bandwall("report", "--from-db", "--db", db, "--out", base / "again", env={"COLUMNS": "200"})
    assert again.returncode == proc.returncode, again.stderr
    assert again.stderr == "" or again.stderr.startswith("bandwall: error: ")  # no progress: nothing ran
    first = proc.stdout
    advice = first[first.index("What to do on this machine") : first.index("Sections")]
    assert advice in again.stdout  # the same recommendations and sections, from the records alone
    assert len(s_list(db)) == count
    as_json = run_bandwall("report", "--from-db", "--db", db, "--out", base / "json", "--format", "json")
    *recs, report = json.loads(as_json.stdout)
    assert report["tool"] == "report" and [r["id"] for r in recs] == [
        i for sec in report["result"]["sections"] for i in sec["record_ids"]
    ]
    assert (base / "again" / "index.html").read_text().count("What to do on this machine") >= 1
