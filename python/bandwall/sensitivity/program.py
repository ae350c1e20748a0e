"""The user's program, run whole on its CPUs (affinity and the OpenMP variables), N times in a row
for one timed run, in its own session: whatever it starts ends with it, and with bandwall."""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass

from bandwall.core import launch, process
from bandwall.core.errors import RunFailed, UsageError

SHORTEST_S = 0.05  # a timed run shorter than this is repeated (or refused under --repeat)
REPEAT_TO_S = 0.25  # an automatic repeat makes a timed run about this long
MOST_REPEATS = 10_000


def check(argv: Sequence[str]) -> list[str]:
    """The command as given; UsageError when there is none or it cannot be found."""
    if not argv:
        raise UsageError("give the program after --: bandwall sensitivity -- PROGRAM ARGS")
    exe = argv[0]
    found = shutil.which(exe) if "/" not in exe else (exe if os.access(exe, os.X_OK) else None)
    if found is None or os.path.isdir(found):
        raise UsageError(f"program not found or not executable: {exe!r}")
    return list(argv)


@dataclass
class Program:
    argv: list[str]
    cpus: list[int]
    repeat: int = 1

    def describe(self) -> str:
        return " ".join(self.argv)

    def run(self) -> float:
        """Seconds for repeat runs in a row (each from its start to its exit); RunFailed when one fails."""
        return sum(self._once() for _ in range(self.repeat))

    def _once(self) -> float:
        try:
            ended = process.run(
                self.argv,
                cpus=self.cpus,
                env=launch.pinned_env(self.cpus),
                session=True,
                die_with_bandwall=True,
                grace=0,  # what it left running when it ended is killed at once
            )
        except OSError as e:
            raise RunFailed(f"cannot run {self.argv[0]!r}: {e.strerror}") from e
        if ended.code != 0:
            last = ended.error
            raise RunFailed(
                f"the program {self.describe()!r} failed ({ended.how()}){': ' + last if last else ''}"
            )
        return ended.seconds


def repeat_for(seconds: float, given: int | None) -> tuple[int, str]:
    """How many runs in a row make one timed run, and why; UsageError when --repeat leaves it short."""
    if given is not None:
        if seconds * given < SHORTEST_S:
            need = math.ceil(SHORTEST_S / max(seconds, 1e-6))
            raise UsageError(
                f"--repeat {given} runs the program {seconds * given * 1e3:.1f} ms: a timed run must last at "
                f"least {SHORTEST_S * 1e3:.0f} ms; give --repeat {need} or more"
            )
        return given, "given with --repeat"
    if seconds >= SHORTEST_S:
        return 1, f"one run lasts {seconds:.3g} s"
    n = min(MOST_REPEATS, math.ceil(REPEAT_TO_S / max(seconds, 1e-6)))
    if seconds * n < SHORTEST_S:
        raise UsageError(
            f"the program runs {seconds * 1e6:.0f} us: too short to time even {n} times in a row"
        )
    return n, f"one run lasts {seconds * 1e3:.1f} ms, under {SHORTEST_S * 1e3:.0f} ms: {n} in a row"
