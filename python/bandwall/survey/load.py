"""What else runs on a node while the survey measures it, and turns for nodes that are one machine.

Before its runs, a node's task sleeps for a short window and reads how busy its CPUs were
(/proc/stat) and which processes used them (/proc/<pid>/stat): the survey itself is idle then, so
every busy tick is another process's. A node whose CPUs are busy with others measures slow, and the
record names the processes.

Several nodes can be one machine (several slurmd on one host, containers): they share the boot id.
Measured at the same time they would measure each other, so they take turns, one at a time, under a
lock named by the boot id in /dev/shm (local to the machine, never a network folder)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
# /proc/stat's per-CPU columns: user nice system idle iowait irq softirq steal guest guest_nice;
# busy is what a process or the kernel did on the CPU (guest time is already within user).
_BUSY = (0, 1, 2, 5, 6)
_COUNTED = (0, 1, 2, 3, 4, 5, 6)  # steal is time the CPU was not ours at all: left out
TOP = 3
SHOWN_CPU_SHARE = 0.1  # a process is named when it used a tenth of a CPU or more


def host_id() -> str:
    """A short id of the running machine (a hash of its boot id): equal for nodes that are one host."""
    try:
        boot = BOOT_ID.read_text().strip()
    except OSError:
        boot = os.uname().nodename
    return hashlib.sha256(boot.encode()).hexdigest()[:12]


def _lock_path() -> Path:
    base = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
    return base / f"bandwall-survey-{host_id()}.lock"


@contextmanager
def turn() -> Iterator[float]:
    """Holds this machine's survey turn; yields the seconds waited for it."""
    path = _lock_path()
    t0 = time.monotonic()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield time.monotonic() - t0
    finally:
        os.close(fd)  # closing releases the lock


def _cpu_ticks() -> dict[int, tuple[int, int]]:
    """(busy, counted) ticks of every CPU since boot."""
    out = {}
    for line in Path("/proc/stat").read_text().splitlines():
        name, *vals = line.split()
        if name.startswith("cpu") and name[3:].isdigit():
            v = [int(x) for x in vals]
            out[int(name[3:])] = (sum(v[i] for i in _BUSY), sum(v[i] for i in _COUNTED))
    return out


def _proc_ticks() -> dict[int, tuple[str, int, int]]:
    """(command, user+system ticks, the CPU it last ran on) of every process now."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            text = (d / "stat").read_text()
        except OSError:
            continue
        close = text.rfind(")")
        fields = text[close + 2 :].split()
        # fields[0] is stat's third field (state): utime and stime are the 14th and 15th, the CPU
        # last run on the 39th
        last = int(fields[36]) if len(fields) > 36 else -1
        out[int(d.name)] = (text[text.find("(") + 1 : close], int(fields[11]) + int(fields[12]), last)
    return out


def _runs_on(pid: int, last: int, cpus: set[int]) -> bool:
    """Whether a process ran on these CPUs: bound within them, or allowed on them and last seen there."""
    try:
        allowed = os.sched_getaffinity(pid)
    except OSError:
        return last in cpus  # gone or hidden: where it last ran
    return allowed <= cpus or bool(allowed & cpus) and last in cpus


def foreign(window_s: float, cpus: set[int] | None = None) -> dict:
    """How busy this node's CPUs (this task's own, by default) were over window_s while the survey
    slept: busy CPUs in all, per CPU, and the processes that used them most."""
    cpus = set(cpus if cpus is not None else os.sched_getaffinity(0))
    c0, p0, t0 = _cpu_ticks(), _proc_ticks(), time.monotonic()
    time.sleep(window_s)
    c1, p1, t1 = _cpu_ticks(), _proc_ticks(), time.monotonic()
    per_cpu = {}
    for c in sorted(cpus):
        if c in c0 and c in c1:
            busy, counted = (c1[c][i] - c0[c][i] for i in (0, 1))
            per_cpu[str(c)] = round(busy / counted, 3) if counted > 0 else 0.0
    hz = os.sysconf("SC_CLK_TCK")
    me = os.getpid()
    top = []
    for pid, (cmd, ticks, last) in p1.items():
        if pid == me or pid not in p0:
            continue
        share = (ticks - p0[pid][1]) / hz / (t1 - t0)
        if share >= SHOWN_CPU_SHARE and _runs_on(pid, last, cpus):
            top.append({"pid": pid, "command": cmd, "cpus": round(share, 2)})
    top.sort(key=lambda p: -p["cpus"])
    return {
        "window_s": round(t1 - t0, 3),
        "busy_cpus": round(sum(per_cpu.values()), 3),
        "per_cpu": per_cpu,
        "processes": top[:TOP],
    }
