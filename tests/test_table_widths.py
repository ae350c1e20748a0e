"""Tables never cut a figure: every command's tables, at 60 and 80 columns (COLUMNS) and with stdout a
pipe, print no ellipsis, and the figures of the same run's record (read back from its database)
appear whole; the views of records that take long to make are rendered here from records built in
the test. The layouts themselves (boxed, compact, key/value, stacked) are checked on a wide table."""

from __future__ import annotations

import io
import json

import pytest
from rich.table import Table

from bandwall.core.store import Store
from bandwall.core.topo import cpu_list
from bandwall.display import console, fmt_cell, table
from conftest import run

WIDTHS = [60, 80]
ELLIPSIS = "\u2026"


def cells(*values) -> list[str]:
    """The figures as a table prints them."""
    return [fmt_cell(v) for v in values]


def stream_figures(rec: dict) -> list[str]:
    r = rec["result"]
    return [
        rec["config"]["kernel"],
        *cells(r["best_GBps"], r["median_GBps"], r["min_GBps"], r["best_GFlops"]),
    ]


def sweep_figures(rec: dict) -> list[str]:
    return [s for p in rec["result"]["points"] for s in cells(p["best_GBps"], p["median_GBps"])]


def iso3dfd_figures(rec: dict) -> list[str]:
    c, r = rec["config"], rec["result"]
    return [c["init"], c["schedule"], *cells(r["mpoints_per_s"], r["gflops"])]


def modes_figures(rec: dict) -> list[str]:
    return [s for name, m in rec["result"]["modes"].items() for s in (name, fmt_cell(m["value"]))]


def pin_figures(rec: dict) -> list[str]:
    from bandwall.pinning import pin

    return [fmt_cell(row[1]) for row in pin.thread_rows(rec)]


def counters_figures(rec: dict) -> list[str]:
    return [s for k, v in rec["result"]["software"].items() for s in (k, fmt_cell(v))]


def balance_figures(rec: dict) -> list[str]:
    apps = rec["result"]["applications"]
    return [s for a in apps for s in cells(a["bytes_per_flop"], a["machine_bytes_per_flop"], a["bound"])]


def tune_figures(rec: dict) -> list[str]:
    return [
        s for t in rec["result"]["trials"] if "median" in t for s in cells(t["median"], t["min"], t["max"])
    ]


def engine_figures(rec: dict) -> list[str]:
    return [s for r in rec["result"]["rows"] for s in cells(r["kernel"], r["cpu_GBps"], r["engine_GBps"])]


def place_figures(rec: dict) -> list[str]:
    from bandwall.views.place import page_map_rows

    return [fmt_cell(v) for row in page_map_rows(rec["placement"]["page_map"])[1] for v in row]


def matrix_figures(rec: dict) -> list[str]:
    return [fmt_cell(v) for row in rec["result"]["matrix"] for v in row]


FOM = ["--fom", r"rate ([0-9]+)"]
TINY = ["--size", "1M", "--reps", "2"]
# (name, arguments, the tool of its record, its figures): every command run that prints a table,
# each at a tiny size; a record's figures are read back from the run's own database.
COMMANDS = [
    ("stream", ["stream", *TINY], "stream", stream_figures),
    ("sweep", ["sweep", "triad", *TINY], "sweep", sweep_figures),
    (
        "iso3dfd",
        [
            "iso3dfd",
            "--grid",
            "37x29x41",
            "--iters",
            "4",
            "--blocks",
            "13x7x9",
            "--no-roofline",
            "--time-block",
            "1",
        ],
        "iso3dfd",
        iso3dfd_figures,
    ),
    ("numa-check", ["numa-check", "stream", "--size", "1M"], "numa-check", modes_figures),
    ("numa-check --plan", ["numa-check", "--plan", "--", "/bin/true"], None, None),
    ("pin", ["pin", "--", "true"], "pin", pin_figures),
    ("pin --compare", ["pin", "--compare", "--", "true"], "pin-compare", modes_figures),
    ("counters", ["counters", "--", "true"], "counters", counters_figures),
    ("balance", ["balance", *TINY, "--peak-reps", "1", "--peak-seconds", "0.02"], "balance", balance_figures),
    ("tune", ["tune", *FOM, "--budget", "2", "--", "sh", "-c", "echo rate 10"], "tune", tune_figures),
    (
        "engine sweep",
        [
            "engine",
            "sweep",
            "--kernels",
            "triad",
            "--cores",
            "1",
            "--engine",
            "memcpy",
            "--size",
            "4M",
            "--reps",
            "2",
        ],
        "engine-sweep",
        engine_figures,
    ),
    ("engine list", ["engine", "list"], None, None),
    ("place", ["place", "--size", "1M"], "place", place_figures),
    ("numa-matrix", ["numa-matrix", "--size", "1M"], "numa-matrix", matrix_figures),
]
NO_DB = {"numa-check --plan", "engine list"}


def check(out: str, figures: list[str]) -> None:
    assert ELLIPSIS not in out, out
    words = set(out.split())
    missing = [f for f in figures if f not in words and f not in out]
    assert not missing, f"{missing} not whole in:\n{out}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name, args, tool, figures", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_command_cuts_no_figure(name, args, tool, figures, width, tmp_path):
    db = tmp_path / "w.db"
    if name not in NO_DB:  # bandwall's options go before the command after --
        at = args.index("--") if "--" in args else len(args)
        args = [*args[:at], "--db", str(db), *args[at:]]
    p = run(*args, env={"COLUMNS": str(width)})
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip(), p.stderr
    if tool is None:
        check(p.stdout, [])
        return
    with Store(db, readonly=True) as s:
        rec = s.list(tool=tool)[0]
    check(p.stdout, figures(rec))


@pytest.fixture(scope="module")
def topo_record():
    p = run("topo", "--format", "json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.parametrize("width", WIDTHS)
def test_topo(width, topo_record):
    p = run("topo", env={"COLUMNS": str(width)})
    assert p.returncode == 0, p.stderr
    r = topo_record["result"]
    figures = [s for n in r["numa_nodes"] for s in (cpu_list(n["cpus"]), f"{n['memory_bytes'] / 2**30:.1f}")]
    check(p.stdout, figures + [str(c["size_bytes"] // 1024) for c in r["caches"]])


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A database with a few records of a tiny run each, and the records."""
    db = tmp_path_factory.mktemp("db") / "r.db"
    for args in (["stream", *TINY], ["counters", "--", "true"]):
        p = run(*args, "--db", db, "--format", "json")
        assert p.returncode == 0, p.stderr
    with Store(db, readonly=True) as s:
        return db, s.list()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    "args",
    [
        ["list"],
        ["show", "1"],
        ["export", "--format", "table"],
        ["choices"],
        ["time-blocks"],
        ["row-kernels"],
        ["knob-races"],
    ],
)
def test_db_listings(stored, args, width):
    db, recs = stored
    where = ["--db", db] if args[0] in ("list", "show", "export") else []  # the others read the cache folder
    p = run("db", *args, *where, env={"COLUMNS": str(width)})
    assert p.returncode == 0, p.stderr
    figures = (
        [str(r["id"]) for r in recs] + [r["tool"] for r in recs] if args[0] in ("list", "export") else []
    )
    if args[0] == "show":
        figures = cells(*[v for v in recs[-1]["result"].values() if isinstance(v, (int, float))])
    check(p.stdout, figures)


def test_survey_local(tmp_path):
    """The node's survey (slow: one run, at 60 columns); its stored record shown again at 80."""
    db = tmp_path / "s.db"
    p = run("survey", "--local", "--short", "--db", db, env={"COLUMNS": "60"})
    assert p.returncode == 0, p.stderr
    with Store(db, readonly=True) as s:
        rec = next(r for r in s.list() if "figures" in r["result"])
    from bandwall.views import survey

    figures = [w for f in rec["result"]["figures"].values() for w in survey.figure(f, unit=False).split()]
    check(p.stdout, figures)
    check(rendered(lambda con: survey.render_node(con, rec), 80), figures)


# ---- views of records that take long to make, rendered in this process --------------------------


def rendered(render, width: int | None) -> str:
    """What render(con) prints on a console writing to no terminal, COLUMNS=width (unset: None)."""
    import os

    saved = os.environ.get("COLUMNS")
    if width is None:
        os.environ.pop("COLUMNS", None)
    else:
        os.environ["COLUMNS"] = str(width)
    try:
        buf = io.StringIO()
        render(console(file=buf))
        return buf.getvalue()
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved


def iso3dfd_with_roofline() -> tuple[list[dict], list[str]]:
    base = {
        "config": {
            "n1": 264, "n2": 264, "n3": 264, "nb_iter": 40, "n1_block": 264, "n2_block": 16, "n3_block": 32,
            "threads": 2, "affinity": "compact", "placement": "first-touch", "kernel": "optimised",
            "isa": "avx512", "radius": 8, "half_length": 8, "init": "first-touch", "schedule": "static",
        },
        "result": {
            "mpoints_per_s": 1354.2, "gflops": 82.6, "time_s": 0.472, "norm": 16608.3228,
            "flops_per_point": 61, "bytes_per_point": 16.0,
            "roofline": {
                "percent_of_memory_bound": 97.2, "percent_of_incore_bound": 12.0,
                "percent_of_port_bound": 31.0, "percent_of_ecm": 40.0,
            },
        },
        "placement": {"page_map": {a: {"0": 0.5, "1": 0.5} for a in ("prev", "next", "vel")}},
        "provenance": {"cpus": "0-1"},
        "validation": {"checked": True, "method": "self-check"},
    }  # fmt: skip
    other = json.loads(json.dumps(base))
    other["config"].update(init="serial", schedule="dynamic")
    other["result"]["mpoints_per_s"] = 987.65
    figures = ["first-touch", "serial", "static", "dynamic", "1,354.20", "987.65", "82.60", "97%", "31%"]
    return [base, other], figures


def sensitivity_record() -> tuple[dict, list[str]]:
    slow = {"median": 1.234, "lo": 1.101, "hi": 1.456, "rounds": 5, "enough": True}
    rec = {
        "config": {
            "command": ["./solver", "--input", "big.dat"], "cpus": "0-1", "bandit_cpus": "2-3", "rounds": 5,
            "repeat_source": "--repeat 3", "rule": "a 90% interval beyond a 2% margin", "pirate_cpu": 1,
        },
        "result": {
            "curve": [
                {"dose": 0.25, "taken_GBps": 12.345, "bandit_alone_GBps": 23.456, "slowdown": slow},
                {"dose": 1.0, "taken_GBps": 45.678, "bandit_alone_GBps": 56.789, "slowdown": slow},
            ],
            "cache_curve": [
                {"pirate_MiB": 6.5, "left_MiB": 1.5, "pirate_alone_ns": 2.25, "pirate_beside_ns": 3.75,
                 "kept": True, "slowdown": slow},
            ],
            "cache_held_MiB": 8.0, "program_s": 1.5, "verdict": "bandwidth-bound", "why": "slowed near the top",
            "copies": {"text": "the node feeds 2 copies"},
        },
    }  # fmt: skip
    return rec, [*cells(12.345, 23.456, 45.678, 56.789, 6.5, 3.75), "1.234x", "[1.101-1.456]"]


def mpiprof_record() -> tuple[dict, list[str]]:
    calls = [
        {"name": "MPI_Allreduce", "count": 123456, "bytes": 987654321, "time_s": 1.234567},
        {"name": "MPI_Isend", "count": 4000, "bytes": 65536000, "time_s": 0.5},
    ]
    rec = {
        "config": {"program": "./app", "ranks": 4, "mpi_library": "Open MPI 4.1.6"},
        "result": {
            "clock": {"source": "clock_gettime", "resolution_ns": 1.0},
            "calls": calls,
            "partners": [[0, 123456789, 0, 5], [123456789, 0, 7, 0], [0, 7, 0, 42], [5, 0, 42, 0]],
            "text_report": "/tmp/mpiprof/report.txt",
        },
    }
    return rec, ["MPI_Allreduce", *cells(123456, 987654321, 1.234567e6, 123456789)]


def rails_advice() -> tuple[dict, list[str]]:
    a = {
        "rail": {"latency_us": 1.5, "bandwidth_GBps": 12.5, "source": "measured"},
        "stripe_min": 65536,
        "p2p_messages": 12345,
        "p2p_mean_bytes": 4096.0,
        "p2p_striped_share": 0.25,
        "collective_share": 0.5,
        "estimates": [
            {"rails": 1, "p2p_s": 12.3456, "collective_s": 1.2345, "total_s": 13.5801},
            {"rails": 2, "p2p_s": 6.1728, "collective_s": 1.2345, "total_s": 7.4073},
        ],
        "recommended_rails": 2,
        "uncertain": False,
        "settings": {"openmpi": {"OMPI_MCA_btl": "ofi"}},
        "notes": [],
    }
    return a, cells(12.3456, 1.2345, 13.5801, 6.1728, 7.4073)


def pingpong_record() -> tuple[dict, list[str]]:
    points = [{"bytes": 4**i, "latency_us": 1.25 + i, "bandwidth_GBps": 0.125 * i} for i in range(8)]
    rec = {
        "config": {"mpi_library": "Open MPI"},
        "result": {"latency_us": 1.25, "bandwidth_GBps": 0.875, "points": points},
    }
    return rec, cells(16384, 8.25, 0.875)


def survey_judged() -> tuple[dict, list[str]]:
    def fig(m, lo, hi, unit):
        return {"median": m, "min": lo, "max": hi, "unit": unit}

    nodes = [
        {
            "node": f"node{i:03d}",
            "figures": {
                "stream_triad_all_GBps": fig(201.5 - i, 199.0, 203.25, "GB/s"),
                "peak_gflops_dp": fig(3456.7, 3400.0, 3500.0, "GFlop/s"),
                "iso3dfd_mpoints_per_s": fig(9876.5, 9800.0, 9900.0, "MPoints/s"),
            },
            "load": {"busy_cpus": 0.25},
        }
        for i in range(3)
    ]
    rec = {
        "result": {
            "nodes": nodes,
            "judged": "against each other",
            "flagged": ["node002"],
            "links": [
                {"from": "node000", "to": "node001", "latency_us": fig(1.75, 1.5, 2.0, "us"),
                 "bandwidth_GBps": fig(23.5, 22.0, 24.0, "GB/s")},
            ],
            "outliers": [
                {"node": "node002", "metric": "stream_triad_all_GBps", "value": 150.25,
                 "population_median": 200.5, "reason": "below the population's floor"},
            ],
        }
    }  # fmt: skip
    return rec, [
        "node000",
        "node002",
        "202",
        "(199-203)",
        "3,457",
        "9,876",
        "1.75",
        "23.5",
        "150",
        "stream_triad_all_GBps",
    ]


def report_footer() -> tuple[object, list[str]]:
    """The report's closing table of sections (a plain rich Table printed on the report's console)."""
    from types import SimpleNamespace

    from bandwall.report import FAILED, OK, UNAVAILABLE, Outcome
    from bandwall.report.terminal import footer

    outcomes = [
        Outcome("stream", "STREAM on every core count", OK, seconds=123.45, record_ids=[101, 102, 103]),
        Outcome(
            "numa", "NUMA placement", UNAVAILABLE, "one NUMA node: placement cannot matter", seconds=0.25
        ),
        Outcome(
            "iso3dfd", "ISO3DFD", FAILED, "bandwall-iso3dfd exited with 3", seconds=9.75, record_ids=[104]
        ),
    ]
    ctx = SimpleNamespace(record_ids=[101, 102, 103, 104])
    meta = {"report_id": 105, "store": "/tmp/bandwall.db"}
    render = lambda con: footer(con, outcomes, ctx, meta, "/tmp/report/index.html")  # noqa: E731
    return render, ["123.5", "0.2", "9.8", "101,", "102,", "103", "104", "unavailable:", "failed:"]


def _views():
    from bandwall.views import iso3dfd, mpi, sensitivity, survey

    isos, iso_figures = iso3dfd_with_roofline()
    sens, sens_figures = sensitivity_record()
    prof, prof_figures = mpiprof_record()
    advice, advice_figures = rails_advice()
    ping, ping_figures = pingpong_record()
    judged, judged_figures = survey_judged()
    footer, footer_figures = report_footer()
    return [
        ("iso3dfd with its roofline", lambda con: iso3dfd.render(con, isos), iso_figures),
        ("sensitivity", lambda con: sensitivity.render(con, sens), sens_figures),
        ("mpiprof", lambda con: mpi.profile(con, [prof]), prof_figures),
        ("mpi-rails", lambda con: mpi.advice(con, advice), advice_figures),
        ("mpi-pingpong", lambda con: mpi.pingpong_record(con, ping), ping_figures),
        ("survey of nodes", lambda con: survey.render(con, judged), judged_figures),
        ("report sections", footer, footer_figures),
    ]


VIEWS = _views()


@pytest.mark.parametrize("width", [*WIDTHS, None], ids=[*map(str, WIDTHS), "COLUMNS unset"])
@pytest.mark.parametrize("name, render, figures", VIEWS, ids=[v[0] for v in VIEWS])
def test_a_view_cuts_no_figure(name, render, figures, width):
    out = rendered(render, width)
    check(out, figures)
    if width is not None:
        assert max(len(line.rstrip()) for line in out.splitlines()) <= width


# ---- the layouts --------------------------------------------------------------------------------

WIDE = [
    ["first-touch", "static", 1354.2, 82.6, 0.472, "97%", "12%", "31%", "40%", "node 0 50%, node 1 50%"],
    ["serial", "dynamic", 987.65, 61.0, 0.612, "62%", "10%", "22%", "30%", "node 0 100%"],
]
WIDE_COLUMNS = ["init", "schedule", "MPoints/s", "GFlops", "time s", "% memory bound", "% FMA bound",
                "% port bound", "% ECM", "prev pages"]  # fmt: skip
WIDE_FIGURES = ["first-touch", "serial", "static", "dynamic", "1,354.20", "987.65", "82.60", "0.47", "97%"]


@pytest.mark.parametrize(
    "width, layout",
    [
        (None, "boxed"),
        (200, "boxed"),
        (80, "compact"),
        (60, "key/value"),
        (30, "key/value"),
        (16, "stacked"),
        (12, "stacked"),
    ],
)
def test_the_layout_narrows_with_the_line(width, layout):
    out = rendered(lambda con: con.print(table("Runs", WIDE_COLUMNS, WIDE, caption="a caption")), width)
    check(out, WIDE_FIGURES)
    lines = out.splitlines()
    if width is not None:
        assert max(len(line.rstrip()) for line in lines) <= width
    rows = [line for line in lines if "first-touch" in line]
    if layout == "boxed":
        assert out.count("┃") and len(rows) == 1 and "1,354.20" in rows[0] and "% memory bound" in out
    elif layout == "compact":
        assert "┃" not in out and len(rows) == 1 and "1,354.20" in rows[0]
    elif layout == "key/value":
        assert any(line.split() == ["MPoints/s", "1,354.20"] for line in lines)
    else:
        assert lines[1].strip() == "first-touch" and "MPoints/s:" in out


def test_a_plain_rich_table_printed_is_fitted_too():
    t = Table(title="plain")
    for name in ("id", "date (UTC)", "host"):
        t.add_column(name, no_wrap=True)
    t.add_column("result")
    t.add_row("17", "2026-01-02 03:04", "a-rather-long-host-name.example.org", "best_GBps=1,234.56  x=2")
    out = rendered(lambda con: con.print(t), 40)
    check(out, ["2026-01-02 03:04", "a-rather-long-host-name.example.org", "best_GBps=1,234.56"])


def test_a_word_wider_than_the_line_folds_without_an_ellipsis():
    long = "x" * 50
    out = rendered(lambda con: con.print(table("t", ["a", "b"], [[long, 1.5]])), 30)
    assert ELLIPSIS not in out and "".join(out.split()).count(long) == 1 and "1.50" in out.split()
