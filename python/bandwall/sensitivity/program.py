"""The user's program, run whole on its CPUs (affinity and the OpenMP variables), N times in a row
for one timed run, in its own session so that all it starts ends with it."""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

from bandwall.core import launch
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
        """Seconds for repeat runs in a row; RunFailed when one fails."""
        t0 = time.perf_counter()
        for _ in range(self.repeat):
            self._once()
        return time.perf_counter() - t0

    def _once(self) -> None:
        try:
            proc = subprocess.Popen(
                self.argv,
                env=launch.pinned_env(self.cpus),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
                preexec_fn=launch.pin_to(self.cpus),
            )
        except OSError as e:
            raise RunFailed(f"cannot run {self.argv[0]!r}: {e.strerror}") from e
        try:
            _, err = proc.communicate()
        except BaseException:  # an interrupt: the program and all it started end with bandwall
            end_group(proc)
            raise
        end_group(proc)  # what it left running in its session
        if proc.returncode != 0:
            last = (err.strip().splitlines() or [""])[-1]
            how = f"exit code {proc.returncode}" if proc.returncode > 0 else f"signal {-proc.returncode}"
            raise RunFailed(f"the program {self.describe()!r} failed ({how}){': ' + last if last else ''}")


def end_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


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
