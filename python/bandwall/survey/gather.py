"""Where a survey's node records come from: files or folders gathered by hand, or one task on every
node of the Slurm allocation this runs in (srun --ntasks-per-node=1), each writing its record to a
folder the nodes share."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bandwall.core import records
from bandwall.core.errors import BandwallError, RunFailed, UsageError
from bandwall.survey import node


def in_slurm() -> bool:
    return bool(os.environ.get("SLURM_JOB_ID")) and shutil.which("srun") is not None


def write(rec: dict, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{rec['result']['node']}.json"
    tmp = path.with_suffix(".json.part")
    tmp.write_text(json.dumps(rec, indent=1), encoding="utf-8")
    tmp.replace(path)
    return path


def load(path: Path) -> dict:
    """One record from a file: UsageError naming the file when it is not one."""
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError(f"{path}: not a JSON record ({e})") from None
    try:
        return records.validate(rec)
    except BandwallError as e:
        raise UsageError(f"{path}: {e}") from None


def read(paths: list[Path]) -> list[dict]:
    """The node records in files and folders (a folder: its *.json files)."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = sorted(p.glob("*.json"))
            if not found:
                raise UsageError(f"{p}: a folder with no *.json node records")
            files += found
        else:
            files.append(p)
    recs = []
    for f in files:
        rec = load(f)
        if rec.get("tool") != node.TOOL:
            raise UsageError(
                f"{f}: a {rec.get('tool')!r} record, not a {node.TOOL} record (bandwall survey --local)"
            )
        recs.append(rec)
    return recs


def local_task(folder: Path, short: bool) -> list[str]:
    """The command each node's task runs: this node's record into folder."""
    argv = [sys.executable, "-m", "bandwall", "survey", "--local", "--no-store", "--format", "json"]
    return [*argv, "--out-dir", str(folder), *(["--short"] if short else [])]


def launch(
    prefix: list[str], folder: Path, short: bool, env: dict | None = None, what: str = "srun"
) -> list[dict]:
    """One task per node started by prefix (srun or mpirun), each measuring its node into folder."""
    folder.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [*prefix, *local_task(folder, short)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        raise RunFailed(f"{what} of the survey's tasks failed: {last}")
    return read([folder])


def cpus_per_node(text: str) -> int:
    """The fewest CPUs the allocation holds on any node, from SLURM_JOB_CPUS_PER_NODE ("8(x3),4")."""
    counts = [int(part.split("(")[0]) for part in text.split(",") if part.split("(")[0].isdigit()]
    return min(counts) if counts else 1


def slurm(folder: Path, short: bool) -> list[dict]:
    """One task per node of the allocation, given every CPU the allocation holds there (a task
    would otherwise be bound to one CPU and measure one core)."""
    cpus = cpus_per_node(os.environ.get("SLURM_JOB_CPUS_PER_NODE", "1"))
    return launch(["srun", "--ntasks-per-node=1", f"--cpus-per-task={cpus}"], folder, short)


def hosts(path: Path) -> list[str]:
    """The host names of an MPI hostfile (the first word of each line; # starts a comment)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise UsageError(f"{path}: cannot read the hostfile ({e.strerror or e})") from None
    names = [ln.split("#", 1)[0].split()[0] for ln in lines if ln.split("#", 1)[0].strip()]
    if not names:
        raise UsageError(f"{path}: a hostfile with no hosts")
    return names
