"""The machine as bandwall-topo reads it with hwloc, and the one CPU-list formatter of the front end."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache

from bandwall.core import native, records
from bandwall.core.errors import UsageError


def topology(
    source: str | None = None,
    order: str | None = None,
    threads: int = 0,
    cpus: str | None = None,
    llc_probe: str | None = None,
) -> dict:
    """The topology record of this machine, or of an hwloc synthetic description / XML file;
    order (compact, scatter, spread, node:N) adds result.order, the CPUs that binding picks, and
    cpus (a CPU list: 0-3,8 or likwid's S0:0-3, E:N:4) the CPUs that list names, thread by thread;
    llc_probe (two CPUs, A,B) adds result.llc_probe: whether they share a last-level cache by a
    cache line's measured round trip (native/common/llc_probe.hpp)."""
    args: list[str] = []
    if source:
        args += ["--topology", source]
    if order:
        args += ["--order", order, "--threads", str(threads)]
    if cpus:
        args += ["--cpus", cpus]
    if llc_probe:
        args += ["--llc-probe", llc_probe]
    return records.finish(native.run_record("bandwall-topo", args))


def resolve_cpus(text: str) -> list[int]:
    """The CPUs a CPU list names, thread by thread, read by the one native parser (common/cpulist.hpp,
    through bandwall-topo --cpus): taskset's 0-3,8, likwid-pin's S0:0-1@S1:0-1 and E:N:4:1:2 alike.
    A bad list raises UsageError with the parser's own message."""
    source = os.environ.get("BANDWALL_TOPOLOGY")  # part of the cache key
    return list(_ordered(("--cpus", text, *(["--topology", source] if source else []))))


def resolve_threads(
    threads: int | None = None, cpus: str | None = None, bind: str | None = None, source: str | None = None
) -> list[int] | None:
    """The CPU of each thread that --threads, --cpus and --bind name, with the harness's meaning
    (native/common/harness.hpp): --cpus wins over --bind, --threads caps the list or sizes the
    policy. Read natively by bandwall-topo (of this machine, or of source: a synthetic or XML
    machine); None for --bind none, which places nothing. A bad value, or a CPU of this machine the
    process may not use, raises UsageError."""
    n = threads or 0
    if cpus:
        args = ["--cpus", cpus] + (["--threads", str(n)] if n else [])
    elif (bind or "compact") == "none":
        return None
    else:
        args = ["--order", bind or "compact", "--threads", str(n)]
    source = source or os.environ.get("BANDWALL_TOPOLOGY")  # part of the cache key
    if source:
        args += ["--topology", source]
    out = list(_ordered(tuple(args)))
    if cpus and not source:  # refused here, before anything runs, as the executables refuse it
        allowed = os.sched_getaffinity(0)
        outside = [c for c in out if c not in allowed]
        if outside:
            raise UsageError(
                f"CPU {outside[0]} is not available to this process (allowed: {cpu_list(sorted(allowed))})"
            )
    return out


@lru_cache(maxsize=64)
def _ordered(args: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(records.finish(native.run_record("bandwall-topo", list(args)))["result"]["order"])


def cpu_list(cpus: Sequence[int]) -> str:
    """[0, 1, 2, 3, 8] -> '0-3,8': runs of consecutive CPUs as ranges, in the order given."""
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)
