"""`bandwall report`: sections from the registry, unavailable and failed sections, the terminal
summary, one self-contained HTML page and report.json; the topology section and the plot helpers."""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import signal
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bandwall import cli
from bandwall.core import store
from bandwall.core.errors import RunFailed, Unavailable
from bandwall.kernels import sweep
from bandwall.report import Context, load_sections, registry, render

FIXTURES = Path(__file__).parent / "fixtures"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class PageParts(HTMLParser):
    """Every tag with its attributes, and the text, of an HTML page."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def inproc(capsys, *args) -> tuple[int, str, str]:
    """Runs the CLI in this process (so test sections registered here take part)."""
    with pytest.raises(SystemExit) as e:
        cli.main([str(a) for a in args])
    cap = capsys.readouterr()
    return e.value.code, cap.out, cap.err


class FakeSection:
    title = "Fake widget"

    def __init__(self, raises: BaseException | None = None, order: int = 5, html_raises: bool = False):
        self.raises, self.order, self.html_raises = raises, order, html_raises

    def collect(self, ctx):
        if self.raises:
            raise self.raises
        return {"answer": 42}

    def terminal(self, ctx, data):
        ctx.console.print(f"the answer is {data['answer']}")

    def html(self, ctx, data):
        if self.html_raises:
            raise ValueError("bad markup")
        return render.html_table(["answer"], [[data["answer"]]])


@pytest.fixture
def fake(monkeypatch):
    """fake(section) registers it as report section 'fake' for this test."""
    load_sections()

    def add(section):
        monkeypatch.setitem(registry._items, "fake", section)
        return section

    return add


def test_topology_report_is_one_self_contained_page(tmp_path, run_bandwall):
    out = tmp_path / "rep"
    proc = run_bandwall("report", "--sections", "topology", "--no-store", "--out", out)
    assert proc.returncode == 0, proc.stderr
    page = (out / "index.html").read_text()
    assert "http" not in page.lower()
    parts = PageParts(page)
    tags = [t for t, _ in parts.tags]
    assert not {"script", "link", "iframe", "object", "embed", "base"} & set(tags)
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
    doc = json.loads((out / "report.json").read_text())
    topo = doc["sections"]["topology"]
    assert topo["status"] == "ok" and topo["record_ids"] == [] and doc["record_ids"] == []
    assert len(topo["data"]["numa_nodes"]) >= 1 and topo["data"]["cores"] >= 1
    assert doc["sections_run"] == ["topology"] and doc["quick"] is False
    assert doc["threads"] == len(os.sched_getaffinity(0))
    assert doc["cpu_model"] == topo["data"]["cpu_model"]
    assert "topology" in " ".join(parts.text).lower()


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
    doc = json.loads(proc.stdout)
    assert doc == json.loads((tmp_path / "rep" / "report.json").read_text())
    assert doc["quick"] is True and doc["threads"] == 1 and doc["store"] == str(db)
    with store.Store(db, readonly=True) as s:
        stored = s.list(oldest_first=True)
    assert [r["id"] for r in stored] == doc["record_ids"] == doc["sections"]["topology"]["record_ids"]
    assert [r["tool"] for r in stored] == ["topo"]
    assert stored[0]["result"]["numa_nodes"] == doc["sections"]["topology"]["data"]["numa_nodes"]


def test_unavailable_section_is_shown_and_the_report_goes_on(tmp_path, capsys, fake):
    fake(FakeSection(Unavailable("no widget on this machine")))
    out = tmp_path / "rep"
    code, stdout, stderr = inproc(capsys, "report", "--sections", "fake,topology", "--no-store", "--out", out)
    assert code == 0, stderr
    doc = json.loads((out / "report.json").read_text())
    assert list(doc["sections"]) == ["fake", "topology"]  # the registry's order (fake: order 5)
    assert doc["sections"]["fake"]["status"] == "unavailable"
    assert doc["sections"]["fake"]["reason"] == "no widget on this machine"
    assert doc["sections"]["fake"]["data"] == {}
    assert doc["sections"]["topology"]["status"] == "ok"
    page_text = " ".join(PageParts((out / "index.html").read_text()).text)
    assert "unavailable: no widget on this machine" in page_text
    assert "unavailable: no widget on this machine" in stdout


def test_a_section_that_works_is_printed_and_rendered(tmp_path, capsys, fake):
    fake(FakeSection())
    code, stdout, _ = inproc(capsys, "report", "--sections", "fake", "--no-store", "--out", tmp_path)
    assert code == 0
    assert "the answer is 42" in stdout
    doc = json.loads((tmp_path / "report.json").read_text())
    assert doc["sections"]["fake"]["data"] == {"answer": 42}
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
    code, _, stderr = inproc(
        capsys, "report", "--sections", "topology,fake", "--no-store", "--out", tmp_path, "--format", "json"
    )
    assert code == 1
    assert stderr.strip().splitlines()[-1].startswith("bandwall: error: 1 section(s) failed: fake")
    doc = json.loads((tmp_path / "report.json").read_text())
    assert doc["sections"]["fake"]["status"] == "failed"
    assert doc["sections"]["fake"]["reason"] == reason
    assert doc["sections"]["topology"]["status"] == "ok"
    assert f"failed: {reason}" in " ".join(PageParts((tmp_path / "index.html").read_text()).text)


class Recording(FakeSection):
    """Saves the given records (as a measuring section does) and returns a summary of them."""

    def __init__(self, recs: list[dict], then: BaseException | None = None):
        super().__init__(order=50)
        self.recs, self.then = recs, then

    def collect(self, ctx):
        for r in self.recs:
            ctx.save(r)
        if self.then:
            raise self.then
        return {"answer": len(self.recs)}


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
    doc = json.loads((out / "report.json").read_text())  # written as with --format json
    assert list(doc["sections"]) == ["topology", "fake"]
    assert "Fake widget" in " ".join(PageParts((out / "index.html").read_text()).text)
    assert [(r["section"], r["section_status"], r["tool"]) for r in rows] == [
        ("topology", "ok", "topo"),
        ("fake", "ok", "stream"),
        ("fake", "ok", "sweep"),
        ("fake", "ok", "iso3dfd"),
    ]
    if stored:
        with store.Store(db, readonly=True) as s:
            stored_ids = [r["id"] for r in s.list(oldest_first=True)]
        assert [int(r["record_id"]) for r in rows] == doc["record_ids"] == stored_ids
        assert [int(r["record_id"]) for r in rows[1:]] == doc["sections"]["fake"]["record_ids"]
    else:
        assert [r["record_id"] for r in rows] == ["", "", "", ""] and doc["record_ids"] == []
    topo, st, sw, iso = rows
    assert (topo["name"], topo["metric"], topo["unit"]) == (
        doc["sections"]["topology"]["data"]["cpu_model"],
        "cores",
        "cores",
    )
    assert (
        int(topo["value"]) == doc["sections"]["topology"]["data"]["cores"]
        and topo["passed"] == "not applicable"
    )
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
    doc = json.loads((tmp_path / "b" / "report.json").read_text())
    assert list(doc["sections"]) == ["topology"]
    assert [(r["section"], r["section_status"], r["tool"]) for r in rows] == [
        ("topology", "ok", "topo"),
        ("fake", "stopped", "peak"),
    ]
    assert [int(r["record_id"]) for r in rows] == doc["record_ids"]
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
        assert callable(s.collect) and callable(s.terminal) and callable(s.html) and s.title


def test_save_without_a_store_keeps_the_record(tmp_path, make_record):
    from rich.console import Console

    ctx = Context(quick=True, out=tmp_path, console=Console(), threads=1)
    assert ctx.save(make_record()) is None
    assert len(ctx.records) == 1 and ctx.record_ids == []
    with store.Store(tmp_path / "s.db") as s:
        ctx.store = s
        rid = ctx.save(make_record())
    assert ctx.record_ids == [rid] and len(ctx.records) == 2


def test_report_json_has_no_nan_and_plain_types():
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
    doc = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert list(doc["sections"]) == ["topology"] and doc["stopped"].startswith(f"stopped by {signame}")
    with store.Store(db, readonly=True) as s:
        assert [r["id"] for r in s.list()] == doc["record_ids"] != []
    assert signal.getsignal(signal.SIGTERM) == handler  # the report's SIGTERM handler is gone
