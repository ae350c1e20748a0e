"""`bandwall mpiprof`: runs an unmodified MPI program under its launcher with
libbandwall-mpiprof preloaded in every rank, and turns the report rank 0 wrote at MPI_Finalize
into a stored record (text histograms beside it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import platformdirs

from bandwall.core import native, process, records
from bandwall.core.errors import RunFailed, UsageError
from bandwall.core.topo import cpu_list, resolve_cpus
from bandwall.mpi import flavours as mpi


def reports_dir() -> Path:
    """Where profiles are written: $BANDWALL_MPIPROF_DIR, else mpiprof/ in the user data folder."""
    env = os.environ.get("BANDWALL_MPIPROF_DIR")
    return Path(env) if env else Path(platformdirs.user_data_dir("bandwall")) / "mpiprof"


def plan(command: list[str], out_dir: Path) -> tuple[list[str], dict[str, str], str]:
    """The command to run (launcher options added), extra environment, and the MPI implementation.

    The library matches the program's libmpi (ldd); a program linking none is refused before it
    runs (RunFailed: it would never reach MPI_Finalize, so no report would come)."""
    if not command:
        raise UsageError(
            "no command to profile: give it after --, e.g. bandwall mpiprof -- mpirun -np 4 ./app"
        )
    first = mpi.resolve(command[0])
    if first is None:
        raise UsageError(f"launcher or program {command[0]!r} not found")
    kind = mpi.launcher_kind(first)
    program = first if kind is None else mpi.find_program(command[1:])
    impl = mpi.linked_impl(program) if program and mpi.is_elf(program) else None
    if program and mpi.is_elf(program) and impl is None:
        raise RunFailed(f"{program!r} is not an MPI program (it links no MPI library): nothing to profile")
    if impl is None:
        impl = kind if kind in mpi.flavours else None
    if impl is None:
        avail = mpi.available()
        if not avail:
            raise UsageError(mpi.NO_MPI)
        impl = avail[0]
    lib = mpi.profiler_library(impl)
    env = {"LD_PRELOAD": str(lib), "BANDWALL_MPIPROF_DIR": str(out_dir)}
    if kind is None:  # a singleton: the program itself, no launcher
        return list(command), env, impl
    return [command[0], *mpi.pass_env(kind, env), *command[1:]], {}, impl


OUTPUT_KEPT = 4096  # characters of a captured program's output kept in its record


def run(
    command: list[str], out: str | None = None, timeout: float | None = None, capture: bool = False
) -> dict:
    """Profiles command; returns the finished record (result.text_report names the text file).
    The program's own output goes to stderr, or with capture into the record (result.output, its
    last OUTPUT_KEPT characters, stdout and stderr merged), so a caller's terminal stays its own."""
    base = Path(out) if out else reports_dir()
    try:
        base.mkdir(parents=True, exist_ok=True)
        out_dir = Path(tempfile.mkdtemp(prefix="run-", dir=base))
    except OSError as e:
        raise UsageError(f"cannot create the report folder in {str(base)!r}: {e.strerror}") from e
    cmd, extra_env, impl = plan(command, out_dir)
    env = dict(os.environ)
    env.update(extra_env)
    try:
        # The program's own output goes to stderr: stdout carries the record.
        proc = subprocess.run(
            cmd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if capture else _stderr_fd(),
            stderr=subprocess.STDOUT if capture else None,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        raise RunFailed(f"{command[0]} did not finish within {timeout:.0f} s") from e
    except OSError as e:
        raise UsageError(f"cannot run {command[0]!r}: {e.strerror}") from e
    output = proc.stdout.decode(errors="replace")[-OUTPUT_KEPT:] if capture else None
    if proc.returncode != 0:
        last = process.last_line(output or "")
        raise RunFailed(
            f"{' '.join(command)} exited with code {proc.returncode}" + (f": {last}" if last else "")
        )
    found = sorted(out_dir.glob("mpiprof-*.json"))
    if not found:
        raise RunFailed(
            f"no profile: the program never reached MPI_Finalize under the {mpi.flavours.get(impl).title} "
            f"profiler (not an MPI program, or linked with another MPI)"
        )
    try:
        rec = json.loads(found[-1].read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise RunFailed(f"the profile {str(found[-1])!r} is unreadable: {e}") from e
    where_ranks_ran(rec)
    rec["config"]["command"] = list(command)
    if output is not None:
        rec["result"]["output"] = output
    return records.finish(rec)


def where_ranks_ran(rec: dict) -> None:
    """The record's topology is that of where the ranks ran, as each rank told the profiler
    (result.per_rank[].host and .cpus), not of the machine running the front end: result.hosts
    lists each host with its ranks and their CPUs; provenance.cpus is the CPUs of the ranks when
    they ran on this host, whose topology digest is then known (unknown for other hosts)."""
    per_rank = rec["result"].get("per_rank", [])
    hosts: dict[str, dict] = {}
    for r in per_rank:
        h = hosts.setdefault(r.get("host", "unknown"), {"ranks": [], "cpus": []})
        h["ranks"].append(r["rank"])
        h["cpus"].append(r.get("cpus", ""))
    rec["result"]["hosts"] = [{"host": name, **h} for name, h in hosts.items()]
    prov = rec["provenance"]
    here = os.uname().nodename
    lists = [r.get("cpus", "") for r in per_rank]
    if set(hosts) == {here}:
        prov["topology_digest"] = native.run_record("bandwall-topo", [])["provenance"]["topology_digest"]
        if all(t and t[0].isdigit() for t in lists):  # the library writes "more than fit" for a huge set
            prov["cpus"] = cpu_list(sorted({c for t in lists for c in resolve_cpus(t)}))
    else:
        named = ", ".join(hosts) or "hosts the profile does not name"
        prov["topology_digest"] = f"unknown: the ranks ran on {named}, not on {here} where bandwall ran"


def _stderr_fd():
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return subprocess.DEVNULL


def call_rows(rec: dict) -> list[list]:
    r = rec["result"]
    total = sum(c["time_s"] for c in r["calls"]) or 1.0
    rows = []
    for c in sorted(r["calls"], key=lambda c: -c["time_s"]):
        avg = c["bytes"] / c["count"] if c["count"] else 0
        rows.append(
            [c["name"], c["count"], c["bytes"], round(avg), c["time_s"] * 1e6, 100.0 * c["time_s"] / total]
        )
    return rows


CALL_COLUMNS = ["call", "count", "bytes", "avg size", "time us", "time %"]


def csv_rows(recs: list[dict]) -> tuple[list[str], list[list]]:
    return ["id", *CALL_COLUMNS], [[rec.get("id", "")] + row for rec in recs for row in call_rows(rec)]
