"""bandwall-iso3dfd run straight, for the tests that read its record: the process, and the record
checked against the schema."""

from __future__ import annotations

import json
import os
import subprocess

from bandwall.core import native, records
from bandwall.kernels import iso3dfd


def tool(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    """The executable with these arguments (each made a string), the caller's environment plus env."""
    return subprocess.run(
        [native.executable(iso3dfd.TOOL), *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def record(*args) -> dict:
    """The record of a run that must succeed, validated."""
    proc = tool(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return records.validate(json.loads(proc.stdout))
