"""subprocess.run for the tests, except that a command which outlives its timeout is stopped with
everything it started. subprocess.run kills only its own child: an MPI launcher's ranks (MPICH's
Hydra starts each in a session of its own), a bandwall command's native runs and srun's ranks
went on spinning after their test had failed, and the tests after it ran on the CPUs they took."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Sequence
from typing import Any


def _children() -> dict[int, list[int]]:
    """Every process's children, from /proc."""
    out: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])  # the command may hold spaces and parentheses
        out.setdefault(ppid, []).append(int(name))
    return out


def tree(pid: int) -> list[int]:
    """pid and every process below it, parents first."""
    children, out, todo = _children(), [], [pid]
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def kill_tree(pid: int) -> None:
    """Stops pid and its descendants (SIGSTOP, so that none starts another while they are gathered,
    until a pass finds no new one), then kills them all."""
    stopped: set[int] = set()
    for _ in range(5):
        new = [p for p in tree(pid) if p not in stopped]
        if not new:
            break
        for p in new:
            try:
                os.kill(p, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        stopped.update(new)
    for p in stopped:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def run(
    argv: Sequence[Any], *, timeout: float, input: str | bytes | None = None, check: bool = False, **kw: Any
):
    """subprocess.run(argv, timeout=timeout, input=input, check=check, **kw) with stdout and stderr
    captured unless kw sets them; on the timeout (or any interruption) the command's whole tree is
    killed before subprocess.TimeoutExpired goes on."""
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    kw.pop("capture_output", None)
    if input is not None:
        kw["stdin"] = subprocess.PIPE
    with subprocess.Popen([str(a) for a in argv], **kw) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except BaseException:
            kill_tree(proc.pid)
            proc.communicate()
            raise
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if check:
        done.check_returncode()
    return done
