"""Finding and running the native executables, which print one JSON record each."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bandwall.core import process
from bandwall.core.errors import RunFailed, UsageError

EXIT_USAGE = 2


def executable(name: str) -> str:
    """Path of a native executable: $BANDWALL_BINDIR, next to the Python interpreter, then PATH."""
    candidates = []
    if os.environ.get("BANDWALL_BINDIR"):
        candidates.append(Path(os.environ["BANDWALL_BINDIR"]) / name)
    candidates.append(Path(sys.executable).parent / name)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which(name)
    if found:
        return found
    raise RunFailed(f"native executable {name!r} not found (run the set-up: ./bootstrap report)")


def beside(name: str, executable_name: str) -> str:
    """Path of a file installed beside a native executable (libbandwall-pin.so beside bandwall-pin)."""
    path = Path(executable(executable_name)).parent / name
    if not path.is_file():
        raise RunFailed(f"{name} not found beside {executable_name} (run the set-up: ./bootstrap report)")
    return str(path)


def run_record(
    name: str,
    args: list[str],
    env: dict[str, str] | None = None,
    prefix: list[str] | None = None,
    timeout: float | None = None,
) -> dict:
    """Runs a native executable and returns the JSON record it printed.

    Exit 2 from the executable becomes UsageError, any other failure RunFailed, each with the
    executable's own one-line message.
    """
    cmd = (prefix or []) + [executable(name)] + [str(a) for a in args]
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise RunFailed(f"{name} did not finish within {timeout:.0f} s") from e
    except OSError as e:
        raise RunFailed(f"cannot run {name}: {e.strerror}") from e
    message = _last_line(proc.stderr) or f"{name} exited with code {proc.returncode}"
    if proc.returncode == EXIT_USAGE:
        raise UsageError(message)
    if proc.returncode != 0:
        if proc.returncode < 0:
            message = f"{name} was killed by signal {-proc.returncode}"
        raise RunFailed(message)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise RunFailed(f"{name} printed no record")
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError as e:
        raise RunFailed(f"{name} printed a malformed record: {e}") from e


def table(name: str, *flags: str) -> list | dict:
    """The JSON a native executable prints with flags (bandwall-manifest, the tables where kernels,
    policies, engines and instruction sets are declared)."""
    try:
        proc = subprocess.run([executable(name), *flags], capture_output=True, text=True)
    except OSError as e:
        raise RunFailed(f"cannot read the table of {' '.join([name, *flags])}: {e.strerror}") from e
    if proc.returncode == EXIT_USAGE:
        # what the executables refuse before any kernel runs (BANDWALL_MICROARCH, BANDWALL_CACHES,
        # BANDWALL_TOPOLOGY): its own line, as a usage error
        raise UsageError(_last_line(proc.stderr) or f"{name} refused its input (exit {EXIT_USAGE})")
    if proc.returncode != 0:
        message = _last_line(proc.stderr) or f"exit code {proc.returncode}"
        raise RunFailed(f"cannot read the table of {' '.join([name, *flags])}: {message}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise RunFailed(f"cannot read the table of {' '.join([name, *flags])}: {e}") from e


def _last_line(text: str) -> str:
    # Native messages read "bandwall-x: error: ..."; keep only the message.
    return process.last_line(text).split(": error: ", 1)[-1]
