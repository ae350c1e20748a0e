"""The MPI implementations bandwall knows (Debian's Open MPI and MPICH): their compiler wrappers,
launchers, the Slurm MPI plugin each needs under srun, the Debian packages that provide them,
which one an executable is linked with, the profiler library and ping-pong executable built for
each, and how each launcher passes environment variables to the ranks.

Adding an implementation is one `flavours.add(...)` line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bandwall.core.errors import RunFailed, Unavailable, UsageError
from bandwall.core.registry import Registry


@dataclass(frozen=True)
class Flavour:
    name: str
    mpicc: str  # C compiler wrapper
    mpirun: str  # its own launcher
    srun_mpi: str  # srun --mpi=... plugin its processes need for wire-up
    library: str  # soname prefix of its MPI library (how ldd tells which one an executable uses)
    packages: str  # Debian packages that provide it
    title: str = ""
    launchers: tuple[str, ...] = ()  # real names of its mpirun/mpiexec (after symbolic links)

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
    Flavour(
        "openmpi",
        "mpicc.openmpi",
        "mpirun.openmpi",
        "pmix",
        "libmpi.so",
        "openmpi-bin libopenmpi-dev",
        "Open MPI",
        ("orterun", "mpirun.openmpi", "mpiexec.openmpi", "prterun"),
    ),  # fmt: skip
)
flavours.add(
    "mpich",
    Flavour(
        "mpich",
        "mpicc.mpich",
        "mpiexec.mpich",
        "pmi2",
        "libmpich.so",
        "mpich libmpich-dev",
        "MPICH",
        ("mpiexec.hydra", "mpirun.mpich", "mpiexec.mpich"),
    ),  # fmt: skip
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


NO_MPI = "no MPI library found (Debian: apt-get install libopenmpi-dev openmpi-bin, or libmpich-dev mpich)"


def _lib_dirs() -> list[Path]:
    if os.environ.get("BANDWALL_LIBDIR"):  # given: the only place looked at
        return [Path(os.environ["BANDWALL_LIBDIR"])]
    return [Path(sys.executable).parent.parent / "lib", Path(sys.prefix) / "lib"]


def profiler_library(impl: str) -> Path:
    """libbandwall-mpiprof-<impl>.so, or UsageError naming the packages bandwall needs to build it."""
    name = f"libbandwall-mpiprof-{impl}.so"
    for d in _lib_dirs():
        if (d / name).is_file():
            return d / name
    f = flavours.get(impl)
    raise UsageError(
        f"bandwall was built without {f.title} support ({name} not found): install {f.packages} and "
        f"run ./bootstrap setup again"
    )


def available() -> list[str]:
    """Implementations whose profiler library was built."""
    found = []
    for impl in flavours.names():
        try:
            profiler_library(impl)
            found.append(impl)
        except UsageError:
            pass
    return found


def resolve(program: str) -> str | None:
    """Absolute path of an executable named on a command line, or None."""
    if os.sep in program:
        p = Path(program)
        return str(p.resolve()) if p.is_file() and os.access(p, os.X_OK) else None
    found = shutil.which(program)
    return str(Path(found).resolve()) if found else None


def is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def linked_impl(path: str) -> str | None:
    """Name of the MPI implementation an ELF program links, or None when it links none."""
    try:
        return linked(path).name
    except Unavailable:
        return None


def launcher_kind(path: str) -> str | None:
    """openmpi, mpich or slurm for a launcher's real path, None for anything else."""
    name = Path(path).name
    if name == "srun":
        return "slurm"
    for impl, f in flavours.items():
        if name in f.launchers:
            return impl
    return None


def pass_env(kind: str, env: dict[str, str]) -> list[str]:
    """Launcher options that give every rank env (and leave the launcher's own environment alone)."""
    if kind == "openmpi":
        return [a for k, v in env.items() for a in ("-x", f"{k}={v}")]
    if kind == "mpich":
        return [a for k, v in env.items() for a in ("-genv", k, v)]
    if kind == "slurm":
        return ["--export=ALL," + ",".join(f"{k}={v}" for k, v in env.items())]
    raise RunFailed(f"cannot pass environment variables through launcher kind {kind!r}")


def find_program(args: list[str]) -> str | None:
    """The first argument after the launcher's that names an ELF executable (the MPI program)."""
    for a in args:
        if a.startswith("-") or "=" in a:
            continue
        path = resolve(a)
        if path and is_elf(path) and launcher_kind(path) is None:
            return path
    return None


def launcher(impl: str, ranks: int) -> list[str]:
    """mpirun of impl for ranks ranks (oversubscribed beyond the cores; as root where needed)."""
    f = flavours.get(impl)
    if not f.available():
        raise UsageError(f"no {f.title} launcher {f.mpirun!r} (Debian: apt-get install {f.packages})")
    argv = f.mpirun_args(ranks, len(os.sched_getaffinity(0)))
    if f.mpirun_env():
        argv.insert(1, "--allow-run-as-root")
    return argv
