"""`bandwall mpi-pingpong`: latency and bandwidth between two MPI ranks, the one-rail model of the
mpiprof rail advisor."""

from __future__ import annotations

import re

from bandwall.core import native, records
from bandwall.core.errors import UsageError
from bandwall.mpi import flavours as mpi

COLUMNS = ["bytes", "latency us", "bandwidth GB/s"]
MAX_SIZE_LIMIT = 1 << 30  # bandwall-mpi-pingpong's own bound on --max-size
# The size grammar of the executables (native/common/args.cpp parse_size): digits and dots, then a
# binary unit or none, any case.
_SIZE = re.compile(r"([0-9.]+)(|b|k|kb|kib|m|mb|mib|g|gb|gib|t|tb|tib)", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def check_max_size(text: str) -> int:
    """Bytes of --max-size, refused (UsageError) unless a size between 1 byte and 1G: messages go 1,
    4, 16, ... bytes up to it. Checked before mpirun starts, because the executable's own refusal
    reaches the user through mpirun as a banner of dashes."""
    m = _SIZE.fullmatch(text)
    try:
        number = float(m.group(1)) if m else -1.0
    except ValueError:
        number = -1.0
    if number < 0 and text.strip().startswith("-"):
        raise UsageError(f"--max-size {text!r} is negative: the largest message is 1 byte to 1G")
    if number < 0:
        raise UsageError(f"--max-size {text!r} is not a size (examples: 4096, 64K, 4M)")
    n = int(number * _UNITS[m.group(2)[:1].lower()])
    if not 1 <= n <= MAX_SIZE_LIMIT:
        raise UsageError(
            f"--max-size {text!r} must be between 1 byte and 1G (messages go 1, 4, 16, ... bytes)"
        )
    return n


def run(
    impl: str | None = None,
    max_size: str = "4M",
    reps: int = 5,
    max_iterations: int = 2000,
    launcher: list[str] | None = None,
) -> dict:
    """Runs bandwall-mpi-pingpong-<impl> on two ranks (mpirun of impl, or the given launcher)."""
    check_max_size(max_size)
    impl = impl or (mpi.available() or ["openmpi"])[0]
    mpi.profiler_library(impl)  # refuses an implementation bandwall was not built for
    prefix = launcher if launcher else mpi.launcher(impl, 2)
    rec = native.run_record(
        f"bandwall-mpi-pingpong-{impl}",
        ["--max-size", max_size, "--reps", reps, "--max-iterations", max_iterations],
        prefix=prefix,
    )
    rec["config"]["mpi"] = impl
    return records.finish(rec)


def rows(rec: dict) -> list[list]:
    return [[p["bytes"], p["latency_us"], p["bandwidth_GBps"]] for p in rec["result"]["points"]]
