"""The links between nodes: a ring of ping-pongs, one rank a node, rank i with rank i+1 one link at a
time (bandwall-mpi-pingpong --ring), started by srun inside Slurm or by Open MPI's mpirun over a
hostfile. Returns the mpi-ring record, or None and the reason it could not run (a survey of the
nodes stands without its links). Each link runs the decision rule's rounds (decide.rule().rounds),
short survey or not: the survey judges a link by the rule on its repetitions, and with fewer the
rule's interval falls short of its confidence (three rounds cover 75%), so no link could be judged."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from bandwall.core import decide, native
from bandwall.core.errors import BandwallError
from bandwall.mpi import flavours as mpi

# (largest message, round trips at most) for a full and a short survey; the repetitions are the
# decision rule's rounds for both (reps())
SIZES = {False: ("4M", 2000), True: ("1M", 500)}
TIMEOUT_S = 600  # a wire-up that hangs must not hold the survey


def reps() -> int:
    """Repetitions of each link: the decision rule's rounds."""
    return decide.rule().rounds


def _args(short: bool) -> list[str]:
    size, iters = SIZES[short]
    return ["--ring", "--max-size", size, "--reps", str(reps()), "--max-iterations", str(iters)]


def _run(impl: str, prefix: list[str], short: bool, env: dict | None = None) -> tuple[dict | None, str]:
    exe = f"bandwall-mpi-pingpong-{impl}"
    try:
        rec = native.run_record(exe, _args(short), prefix=prefix, env=env, timeout=TIMEOUT_S)
    except BandwallError as e:
        return None, f"the ring of ping-pongs failed ({str(e).splitlines()[-1] if str(e) else e})"
    return rec, ""


def slurm_ring(nodes: int, short: bool) -> tuple[dict | None, str]:
    """The ring over the allocation's nodes through srun, with each MPI implementation bandwall was
    built for whose wire-up plugin this Slurm offers, until one runs."""
    if nodes < 2:
        return None, "one node: no links"
    built = mpi.available()
    if not built:
        return None, mpi.NO_MPI
    try:
        listed = subprocess.run(["srun", "--mpi=list"], capture_output=True, text=True, check=False).stdout
    except OSError as e:
        return None, f"srun --mpi=list failed: {e.strerror}"
    plugins = {ln.strip().split()[-1] for ln in listed.splitlines() if ln.strip()}
    failed = []
    for impl in built:
        plugin = mpi.flavours.get(impl).srun_mpi
        if plugin in plugins:
            rec, why = _run(impl, ["srun", "--ntasks-per-node=1", f"--mpi={plugin}"], short)
            if rec is not None:
                rec["config"]["launch"] = f"srun --mpi={plugin}, {mpi.flavours.get(impl).title}"
                return rec, ""
            failed.append(f"{impl} through srun --mpi={plugin}: {why}")
    if failed:
        return None, "; ".join(failed)
    wanted = ", ".join(mpi.flavours.get(i).srun_mpi for i in built)
    return None, f"this Slurm offers no MPI plugin bandwall's MPI builds need ({wanted})"


def hostfile_ring(hostfile: Path, hosts: int, short: bool) -> tuple[dict | None, str]:
    """The ring over the hostfile's hosts through Open MPI's mpirun."""
    if hosts < 2:
        return None, "one host: no links"
    if "openmpi" not in mpi.available():
        return None, "bandwall was built without Open MPI: no ring over the hostfile"
    f = mpi.flavours.get("openmpi")
    prefix = f.mpirun_args(hosts, len(os.sched_getaffinity(0)))
    prefix += ["--hostfile", str(hostfile), "--map-by", "ppr:1:node"]
    rec, why = _run("openmpi", prefix, short, f.mpirun_env())
    if rec is not None:
        rec["config"]["launch"] = f"{f.mpirun} --hostfile"
    return rec, why
