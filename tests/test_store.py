"""The SQLite store: refusing what is not a healthy bandwall database without touching it, waiting
for other writers, and losing nothing when two processes write at once."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bandwall.core import store
from bandwall.core.errors import RunFailed, StoreError, UsageError


def good_db(path: Path, make_record, n: int = 3) -> Path:
    with store.Store(path) as s:
        for i in range(n):
            s.add(make_record(result={"best_GBps": 10.0 + i}))
    return path


def fingerprint(path: Path) -> dict:
    """Every file in path's folder (and in path, when it is a folder) with the hash of its bytes."""
    out = {}
    for p in sorted(path.parent.rglob("*")):
        if p.is_file() and not p.is_fifo():
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            out[str(p)] = "not a regular file"
    return out


# Each builder makes a bad database at path and returns what the run needs: extra environment
# ("env"), a command prefix ("prefix"), and "hold", called with an ExitStack after the database's
# fingerprint is taken, to keep something in force while the command runs. (The fingerprint must
# come first: reading the file from this process would drop this process's POSIX locks on it.)
def corrupt(path, make_record):
    path.write_bytes(os.urandom(8192))


def truncated(path, make_record):
    good_db(path, make_record, n=50)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def truncated_header(path, make_record):
    good_db(path, make_record)
    path.write_bytes(path.read_bytes()[:50])


def foreign(path, make_record):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    con.execute("INSERT INTO photos (name) VALUES ('holiday.jpg')")
    con.commit()
    con.close()


def foreign_meta(path, make_record):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("CREATE TABLE records (id INTEGER PRIMARY KEY)")
    con.execute("INSERT INTO meta VALUES ('application', 'someone-else')")
    con.commit()
    con.close()


def newer_version(path, make_record):
    good_db(path, make_record)
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value = '2' WHERE key = 'store_version'")
    con.commit()
    con.close()


def missing_folder(path, make_record):
    path.parent.rmdir()  # a named database in a folder that does not exist: refused, nothing made


def missing_file(path, make_record):
    pass  # a named database that does not exist: reading it (bandwall db) is refused


def directory(path, make_record):
    path.mkdir()
    (path / "inside.txt").write_text("keep me")


def fifo(path, make_record):
    os.mkfifo(path)


def unreadable(path, make_record):
    good_db(path, make_record)
    prefix = None
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("root reads files whatever their mode, and setpriv (to drop that power) is absent")
        # Root without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH obeys the file mode like anyone.
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
        if subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
            pytest.skip(
                "root reads files whatever their mode, and cannot drop that power here (setpriv failed)"
            )

    def hold(stack):
        os.chmod(path, 0)
        stack.callback(os.chmod, path, 0o644)

    return {"prefix": prefix, "hold": hold}


def locked(path, make_record):
    good_db(path, make_record)

    def hold(stack):
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        stack.callback(holder.close)
        stack.callback(holder.execute, "ROLLBACK")

    return {"env": {"BANDWALL_DB_TIMEOUT": "0.3"}, "hold": hold}


REFUSALS = [
    (corrupt, "not an SQLite file"),
    (truncated, "corrupt"),
    (truncated_header, "corrupt"),
    (foreign, "not a bandwall database"),
    (foreign_meta, "not a bandwall database"),
    (newer_version, "store version 2"),
    (directory, "is a directory"),
    (fifo, "not a regular file"),
    (unreadable, ("Permission denied", "not readable")),
    (locked, "locked by another process"),
    (missing_folder, "does not exist: no folder"),
    (missing_file, "does not exist"),
]
DB_LIST = ["db", "list"]
# Every case through `db list`; a few through a writer (report) and `db export` as well.
CASES = [(b, f, DB_LIST) for b, f in REFUSALS] + [
    (b, f, cmd)
    for b, f in REFUSALS
    if b in (corrupt, newer_version, locked, unreadable, missing_folder)
    for cmd in (["db", "export"], ["report", "--sections", "topology", "--quick"])
]


@pytest.mark.parametrize(
    "build, fragment, command",
    CASES,
    ids=lambda v: getattr(v, "__name__", None) or (" ".join(v[:2]) if isinstance(v, list) else ""),
)
def test_bad_database_is_refused_and_left_untouched(
    tmp_path, make_record, run_bandwall, build, fragment, command
):
    path = tmp_path / "db" / "bandwall.db"
    path.parent.mkdir()
    setup = build(path, make_record) or {}
    before = fingerprint(path)
    extra = ["--out", tmp_path / "out"] if command[0] == "report" else []
    with contextlib.ExitStack() as stack:
        if "hold" in setup:
            setup["hold"](stack)
        proc = run_bandwall(*command, "--db", path, *extra, env=setup.get("env"), prefix=setup.get("prefix"))
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    fragments = fragment if isinstance(fragment, tuple) else (fragment,)
    assert any(f in lines[0] for f in fragments), lines[0]
    assert proc.stdout == ""
    assert fingerprint(path) == before
    assert not (tmp_path / "out").exists()


# Every command that stores a record, with small parameters; "{out}" is a folder of the test's own.
STORING = [
    ["stream", "--size", "1M", "--reps", "2"],
    ["sweep", "copy", "--cores", "1", "--size", "1M", "--reps", "2"],
    ["balance", "--size", "1M", "--reps", "2"],
    ["iso3dfd", "--grid", "37x29x41", "--iters", "1"],
    ["numa-check", "--rounds", "1", "stream"],
    ["numa-check", "--rounds", "1", "--", "/bin/true"],
    ["numa-matrix", "--size", "1M"],
    ["place", "--size", "1M"],
    ["report", "--sections", "topology", "--quick", "--out", "{out}"],
]
NATIVE = (
    "bandwall-stream",
    "bandwall-peak",
    "bandwall-iso3dfd",
    "bandwall-launch",
    "bandwall-topo",
    "bandwall-place",
)


def fake_natives(folder: Path, log: Path) -> dict:
    """Stand-ins for every native executable that only write their command line to log and fail;
    returns the environment that makes bandwall use them ($BANDWALL_BINDIR comes first)."""
    folder.mkdir()
    for name in NATIVE:
        exe = folder / name
        exe.write_text(f'#!/bin/sh\necho "$0 $*" >> "{log}"\nexit 1\n')
        exe.chmod(0o755)
    return {"BANDWALL_BINDIR": str(folder)}


@pytest.mark.parametrize(
    "build, fragment",
    [
        (corrupt, "not an SQLite file"),
        (newer_version, "store version 2"),
        (foreign, "not a bandwall database"),
        (missing_folder, "does not exist: no folder"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.parametrize("command", STORING, ids=lambda c: " ".join(a for a in c if a.isalpha() or "/" in a))
def test_bad_database_fails_before_anything_runs(
    tmp_path, make_record, run_bandwall, command, build, fragment
):
    log = tmp_path / "ran.log"
    env = fake_natives(tmp_path / "bin", log)
    path = tmp_path / "db" / "bandwall.db"
    path.parent.mkdir()
    build(path, make_record)
    before = fingerprint(path)
    out = tmp_path / "out"
    command = [str(out) if a == "{out}" else a for a in command]
    proc = run_bandwall(command[0], "--db", path, *command[1:], env=env)  # --db before a "--"
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], proc.stderr
    assert not log.exists(), f"ran before the database was checked: {log.read_text()}"
    assert fingerprint(path) == before and not out.exists()


@pytest.mark.parametrize("command", [STORING[0], STORING[3], STORING[7]], ids=lambda c: c[0])
def test_fake_natives_are_the_ones_run(tmp_path, run_bandwall, command):
    """The check above means something: with a good database the stand-ins do run (and fail)."""
    log = tmp_path / "ran.log"
    env = fake_natives(tmp_path / "bin", log)
    proc = run_bandwall(*command, "--db", tmp_path / "good.db", env=env)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert log.exists() and str(tmp_path / "bin") in log.read_text()


@pytest.mark.parametrize(
    "command",
    [["db", "list"], ["db", "export"], ["stream", "--size", "1M"], ["report", "--sections", "topology"]],
    ids=" ".join,
)
def test_empty_database_path_is_refused_not_read_as_the_default(tmp_path, run_bandwall, command):
    default = tmp_path / "default.db"
    proc = run_bandwall(*command, "--db", "", env={"BANDWALL_DB": str(default)})
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "'--db': is empty" in lines[0], proc.stderr
    assert not default.exists()


def test_check_refuses_what_could_not_be_written(tmp_path, make_record, monkeypatch):
    with pytest.raises(StoreError, match="does not exist: no folder"):
        store.check(tmp_path / "new" / "deeper" / "bandwall.db")  # a named path: its folder must exist
    assert not (tmp_path / "new").exists()
    monkeypatch.delenv("BANDWALL_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    store.check()  # the default database's folder is made when a record is stored: fine, nothing made
    assert not (tmp_path / "data").exists()
    blocker = tmp_path / "file.txt"
    blocker.write_text("keep")
    with pytest.raises(StoreError, match="cannot open database"):
        store.check(blocker / "bandwall.db")
    with pytest.raises(StoreError, match="is a directory"):
        store.check(tmp_path)
    assert blocker.read_text() == "keep"


def test_store_api_refuses_writes_to_a_foreign_database(tmp_path, make_record):
    path = tmp_path / "other.db"
    foreign(path, make_record)
    before = fingerprint(path)
    with pytest.raises(StoreError, match="not a bandwall database"):
        store.save(make_record(), path)
    assert fingerprint(path) == before


def test_a_writer_waits_for_a_short_lock(tmp_path, make_record, monkeypatch):
    path = good_db(tmp_path / "b.db", make_record, n=1)
    monkeypatch.setenv("BANDWALL_DB_TIMEOUT", "20")
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    threading.Timer(0.5, holder.execute, ["ROLLBACK"]).start()
    start = time.monotonic()
    store.save(make_record(), path)
    assert time.monotonic() - start >= 0.4
    holder.close()
    with store.Store(path) as s:
        assert s.count() == 2


WRITER = """
import json, os, sys, time
from bandwall.core import store
path, name, n, ready, other = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
record = json.loads(sys.stdin.read())
open(ready, "w").close()
while not os.path.exists(other):
    time.sleep(0.01)
for i in range(n):
    record["config"] = {"writer": name, "seq": i}
    store.save(record, path)
"""


def test_two_processes_writing_at_once_lose_nothing(tmp_path, make_record):
    path, n = tmp_path / "shared.db", 60  # the database does not exist yet: both create it
    procs = []
    for me, other in (("a", "b"), ("b", "a")):
        p = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), me, str(n), str(tmp_path / me), str(tmp_path / other)],
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        p.stdin.write(json.dumps(make_record()))
        p.stdin.close()
        procs.append(p)
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    with store.Store(path) as s:
        recs = s.list()
    assert len(recs) == 2 * n
    assert sorted((r["config"]["writer"], r["config"]["seq"]) for r in recs) == sorted(
        (w, i) for w in "ab" for i in range(n)
    )
    assert len({r["id"] for r in recs}) == 2 * n


def test_default_path_is_in_the_user_data_directory(tmp_path, monkeypatch, make_record, run_bandwall):
    monkeypatch.delenv("BANDWALL_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert store.default_path() == tmp_path / "data" / "bandwall" / "bandwall.db"
    rid = store.save(make_record())
    assert (tmp_path / "data" / "bandwall" / "bandwall.db").is_file()
    proc = run_bandwall("db", "list", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert [r["id"] for r in json.loads(proc.stdout)] == [rid]
    monkeypatch.setenv("BANDWALL_DB", str(tmp_path / "env.db"))
    assert store.default_path() == tmp_path / "env.db"


def test_reading_a_missing_database_is_refused_and_creates_nothing(tmp_path, run_bandwall, monkeypatch):
    for path, fragment in (
        (tmp_path / "absent" / "none.db", f"does not exist: no folder {str(tmp_path / 'absent')!r}"),
        (tmp_path / "none.db", "does not exist"),
    ):
        proc = run_bandwall("db", "list", "--format", "json", "--db", path)
        assert proc.returncode == 2 and proc.stdout == "", proc.stdout
        assert proc.stderr.strip().splitlines() == [f"bandwall: error: database {str(path)!r} {fragment}"]
    assert list(tmp_path.iterdir()) == []
    monkeypatch.delenv("BANDWALL_DB")  # the default database, before anything was stored
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    proc = run_bandwall("db", "list")
    assert proc.returncode == 2 and "does not exist: no record was stored yet" in proc.stderr
    assert not (tmp_path / "data").exists()
    # The library still reads a database that is not there yet as empty, for callers that ask.
    with store.Store(tmp_path / "none.db", readonly=True) as s:
        assert s.count() == 0
    assert list(tmp_path.iterdir()) == []


def test_writing_makes_only_the_default_folder_and_refuses_a_file_in_its_way(
    tmp_path, make_record, monkeypatch
):
    with pytest.raises(StoreError, match="does not exist: no folder"):
        store.save(make_record(), tmp_path / "a" / "b" / "x.db")
    assert not (tmp_path / "a").exists()
    monkeypatch.setenv("BANDWALL_DB", str(tmp_path / "env" / "x.db"))  # named too
    with pytest.raises(StoreError, match="does not exist: no folder"):
        store.save(make_record())
    monkeypatch.delenv("BANDWALL_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert store.save(make_record()) == 1
    assert (tmp_path / "data" / "bandwall" / "bandwall.db").is_file()
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(StoreError, match="Not a directory"):
        store.save(make_record(), tmp_path / "file" / "x.db")


def test_malformed_record_is_not_stored(tmp_path, make_record):
    path = good_db(tmp_path / "m.db", make_record, n=1)
    bad = make_record()
    del bad["provenance"]["host"]
    with pytest.raises(RunFailed, match="provenance"):
        store.save(bad, path)
    with store.Store(path) as s:
        assert s.count() == 1


def test_stored_record_reads_back_whole_with_its_id(tmp_path, make_record):
    rec = make_record(result={"best_GBps": 12.5, "points": [{"cores": 1, "best_GBps": 9.0}]})
    rid = store.save(rec, tmp_path / "r.db")
    with store.Store(tmp_path / "r.db", readonly=True) as s:
        back = s.get(rid)
        with pytest.raises(StoreError, match="read-only"):
            s.add(rec)
    assert back == {**rec, "id": rid}
    assert store.save(back, tmp_path / "r.db") == rid + 1  # a re-stored record gets a new id


@pytest.mark.parametrize("value", ["x", "-1", "nan", "inf"])
def test_bad_timeout_variable(value, tmp_path, run_bandwall):
    proc = run_bandwall("db", "list", "--db", tmp_path / "t.db", env={"BANDWALL_DB_TIMEOUT": value})
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"bandwall: error: BANDWALL_DB_TIMEOUT={value!r} is not a number of seconds >= 0"
    ]


def test_timeout_variable_is_read(monkeypatch):
    monkeypatch.setenv("BANDWALL_DB_TIMEOUT", "0.25")
    assert store.busy_timeout() == 0.25
    monkeypatch.setenv("BANDWALL_DB_TIMEOUT", "nope")
    with pytest.raises(UsageError):
        store.busy_timeout()
