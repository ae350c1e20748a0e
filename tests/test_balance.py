"""bandwall balance and bandwall-peak: the byte/flop arithmetic, the records and their fields."""

from __future__ import annotations

import json

import pytest

from bandwall.core import records
from bandwall.kernels import balance

PEAK = {
    "per_core_gflops_dp": 40.0,
    "total_gflops_dp": 80.0,
    "per_core_gflops_sp": 80.0,
    "total_gflops_sp": 160.0,
}


def test_balance_arithmetic():
    r = balance.balance(20.0, PEAK)
    assert r["bytes_per_flop_dp"] == pytest.approx(0.25) and r["bytes_per_flop_sp"] == pytest.approx(0.125)
    apps = {a["name"]: a for a in r["applications"]}
    assert apps["lattice QCD"]["bytes_per_flop"] == 2.68
    assert apps["lattice QCD"]["attainable_share_of_peak"] == pytest.approx(0.25 / 2.68)
    assert apps["STREAM triad"]["bytes_per_flop"] == pytest.approx(12.0)
    iso = apps["ISO3DFD"]
    assert iso["bytes_per_flop"] == pytest.approx(16 / 61) and iso["precision"] == "sp"
    assert iso["machine_bytes_per_flop"] == pytest.approx(0.125)
    assert iso["attainable_gflops"] == pytest.approx(160.0 * 0.125 / (16 / 61))
    assert all(a["bound"] == "memory" for a in r["applications"])
    assert r["contrast"][0]["bytes_per_flop"] == 0.13


def test_compute_bound_when_machine_has_bytes_to_spare():
    r = balance.balance(1000.0, PEAK)  # 12.5 B/F double: more than any of the applications need
    assert all(a["bound"] == "compute" and a["attainable_share_of_peak"] == 1.0 for a in r["applications"])


def test_balance_record_schema(make_record):
    s = make_record(
        "stream",
        result={"best_GBps": 20.0, "median_GBps": 19.0},
        config={
            "kernel": "triad",
            "stores": "nt",
            "threads": 2,
            "size_per_array_bytes": 1 << 30,
            "isa": "avx512",
        },
    )
    p = make_record("peak", result=dict(PEAK), config={"threads": 2, "isa": "avx512"})
    rec = balance.balance_record(s, p)
    records.validate(rec)
    assert rec["tool"] == "balance" and rec["validation"]["passed"] is True
    assert rec["result"]["bytes_per_flop_dp"] == pytest.approx(0.25)


def test_balance_end_to_end(run_bandwall, tmp_path):
    from bandwall.core.store import Store

    db = str(tmp_path / "b.db")
    p = run_bandwall(
        "balance",
        "--size",
        "1M",
        "--reps",
        "3",
        "--peak-reps",
        "1",
        "--peak-seconds",
        "0.02",
        "--db",
        db,
        "--format",
        "json",
    )
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    records.validate(rec)
    r = rec["result"]
    assert r["bytes_per_flop_dp"] == pytest.approx(r["bandwidth_GBps"] / r["peak_gflops_dp"])
    with Store(db) as s:
        tools = sorted(x["tool"] for x in s.list())
    assert tools == ["balance", "peak", "stream"]
    with Store(db) as s:
        peak = s.list("peak")[0]
    records.validate(peak)
    for field in ("per_core_gflops_dp", "total_gflops_dp", "per_core_gflops_sp", "total_gflops_sp"):
        assert peak["result"][field] > 0, field
    assert peak["result"]["lanes_sp"] == 2 * peak["result"]["lanes_dp"]


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["--threads", "0"], "range"),
        (["--peak-seconds", "0"], "range"),
        (["--kernel", "daxpy"], "unknown kernel"),
        (["--cpus", "x"], "not a whole number"),
        (["--size", "0"], "greater than zero"),
        (["--cpus", ""], "'--cpus': is empty"),
        (["--size", ""], "'--size': is empty"),
        (["--bind", ""], "'--bind': is empty"),
    ],
)
def test_balance_bad_input(run_bandwall, args, fragment):
    p = run_bandwall("balance", *args, "--no-store")
    assert p.returncode == 2 and fragment in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["--cpus", ""], "--cpus is empty"),
        (["--seconds", ""], "--seconds is empty"),
        (["--reps", ""], "--reps is empty"),
        (["--bind", ""], "--bind is empty"),
        (["--threads", " "], "--threads is empty"),
    ],
)
def test_peak_bad_input_native(args, fragment):
    import subprocess

    from bandwall.core import native

    p = subprocess.run([native.executable(balance.PEAK_EXECUTABLE), *args], capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], p.stderr
