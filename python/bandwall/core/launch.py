"""How bandwall starts a user's program on given CPUs: affinity set before it runs, and the OpenMP
variables that put one thread on each CPU (OMP_NUM_THREADS, OMP_PLACES, OMP_PROC_BIND=close), over
the caller's environment."""

from __future__ import annotations

import os
from collections.abc import Sequence


def pinned_env(cpus: Sequence[int], base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env.update(
        OMP_NUM_THREADS=str(len(cpus)),
        OMP_PLACES=",".join(f"{{{c}}}" for c in cpus),
        OMP_PROC_BIND="close",
    )
    return env


def pin_to(cpus: Sequence[int]):
    """A preexec_fn that sets the child's affinity to cpus."""
    wanted = set(cpus)
    return lambda: os.sched_setaffinity(0, wanted)
