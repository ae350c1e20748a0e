"""Launching an MPI executable on N ranks: mpirun (the launcher of the MPI implementation the
executable is linked with: Open MPI's mpirun or MPICH's mpiexec) or Slurm's srun (with the MPI
plugin that implementation needs). `auto` picks srun inside a Slurm allocation (SLURM_JOB_ID set)
and mpirun otherwise.

Adding a launcher is one function registered in `launchers`.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from typing import Callable

from bandwall.core import native
from bandwall.core.errors import RunFailed, Unavailable, UsageError
from bandwall.core.registry import Registry
from bandwall.mpi import flavours as mpi

AUTO = "auto"


@dataclass
class Plan:
    """How to start an executable on ranks processes: argv before the executable and environment."""

    launcher: str
    prefix: list[str]
    env: dict[str, str] = field(default_factory=dict)
    mpi: str = ""


launchers: Registry[Callable[[mpi.Flavour, int], Plan]] = Registry("launcher")


def _cpus() -> int:
    return len(os.sched_getaffinity(0))


def _need(program: str, package: str) -> str:
    path = shutil.which(program)
    if path is None:
        raise Unavailable(f"launcher {program!r} is not installed (Debian package {package})")
    return path


@launchers.register("mpirun")
def mpirun(flavour: mpi.Flavour, ranks: int) -> Plan:
    _need(flavour.mpirun, flavour.packages.split()[0])
    return Plan("mpirun", flavour.mpirun_args(ranks, _cpus()), flavour.mpirun_env(), flavour.name)


@launchers.register("srun")
def srun(flavour: mpi.Flavour, ranks: int) -> Plan:
    path = _need("srun", "slurm-client")
    argv = [path, f"--mpi={flavour.srun_mpi}", "-n", str(ranks)]
    if ranks > _cpus():
        argv.append("--overcommit")
    return Plan("srun", argv, {}, flavour.name)


def names() -> list[str]:
    return [AUTO, *launchers.names()]


def choose(name: str) -> str:
    """The launcher auto stands for here, or name itself (UsageError for an unknown one)."""
    if name == AUTO:
        return "srun" if os.environ.get("SLURM_JOB_ID") and shutil.which("srun") else "mpirun"
    if name not in launchers:
        raise UsageError(f"unknown launcher {name!r} (known: {', '.join(names())})")
    return name


def plan(executable: str, ranks: int, launcher: str = AUTO) -> Plan:
    """How to run the native executable on ranks ranks; Unavailable (exit 1) when MPI or the
    launcher is missing."""
    if ranks < 1:
        raise UsageError(f"rank count {ranks} must be at least 1")
    name = choose(launcher)
    try:
        path = native.executable(executable)
    except RunFailed as e:
        raise Unavailable(
            f"{executable} is not built: MPI was not found when bandwall was built "
            f"(Debian: apt-get install {mpi.flavours.get('openmpi').packages}, then ./bootstrap setup)"
        ) from e
    flavour = mpi.linked(path)
    return launchers.get(name)(flavour, ranks)
