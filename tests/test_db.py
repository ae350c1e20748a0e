"""`bandwall db list|show|compare|export` on a database filled with sample records."""

from __future__ import annotations

import csv
import io
import json

import pytest

from bandwall.core import store


@pytest.fixture
def filled(tmp_path, make_record):
    """A database with three stream records and one sweep record; returns (path, records by id)."""
    path = tmp_path / "filled.db"
    recs = [
        make_record(
            "stream", {"best_GBps": 20.0, "median_GBps": 18.0, "kernel": "triad"}, date="2026-01-01T00:00:00Z"
        ),
        make_record(
            "stream", {"best_GBps": 30.0, "median_GBps": 27.0, "kernel": "triad"}, date="2026-01-02T00:00:00Z"
        ),
        make_record(
            "sweep",
            {"knee_cores": 2, "points": [{"cores": 1, "best_GBps": 15.0}, {"cores": 2, "best_GBps": 25.0}]},
        ),
        make_record("stream", {"best_GBps": 0.0, "median_GBps": 9.0, "valid": True}, passed=False, threads=1),
    ]
    with store.Store(path) as s:
        ids = [s.add(r) for r in recs]
    return path, {i: {**r, "id": i} for i, r in zip(ids, recs)}


def ok_json(run_bandwall, *args):
    proc = run_bandwall(*args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def ok_csv(run_bandwall, *args) -> list[dict]:
    proc = run_bandwall(*args)
    assert proc.returncode == 0, proc.stderr
    return list(csv.DictReader(io.StringIO(proc.stdout)))


def test_list_json_is_every_record_newest_first(filled, run_bandwall):
    path, by_id = filled
    got = ok_json(run_bandwall, "db", "list", "--format", "json", "--db", path)
    assert [r["id"] for r in got] == sorted(by_id, reverse=True)
    assert got == [by_id[r["id"]] for r in got]


def test_list_filters(filled, run_bandwall):
    path, by_id = filled
    got = ok_json(
        run_bandwall, "db", "list", "--format", "json", "--tool", "stream", "--limit", "2", "--db", path
    )
    streams = sorted((i for i, r in by_id.items() if r["tool"] == "stream"), reverse=True)
    assert [r["id"] for r in got] == streams[:2]
    assert ok_json(run_bandwall, "db", "list", "--format", "json", "--tool", "nothing", "--db", path) == []


def test_list_csv_and_table(filled, run_bandwall):
    path, by_id = filled
    rows = ok_csv(run_bandwall, "db", "list", "--format", "csv", "--db", path)
    assert sorted(int(r["id"]) for r in rows) == sorted(by_id)
    for r in rows:
        rec = by_id[int(r["id"])]
        assert r["tool"] == rec["tool"] and r["provenance.date"] == rec["provenance"]["date"]
        if "best_GBps" in rec["result"]:
            assert float(r["result.best_GBps"]) == rec["result"]["best_GBps"]
    proc = run_bandwall("db", "list", "--db", path)
    assert proc.returncode == 0 and proc.stdout.strip()


def test_show(filled, run_bandwall):
    path, by_id = filled
    rid = next(iter(by_id))
    assert ok_json(run_bandwall, "db", "show", rid, "--format", "json", "--db", path) == by_id[rid]
    rows = ok_csv(run_bandwall, "db", "show", rid, "--format", "csv", "--db", path)
    fields = {r["field"]: r["value"] for r in rows}
    assert fields["tool"] == by_id[rid]["tool"] and float(fields["result.best_GBps"]) == 20.0


def test_compare_numeric_fields_with_ratio(filled, run_bandwall):
    path, by_id = filled
    a, b = [i for i, r in by_id.items() if r["tool"] == "stream"][:2]
    got = ok_json(run_bandwall, "db", "compare", a, b, "--format", "json", "--db", path)
    assert (got["a"]["id"], got["b"]["id"]) == (a, b)
    fields = {f["field"]: f for f in got["fields"]}
    assert set(fields) == {"best_GBps", "median_GBps"}  # the kernel name is not a number
    assert fields["best_GBps"]["a"] == 20.0 and fields["best_GBps"]["b"] == 30.0
    assert fields["best_GBps"]["ratio"] == pytest.approx(1.5)
    rows = ok_csv(run_bandwall, "db", "compare", a, b, "--format", "csv", "--db", path)
    assert {r["field"]: float(r["ratio"]) for r in rows} == pytest.approx(
        {"best_GBps": 1.5, "median_GBps": 1.5}
    )


def test_compare_zero_and_missing_fields_have_no_ratio(filled, run_bandwall):
    path, by_id = filled
    zero = next(i for i, r in by_id.items() if r["result"].get("best_GBps") == 0.0)
    first = next(iter(by_id))
    fields = {
        f["field"]: f
        for f in ok_json(run_bandwall, "db", "compare", zero, first, "--format", "json", "--db", path)[
            "fields"
        ]
    }
    assert fields["best_GBps"]["ratio"] is None  # 20 / 0
    assert "valid" not in fields  # booleans are not numbers
    sweep = next(i for i, r in by_id.items() if r["tool"] == "sweep")
    fields = {
        f["field"]: f
        for f in ok_json(run_bandwall, "db", "compare", first, sweep, "--format", "json", "--db", path)[
            "fields"
        ]
    }
    assert fields["points.1.best_GBps"] == {
        "field": "points.1.best_GBps",
        "a": None,
        "b": 25.0,
        "ratio": None,
    }
    assert fields["best_GBps"]["b"] is None


def test_export_json_lines_and_csv(filled, run_bandwall, tmp_path):
    path, by_id = filled
    proc = run_bandwall("db", "export", "--db", path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [json.loads(ln) for ln in lines] == [by_id[i] for i in sorted(by_id)]
    out = tmp_path / "all.csv"
    proc = run_bandwall("db", "export", "--format", "csv", "--out", out, "--db", path)
    assert proc.returncode == 0 and proc.stdout == ""
    rows = list(csv.DictReader(out.open()))
    assert [int(r["id"]) for r in rows] == sorted(by_id)
    sweep = next(r for r in rows if r["tool"] == "sweep")
    assert json.loads(sweep["result.points"])[1]["best_GBps"] == 25.0


def table_ids(text: str) -> list[int]:
    """The ids of a table printed by `db list` or `db export --format table`, top to bottom, in the
    layout the line's width allows: boxed or compact (the first cell of each row below the header),
    or one record as key/value lines ("id  3")."""
    ids, rows = [], False
    for line in text.splitlines():
        cells = line.strip("│┃ ").replace("┃", "│").split("│")[0].split()
        if cells[:1] == ["id"]:
            if len(cells) > 1 and cells[1].isdigit():
                ids.append(int(cells[1]))  # key/value lines
            else:
                rows = True  # the header: rows follow
        elif rows and cells and cells[0].isdigit():
            ids.append(int(cells[0]))
    return ids


def test_export_table_has_the_rows_of_list_oldest_first(filled, run_bandwall, tmp_path):
    path, by_id = filled
    proc = run_bandwall("db", "export", "--format", "table", "--db", path)
    assert proc.returncode == 0, proc.stderr
    listed = run_bandwall("db", "list", "--db", path)
    assert table_ids(proc.stdout) == sorted(by_id) == sorted(table_ids(listed.stdout))
    proc = run_bandwall("db", "export", "--format", "table", "--tool", "sweep", "--db", path)
    assert table_ids(proc.stdout) == [i for i, r in by_id.items() if r["tool"] == "sweep"]
    out = tmp_path / "all.txt"
    proc = run_bandwall("db", "export", "--format", "table", "--out", out, "--db", path)
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    text = out.read_text()
    assert table_ids(text) == sorted(by_id) and "\x1b[" not in text  # plain text in a file


# (arguments, exit code, message): "{db}" is the filled database, "{nodir}" a database in a folder
# that does not exist, "{nofile}" a database file that does not exist in an existing folder, "{out}"
# a file to export to.
BAD = [
    (["show", "999", "--db", "{db}"], 2, "no record with id 999"),
    (["show", "abc", "--db", "{db}"], 2, "'abc' is not a record id"),
    (["show", "0", "--db", "{db}"], 2, "'0' is not a record id"),
    (["show", "--db", "{db}", "--", "-3"], 2, "'-3' is not a record id"),
    (["compare", "1", "--db", "{db}"], 2, "Missing argument"),
    (["compare", "1", "999", "--db", "{db}"], 2, "no record with id 999"),
    (["list", "--format", "yaml", "--db", "{db}"], 2, "'yaml' is not one of"),
    (["list", "--limit", "0", "--db", "{db}"], 2, "0"),
    (["export", "--format", "yaml", "--db", "{db}"], 2, "'yaml' is not one of"),
    (["export", "--out", "", "--db", "{db}"], 2, "'--out': is empty"),
    (["export", "--tool", "", "--db", "{db}"], 2, "'--tool': is empty"),
    (["list", "--tool", "", "--db", "{db}"], 2, "'--tool': is empty"),
    (["export", "--out", "/nonexistent/folder/x.jsonl", "--db", "{db}"], 2, "cannot write"),
    (["frobnicate", "--db", "{db}"], 2, "No such command"),
    (["list", "--db", "{nodir}"], 2, "does not exist: no folder"),
    (["list", "--format", "json", "--db", "{nodir}"], 2, "does not exist: no folder"),
    (["show", "1", "--db", "{nodir}"], 2, "does not exist: no folder"),
    (["compare", "1", "2", "--db", "{nodir}"], 2, "does not exist: no folder"),
    (["export", "--db", "{nodir}"], 2, "does not exist: no folder"),
    (["export", "--out", "{out}", "--db", "{nodir}"], 2, "does not exist: no folder"),
    (["list", "--db", "{nofile}"], 2, "does not exist"),
    (["show", "1", "--db", "{nofile}"], 2, "does not exist"),
    (["compare", "1", "2", "--db", "{nofile}"], 2, "does not exist"),
    (["export", "--out", "{out}", "--db", "{nofile}"], 2, "does not exist"),
]


@pytest.mark.parametrize("args, code, fragment", BAD, ids=[" ".join(a) for a, _, _ in BAD])
def test_bad_input(filled, run_bandwall, tmp_path, args, code, fragment):
    path, _ = filled
    where = {
        "{db}": str(path),
        "{nodir}": str(tmp_path / "no" / "such" / "x.db"),
        "{nofile}": str(tmp_path / "none.db"),
        "{out}": str(tmp_path / "out.jsonl"),
    }
    before = sorted(tmp_path.rglob("*"))
    proc = run_bandwall("db", *[where.get(a, a) for a in args])
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert fragment in lines[0]
    assert proc.stdout == ""
    assert sorted(tmp_path.rglob("*")) == before  # nothing created: no database, folder or export
