"""bandwall's children (core/process.py): a child in its own session is stopped with all it started,
a time-out stops and reports it, its last stderr line is its error, pinning applies (under a
one-CPU affinity too), and a child asked to dies with bandwall. Mechanics only: every wait is for a
state (a file written, a pid gone), never a measured time; the bounds on those waits only keep a
broken build from hanging the suite."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bandwall.core import native, process
from bandwall.core.errors import RunFailed

CPUS = sorted(os.sched_getaffinity(0))
HANG_GUARD_S = 120  # a wait for a state that never comes fails after this instead of hanging


def state(pid: int) -> str | None:
    """The pid's state letter (R, S, Z...), or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def alive(pid: int) -> bool:
    return state(pid) not in (None, "Z", "X")


def until(predicate, what: str) -> None:
    """Polls until predicate() holds (sleeping between polls, by states, not by a time window)."""
    import time

    guard = time.monotonic() + HANG_GUARD_S
    while not predicate():
        assert time.monotonic() < guard, f"never: {what}"
        time.sleep(0.01)


def pid_in(path: Path) -> int:
    until(lambda: path.exists() and path.read_text().strip().isdigit(), f"{path} written")
    return int(path.read_text())


def affinity_of(pid: int) -> set[int]:
    return os.sched_getaffinity(pid)


# A grandchild in the child's session, in a process group of its own (what killpg of the child's
# group would miss), ignoring SIGTERM (so only SIGKILL ends it); its pid written to argv[1].
GRANDCHILD = (
    "import os, signal, subprocess, sys\n"
    "g = subprocess.Popen(['sleep', '600'], process_group=0,\n"
    "                     preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN))\n"
    "open(sys.argv[1] + '.part', 'w').write(str(g.pid))\n"
    "os.rename(sys.argv[1] + '.part', sys.argv[1])\n"
    "signal.pause()\n"
)


def test_last_line_is_the_last_non_empty_line():
    assert process.last_line("first\n  second  \n\n \n") == "second"
    assert process.last_line(b"one\ntwo\n") == "two"
    assert process.last_line("") == "" and process.last_line("\n \n") == ""
    assert (
        native._last_line("noise\nbandwall-stream: error: --size 0 is too small\n") == "--size 0 is too small"
    )


def test_a_child_in_its_own_session_is_stopped_with_its_grandchild(tmp_path):
    pid_file = tmp_path / "grandchild"
    child = process.start([sys.executable, "-c", GRANDCHILD, str(pid_file)], session=True)
    try:
        grandchild = pid_in(pid_file)
        assert alive(child.pid) and alive(grandchild)
        assert os.getsid(grandchild) == child.pid and os.getpgid(grandchild) != child.pid
        assert child.stop(grace=0.2) is None  # it was running: it did not end by itself
    finally:
        child.stop()
        child.close()
    assert child.returncode is not None  # reaped
    assert not alive(grandchild)  # stop returns once the whole session is gone
    assert state(child.pid) is None


def test_what_an_ended_child_left_running_in_its_session_is_stopped(tmp_path):
    """The child ends by itself (exit 0) and leaves a process running in its session: stop reports
    the child's own exit and ends what it left."""
    pid_file = tmp_path / "left"
    child = process.start(["sh", "-c", f"sleep 600 & echo $! > {pid_file}"], session=True)
    try:
        assert child.wait() == 0
        left = pid_in(pid_file)
        assert alive(left) and os.getsid(left) == child.pid
        assert child.stop(grace=0) == 0
    finally:
        child.close()
    assert not alive(left)


def test_stopping_several_children_at_once(tmp_path):
    files = [tmp_path / f"g{k}" for k in range(3)]
    children = [process.start([sys.executable, "-c", GRANDCHILD, str(f)], session=True) for f in files]
    try:
        grandchildren = [pid_in(f) for f in files]
        assert process.stop(children, grace=0.2) == [None, None, None]
    finally:
        for c in children:
            c.close()
    assert not any(alive(p) for p in grandchildren + [c.pid for c in children])


def test_a_child_without_a_session_of_its_own_is_stopped_alone():
    child = process.start(["sleep", "600"])
    try:
        assert child.wait(0.01) is None  # still running
        assert os.getsid(child.pid) == os.getsid(0)
        assert child.stop() is None
    finally:
        child.close()
    assert child.returncode == -signal.SIGTERM


def test_a_time_out_stops_the_child_and_says_so(tmp_path):
    pid_file = tmp_path / "pid"
    script = f"echo started >&2; echo $$ > {pid_file}; trap '' TERM; sleep 600 & wait"
    ended = process.run(["sh", "-c", script], timeout=0.5, grace=0.2, session=True)
    assert ended.timed_out and ended.code == -signal.SIGKILL  # it ignored SIGTERM
    assert ended.how() == "no end within 0.5 s: stopped"
    assert ended.error == "started"
    assert not alive(int(pid_file.read_text()))


def test_the_last_stderr_line_is_the_error():
    ended = process.run(["sh", "-c", "echo one >&2; echo 'the cause' >&2; echo >&2; exit 3"])
    assert not ended.timed_out and ended.code == 3
    assert ended.error == "the cause" and ended.how() == "exit code 3"
    assert process.run(["sh", "-c", "kill -9 $$"]).how() == "signal 9"
    assert process.run(["true"]).error == ""


def test_the_callers_report_the_last_stderr_line():
    from bandwall.interference import experiment
    from bandwall.interference import noise as noise_mod
    from bandwall.sensitivity import program

    failing = ["sh", "-c", "echo detail >&2; echo 'the cause' >&2; exit 4"]
    with pytest.raises(RunFailed, match=r"failed \(exit code 4\): the cause$"):
        program.Program(failing, CPUS[:1]).run()
    kernel = experiment.Kernel(command=tuple(failing))
    with pytest.raises(RunFailed, match=r"exited with code 4: the cause$"):
        experiment.run_command(kernel, CPUS[:1])
    run = noise_mod.start(noise_mod.Noise(command=shlex.join(failing)), None)
    try:
        until(lambda: not run.alive(), "the noise ended")
        why = noise_mod.failure(run, run.stop())
    finally:
        run.close()
    assert why.startswith("the noise command")
    assert why.endswith("(exit code 4) before it was stopped; noise must run until stopped: the cause")


def test_a_child_that_cannot_start_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        process.start([str(tmp_path / "no-such-program")])
    with pytest.raises(OSError):
        process.run([str(tmp_path / "no-such-program")])


def test_run_leaves_the_signal_mask_as_it_was():
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    process.run(["true"])
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before


def test_pinning_applies_to_the_child():
    cpu = CPUS[-1]
    child = process.start(["sleep", "600"], cpus=[cpu], session=True)
    try:
        assert affinity_of(child.pid) == {cpu}
    finally:
        child.stop()
        child.close()
    out = subprocess.run(
        [sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == str(CPUS)  # bandwall's own affinity is left as it was


def test_a_pinned_child_says_its_cpus(tmp_path):
    out = tmp_path / "out"
    with out.open("w") as f:
        ended = process.run(
            [sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
            cpus=CPUS[:1],
            stdout=f,
        )
    assert ended.code == 0 and out.read_text().strip() == str(CPUS[:1])


def test_under_a_one_cpu_affinity(tmp_path):
    """bandwall itself on one CPU (taskset -c N, srun -c 1): a child pinned to it runs there, and a
    session with a grandchild is stopped whole."""
    cpu = CPUS[0]
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        pid_file = tmp_path / "grandchild"
        child = process.start([sys.executable, "-c", GRANDCHILD, str(pid_file)], cpus=[cpu], session=True)
        try:
            grandchild = pid_in(pid_file)
            assert affinity_of(child.pid) == {cpu} and affinity_of(grandchild) == {cpu}
            child.stop(grace=0.2)
        finally:
            child.close()
        assert not alive(grandchild) and not alive(child.pid)
        ended = process.run(["sh", "-c", "echo one-cpu >&2; exit 1"], cpus=[cpu], session=True)
        assert ended.code == 1 and ended.error == "one-cpu"
    finally:
        os.sched_setaffinity(0, before)


def test_a_child_started_to_die_with_bandwall_does(tmp_path):
    """A stand-in for bandwall starts a child with die_with_bandwall and is SIGKILLed: the kernel
    ends the child."""
    code = (
        "import signal, sys\n"
        "from bandwall.core import process\n"
        "c = process.start(['sleep', '600'], session=True, die_with_bandwall=True)\n"
        "print(c.pid, flush=True)\n"
        "signal.pause()\n"
    )
    bandwall = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(bandwall.stdout.readline())
        assert alive(pid)
    finally:
        bandwall.kill()
        bandwall.wait()
        bandwall.stdout.close()
    until(lambda: not alive(pid), f"the child {pid} ended with its parent")
