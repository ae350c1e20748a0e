"""`bandwall report`: sections from the registry, unavailable and failed sections, the terminal
summary, one self-contained HTML page, the report record and --from-db; the topology section and
the plot helpers."""

from __future__ import annotations

import base64
import copy
import csv
import io
import json
import os
import re
import signal
import time
from pathlib import Path

import pytest

from bandwall.core import store
from bandwall.core.errors import RunFailed, Unavailable
from bandwall.kernels import sweep
from bandwall.report import Context, load_sections, render
from report_fakes import FakeSection, PageParts, inproc

FIXTURES = Path(__file__).parent / "fixtures"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def report_of(stdout: str) -> tuple[list[dict], dict]:
    """The records a report printed with --format json, and its report record (the last)."""
    recs = json.loads(stdout)
    assert recs[-1]["tool"] == "report"
    return recs[:-1], recs[-1]


def sections_of(report: dict) -> dict[str, dict]:
    return {s["name"]: s for s in report["result"]["sections"]}


def stored_report(db) -> dict:
    with store.Store(db, readonly=True) as s:
        return s.list(tool="report", limit=1)[0]


def test_topology_report_is_one_self_contained_page(tmp_path, run_bandwall):
    out = tmp_path / "rep"
    proc = run_bandwall("report", "--sections", "topology", "--no-store", "--out", out, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    page = (out / "index.html").read_text()
    # no address outside the page (the inlined images' base64 may spell "http" by chance)
    outside = re.sub(r"data:[a-z/+]+;base64,[a-z0-9+/=]+", "data:", page, flags=re.IGNORECASE)
    assert "http" not in outside.lower()
    parts = PageParts(page)
    tags = [t for t, _ in parts.tags]
    assert not {"link", "iframe", "object", "embed", "base"} & set(tags)
    assert [attrs for tag, attrs in parts.tags if tag == "script"] == [{}]  # the copy buttons', inline
    for tag, attrs in parts.tags:
        for name in ("src", "href", "action", "srcset"):
            if name in attrs:
                assert attrs[name].startswith(("data:", "#")), (tag, attrs)
    assert "url(" not in page
    images = [attrs["src"] for tag, attrs in parts.tags if tag == "img"]
    assert images
    for src in images:
        head, data = src.split(",", 1)
        assert head == "data:image/png;base64"
        assert base64.b64decode(data).startswith(PNG_MAGIC)
    assert not (out / "report.json").exists()  # the records are the report's only data
    recs, report = report_of(proc.stdout)
    topo = sections_of(report)["topology"]
    assert topo["status"] == "ok" and topo["record_ids"] == [] and "id" not in report
    assert [r["tool"] for r in recs] == ["topo"] and len(recs[0]["result"]["numa_nodes"]) >= 1
    assert report["config"]["sections"] == ["topology"] and report["config"]["quick"] is False
    assert report["config"]["threads"] == len(os.sched_getaffinity(0))
    assert report["provenance"]["topology_digest"] == recs[0]["provenance"]["topology_digest"]
    text = " ".join(parts.text)
    assert "topology" in text.lower() and "What to do on this machine" in text
    assert "does not matter here" in text or "NUMA placement" in text


def test_report_stores_its_records(tmp_path, run_bandwall):
    db = tmp_path / "r.db"
    proc = run_bandwall(
        "report",
        "--sections",
        "topology",
        "--quick",
        "--threads",
        "1",
        "--db",
        db,
        "--out",
        tmp_path / "rep",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    recs, report = report_of(proc.stdout)
    assert report["config"]["quick"] is True and report["config"]["threads"] == 1
    with store.Store(db, readonly=True) as s:
        stored = s.list(oldest_first=True)
    assert [r["tool"] for r in stored] == ["topo", "report"]
    assert [r["id"] for r in recs] == [stored[0]["id"]] == sections_of(report)["topology"]["record_ids"]
    assert report["id"] == stored[1]["id"] and stored[1]["result"] == report["result"]
    assert stored[0]["result"]["numa_nodes"] == recs[0]["result"]["numa_nodes"]


def test_unavailable_section_is_shown_and_the_report_goes_on(tmp_path, capsys, fake):
    fake(FakeSection(Unavailable("no widget on this machine")))
    out = tmp_path / "rep"
    db = tmp_path / "u.db"
    code, stdout, stderr = inproc(capsys, "report", "--sections", "fake,topology", "--db", db, "--out", out)
    assert code == 0, stderr
    secs = sections_of(stored_report(db))
    assert list(secs) == ["fake", "topology"]  # the registry's order (fake: order 5)
    assert secs["fake"]["status"] == "unavailable"
    assert secs["fake"]["reason"] == "no widget on this machine"
    assert secs["fake"]["record_ids"] == []
    assert secs["topology"]["status"] == "ok"
    page_text = " ".join(PageParts((out / "index.html").read_text()).text)
    assert "unavailable: no widget on this machine" in page_text
    assert "unavailable: no widget on this machine" in stdout


def test_a_section_that_works_is_printed_and_rendered(tmp_path, capsys, fake):
    fake(FakeSection())
    code, stdout, _ = inproc(capsys, "report", "--sections", "fake", "--no-store", "--out", tmp_path)
    assert code == 0
    assert "the answer is 42" in stdout
    assert '<td class="num">42</td>' in (tmp_path / "index.html").read_text()


@pytest.mark.parametrize(
    "section, reason",
    [
        (FakeSection(RunFailed("validation of triad failed")), "validation of triad failed"),
        (FakeSection(KeyError("best_GBps")), "internal error: KeyError: 'best_GBps'"),
        (FakeSection(html_raises=True), "cannot render: ValueError: bad markup"),
    ],
)
def test_failed_section_keeps_the_report_and_exits_1(tmp_path, capsys, fake, section, reason):
    fake(section)
    code, stdout, stderr = inproc(
        capsys, "report", "--sections", "topology,fake", "--no-store", "--out", tmp_path, "--format", "json"
    )
    assert code == 1
    assert stderr.strip().splitlines()[-1].startswith("bandwall: error: 1 section(s) failed: fake")
    secs = sections_of(report_of(stdout)[1])
    assert secs["fake"]["status"] == "failed" and secs["fake"]["reason"] == reason
    assert secs["topology"]["status"] == "ok"
    assert f"failed: {reason}" in " ".join(PageParts((tmp_path / "index.html").read_text()).text)


class Recording(FakeSection):
    """Saves the given records (as a measuring section does) and returns a summary of them."""

    def __init__(self, recs: list[dict], then: BaseException | None = None):
        super().__init__(order=50)
        self.recs, self.then = recs, then

    def collect(self, ctx):
        for r in self.recs:
            ctx.save(copy.deepcopy(r))
        if self.then:
            raise self.then

    def build(self, ctx, recs):
        return {"answer": len(recs)}


def csv_rows(text: str) -> list[dict]:
    reader = csv.DictReader(io.StringIO(text))
    rows = list(reader)
    assert reader.fieldnames == render.CSV_COLUMNS
    return rows


@pytest.mark.parametrize("stored", [True, False])
def test_csv_format_prints_one_row_per_record(tmp_path, capsys, fake, make_record, stored):
    fake(
        Recording(
            [
                make_record(
                    "stream",
                    result={"best_GBps": 30.5, "median_GBps": 29.0},
                    config={"kernel": "triad", "threads": 2},
                ),
                make_record(
                    "sweep",
                    result={
                        "best_GBps": 31.25,
                        "best_cores": 3,
                        "knee_cores": 2,
                        "points": [{"cores": 3, "best_GBps": 31.25}],
                    },
                    config={"kernel": "copy", "cores": [1, 2, 3, 4]},
                ),
                make_record(
                    "iso3dfd",
                    result={"mpoints_per_s": 812.5, "gflops": 49.6},
                    passed=False,
                    config={"init": "serial", "schedule": "dynamic", "threads": 4},
                ),
            ]
        )
    )
    db, out = tmp_path / "c.db", tmp_path / "rep"
    code, stdout, stderr = inproc(
        capsys,
        "report",
        "--sections",
        "topology,fake",
        "--out",
        out,
        "--format",
        "csv",
        *(["--db", db] if stored else ["--no-store"]),
    )
    assert code == 0, stderr
    rows = csv_rows(stdout)
    assert "Fake widget" in " ".join(PageParts((out / "index.html").read_text()).text)
    assert [(r["section"], r["section_status"], r["tool"]) for r in rows] == [
        ("topology", "ok", "topo"),
        ("fake", "ok", "stream"),
        ("fake", "ok", "sweep"),
        ("fake", "ok", "iso3dfd"),
    ]
    if stored:
        with store.Store(db, readonly=True) as s:
            stored_recs = s.list(oldest_first=True)
        assert [int(r["record_id"]) for r in rows] == [r["id"] for r in stored_recs[:-1]]
        assert [int(r["record_id"]) for r in rows[1:]] == sections_of(stored_recs[-1])["fake"]["record_ids"]
    else:
        assert [r["record_id"] for r in rows] == ["", "", "", ""]
    topo, st, sw, iso = rows
    assert (topo["metric"], topo["unit"], topo["passed"]) == ("cores", "cores", "not applicable")
    assert int(topo["value"]) >= 1
    assert topo["threads"] == ""  # topo runs no threads
    assert (st["name"], st["threads"], st["metric"], float(st["value"]), st["unit"], st["passed"]) == (
        "triad",
        "2",
        "best_GBps",
        30.5,
        "GB/s",
        "True",
    )
    assert (sw["name"], sw["threads"], sw["metric"], float(sw["value"])) == ("copy", "3", "best_GBps", 31.25)
    assert (iso["name"], iso["threads"], iso["metric"], float(iso["value"]), iso["unit"], iso["passed"]) == (
        "serial dynamic",
        "4",
        "mpoints_per_s",
        812.5,
        "MPoints/s",
        "False",
    )
    assert (st["host"], st["date"]) == ("testhost", "2026-01-02T03:04:05Z")


def test_csv_format_keeps_failed_and_stopped_sections_records(tmp_path, capsys, fake, make_record):
    fake(Recording([make_record("stream")], then=RunFailed("validation of triad failed")))
    code, stdout, stderr = inproc(
        capsys, "report", "--sections", "fake", "--no-store", "--out", tmp_path / "a", "--format", "csv"
    )
    assert code == 1 and "1 section(s) failed: fake" in stderr
    assert [(r["section"], r["section_status"], r["tool"]) for r in csv_rows(stdout)] == [
        ("fake", "failed", "stream")
    ]

    fake(
        Recording(
            [
                make_record(
                    "peak",
                    result={"total_gflops_dp": 96.0, "total_gflops_sp": 192.0},
                    config={"isa": "avx2", "threads": 2},
                )
            ],
            then=KeyboardInterrupt(),
        )
    )
    code, stdout, stderr = inproc(
        capsys,
        "report",
        "--sections",
        "topology,fake",
        "--db",
        tmp_path / "s.db",
        "--out",
        tmp_path / "b",
        "--format",
        "csv",
    )
    assert code == 130
    rows = csv_rows(stdout)
    report = stored_report(tmp_path / "s.db")
    assert list(sections_of(report)) == ["topology"] and report["result"]["stopped"].startswith(
        "stopped by SIGINT"
    )
    assert [(r["section"], r["section_status"], r["tool"]) for r in rows] == [
        ("topology", "ok", "topo"),
        ("fake", "stopped", "peak"),
    ]
    with store.Store(tmp_path / "s.db", readonly=True) as s:
        assert [int(r["record_id"]) for r in rows] == [r["id"] for r in s.list(oldest_first=True)[:-1]]
    assert (rows[1]["name"], rows[1]["metric"], float(rows[1]["value"]), rows[1]["unit"]) == (
        "avx2",
        "total_gflops_dp",
        96.0,
        "GFlop/s",
    )


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--sections", "nope"], "unknown report section 'nope' (known: "),
        (["--sections", "topology,nope"], "unknown report section 'nope'"),
        (["--sections", ","], "--sections needs at least one section name"),
        (["--threads", "0"], "--threads"),
        (["--threads", "100000"], "more than the"),
        (["--format", "xml"], "'xml' is not one of"),
        (["--out", "FILE"], "is a file, not a folder"),
        (["--frobnicate"], "No such option"),
    ],
)
def test_bad_input(tmp_path, run_bandwall, args, fragment):
    blocker = tmp_path / "file.txt"
    blocker.write_text("keep")
    args = [str(blocker) if a == "FILE" else a for a in args]
    extra = [] if "--out" in args else ["--out", tmp_path / "rep"]
    proc = run_bandwall("report", "--no-store", *extra, *args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert fragment in lines[0]
    assert not (tmp_path / "rep").exists()
    assert blocker.read_text() == "keep"


def test_sections_come_from_the_registry_in_order():
    loaded = load_sections()
    names = [n for n, _ in loaded]
    assert "topology" in names
    orders = [getattr(s, "order", 100) for _, s in loaded]
    assert orders == sorted(orders)
    for _, s in loaded:
        assert (
            callable(s.collect)
            and callable(s.build)
            and callable(s.terminal)
            and callable(s.html)
            and s.title
        )


def test_save_without_a_store_keeps_the_record(tmp_path, make_record):
    from rich.console import Console

    ctx = Context(quick=True, out=tmp_path, console=Console(), threads=1)
    assert ctx.save(make_record()) is None
    assert len(ctx.records) == 1 and ctx.record_ids == []
    with store.Store(tmp_path / "s.db") as s:
        ctx.store = s
        rid = ctx.save(make_record())
    assert ctx.record_ids == [rid] and len(ctx.records) == 2


def test_json_output_has_no_nan_and_plain_types():
    import numpy as np

    doc = render.plain({"a": np.float64(1.5), "b": float("nan"), "c": np.arange(3), "d": {1: (4,)}})
    assert doc == {"a": 1.5, "b": None, "c": [0, 1, 2], "d": {"1": [4]}}
    assert json.loads(render.dumps({"x": float("inf")})) == {"x": None}


class Interrupting(FakeSection):
    def __init__(self, how: str):
        super().__init__(order=50)
        self.how = how

    def collect(self, ctx):
        if self.how == "SIGINT":
            raise KeyboardInterrupt
        if self.how == "SIGTERM":
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)  # the handler interrupts this
        raise sweep.Interrupted("interrupted by SIGINT after 1 of 3 points", 130)


@pytest.mark.parametrize("how, code", [("SIGINT", 130), ("SIGTERM", 143), ("sweep", 130)])
def test_interrupt_keeps_finished_sections_and_their_records(tmp_path, capsys, fake, how, code):
    fake(Interrupting(how))
    db = tmp_path / "i.db"
    handler = signal.getsignal(signal.SIGTERM)
    start = time.monotonic()
    got, _, stderr = inproc(
        capsys, "report", "--sections", "topology,fake", "--db", db, "--out", tmp_path / "rep"
    )
    assert time.monotonic() - start < 25
    assert got == code
    signame = "SIGTERM" if how == "SIGTERM" else "SIGINT"
    assert (
        stderr.strip()
        .splitlines()[-1]
        .startswith(f"bandwall: error: stopped by {signame} after 1 of 2 sections")
    )
    report = stored_report(db)
    assert list(sections_of(report)) == ["topology"] and report["result"]["stopped"].startswith(
        f"stopped by {signame}"
    )
    with store.Store(db, readonly=True) as s:
        assert [r["tool"] for r in s.list(oldest_first=True)] == ["topo", "report"]
    assert signal.getsignal(signal.SIGTERM) == handler  # the report's SIGTERM handler is gone


def test_from_db_rebuilds_the_page_from_the_records(tmp_path, capsys, fake, make_record):
    fake(Recording([make_record("stream", config={"kernel": "triad", "threads": 2})]))
    db = tmp_path / "f.db"
    code, first, stderr = inproc(
        capsys,
        "report",
        "--sections",
        "topology,fake",
        "--db",
        db,
        "--out",
        tmp_path / "a",
        "--format",
        "json",
    )
    assert code == 0, stderr
    recs, report = report_of(first)
    with store.Store(db, readonly=True) as s:
        count = s.count()
    code, again, stderr = inproc(
        capsys, "report", "--from-db", "--db", db, "--out", tmp_path / "b", "--format", "json"
    )
    assert code == 0, stderr
    assert json.loads(again) == [*recs, report]  # the same records, the same report record
    with store.Store(db, readonly=True) as s:
        assert s.count() == count  # nothing run, nothing stored
    code, table, stderr = inproc(capsys, "report", "--from-db", "--db", db, "--out", tmp_path / "c")
    assert code == 0, stderr
    assert f"rebuilt from report record {report['id']}" in table and "the answer is 1" in table
    assert table.index("What to do on this machine") < table.index("Fake widget")
    page = " ".join(PageParts((tmp_path / "c" / "index.html").read_text()).text)
    assert "What to do on this machine" in page and "Fake widget" in page


def _empty_file(path: Path) -> None:
    path.write_bytes(b"")


def _stream_only(path: Path, make_record) -> None:
    with store.Store(path) as s:
        s.add(make_record())


@pytest.mark.parametrize(
    "prepare, args, fragment",
    [
        (None, [], "does not exist"),
        (_empty_file, [], "has no records at all (run bandwall report first)"),
        (_stream_only, [], "has no report record among its records"),
        (
            _stream_only,
            ["--quick"],
            "--from-db runs nothing and reads the stored report as it was: drop --quick",
        ),
        (_stream_only, ["--sections", "topology"], "drop --sections"),
        (_stream_only, ["--no-store"], "drop --no-store"),
    ],
)
def test_from_db_bad_input(tmp_path, run_bandwall, make_record, prepare, args, fragment):
    db = tmp_path / "x.db"
    if prepare is _stream_only:
        prepare(db, make_record)
    elif prepare is not None:
        prepare(db)
    proc = run_bandwall("report", "--from-db", "--db", db, "--out", tmp_path / "rep", *args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], proc.stderr
    assert proc.stdout == "" and not (tmp_path / "rep").exists()


def _sweep_section(make_record, gbps: float) -> Recording:
    def point(threads):
        res = {"best_GBps": gbps, "median_GBps": gbps, "min_GBps": gbps * 0.98, "max_GBps": gbps * 1.02}
        res.update(dropped_reps=1, bytes_per_element=24.0, flops_per_element=2.0)
        return make_record("stream", result=res, config={"kernel": "triad", "threads": threads, "reps": 5})

    points = [{"cores": n, "best_GBps": gbps, "median_GBps": gbps} for n in (1, 2)]
    result = {"points": points, "knee_cores": 1, "surplus_cores": 1, "best_GBps": gbps, "best_cores": 1}
    sweep = make_record("sweep", result=result, config={"kernel": "triad", "knee_share": 0.95})
    return Recording([point(1), point(2), sweep])


@pytest.mark.parametrize("second, changed", [(40.0, True), (20.1, False)])
def test_history_of_earlier_reports_shows_changes_beyond_noise(
    tmp_path, capsys, fake, make_record, second, changed
):
    db = tmp_path / "h.db"
    fake(_sweep_section(make_record, 20.0))
    code, first, _ = inproc(capsys, "report", "--sections", "fake", "--db", db, "--out", tmp_path / "a")
    assert code == 0 and "history:" not in first, first
    fake(_sweep_section(make_record, second))
    code, out, _ = inproc(capsys, "report", "--sections", "fake", "--db", db, "--out", tmp_path / "b")
    assert code == 0
    history = stored_report(db)["result"]["history"]
    assert "history: " in out and history and ("2.00x" in " ".join(history)) is changed
    assert "no difference beyond noise" in history[-1]


def test_the_page_opens_with_one_card_per_recommendation(tmp_path, capsys, fake, make_record):
    fake(_sweep_section(make_record, 20.0))
    code, stdout, stderr = inproc(
        capsys, "report", "--sections", "fake", "--no-store", "--out", tmp_path, "--format", "json"
    )
    assert code == 0, stderr
    _, report = report_of(stdout)
    lines = report["result"]["advice"]
    assert len(lines) == 2  # the knee of the sweep and its parallel efficiency
    tags = PageParts((tmp_path / "index.html").read_text()).tags
    cards = [a for t, a in tags if t == "article" and "card" in a.get("class", "").split()]
    assert len(cards) == len(lines) == len([t for t, _ in tags if t == "details"])
    assert [t for t, _ in tags].count("svg") == sum("value" in line for line in lines)
