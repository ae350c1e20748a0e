"""bandwall stream: records (fields, accounting, schema), storing, the failure path, bad input."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

import thp
from bandwall.core import native, records
from bandwall.core.store import Store
from bandwall.kernels import stream

SMALL = ["--size", "1M", "--reps", "3"]
NCPU = len(os.sched_getaffinity(0))
# Every test over kernels takes them from the table bandwall-stream declares (--list-kernels).
KERNELS = {k["name"]: k for k in stream.kernel_table()}


def stream_json(run, *args, db=None):
    extra = ["--db", db] if db else ["--no-store"]
    p = run("stream", *args, *SMALL, "--format", "json", *extra)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("stores", ["nt", "regular"])
def test_record_fields_and_accounting(run_bandwall, kernel, stores):
    rec = stream_json(run_bandwall, "--kernel", kernel, "--stores", stores, "--threads", "1")
    records.validate(rec)
    r, c = rec["result"], rec["config"]
    assert rec["tool"] == "stream" and rec["validation"]["passed"] is True
    k = KERNELS[kernel]
    bytes_, wa, flops = k["bytes_per_element"], k["write_allocate_bytes_per_element"], k["flops_per_element"]
    # STREAM's counting: 8 bytes per array read or written (an array read and written counts twice).
    assert bytes_ == 8 * (len(rec["placement"]["page_map"]) + (k["stores"] and wa == 0))
    assert (r["bytes_per_element"], r["write_allocate_bytes_per_element"], r["flops_per_element"]) == (
        bytes_,
        wa,
        flops,
    )
    assert c["kernel"] == kernel and c["elements"] == (1 << 20) // 8 and c["size_per_array_bytes"] == 1 << 20
    assert c["reps"] == 3 and len(r["times_s"]) == 3 and r["dropped_reps"] == 1
    assert r["max_GBps"] >= r["median_GBps"] >= r["min_GBps"] > 0
    assert r["best_GBps"] == pytest.approx(c["elements"] * bytes_ / min(r["times_s"][1:]) / 1e9)
    assert r["best_GFlops"] == pytest.approx(r["best_GBps"] * flops / bytes_)
    # NT stores avoid the write-allocate read; regular stores of a storing kernel do not.
    assert r["traffic"]["write_allocate_occurs"] == (stores == "regular" and wa > 0)
    with_wa = r["traffic"]["with_write_allocate"]["best_GBps"]
    assert with_wa == pytest.approx(r["best_GBps"] * (bytes_ + (wa if stores == "regular" else 0)) / bytes_)
    assert c["stores"] == (stores if k["stores"] else "regular")
    # Validation replays every repetition: what the arrays hold after 3 of them.
    assert all(a["wrong"] == 0 for a in rec["validation"]["arrays"].values())


def test_accumulating_kernel_validates_over_every_repetition(run_bandwall):
    """nstream (a += b + s*c) reaches 1 + reps * (2 + 3 * 0.5): validation replays each repetition."""
    for reps in ("1", "4"):
        p = run_bandwall(
            "stream", "--kernel", "nstream", "--size", "1M", "--reps", reps, "--format", "json", "--no-store"
        )
        assert p.returncode == 0, p.stderr
        rec = json.loads(p.stdout)
        assert rec["validation"]["arrays"]["a"]["expected"] == 1.0 + int(reps) * 3.5
        assert rec["validation"]["arrays"]["b"]["expected"] == 2.0


def test_placement_page_map_per_array(run_bandwall):
    rec = stream_json(run_bandwall, "--kernel", "triad", "--placement", "serial")
    assert rec["placement"]["policy"] == "serial" and rec["provenance"]["placement"] == "serial"
    pm = rec["placement"]["page_map"]
    assert set(pm) == {"a", "b", "c"}
    for shares in pm.values():
        assert sum(shares.values()) == pytest.approx(1.0)
        assert shares.get("absent", 0) == 0  # every page was touched by the initialisation
    assert set(stream_json(run_bandwall, "--kernel", "dot")["placement"]["page_map"]) == {"a", "b"}


@pytest.mark.parametrize("pages", ["huge", "base", "system"])
def test_pages_asked_for_and_granted(run_bandwall, pages):
    p = run_bandwall(
        "stream",
        "--kernel",
        "copy",
        "--size",
        "16M",
        "--reps",
        "2",
        "--pages",
        pages,
        "--format",
        "json",
        "--no-store",
    )
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["placement"]["pages"] == pages and rec["validation"]["passed"]
    shares = rec["placement"]["huge_page_share"]
    assert set(shares) == {"a", "c"}
    expect = thp.granted(pages)
    if expect is None:
        pytest.skip("no transparent huge page setting on this machine")
    for share in shares.values():
        assert (share > 0) if expect else (share == 0), (pages, thp.mode(), shares)


def test_binding_recorded(run_bandwall):
    cpu = min(os.sched_getaffinity(0))
    rec = stream_json(run_bandwall, "--kernel", "copy", "--cpus", str(cpu))
    assert rec["provenance"]["cpus"] == str(cpu) and rec["provenance"]["binding"] == "list"
    assert rec["result"]["threads_ran_on"] == [cpu]


def test_stored_record_matches_output(run_bandwall, tmp_path):
    db = str(tmp_path / "s.db")
    rec = stream_json(run_bandwall, "--kernel", "scale", db=db)
    with Store(db) as s:
        stored = s.list()
    assert len(stored) == 1 and stored[0]["id"] == rec["id"]
    assert stored[0]["result"]["best_GBps"] == rec["result"]["best_GBps"]


def test_failed_validation_stores_nothing(run_bandwall, tmp_path):
    db = str(tmp_path / "f.db")
    for kernel in ("triad", "dot"):
        p = run_bandwall(
            "stream", "--kernel", kernel, *SMALL, "--db", db, env={"BANDWALL_STREAM_INJECT_ERROR": "1"}
        )
        assert p.returncode == 1, p.stderr
        assert "validation of" in p.stderr and "Traceback" not in p.stderr
        assert p.stdout == ""
    with Store(db) as s:
        assert s.list() == []


def first_cpu_of_cores() -> list[int]:
    """likwid's numbering of the node domain: the first hardware thread of each core, in order."""
    topo = native.run_record("bandwall-topo", [])
    return [core["cpus"][0] for core in topo["result"]["core_list"]]


@pytest.mark.parametrize(
    "cpus, picks", [("N:1@N:0", [1, 0]), ("E:N:2", [0, 1]), ("S0:0-1", [0, 1]), ("M0:1,0", [1, 0])]
)
def test_likwid_domain_lists_pick_the_cpus(run_bandwall, cpus, picks):
    cores = first_cpu_of_cores()
    if len(cores) < 2 or len(os.sched_getaffinity(0)) < len(cores):
        pytest.skip("needs 2 cores, all of them allowed")
    args = [
        "--kernel",
        "triad",
        "--size",
        "2M",
        "--reps",
        "2",
        "--cpus",
        cpus,
        "--format",
        "json",
        "--no-store",
    ]
    p = run_bandwall("stream", *args)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["result"]["threads_ran_on"] == [cores[i] for i in picks]


BAD = [
    (["--size", "0"], "greater than zero"),
    (["--size=-5"], "negative"),
    (["--size", "lots"], "not a size"),
    (["--size", "4"], "smaller than one double"),
    (["--size", "100T"], "of memory is available"),
    (["--threads", "0"], "range"),
    (["--threads", str(NCPU + 1)], "threads asked for"),
    (["--cpus", "0-"], "not a whole number"),
    (["--cpus", "1,,2"], "empty item"),
    (["--cpus", "3-1"], "descending"),
    (["--cpus", "0,0"], "twice"),
    (["--cpus", "4095"], "not available"),
    # likwid's thread domains, refused with the list named
    (["--cpus", "S9:0"], "this machine has 1 socket"),
    (["--cpus", f"N:{os.cpu_count()}"], f"of a domain of {os.cpu_count()}"),  # the machine's, not the allowed
    (["--cpus", "N:0@N:0"], "names CPU"),
    (["--cpus", "Q0:0"], "unknown CPU domain 'Q'"),
    (["--kernel", "daxpy"], "unknown kernel"),
    (["--stores", "wc"], "'wc' is not one of"),
    (["--bind", "diagonal"], "unknown binding"),
    (["--bind", "node:7"], "does not exist"),
    (["--placement", "everywhere"], "unknown placement"),
    (["--reps", "0"], "range"),
    (["--reps", "x"], "not a valid integer"),
    # An empty value is refused, not read as the option left out (which would pick its default).
    (["--size", ""], "'--size': is empty"),
    (["--cpus", ""], "'--cpus': is empty"),
    (["--bind", ""], "'--bind': is empty"),
    (["--placement", " "], "'--placement': is empty"),
    (["--kernel", ""], "'--kernel': is empty"),
]


@pytest.mark.parametrize("args,fragment", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input(run_bandwall, args, fragment, tmp_path):
    db = tmp_path / "bad.db"
    p = run_bandwall("stream", *args, "--db", str(db))
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""
    assert not db.exists() or Store(db).list() == []


# The executable's own parsing: the same empty values given to bandwall-stream directly.
BAD_NATIVE = [
    (["--size", ""], "--size is empty"),
    (["--cpus", ""], "--cpus is empty"),
    (["--bind", ""], "--bind is empty"),
    (["--threads", ""], "--threads is empty"),
    (["--placement", ""], "--placement is empty"),
    (["--reps", " "], "--reps is empty"),
    (["--kernel", ""], "--kernel is empty"),
    (["--size", "0"], "greater than zero"),
    (["--pages", ""], "--pages is empty"),
    (["--pages", "giant"], "unknown page size 'giant'"),
]


@pytest.mark.parametrize("args,fragment", BAD_NATIVE, ids=[" ".join(a) for a, _ in BAD_NATIVE])
def test_bad_input_native(args, fragment):
    p = subprocess.run([native.executable("bandwall-stream"), *args], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], p.stderr
    assert p.stdout == ""
