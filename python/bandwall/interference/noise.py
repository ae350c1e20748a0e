"""Noise processes beside a kernel: streaming memory (bandwall-stream on one thread), computing
(bandwall-peak on one thread), waking periodically like a resident daemon (a short STREAM run, then a
sleep, in a loop), or a user's command; pinned to a CPU or left to the scheduler as a daemon is.
Each runs in its own session until stopped; stop() ends the whole session and reaps it."""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass

from bandwall.core import native, process
from bandwall.core.errors import RunFailed, UsageError

KINDS = ("memory", "compute", "periodic")
PLACEMENTS = ("pinned", "scheduler")
# The periodic noise: one STREAM triad of PERIODIC_SIZE, then PERIODIC_SLEEP_S asleep (a daemon
# that wakes about every 50 ms and scans some memory, as the T2K study's memory-check daemon did).
PERIODIC_SIZE = "8M"
PERIODIC_SLEEP_S = 0.05
LONG_REPS = 1_000_000  # the built-in noise runs until stopped: far more repetitions than a run needs


@dataclass
class Noise:
    """What to start: kind (memory, compute, periodic) or command (a user's, as a string)."""

    kind: str | None = None
    command: str | None = None
    size: str = "64M"

    def argv(self, cpu: int | None) -> list[str]:
        where = ["--cpus", str(cpu)] if cpu is not None else ["--bind", "none"]
        if self.command is not None:
            return shlex.split(self.command)
        if self.kind == "memory":
            return [
                native.executable("bandwall-stream"),
                *("--threads", "1", *where, "--size", self.size, "--reps", str(LONG_REPS)),
            ]
        if self.kind == "compute":
            return [
                native.executable("bandwall-peak"),
                "--threads",
                "1",
                *where,
                "--reps",
                "1000",
                "--seconds",
                "60",
            ]
        once = shlex.join(
            [
                native.executable("bandwall-stream"),
                "--threads",
                "1",
                *where,
                "--size",
                PERIODIC_SIZE,
                "--reps",
                "2",
            ]
        )
        return ["sh", "-c", f"while :; do {once} >/dev/null || exit 1; sleep {PERIODIC_SLEEP_S}; done"]

    def describe(self) -> str:
        return f"command {self.command!r}" if self.command is not None else self.kind or "none"


def check(kind: str | None, command: str | None) -> Noise:
    """The noise asked for; UsageError for an unknown kind, both or an empty command."""
    if command is not None:
        if kind is not None:
            raise UsageError("give either --noise or --noise-cmd, not both")
        if not shlex.split(command):
            raise UsageError("--noise-cmd is empty: give the command to run beside the kernel")
        return Noise(command=command)
    kind = kind or "memory"
    if kind not in KINDS:
        raise UsageError(f"unknown noise {kind!r} (use {', '.join(KINDS)} or --noise-cmd 'CMD ARGS')")
    return Noise(kind=kind)


STOP_GRACE_S = 10.0  # after SIGTERM: how long the noise and what it started get to end before they are killed


@dataclass
class Running:
    """A started noise process (the leader of its own session)."""

    child: process.Child
    noise: Noise
    cpu: int | None

    @property
    def proc(self) -> subprocess.Popen:
        return self.child.proc

    def alive(self) -> bool:
        return self.child.poll() is None

    def stop(self) -> int | None:
        """Ends the noise's session (the leader's children too, as a periodic noise's current run,
        before the next case starts) and reaps it; returns the exit code it had if it ended by
        itself before (None when it was still running, as noise should be)."""
        return self.child.stop(STOP_GRACE_S)

    def close(self) -> None:
        self.child.close()


def start(noise: Noise, cpu: int | None) -> Running:
    """Starts noise in a new session (pinned to cpu, or unpinned when cpu is None), output dropped.
    A noise that cannot start raises RunFailed."""
    argv = noise.argv(cpu)
    pin = [cpu] if (cpu is not None and noise.command is not None) else None
    try:
        child = process.start(argv, cpus=pin, session=True, stdin=None)
    except OSError as e:
        raise RunFailed(f"cannot start the noise {noise.describe()}: {e.strerror}") from e
    return Running(child, noise, cpu)


def failure(run: Running, ended: int | None) -> str | None:
    """Why the noise did not keep running while the kernel ran, or None when it did."""
    if ended is None:
        return None
    last = run.child.error()
    tail = f": {last}" if last else ""
    return (
        f"the noise {run.noise.describe()} ended ({process.how(ended)}) before it was stopped; "
        f"noise must run until stopped{tail}"
    )
