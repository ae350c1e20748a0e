"""The children bandwall runs: started (pinned to CPUs, in a session of their own, dying with
bandwall, each as asked), waited for with a time-out, stopped (SIGTERM to the child or to every
process of its session, a grace, then SIGKILL to all that is left, what the program left running
in its session too) and reaped; and the last line a child wrote on stderr, which is its error.

A child's stderr goes to a temporary file, not a pipe: a chatty child never blocks on it, and what
it left running cannot hold bandwall's read open. A process that made a session of its own
(setsid) has left the child's session and is out of reach."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

GRACE_S = 5.0  # after SIGTERM: how long a child and its session get to end before SIGKILL
KILL_WAIT_S = 30.0  # after SIGKILL: how long to wait for the session to be gone before giving up
REAP_WAIT_S = 10.0  # then how long for its zombies to be reaped (by init) before leaving them
ERROR_TAIL = 1 << 16  # bytes of stderr read for its last line
PR_SET_PDEATHSIG = 1
STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})
CAPTURE = "capture"  # stderr=CAPTURE: to a temporary file, read by Child.stderr() and Child.error()


def last_line(text: str | bytes) -> str:
    """The last non-empty line of what a child wrote (its error), stripped; "" when there is none."""
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()
    return ""


def how(code: int) -> str:
    """How a child ended, from its return code: "exit code 3", "signal 9"."""
    return f"exit code {code}" if code >= 0 else f"signal {-code}"


def _libc():
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _setup(cpus: frozenset[int] | None, die_with_bandwall: bool, unblock: frozenset[int]):
    """What the child does before exec: its CPUs, SIGKILL when bandwall ends (even by SIGKILL), the
    stop signals bandwall blocked while starting it unblocked."""
    libc = _libc() if die_with_bandwall else None  # loaded here: no dlopen in the forked child
    parent = os.getpid()

    def setup() -> None:
        if cpus is not None:
            os.sched_setaffinity(0, cpus)
        if libc is not None:
            try:
                libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            except AttributeError:
                pass
            if os.getppid() != parent:  # bandwall ended before the request was made
                os.kill(os.getpid(), signal.SIGKILL)
        if unblock:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, unblock)

    return setup


def _sessions(sids: Iterable[int], zombies: bool = False) -> dict[int, list[int]]:
    """The processes of each session, by session id (one pass of /proc): those still running, or
    with zombies every one not yet reaped."""
    out: dict[int, list[int]] = {sid: [] for sid in sids}
    if not out:
        return out
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # after the name: state, ppid, pgrp, session
        running = fields[0] not in ("Z", "X") if len(fields) > 3 else False
        if (running or zombies) and len(fields) > 3 and fields[3].isdigit() and int(fields[3]) in out:
            out[int(fields[3])].append(int(d))
    return out


class Child:
    """A started child: its Popen (proc), whether it leads a session of its own, its stderr file."""

    def __init__(self, proc: subprocess.Popen, session: bool, err):
        self.proc = proc
        self.session = session
        self._err = err
        self._stopped = False
        self._ended: int | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def poll(self) -> int | None:
        return self.proc.poll()

    def wait(self, timeout: float | None = None) -> int | None:
        """Its return code once it ends (reaped); None when it still runs after timeout seconds."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stderr(self, tail: int | None = None) -> str:
        """What it wrote on stderr so far (its last tail bytes), when captured; read without moving
        the offset the child writes at."""
        if self._err is None or self._err.closed:
            return ""
        fd = self._err.fileno()
        size = os.fstat(fd).st_size
        start = 0 if tail is None else max(0, size - tail)
        return os.pread(fd, size - start, start).decode(errors="replace")

    def error(self) -> str:
        """Its error: the last non-empty line it wrote on stderr ("" when none)."""
        return last_line(self.stderr(ERROR_TAIL))

    def _exited(self) -> int | None:
        """Its return code when the child itself has ended, without reaping it (its pid, and so the
        session's id, stays its own until the session is gone); None while it runs."""
        if self.proc.returncode is not None:
            return self.proc.returncode
        try:
            st = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped already: ended
            return self.proc.poll()
        if st is None or st.si_pid == 0:
            return None
        return st.si_status if st.si_code == os.CLD_EXITED else -st.si_status

    def _targets(self, sessions: dict[int, list[int]]) -> list[int]:
        """The processes a stop signal goes to: the child while it runs, and its session's."""
        own = [] if self._exited() is not None else [self.proc.pid]
        if not self.session:
            return own
        return sorted(set(own) | set(sessions.get(self.proc.pid, [])))

    def stop(self, grace: float = GRACE_S) -> int | None:
        """Stops the child (see stop); its return code when it had ended by itself before."""
        return stop([self], grace)[0]

    def close(self) -> None:
        """Closes its stderr file and its pipes (after stop)."""
        if self._err is not None:
            self._err.close()
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                try:
                    f.close()
                except BrokenPipeError:
                    pass

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
        self.close()


def _signal_all(children: Sequence[Child], sig: int) -> bool:
    """Sends sig to every process of the children still to end; False when none is left."""
    sessions = _sessions(c.proc.pid for c in children if c.session)
    sent = False
    for c in children:
        for pid in c._targets(sessions):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                continue
            except PermissionError:
                continue  # not bandwall's to end (a set-user-ID program it started): left as it is
            sent = True
    return sent


def _left(children: Sequence[Child]) -> bool:
    sessions = _sessions(c.proc.pid for c in children if c.session)
    return any(c._targets(sessions) for c in children)


def stop(children: Sequence[Child], grace: float = GRACE_S) -> list[int | None]:
    """Stops children at once: SIGTERM to each (to every process of its session when it leads one),
    up to grace seconds for all to end, then SIGKILL to all that is left, until it is gone; then
    waits for the zombies of what it ended to be reaped and reaps the children: on return no
    process of theirs is left (but one that made a session of its own). grace 0 sends SIGKILL
    straight away. A child already stopped is left as it is. Returns, for each, its return code
    when it had ended by itself before the stop, else None."""
    todo = [c for c in children if not c._stopped]
    for c in todo:
        c._ended = c._exited()
    signalled = False
    if todo and grace > 0 and _signal_all(todo, signal.SIGTERM):
        signalled = True
        end = time.monotonic() + grace
        pause = 0.002
        while _left(todo) and time.monotonic() < end:
            time.sleep(min(pause, max(0.0, end - time.monotonic())))
            pause = min(pause * 2, 0.05)
    end = time.monotonic() + KILL_WAIT_S
    while todo and _signal_all(todo, signal.SIGKILL) and time.monotonic() < end:
        signalled = True
        time.sleep(0.005)  # one more pass: a process that forked while we looked
    # what was ended here leaves zombies whose parents ended too: init reaps them; the leader,
    # bandwall's own, is reaped last (until then no other session can take its id)
    leaders = {c.proc.pid for c in todo if c.session} if signalled else set()
    end = time.monotonic() + REAP_WAIT_S
    pause = 0.002
    while leaders and any(set(pids) - leaders for pids in _sessions(leaders, zombies=True).values()):
        if time.monotonic() > end:
            break  # an init that does not reap: what is left holds no CPU nor memory
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    for c in todo:
        c.proc.wait()
        c._stopped = True
    return [c._ended for c in children]


def start(
    argv: Sequence[str],
    *,
    cpus: Iterable[int] | None = None,
    session: bool = False,
    die_with_bandwall: bool = False,
    env: dict[str, str] | None = None,
    stdin=subprocess.DEVNULL,
    stdout=subprocess.DEVNULL,
    stderr=CAPTURE,
    text: bool = False,
    bufsize: int = -1,
    _unblock: frozenset[int] = frozenset(),
) -> Child:
    """Starts argv: on cpus (affinity set before it runs), leading a session of its own (session),
    with SIGKILL from the kernel when bandwall ends (die_with_bandwall), stderr to a file read by
    Child.error() (CAPTURE) or where given. OSError when it cannot be started."""
    err = tempfile.TemporaryFile() if stderr == CAPTURE else None
    pinned = frozenset(cpus) if cpus is not None else None
    setup = (
        _setup(pinned, die_with_bandwall, _unblock)
        if (pinned is not None or die_with_bandwall or _unblock)
        else None
    )
    try:
        proc = subprocess.Popen(
            list(argv),
            env=env,
            stdin=stdin,
            stdout=stdout,
            stderr=err if err is not None else stderr,
            start_new_session=session,
            preexec_fn=setup,
            text=text,
            bufsize=bufsize,
        )
    except BaseException:
        if err is not None:
            err.close()
        raise
    return Child(proc, session, err)


@dataclass
class Ended:
    """A child run to its end: its return code (after the stop when it timed out), its seconds from
    the start to its end (or the time-out), what it wrote on stderr, whether it timed out."""

    code: int
    seconds: float
    stderr: str
    timed_out: bool = False
    timeout: float | None = None

    @property
    def error(self) -> str:
        return last_line(self.stderr)

    def how(self) -> str:
        if self.timed_out:
            return f"no end within {self.timeout:g} s: stopped"
        return how(self.code)


def run(argv: Sequence[str], *, timeout: float | None = None, grace: float = GRACE_S, **options) -> Ended:
    """Runs argv (started as start() does) to its end or until timeout, then stops what is left of
    it (its session's processes too, when it leads one) and reaps it; an interrupt while it runs
    stops it the same way. SIGINT and SIGTERM wait while it starts, so that none can leave it
    behind unstopped. OSError when it cannot be started."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    t0 = time.perf_counter()
    try:
        child = start(argv, _unblock=STOP_SIGNALS - set(before), **options)
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        raise
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        code = child.wait(timeout)
        seconds = time.perf_counter() - t0
        text = child.stderr()
    finally:  # an interrupt too: the child and all it started end with it
        child.stop(grace)
        child.close()
    if code is None:
        return Ended(child.returncode, seconds, text, timed_out=True, timeout=timeout)
    return Ended(code, seconds, text)
