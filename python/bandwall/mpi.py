"""The MPI implementations bandwall knows (Debian's Open MPI and MPICH): their compiler wrappers,
launchers, the Slurm MPI plugin each needs under srun, the Debian packages that provide them, and
which one an executable is linked with.

Adding an implementation is one `flavours.add(...)` line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

from bandwall.errors import Unavailable
from bandwall.registry import Registry


@dataclass(frozen=True)
class Flavour:
    name: str
    mpicc: str  # C compiler wrapper
    mpirun: str  # its own launcher
    srun_mpi: str  # srun --mpi=... plugin its processes need for wire-up
    library: str  # soname prefix of its MPI library (how ldd tells which one an executable uses)
    packages: str  # Debian packages that provide it

    def available(self) -> bool:
        return shutil.which(self.mpirun) is not None

    def mpirun_args(self, ranks: int, cpus: int) -> list[str]:
        """`mpirun -n ranks` for this implementation, running as root where needed and allowing
        more ranks than cores (cpus) where it would refuse them."""
        argv = [self.mpirun, "-n", str(ranks)]
        if self.name == "openmpi":
            if ranks > cpus:
                argv.append("--oversubscribe")
            # One rank runs its own OpenMP threads: do not bind it to a single core.
            argv += ["--bind-to", "none"]
        return argv

    def mpirun_env(self) -> dict[str, str]:
        if self.name == "openmpi" and os.geteuid() == 0:
            return {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        return {}


flavours: Registry[Flavour] = Registry("MPI implementation")
flavours.add(
    "openmpi",
    Flavour("openmpi", "mpicc.openmpi", "mpirun.openmpi", "pmix", "libmpi.so", "openmpi-bin libopenmpi-dev"),
)
flavours.add(
    "mpich",
    Flavour("mpich", "mpicc.mpich", "mpiexec.mpich", "pmi2", "libmpich.so", "mpich libmpich-dev"),
)


def linked(executable: str) -> Flavour:
    """The MPI implementation executable is linked with (from ldd), or Unavailable."""
    ldd = shutil.which("ldd") or "/usr/bin/ldd"
    try:
        out = subprocess.run([ldd, executable], capture_output=True, text=True, check=False).stdout
    except OSError as e:
        raise Unavailable(f"cannot inspect {executable!r}: {e.strerror}") from e
    libs = [ln.split()[0] for ln in out.splitlines() if ln.strip()]
    for _, f in flavours.items():
        if any(lib.startswith(f.library) for lib in libs):
            return f
    raise Unavailable(f"{executable!r} is not linked with an MPI library")
