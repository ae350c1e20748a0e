"""The rail advisor against hand-computed cases (one rail: 1 us, 1 GB/s; striping from 16 KiB)."""

from __future__ import annotations

import json

import pytest

from bandwall.core.errors import UsageError
from bandwall.mpi import mpi_rails

RAIL = mpi_rails.Rail(1e-6, 1e9, "test")
KIB, MIB = 1024, 1024 * 1024


def call(name: str, kind: str, bins: dict[int, tuple[int, int]]) -> dict:
    """A call of an mpiprof record from {lower bound: (messages, bytes)}."""
    return {
        "name": name,
        "kind": kind,
        "count": sum(n for n, _ in bins.values()),
        "bytes": sum(b for _, b in bins.values()),
        "time_s": 0.0,
        "size_hist": {str(k): n for k, (n, _) in bins.items()},
        "size_bytes_hist": {str(k): b for k, (_, b) in bins.items()},
        "latency_hist": {},
    }


def profile(*calls) -> dict:
    return {"tool": "mpiprof", "id": 1, "result": {"calls": list(calls)}}


def totals(advice: dict) -> list[float]:
    return [e["total_s"] for e in advice["estimates"]]


def test_small_messages_gain_nothing():
    # 1000 messages of 1 KiB: 1000 x 1 us + 1,024,000 B / 1 GB/s = 2.024 ms whatever the rails
    a = mpi_rails.advise(profile(call("MPI_Send", "send", {KIB: (1000, 1000 * KIB)})), RAIL, max_rails=4)
    assert totals(a) == pytest.approx([2.024e-3] * 4)
    assert a["recommended_rails"] == 1 and a["p2p_mean_bytes"] == KIB and a["p2p_striped_share"] == 0


def test_large_messages_are_striped():
    # 100 messages of 1 MiB: 100 us + 104,857,600 B / (r GB/s)
    a = mpi_rails.advise(profile(call("MPI_Isend", "send", {MIB: (100, 100 * MIB)})), RAIL, max_rails=4)
    assert totals(a) == pytest.approx([1e-4 + 0.1048576 / r for r in (1, 2, 3, 4)])
    assert a["recommended_rails"] == 4  # 3 rails: 35.05 ms, over 4 rails' 26.31 ms + 5%
    assert not a["uncertain"]


def test_tolerance_picks_fewer_rails():
    a = mpi_rails.advise(
        profile(call("MPI_Send", "send", {MIB: (100, 100 * MIB)})), RAIL, max_rails=4, tolerance=0.4
    )
    assert a["recommended_rails"] == 3  # 35.05 ms <= 1.4 x 26.31 ms = 36.84 ms


def test_mixed_sizes_and_threshold():
    # 16 KiB bin striped, 8 KiB bin not: T(2) = 20 x 1 us + 10 x 8 KiB / 1 GB/s + 10 x 16 KiB / 2 GB/s
    p = profile(call("MPI_Send", "send", {8 * KIB: (10, 10 * 8 * KIB), 16 * KIB: (10, 10 * 16 * KIB)}))
    a = mpi_rails.advise(p, RAIL, max_rails=2)
    assert totals(a)[1] == pytest.approx(20e-6 + 81920 / 1e9 + 163840 / 2e9)
    a = mpi_rails.advise(p, RAIL, max_rails=2, stripe_min=32 * KIB)
    assert totals(a)[0] == pytest.approx(totals(a)[1])


def test_receives_are_not_counted_twice():
    send = call("MPI_Send", "send", {MIB: (10, 10 * MIB)})
    recv = call("MPI_Recv", "recv", {MIB: (10, 10 * MIB)})
    assert totals(mpi_rails.advise(profile(send, recv), RAIL)) == totals(
        mpi_rails.advise(profile(send), RAIL)
    )


def test_collectives_make_it_uncertain():
    p = profile(
        call("MPI_Send", "send", {KIB: (10, 10 * KIB)}),
        call("MPI_Allreduce", "coll", {MIB: (50, 50 * MIB)}),
    )
    a = mpi_rails.advise(p, RAIL, max_rails=2)
    assert a["uncertain"] and a["collective_share"] > 0.9
    assert any("collectives" in n for n in a["notes"])


def test_settings_name_the_rail_count():
    s = mpi_rails.settings(3, 16 * KIB)
    assert s["Open MPI with UCX"]["UCX_MAX_RNDV_RAILS"] == "3"
    assert s["Open MPI with UCX"]["UCX_MAX_EAGER_RAILS"] == "1"
    assert s["MVAPICH2"]["MV2_NUM_HCAS"] == "3"
    assert s["MVAPICH2"]["MV2_STRIPING_THRESHOLD"] == str(16 * KIB)


def test_refuses_other_records():
    with pytest.raises(UsageError):
        mpi_rails.advise({"tool": "stream", "result": {}}, RAIL)


@pytest.mark.parametrize("text,value", [("16K", 16384), ("1M", MIB), ("4096", 4096), ("2KiB", 2048)])
def test_parse_size(text, value):
    assert mpi_rails.parse_size(text) == value


def test_command_line(run_bandwall, make_record, tmp_path):
    """mpi-rails on a stored profile with a rail model from the command line."""
    from bandwall.core import store

    db = tmp_path / "db.sqlite"
    rec = make_record(tool="mpiprof", result={"calls": [call("MPI_Isend", "send", {MIB: (100, 100 * MIB)})]})
    rid = store.save(rec, db)
    p = run_bandwall("mpi-rails", "--latency", "1", "--bandwidth", "1", "--format", "json", "--db", db)
    assert p.returncode == 0, p.stderr
    a = json.loads(p.stdout)
    assert a["profile_id"] == rid and a["recommended_rails"] == 4
    assert [e["total_s"] for e in a["estimates"]] == pytest.approx(
        [1e-4 + 0.1048576 / r for r in (1, 2, 3, 4)]
    )
