"""What numa-check runs, checked before anything runs: a built-in kernel (numa_check.builtin) or any
command, with its figure of merit."""

from __future__ import annotations

import os
import shutil

from bandwall.core import native
from bandwall.core.errors import UsageError
from bandwall.core.fom import Fom
from bandwall.kernels import iso3dfd
from bandwall.numa import numa_check


def resolve_command(argv: list[str]) -> list[str]:
    """argv with its program made absolute; UsageError when it does not exist."""
    prog = argv[0]
    if "/" in prog:
        if not os.path.isfile(prog) or not os.access(prog, os.X_OK):
            raise UsageError(f"command {prog!r} does not exist or is not executable")
        return [os.path.abspath(prog)] + argv[1:]
    found = shutil.which(prog)
    if not found:
        raise UsageError(f"command {prog!r} not found in PATH")
    return [found] + argv[1:]


def check(
    target: tuple[str, ...],
    fom_regex: str | None,
    lower: bool,
    rounds: int,
    init: str,
    size: str,
    reps: int,
    grid: str,
    iters: int,
    timeout: float | None,
    after_dashes: int | None = None,
    free: bool = False,
) -> tuple[list[str], Fom, str | None]:
    """Validates the request before anything runs; returns the target command, its scoring and the built-in.

    after_dashes: how many of argv's words came after "--" (None when there was no "--"): the
    words before it may only name a kernel, and only when none follow it. free: a built-in leaves
    its threads to the scheduler (--bind none) instead of one on each of its CPUs."""
    argv = target
    if not argv:
        raise UsageError(f"name a kernel ({', '.join(numa_check.BUILTINS)}) or a command after --")
    before = list(argv[: len(argv) - after_dashes]) if after_dashes is not None else list(argv)
    command = list(argv[len(before) :])
    if before and command:
        raise UsageError(
            f"name a kernel or give -- COMMAND, not both (got {' '.join(before)!r} before -- and "
            f"{' '.join(command)!r} after it)"
        )
    if after_dashes is None and len(argv) > 1 and argv[0] in numa_check.BUILTINS:
        raise UsageError(
            f"kernel {argv[0]!r} takes no arguments (got {' '.join(argv[1:])!r}); its options go "
            f"before it, and a command goes after --"
        )
    fom = Fom.parse(fom_regex, lower) if fom_regex else None
    if not command and len(before) == 1 and before[0] in numa_check.BUILTINS:
        b = numa_check.builtin(
            before[0], init=init, size=size, reps=reps, grid=parse_grid(grid), iters=iters, free=free
        )
        return [native.executable(b.executable)] + b.args, fom or b.fom, before[0]
    return resolve_command(list(argv)), fom or Fom.wall(), None


MAX_DIM = 1 << 20  # bandwall-iso3dfd's largest dimension


def parse_grid(text: str) -> tuple[int, int, int]:
    """N1xN2xN3 for the iso3dfd built-in, each dimension within what bandwall-iso3dfd accepts
    (at least 2R+1 at the stencil's default radius R: the halo on both sides and one interior point)."""
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise UsageError(f"--grid {text!r} must read N1xN2xN3 (e.g. 272x272x272)")
    least = int(iso3dfd.radius_facts()["min_dimension"])
    for name, p in zip(("N1", "N2", "N3"), parts):
        if not least <= int(p) <= MAX_DIM:
            raise UsageError(
                f"--grid {text!r}: {name} {int(p)} is out of range [{least}, {MAX_DIM}] "
                f"(the halo of {iso3dfd.default_radius()} on each side and at least one interior point)"
            )
    return int(parts[0]), int(parts[1]), int(parts[2])
