"""Core sweeps: one STREAM kernel over core counts, the saturation knee (the fewest cores whose
best bandwidth reaches a share of the curve's best) and the surplus cores beyond it (the
"necessary and sufficient" cores of the T2K study on core allocation), and the sweep record."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Callable

from bandwall.core import records, topo
from bandwall.core.errors import BandwallError, UsageError

DEFAULT_KNEE_SHARE = 0.95


class Interrupted(BandwallError):
    """A sweep stopped by SIGINT (exit 130) or SIGTERM (exit 143); finished points stay stored."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


def allowed_cpu_count() -> int:
    return len(os.sched_getaffinity(0))


def parse_cores(text: str | None, limit: int | None = None, of: str = "this process may use") -> list[int]:
    """Core counts: None gives 1..limit; otherwise "1,2,4", "1-8" or "2-16:2" (ascending, unique);
    of says where the limit comes from, for the message."""
    limit = allowed_cpu_count() if limit is None else limit
    if text is None:
        return list(range(1, limit + 1))
    counts: set[int] = set()
    for item in text.split(","):
        m = re.fullmatch(r"\s*(\d+)(?:-(\d+)(?::(\d+))?)?\s*", item)
        if not m:
            raise UsageError(f"core list {text!r} is malformed at {item!r} (examples: 1,2,4  1-8  2-16:2)")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        step = int(m.group(3)) if m.group(3) else 1
        if hi < lo or step < 1:
            raise UsageError(f"core list {text!r} has a descending range or a stride below 1 at {item!r}")
        counts.update(range(lo, hi + 1, step))
    bad = [c for c in sorted(counts) if c < 1 or c > limit]
    if bad:
        raise UsageError(f"core count {bad[0]} in {text!r} is out of range: {of} 1 to {limit} CPUs")
    return sorted(counts)


def cores_of(threads: int | None, cpus: str | None, bind: str | None) -> tuple[int, str]:
    """The most cores a sweep may take from --threads/--cpus/--bind (resolved natively, so a bad
    value is refused before any point runs), and what says so, for parse_cores."""
    chosen = topo.resolve_threads(threads, cpus, bind)
    if cpus:
        return len(chosen or []), f"--cpus {cpus!r} names"
    if threads:
        return threads, "--threads allows"
    if chosen is None:
        return allowed_cpu_count(), "this process may use"
    return len(chosen), f"--bind {bind!r} gives"


def check_share(share: float) -> float:
    if not 0 < share <= 1:
        raise UsageError(f"knee share {share!r} must be in (0, 1]")
    return share


def knee(points: Sequence[dict], share: float = DEFAULT_KNEE_SHARE, key: str = "cores") -> int:
    """The fewest cores (or points[key]: ranks per node for flat MPI) whose best_GBps reaches share
    of the best point of the curve."""
    if not points:
        raise ValueError("a knee needs at least one point")
    check_share(share)
    top = max(p["best_GBps"] for p in points)
    return min(p[key] for p in points if p["best_GBps"] >= share * top)


def surplus(points: Sequence[dict], knee_cores: int, key: str = "cores") -> int:
    """Cores of the sweep beyond the knee: the largest core count swept minus the knee."""
    return max(p[key] for p in points) - knee_cores


def point(rec: dict) -> dict:
    """A point of the curve: its best and median, and the bandwidth of each kept repetition (what
    --threads auto reads from a stored sweep, kernels/threads_auto.py)."""
    r = rec["result"]
    moved = r.get("traffic", {}).get("without_write_allocate", {}).get("bytes_per_rep")
    kept = r.get("times_s", [])[int(r.get("dropped_reps", 0)) :]
    out = {
        "cores": int(rec["config"]["threads"]),
        "best_GBps": r["best_GBps"],
        "median_GBps": r["median_GBps"],
    }
    if moved and kept:
        out["rates"] = [moved / t / 1e9 for t in kept if t > 0]
    return out


def sweep_record(
    kernel: str,
    point_records: Sequence[dict],
    share: float = DEFAULT_KNEE_SHARE,
    config: dict | None = None,
    point_ids: Sequence[int] | None = None,
) -> dict:
    """The sweep record (tool "sweep") made from its finished stream records."""
    points = sorted((point(r) for r in point_records), key=lambda p: p["cores"])
    k = knee(points, share)
    last = max(point_records, key=lambda r: r["config"]["threads"])
    prov = dict(last["provenance"])
    cfg = {
        "kernel": kernel,
        "cores": [p["cores"] for p in points],
        "knee_share": share,
        "stores": last["config"]["stores"],
        "size_per_array_bytes": last["config"]["size_per_array_bytes"],
        "reps": last["config"]["reps"],
    }
    cfg.update(config or {})
    best = max(points, key=lambda p: p["best_GBps"])
    result = {
        "points": points,
        "knee_cores": k,
        "surplus_cores": surplus(points, k),
        "best_GBps": best["best_GBps"],
        "best_cores": best["cores"],
        "knee_GBps": next(p["best_GBps"] for p in points if p["cores"] == k),
    }
    if point_ids:
        result["point_record_ids"] = list(point_ids)
    rec = {
        "schema_version": records.SCHEMA_VERSION,
        "tool": "sweep",
        "config": cfg,
        "result": result,
        "validation": records.of_parts(point_records, "points"),
        "provenance": prov,
    }
    return records.finish(rec)


@contextmanager
def interruptible(done: Callable[[], int], total: int) -> Iterator[None]:
    """Turns SIGINT and SIGTERM into Interrupted (exit 130 / 143) naming the points kept."""

    def on_term(signum, frame):
        raise Interrupted(
            f"terminated by SIGTERM after {done()} of {total} points (finished points are stored)", 143
        )

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    except KeyboardInterrupt:
        raise Interrupted(
            f"interrupted by SIGINT after {done()} of {total} points (finished points are stored)", 130
        ) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
