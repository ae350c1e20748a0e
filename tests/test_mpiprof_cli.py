"""Bad input of mpiprof, mpi-pingpong and mpi-rails: one line on stderr and exit 2 or 1."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bandwall.mpi import flavours as mpi

HERE = Path(__file__).parent / "mpi"
ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


@pytest.fixture(scope="module")
def c_program(tmp_path_factory):
    if "openmpi" not in mpi.available() or not shutil.which("mpicc.openmpi"):
        pytest.skip("bandwall was built without Open MPI, or mpicc.openmpi is absent")
    exe = tmp_path_factory.mktemp("prog") / "prof_c"
    subprocess.run(["mpicc.openmpi", "-o", str(exe), str(HERE / "prof_c.c")], check=True, capture_output=True)
    return exe


BAD = [
    (["mpiprof"], 2, "no command to profile"),
    (["mpiprof", "--", "no-such-mpirun", "-np", "2", "./app"], 2, "'no-such-mpirun' not found"),
    (["mpiprof", "--bogus", "--", "mpirun", "./app"], 2, "no such option '--bogus'"),
    (["mpiprof", "--", "mpirun.openmpi", "-np", "2", "/bin/true"], 1, "is not an MPI program"),
    (["mpiprof", "--", "/bin/true"], 1, "is not an MPI program"),
    (["mpiprof", "--", "./no-such-app"], 2, "not found"),
    (["mpiprof", "--timeout", "0", "--", "/bin/true"], 2, "--timeout"),
    (["mpi-rails", "--latency", "1"], 2, "give both --latency and --bandwidth"),
    (["mpi-rails"], 2, "no mpiprof record in the database"),
    (["mpi-rails", "--id", "7"], 2, "no record with id 7"),
    (["mpi-pingpong", "--mpi", "lam"], 2, "'lam' is not one of"),
    # --max-size is checked before mpirun starts (the executable's refusal would come as mpirun's
    # banner of dashes); messages go 1, 4, 16, ... bytes up to it, so below 1 byte is min > max.
    (["mpi-pingpong", "--max-size", "0"], 2, "'0' must be between 1 byte and 1G"),
    (["mpi-pingpong", "--max-size", "0.5"], 2, "'0.5' must be between 1 byte and 1G"),
    (["mpi-pingpong", "--max-size", "-1"], 2, "'-1' is negative"),
    (["mpi-pingpong", "--max-size=-4K"], 2, "'-4K' is negative"),
    (["mpi-pingpong", "--max-size", "2G"], 2, "'2G' must be between 1 byte and 1G"),
    (["mpi-pingpong", "--max-size", "lots"], 2, "'lots' is not a size"),
    (["mpi-pingpong", "--max-size", "1e3"], 2, "'1e3' is not a size"),
    (["mpi-pingpong", "--max-size", ""], 2, "'--max-size': is empty"),
    (["mpi-pingpong", "--db", "/no/such/dir/x.db"], 2, "does not exist: no folder '/no/such/dir'"),
]


@pytest.mark.parametrize("args,code,fragment", BAD, ids=[" ".join(a) for a, _, _ in BAD])
def test_bad_input(run_bandwall, tmp_path, args, code, fragment):
    p = (
        run_bandwall(*args, "--db", tmp_path / "db.sqlite")
        if args[:1] == ["mpi-rails"]
        else run_bandwall(*args, env=ENV)
    )
    assert p.returncode == code, p.stderr
    assert fragment in p.stderr
    assert "Traceback" not in p.stderr
    if args[0] == "mpi-pingpong":  # refused before anything ran: one line, nothing launched
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert "----" not in p.stderr and p.stdout == ""


def test_no_profiler_for_the_programs_mpi(run_bandwall, tmp_path, c_program):
    """An MPI bandwall was not built for (here: none, BANDWALL_LIBDIR empty) names the packages."""
    env = {**ENV, "BANDWALL_LIBDIR": str(tmp_path)}
    p = run_bandwall("mpiprof", "--", "mpirun.openmpi", "-np", "2", c_program, env=env)
    assert p.returncode == 2
    assert "install openmpi-bin libopenmpi-dev" in p.stderr
    p = run_bandwall("mpi-pingpong", "--mpi", "openmpi", env=env)
    assert p.returncode == 2 and "install openmpi-bin libopenmpi-dev" in p.stderr


def test_no_report_from_a_program_that_never_finalizes(run_bandwall, tmp_path):
    """A program under a launcher that bandwall cannot recognise as MPI (a script) runs, writes no
    profile and is reported as such, without hanging."""
    if not mpi.available():
        pytest.skip("no MPI profiler built")
    script = tmp_path / "app.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    p = run_bandwall("mpiprof", "--out", tmp_path, "--", script, env=ENV, timeout=60)
    assert p.returncode == 1 and "no profile" in p.stderr
