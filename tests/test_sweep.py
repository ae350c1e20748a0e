"""bandwall sweep: the knee and surplus logic, the sweep record, storing point by point, the plot,
SIGINT/SIGTERM keeping finished points, and bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from bandwall.core import records
from bandwall.core.errors import UsageError
from bandwall.core.store import Store
from bandwall.kernels import sweep

NCPU = len(os.sched_getaffinity(0))


def pts(*bw):
    return [{"cores": i + 1, "best_GBps": v, "median_GBps": v * 0.9} for i, v in enumerate(bw)]


@pytest.mark.parametrize(
    "curve,share,knee",
    [
        ((10, 18, 24, 25, 25.2, 25.1), 0.95, 3),  # saturates: 24 >= 0.95 * 25.2
        ((10, 18, 24, 25, 25.2, 25.1), 1.0, 5),  # only the best itself
        ((10, 18, 24, 25, 25.2, 25.1), 0.5, 2),
        ((20, 20, 20, 20), 0.95, 1),  # flat: one core is enough
        ((20, 30, 30, 30), 0.95, 2),  # tie at the top: the fewest cores
        ((30, 25, 20), 0.95, 1),  # falls with more cores
        ((5, 10, 15, 20), 0.95, 4),  # never saturates: every core is needed
        ((7.0,), 0.95, 1),  # one point
    ],
)
def test_knee(curve, share, knee):
    points = pts(*curve)
    assert sweep.knee(points, share) == knee
    assert sweep.surplus(points, knee) == len(curve) - knee


def test_knee_on_sparse_unordered_cores():
    points = [{"cores": 8, "best_GBps": 50}, {"cores": 2, "best_GBps": 30}, {"cores": 4, "best_GBps": 48}]
    assert sweep.knee(points) == 4
    assert sweep.surplus(points, 4) == 4


@pytest.mark.parametrize("share", [0, -0.1, 1.01])
def test_knee_share_out_of_range(share):
    with pytest.raises(UsageError):
        sweep.knee(pts(1, 2), share)


@pytest.mark.parametrize(
    "text,limit,want",
    [
        (None, 3, [1, 2, 3]),
        ("1,2", 4, [1, 2]),
        ("1-4", 4, [1, 2, 3, 4]),
        ("2-8:2", 8, [2, 4, 6, 8]),
        ("4,1,2,2", 4, [1, 2, 4]),
    ],
)
def test_parse_cores(text, limit, want):
    assert sweep.parse_cores(text, limit) == want


@pytest.mark.parametrize("text", ["0", "1-", "a", "3-1", "1,,2", "5", "1-4:0"])
def test_parse_cores_refuses(text):
    with pytest.raises(UsageError):
        sweep.parse_cores(text, 4)


def test_sweep_record_from_synthetic_points(make_record):
    recs = []
    for n, v in ((1, 10.0), (2, 19.5), (3, 20.0)):
        r = make_record(
            result={"best_GBps": v, "median_GBps": v - 1},
            threads=n,
            config={
                "kernel": "triad",
                "threads": n,
                "stores": "nt",
                "size_per_array_bytes": 1 << 20,
                "reps": 3,
            },
        )
        recs.append(r)
    rec = sweep.sweep_record("triad", recs, 0.95, config={"bind": "compact"}, point_ids=[4, 5, 6])
    records.validate(rec)
    assert rec["tool"] == "sweep"
    assert rec["result"]["points"] == [
        {"cores": 1, "best_GBps": 10.0, "median_GBps": 9.0},
        {"cores": 2, "best_GBps": 19.5, "median_GBps": 18.5},
        {"cores": 3, "best_GBps": 20.0, "median_GBps": 19.0},
    ]
    assert rec["result"]["knee_cores"] == 2 and rec["result"]["surplus_cores"] == 1
    assert rec["result"]["point_record_ids"] == [4, 5, 6]
    assert rec["provenance"]["threads"] == 3


def test_sweep_end_to_end(run_bandwall, tmp_path):
    db, png = str(tmp_path / "sw.db"), tmp_path / "sweep.png"
    p = run_bandwall(
        "sweep", "copy", "--size", "1M", "--reps", "3", "--db", db, "--plot", str(png), "--format", "json"
    )
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    records.validate(rec)
    r = rec["result"]
    assert [q["cores"] for q in r["points"]] == list(range(1, NCPU + 1))
    assert r["knee_cores"] == sweep.knee(r["points"], 0.95)
    assert r["surplus_cores"] == NCPU - r["knee_cores"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Store(db) as s:
        stored = s.list()
    assert [x["tool"] for x in stored] == ["sweep"] + ["stream"] * NCPU
    assert sorted(x["id"] for x in stored if x["tool"] == "stream") == r["point_record_ids"]


def _count(db: str, tool: str) -> int:
    try:
        with Store(db) as s:
            return len(s.list(tool))
    except Exception:  # not created yet
        return 0


@pytest.mark.skipif(NCPU < 2, reason="needs two core counts: one finished, one interrupted")
@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_keeps_finished_points(tmp_path, sig, code):
    db = str(tmp_path / "sig.db")
    env = dict(os.environ)
    # Each point takes seconds, so the signal lands while the second one runs.
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bandwall",
            "sweep",
            "copy",
            "--cores",
            f"1-{NCPU}",
            "--size",
            "16M",
            "--reps",
            "1000",
            "--db",
            db,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 120
    while _count(db, "stream") < 1 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "sweep finished before it could be interrupted"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "points" in lines[0] and "Traceback" not in err, err
    assert _count(db, "stream") == 1 and _count(db, "sweep") == 0
    with Store(db) as s:
        assert s.list("stream")[0]["validation"]["passed"] is True


BAD = [
    (["copy", "--cores", "0"], "out of range"),
    (["copy", "--cores", str(NCPU + 1)], "out of range"),
    (["copy", "--cores", "1-"], "malformed"),
    (["copy", "--cores", "2-1"], "descending"),
    (["daxpy"], "unknown kernel"),
    (["copy", "--knee-share", "1.5"], "knee share"),
    (["copy", "--size", "0"], "greater than zero"),
    (["copy", "--size", "-1G"], "negative"),
    (["copy", "--size", "big"], "not a size"),
    (["copy", "--size", "100T"], "of memory is available"),
    (["copy", "--reps", "0"], "range"),
    (["copy", "--bind", "diagonal"], "unknown binding"),
    (["copy", "--stores", "wc"], "'wc' is not one of"),
    (["copy", "--cores", ""], "'--cores': is empty"),
    (["copy", "--size", ""], "'--size': is empty"),
    (["copy", "--bind", ""], "'--bind': is empty"),
    (["copy", "--placement", ""], "'--placement': is empty"),
    (["copy", "--plot", ""], "'--plot': is empty"),
]


@pytest.mark.parametrize("args,fragment", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input(run_bandwall, args, fragment, tmp_path):
    db = tmp_path / "bad.db"
    p = run_bandwall("sweep", *args, "--db", str(db))
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""
    assert _count(str(db), "stream") == 0 and _count(str(db), "sweep") == 0
