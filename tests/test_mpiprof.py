"""libbandwall-mpiprof under Open MPI and MPICH: C and Fortran (mpif.h, use mpi, use mpi_f08)
programs with known calls, 2 and 4 ranks; the records must hold exactly what the programs did."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import procs
import slurm
from bandwall.core import records
from bandwall.mpi import flavours as mpi

HERE = Path(__file__).parent / "mpi"
TOOLS = {
    "openmpi": ("mpicc.openmpi", "mpif90.openmpi", "mpirun.openmpi"),
    "mpich": ("mpicc.mpich", "mpif90.mpich", "mpiexec.mpich"),
}
SOURCES = {
    "c": "prof_c.c",
    "threads": "prof_threads.c",
    "more": "prof_more.c",
    "f77": "prof_f77.f90",
    "usempi": "prof_usempi.f90",
    "f08": "prof_f08.f90",
}
# Open MPI refuses root without these; both allow more ranks than cores with oversubscription.
ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
}


def launcher(impl: str, np: int) -> list[str]:
    cmd = [TOOLS[impl][2], "-np", str(np)]
    return cmd[:1] + ["--oversubscribe"] + cmd[1:] if impl == "openmpi" else cmd


@pytest.fixture(scope="session")
def build(tmp_path_factory):
    """build(impl, name) -> path of tests/mpi/<name> compiled for impl (once), or a skip."""
    out = tmp_path_factory.mktemp("mpiprog")
    made: dict[tuple[str, str], Path] = {}

    def get(impl: str, name: str) -> Path:
        if impl not in mpi.available():
            pytest.skip(f"bandwall was built without {impl} (libbandwall-mpiprof-{impl}.so absent)")
        src = HERE / SOURCES[name]
        compiler = TOOLS[impl][1 if src.suffix == ".f90" else 0]
        if not shutil.which(compiler) or not shutil.which(TOOLS[impl][2]):
            pytest.skip(f"{compiler} or {TOOLS[impl][2]} not installed")
        key = (impl, name)
        if key not in made:
            exe = out / f"{name}_{impl}"
            mod = out / f"mod_{impl}_{name}"
            mod.mkdir()
            flags = ["-J", str(mod)] if src.suffix == ".f90" else ["-lpthread"]
            proc = subprocess.run(
                [compiler, "-O1", "-o", str(exe), str(src), *flags], capture_output=True, text=True
            )
            if proc.returncode != 0 and name == "f08":
                pytest.skip(f"{impl} offers no use mpi_f08 here: {proc.stderr.strip()[-200:]}")
            assert proc.returncode == 0, proc.stderr
            made[key] = exe
        return made[key]

    return get


def profile(run_bandwall, tmp_path, impl: str, exe: Path, np: int, prefix: list[str] | None = None) -> dict:
    p = run_bandwall(
        "mpiprof", "--format", "json", "--db", tmp_path / "db.sqlite", "--out", tmp_path / "profiles", "--",
        *launcher(impl, np), exe, env=ENV, timeout=120, prefix=prefix,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["tool"] == "mpiprof" and rec["config"]["ranks"] == np and rec["config"]["mpi"] == impl
    return rec


def calls(rec: dict) -> dict[str, dict]:
    return {c["name"]: c for c in rec["result"]["calls"]}


def check_histograms(rec: dict) -> None:
    for c in rec["result"]["calls"]:
        assert sum(c["size_hist"].values()) == c["count"], c["name"]
        assert sum(c["latency_hist"].values()) == c["count"], c["name"]
        assert sum(c["size_bytes_hist"].values()) == c["bytes"], c["name"]
        for low in c["size_hist"]:  # each message sits in the bin [low, 2 low)
            assert int(low) == 0 or int(low) & (int(low) - 1) == 0


def c_expected(n: int) -> tuple[dict[str, list[int]], list[list[int]]]:
    """Per call, the count of each rank of prof_c.c; and the bytes rank i sends rank j."""
    halves = [[r for r in range(n) if r % 2 == p] for p in (0, 1)]
    split_sender = {h[1]: h[0] for h in halves if len(h) > 1}  # rank 1 of each half sends to its rank 0
    each = {"MPI_Isend": 2, "MPI_Irecv": 2, "MPI_Waitall": 2, "MPI_Sendrecv": 1, "MPI_Bcast": 1, "MPI_Reduce": 1,
            "MPI_Allreduce": 2, "MPI_Barrier": 1, "MPI_Comm_split": 1, "MPI_Comm_free": 1}  # fmt: skip
    counts = {k: [v] * n for k, v in each.items()}
    counts["MPI_Send"] = [3 + (r in split_sender) for r in range(n)]
    counts["MPI_Recv"] = [3 + (r in split_sender.values()) for r in range(n)]
    sent = [[0] * n for _ in range(n)]
    for r in range(n):
        sent[r][(r + 1) % n] += 3 * 1000 + 2 * 800
        if r in split_sender:
            sent[r][split_sender[r]] += 64
    return counts, sent


@pytest.mark.parametrize("np", [2, 4])
@pytest.mark.parametrize("impl", list(TOOLS))
def test_c_program(run_bandwall, build, tmp_path, impl, np):
    check_c(profile(run_bandwall, tmp_path, impl, build(impl, "c"), np), np)


def check_c(rec: dict, np: int) -> None:
    r, by = rec["result"], calls(rec)
    counts, sent = c_expected(np)
    assert {name: sum(v) for name, v in counts.items()} == {name: c["count"] for name, c in by.items()}
    for rank in r["per_rank"]:
        assert rank["calls"] == {name: v[rank["rank"]] for name, v in counts.items() if v[rank["rank"]]}
    assert r["partners"] == sent
    assert r["partners_received"] == [list(col) for col in zip(*sent)]  # what j got from i, seen at j
    splits = sum(counts["MPI_Send"]) - 3 * np
    assert by["MPI_Send"]["bytes"] == 3000 * np + 64 * splits
    assert by["MPI_Send"]["size_hist"] == {"512": 3 * np, **({"64": splits} if splits else {})}
    assert by["MPI_Recv"]["bytes"] == by["MPI_Send"]["bytes"]  # actual sizes from the status
    assert (by["MPI_Send"]["min_size"], by["MPI_Send"]["max_size"]) == (64 if splits else 1000, 1000)
    assert by["MPI_Isend"]["size_hist"] == {"512": 2 * np} and by["MPI_Isend"]["bytes"] == 1600 * np
    assert by["MPI_Sendrecv"]["size_hist"] == {"0": np} and by["MPI_Sendrecv"]["bytes"] == 0
    assert by["MPI_Bcast"]["roots"] == {str(np - 1): {"count": 1, "bytes": 40}}
    assert by["MPI_Reduce"]["roots"] == {"0": {"count": 1, "bytes": 32}}
    assert by["MPI_Bcast"]["bytes"] == 40 * np and by["MPI_Allreduce"]["bytes"] == 4 * 2 * np
    comms = {(c["leader"], c["size"]): c for c in r["communicators"]}
    assert comms[(0, np)]["ranks"] == np
    if np == 4:  # the even and odd halves, each known by its rank 0 in MPI_COMM_WORLD
        assert comms[(0, 2)]["ranks"] == 2 and comms[(1, 2)]["ranks"] == 2
        assert comms[(0, 2)]["count"] == 2 + 2 and comms[(0, 2)]["bytes"] == 4 * 2 + 64 * 2
    assert r["unattributed_bytes"] == 0
    assert r["clock"]["source"] in ("tsc", "clock_monotonic_raw") and r["clock"]["resolution_ns"] > 0
    check_histograms(rec)
    text = Path(r["text_report"]).read_text()
    assert "EVENT 0: Send" in text and "#MESSAGE SIZE HISTOGRAM" in text


def mpi_version(impl: str) -> int:
    """MPI_VERSION of impl's mpi.h (4 declares the large-count MPI_X_c calls)."""
    p = subprocess.run([TOOLS[impl][0], "-E", "-dM", "-x", "c", "-"], input="#include <mpi.h>\n",
                       capture_output=True, text=True, check=True)  # fmt: skip
    return next(int(ln.split()[2]) for ln in p.stdout.splitlines() if ln.startswith("#define MPI_VERSION "))


_MORE: dict[str, dict] = {}  # prof_more.c's record per MPI, made once for the tests that read it


@pytest.fixture
def more(run_bandwall, build, tmp_path_factory):
    def get(impl: str) -> dict:
        if impl not in _MORE:
            _MORE[impl] = profile(run_bandwall, tmp_path_factory.mktemp("more"), impl, build(impl, "more"), 2)
        return _MORE[impl]

    return get


def more_expected(large: bool) -> dict[str, tuple[int, int]]:
    """(count, bytes) of each call of prof_more.c with 2 ranks, summed over the ranks."""
    exp = {
        # own bytes: sum over the peers of the counts x the type size
        "MPI_Alltoallv": (2, 4 * (1 + 3) + 4 * (2 + 4)),  # rank r sends 1 + r + 2j ints to rank j
        "MPI_Alltoallw": (2, 2 * (1 * 4 + 2 * 8)),  # 1 int to rank 0, 2 doubles to rank 1
        "MPI_Reduce_scatter": (2, 2 * 8 * (1 + 2)),  # recvcounts 1, 2 doubles
        "MPI_Reduce_scatter_block": (2, 2 * 4 * 2 * 2),  # 2 ints x 2 ranks
        "MPI_Gatherv": (2, 4 * 1 + 4 * 2),  # rank r sends r + 1 ints
        "MPI_Scatterv": (2, 8 * 1 + 8 * 2),  # rank r receives 2 (r + 1) ints
        "MPI_Allgatherv": (2, 4 * 1 + 4 * 2),
        # persistent requests: each start is a message in its init's row
        "MPI_Send_init": (2 * (5 + 3), 2 * (5 + 3) * 800),
        "MPI_Recv_init": (2 * (5 + 3), 2 * (5 + 3) * 800),
        "MPI_Ssend_init": (2, 2 * 16),
        "MPI_Startall": (2 * 5, 0),
        "MPI_Start": (2 * (2 * 3 + 1), 0),
        "MPI_Request_free": (2 * 3, 0),
        "MPI_Waitall": (2 * (5 + 3), 0),
        "MPI_Irecv": (2, 2 * 16),
        "MPI_Wait": (2 * 2, 0),
    }
    if large:  # MPI_Send_c etc. count in the rows of MPI_Send etc.
        exp |= {"MPI_Send": (4, 4 * 300), "MPI_Recv": (4, 4 * 300), "MPI_Allreduce": (2, 2 * 3 * 8)}
        exp["MPI_Alltoallv"] = (4, 2 * exp["MPI_Alltoallv"][1])
    return exp


@pytest.mark.parametrize("impl", list(TOOLS))
def test_count_arrays_and_persistent_requests(more, impl):
    """v and w collectives count each rank's own bytes from its count array (the root's from the
    root's, which the other ranks pass as NULL); each start of a persistent request is a message."""
    rec = more(impl)
    by, r = calls(rec), rec["result"]
    assert {k: (c["count"], c["bytes"]) for k, c in by.items()} == more_expected(mpi_version(impl) >= 4)
    assert by["MPI_Gatherv"]["roots"] == {"0": {"count": 1, "bytes": 4 * (1 + 2)}}
    assert by["MPI_Scatterv"]["roots"] == {"1": {"count": 1, "bytes": 8 * (1 + 2)}}
    assert by["MPI_Send_init"]["size_hist"] == {"512": 16} and by["MPI_Startall"]["size_hist"] == {"0": 10}
    assert by["MPI_Alltoallv"]["min_size"] == 16 and by["MPI_Alltoallv"]["max_size"] == 24
    sent = 8 * 800 + 16 + (2 * 300 if mpi_version(impl) >= 4 else 0)
    assert r["partners"] == [[0, sent], [sent, 0]] and r["partners_received"] == r["partners"]
    assert r["unattributed_bytes"] == 0 and r["unattributed_starts"] == 0
    check_histograms(rec)


@pytest.mark.parametrize("impl", list(TOOLS))
def test_large_count_calls(more, impl):
    """MPI-4's MPI_Send_c, MPI_Recv_c, MPI_Allreduce_c and MPI_Alltoallv_c count in the plain rows."""
    if impl in mpi.available() and shutil.which(TOOLS[impl][0]) and mpi_version(impl) < 4:
        pytest.skip(f"{impl}'s mpi.h is MPI {mpi_version(impl)}: it declares no large-count (_c) calls")
    by = calls(more(impl))
    exp = more_expected(True)
    for name in ("MPI_Send", "MPI_Recv", "MPI_Allreduce", "MPI_Alltoallv"):
        assert (by[name]["count"], by[name]["bytes"]) == exp[name]
    assert by["MPI_Send"]["size_hist"] == {"256": 4} and by["MPI_Recv"]["size_hist"] == {"256": 4}
    assert not any(name.endswith("_c") for name in by)


@pytest.mark.parametrize("name", ["c", "f77"])
@pytest.mark.parametrize("impl", list(TOOLS))
def test_under_srun(run_bandwall, build, slurm_cluster, tmp_path, impl, name):
    """The same programs launched by srun on the one-node Slurm (with each MPI's wire-up plugin)."""
    flavour = mpi.flavours.get(impl)
    exe = build(impl, name)
    p = run_bandwall(
        "mpiprof", "--format", "json", "--db", tmp_path / "db.sqlite", "--out", tmp_path / "profiles", "--",
        "srun", f"--mpi={flavour.srun_mpi}", "-n", "2", exe, env={**ENV, **slurm_cluster.env}, timeout=120,
    )  # fmt: skip
    slurm.wait_idle(slurm_cluster)  # the session's node goes on to other tests as it was: idle
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["config"]["mpi"] == impl and rec["config"]["command"][0] == "srun"
    if name == "c":
        check_c(rec, 2)
    else:
        assert {k: c["count"] for k, c in calls(rec).items()} == {
            "MPI_Send": 6, "MPI_Recv": 6, "MPI_Bcast": 2, "MPI_Barrier": 2
        }  # fmt: skip
        assert rec["result"]["partners"] == [[0, 120], [120, 0]]


@pytest.mark.parametrize("binding", ["f77", "usempi", "f08"])
@pytest.mark.parametrize("impl", list(TOOLS))
def test_fortran_program(run_bandwall, build, tmp_path, impl, binding):
    """Open MPI's Fortran layer calls PMPI_ directly and MPICH's mpi_f08 does too: the Fortran entry
    points are wrapped. MPICH's mpif.h calls the C MPI_Send: both wrappers see the call, and the
    re-entry guard must count it once."""
    np = 2
    rec = profile(run_bandwall, tmp_path, impl, build(impl, binding), np)
    by = calls(rec)
    assert {k: (c["count"], c["bytes"]) for k, c in by.items()} == {
        "MPI_Send": (3 * np, 3 * 40 * np),
        "MPI_Recv": (3 * np, 3 * 40 * np),
        "MPI_Bcast": (np, 20 * np),
        "MPI_Barrier": (np, 0),
    }
    assert by["MPI_Bcast"]["roots"] == {"0": {"count": 1, "bytes": 20}}
    assert rec["result"]["partners"] == [[0, 120], [120, 0]]
    check_histograms(rec)


@pytest.mark.parametrize("impl", list(TOOLS))
def test_thread_multiple(run_bandwall, build, tmp_path, impl):
    np, threads, iters = 2, 4, 50
    rec = profile(run_bandwall, tmp_path, impl, build(impl, "threads"), np)
    by = calls(rec)
    assert rec["config"]["thread_level"] == "MPI_THREAD_MULTIPLE"
    assert {k: c["count"] for k, c in by.items()} == {
        k: np * threads * iters for k in ("MPI_Isend", "MPI_Irecv", "MPI_Waitall")
    }
    assert by["MPI_Isend"]["bytes"] == 8 * np * threads * iters
    assert rec["result"]["partners"] == [[0, 8 * threads * iters], [8 * threads * iters, 0]]
    check_histograms(rec)


def test_reports_never_overwrite(build, tmp_path):
    """Two runs of the library itself into one folder leave two reports, the first untouched."""
    impl = (mpi.available() or pytest.skip("no MPI profiler built"))[0]
    exe = build(impl, "f77")
    env = {**os.environ, **ENV, "BANDWALL_MPIPROF_DIR": str(tmp_path)}
    preload = mpi.pass_env(impl, {"LD_PRELOAD": str(mpi.profiler_library(impl))})
    cmd = [*launcher(impl, 2)[:1], *preload, *launcher(impl, 2)[1:], str(exe)]
    procs.run(cmd, env=env, check=True, timeout=120)
    first = {p: p.read_bytes() for p in tmp_path.iterdir()}
    procs.run(cmd, env=env, check=True, timeout=120)
    assert len(first) == 2 and len(list(tmp_path.glob("mpiprof-*.json"))) == 2
    assert len(list(tmp_path.glob("mpiprof-*.txt"))) == 2
    assert all(p.read_bytes() == data for p, data in first.items())


def test_stored(run_bandwall, build, tmp_path):
    impl = (mpi.available() or pytest.skip("no MPI profiler built"))[0]
    rec = profile(run_bandwall, tmp_path, impl, build(impl, "f77"), 2)
    p = run_bandwall("db", "show", rec["id"], "--format", "json", "--db", tmp_path / "db.sqlite")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["result"]["partners"] == rec["result"]["partners"]


@pytest.mark.parametrize("impl", list(TOOLS))
def test_pingpong(run_bandwall, tmp_path, impl):
    if impl not in mpi.available():
        pytest.skip(f"bandwall was built without {impl}")
    p = run_bandwall("mpi-pingpong", "--mpi", impl, "--max-size", "1K", "--reps", "1", "--max-iterations", "50", "--format", "json",
                     "--db", tmp_path / "db.sqlite", env=ENV, timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert [pt["bytes"] for pt in rec["result"]["points"]] == [4**k for k in range(6)]
    assert all(pt["latency_us"] > 0 and pt["bandwidth_GBps"] > 0 for pt in rec["result"]["points"])
    assert records.passed(rec) and rec["id"] >= 1


@pytest.mark.parametrize("impl", list(TOOLS))
@pytest.mark.parametrize("np,links", [(2, 1), (3, 3)])
def test_the_ring_measures_every_link_once(impl, np, links):
    """--ring: link i joins rank i and rank i+1 (two ranks: one link), every repetition kept."""
    if impl not in mpi.available():
        pytest.skip(f"bandwall was built without {impl}")
    from bandwall.core import native

    argv = [*launcher(impl, np), native.executable(f"bandwall-mpi-pingpong-{impl}")]
    argv += ["--ring", "--max-size", "64K", "--reps", "2", "--max-iterations", "20"]
    p = procs.run(argv, text=True, env={**os.environ, **ENV}, timeout=120)
    assert p.returncode == 0, p.stderr
    rec = records.validate(json.loads(p.stdout))
    assert rec["tool"] == "mpi-ring" and records.passed(rec)
    got = [(ln["from_rank"], ln["to_rank"]) for ln in rec["result"]["links"]]
    assert got == [(k, (k + 1) % np) for k in range(links)]
    for ln in rec["result"]["links"]:
        assert len(ln["latency_us"]["values"]) == 2 and ln["bandwidth_GBps"]["min"] > 0


@pytest.mark.parametrize("short", [True, False], ids=["short", "full"])
def test_the_surveys_ring_runs_the_decision_rules_rounds_so_a_link_can_be_judged(short, monkeypatch):
    """A survey's ring, short or not, asks each link for the rule's rounds: the launch is captured,
    and a ring of that many rounds a link, one link far slower in each, has that link judged an
    outlier by the rule (with fewer rounds the rule's interval would not reach its confidence)."""
    import statistics

    from bandwall.core import decide, native
    from bandwall.mpi import ring
    from bandwall.survey import judge

    asked: list[list[str]] = []
    monkeypatch.setattr(native, "run_record", lambda exe, args, **kw: asked.append(args) or {"config": {}})
    rec, why = ring._run("openmpi", ["mpirun"], short)
    assert rec is not None and why == ""
    (args,) = asked
    n = int(args[args.index("--reps") + 1])
    assert n == decide.rule().rounds and "--ring" in args

    def fig(values: list[float]) -> dict:
        return {"median": statistics.median(values), "min": min(values), "max": max(values), "values": values}

    names = ["n1", "n2", "n3", "n4"]
    wobble = [1 + 0.01 * ((k % 3) - 1) for k in range(n)]
    links = [
        {
            "from": a,
            "to": names[(k + 1) % 4],
            "one_machine": False,
            "bandwidth_GBps": fig([(2.0 if a == "n4" else 10.0) * w for w in wobble]),
            "latency_us": fig([2.0 * w for w in wobble]),
        }
        for k, a in enumerate(names)
    ]
    outliers, compared = judge.judge_links(links)
    assert [(o["node"], o["metric"]) for o in outliers] == [("n4-n1", "link_bandwidth_GBps")]
    assert all(c["rounds"] == n and c["enough"] for k in compared for c in k["claims"])


@pytest.mark.parametrize("impl", list(TOOLS))
def test_a_ring_of_one_rank_is_refused(impl):
    if impl not in mpi.available():
        pytest.skip(f"bandwall was built without {impl}")
    from bandwall.core import native

    argv = [*launcher(impl, 1), native.executable(f"bandwall-mpi-pingpong-{impl}"), "--ring"]
    p = procs.run(argv, text=True, env={**os.environ, **ENV}, timeout=120)
    assert p.returncode != 0 and "--ring needs 2 ranks or more, got 1" in p.stderr


def test_report_section(run_bandwall, tmp_path):
    """`bandwall report --sections mpiprof` profiles bandwall's own ping-pong when nothing is stored:
    call shares, size histograms and the partner heat map on the page."""
    if not mpi.available():
        pytest.skip("bandwall was built without MPI")
    out = tmp_path / "rep"
    p = run_bandwall(
        "report",
        "--sections",
        "mpiprof",
        "--no-store",
        "--out",
        out,
        "--format",
        "json",
        env=ENV,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    *recs, report = json.loads(p.stdout)  # the report's records, the report record last
    sec = report["result"]["sections"][0]
    assert sec["status"] == "ok", sec.get("reason")
    rec = recs[-1]
    assert "libbandwall-mpiprof: wrote" in rec["result"]["output"]  # the program's output, kept in the record
    assert "libbandwall-mpiprof" not in p.stderr
    assert rec["tool"] == "mpiprof" and rec["config"]["ranks"] == 2
    by = calls(rec)
    assert by["MPI_Send"]["count"] == by["MPI_Recv"]["count"] > 0
    assert rec["result"]["partners"][0][1] == rec["result"]["partners"][1][0] > 0
    page = (out / "index.html").read_text()
    assert page.count("data:image/png;base64") >= 3
