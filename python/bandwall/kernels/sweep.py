"""Core sweeps: one STREAM kernel over core counts, the saturation knee and the surplus cores beyond
it (the "necessary and sufficient" cores of the T2K study on core allocation), and the sweep record.

The knee is taken by the decision rule (bandwall.core.decide.choose_fewest) on each core count's
per-repetition rates, paired in the order they ran: the fewest cores that no other count beats by
more than 1/share with the rule's confidence. The report's knee card shows the medians of the same
rates, so the record and the card cannot differ. When no smaller count is shown to be within that
tolerance (a noisy host, or too few repetitions), nothing is decided: the knee stays at every core
and the record says so (knee_decision.decisive false), never that bandwidth still rises. Points
without their rates (records from before they were kept, flat-MPI points) fall back to the share rule
on their medians, else their best."""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import statistics
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Callable

from bandwall.core import decide, records, topo
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


def knee_decision(
    points: Sequence[dict], share: float = DEFAULT_KNEE_SHARE, key: str = "cores"
) -> decide.Choice | None:
    """The decision rule's knee over points[key] (ascending): the fewest that no other count beats
    by more than 1/share - 1 with the rule's confidence, their repetitions' rates paired in order;
    not decisive (every core) when none is shown to be enough. None when a point lacks its rates, or
    for one point (nothing to decide: it is the knee)."""
    check_share(share)
    if len(points) < 2 or not all(p.get("rates") for p in points):
        return None
    pts = sorted(points, key=lambda p: p[key])
    rule = dataclasses.replace(decide.rule(), tolerance=1 / share - 1)
    return decide.choose_fewest([p[key] for p in pts], [p["rates"] for p in pts], rule)


def knee(points: Sequence[dict], share: float = DEFAULT_KNEE_SHARE, key: str = "cores") -> int:
    """The knee (see knee_decision); for points without their rates, the fewest cores (or
    points[key]: ranks per node for flat MPI) whose median_GBps (else best_GBps) reaches share of the
    curve's top."""
    if not points:
        raise ValueError("a knee needs at least one point")
    choice = knee_decision(points, share, key)
    if choice is not None:
        return sorted(p[key] for p in points)[choice.chosen]
    fig = "median_GBps" if all("median_GBps" in p for p in points) else "best_GBps"
    top = max(p[fig] for p in points)
    return min(p[key] for p in points if p[fig] >= share * top)


def decision_json(choice: decide.Choice, counts: Sequence[int], share: float) -> dict:
    """The knee's choice as a record's decision block (schema $defs/decision): the default is every
    core, the largest count."""
    rule = dataclasses.replace(decide.rule(), tolerance=1 / share - 1)
    return {
        "rule": {k: getattr(rule, k) for k in ("confidence", "margin", "tolerance", "rounds")},
        "default": counts[-1],
        "chosen": counts[choice.chosen],
        "decisive": choice.decisive,
        "comparisons": choice.comparisons,
        "why": choice.why,
    }


def knee_figure(p: dict) -> float:
    """A point's figure the knee is decided on: the median of its repetitions' rates, else its
    median, else its best."""
    if p.get("rates"):
        return statistics.median(p["rates"])
    return p.get("median_GBps", p["best_GBps"])


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
    choice = knee_decision(points, share)
    last = max(point_records, key=lambda r: r["config"]["threads"])
    prov = records.provenance_of_parts(last, list(point_records))
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
        "knee_GBps": knee_figure(next(p for p in points if p["cores"] == k)),
    }
    if choice is not None:
        result["knee_decision"] = decision_json(choice, [p["cores"] for p in points], share)
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
