"""The tests' own subprocess.run (procs.py): a command that outlives its timeout is stopped with
everything it started, a process in a session of its own (as MPICH's ranks) included."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

import procs


def gone(pid: int) -> bool:
    """pid has exited (a zombie not yet reaped counts: it runs no more)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def wait_until_gone(pid: int, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while not gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_kill_tree_stops_a_grandchild_in_its_own_session():
    # sh starts a shell in a new session, which says its pid once setsid has made the session (so
    # the test reads a state, not a race with setsid) and becomes a sleep; sh then becomes one too
    with subprocess.Popen(
        ["sh", "-c", "setsid sh -c 'echo $$; exec sleep 300' & exec sleep 300"], stdout=subprocess.PIPE
    ) as p:
        try:
            grandchild = int(p.stdout.readline())
            assert grandchild in procs.tree(p.pid)
            assert os.getsid(grandchild) != os.getsid(p.pid)
        finally:
            procs.kill_tree(p.pid)
            p.wait()
    assert wait_until_gone(grandchild)


def test_run_kills_the_command_at_its_timeout_and_says_so():
    with pytest.raises(subprocess.TimeoutExpired):
        procs.run(["sleep", "300"], timeout=0.2)


def test_run_is_subprocess_run_otherwise():
    done = procs.run(["sh", "-c", "cat; echo err >&2; exit 3"], timeout=60, input="in", text=True)
    assert (done.returncode, done.stdout, done.stderr) == (3, "in", "err\n")
    with pytest.raises(subprocess.CalledProcessError):
        procs.run(["false"], timeout=60, check=True)
