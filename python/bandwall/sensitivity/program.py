"""The user's program, run whole on its CPUs (affinity and the OpenMP variables), N times in a row
for one timed run, in its own session: whatever it starts ends with it, and with bandwall."""

from __future__ import annotations

import ctypes
import math
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

from bandwall.core import launch
from bandwall.core.errors import RunFailed, UsageError

SHORTEST_S = 0.05  # a timed run shorter than this is repeated (or refused under --repeat)
REPEAT_TO_S = 0.25  # an automatic repeat makes a timed run about this long
MOST_REPEATS = 10_000
PR_SET_PDEATHSIG = 1
STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def check(argv: Sequence[str]) -> list[str]:
    """The command as given; UsageError when there is none or it cannot be found."""
    if not argv:
        raise UsageError("give the program after --: bandwall sensitivity -- PROGRAM ARGS")
    exe = argv[0]
    found = shutil.which(exe) if "/" not in exe else (exe if os.access(exe, os.X_OK) else None)
    if found is None or os.path.isdir(found):
        raise UsageError(f"program not found or not executable: {exe!r}")
    return list(argv)


def _child_setup(cpus: Sequence[int]):
    """In the child before exec: its CPUs, and SIGKILL when bandwall ends (even by SIGKILL)."""
    pin = launch.pin_to(cpus)

    def setup() -> None:
        pin()
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)

    return setup


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
        with tempfile.TemporaryFile() as err:  # a file: a child left behind cannot hold a pipe open
            # no interrupt between the start and the try below, where it would orphan the program
            signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
            t0 = time.perf_counter()
            try:
                proc = subprocess.Popen(
                    self.argv,
                    env=launch.pinned_env(self.cpus),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=err,
                    start_new_session=True,
                    preexec_fn=_child_setup(self.cpus),
                )
            except OSError as e:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
                raise RunFailed(f"cannot run {self.argv[0]!r}: {e.strerror}") from e
            try:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
                proc.wait()
                seconds = time.perf_counter() - t0
            finally:  # an interrupt too: the program and all it started end with bandwall
                end_session(proc)
            if proc.returncode != 0:
                err.seek(0)
                last = (err.read().decode(errors="replace").strip().splitlines() or [""])[-1]
                code = proc.returncode
                how = f"exit code {code}" if code > 0 else f"signal {-code}"
                raise RunFailed(
                    f"the program {self.describe()!r} failed ({how}){': ' + last if last else ''}"
                )
            return seconds


def _session_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[4])
    except (OSError, IndexError, ValueError):
        return None


def end_session(proc: subprocess.Popen) -> None:
    """SIGKILL to every process of the session the program leads (what it left running), then reaps it."""
    sid = proc.pid
    for _ in range(3):  # a process forking while we look is caught by the next pass
        left = [int(d) for d in os.listdir("/proc") if d.isdigit() and _session_of(int(d)) == sid]
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    if proc.poll() is None:
        proc.kill()
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
