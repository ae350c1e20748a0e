"""Where everything runs: the program's CPUs (--cpus, else the first half of those this process may
use), the bandit's (the free CPUs on the program's NUMA nodes, else every free CPU), the pirate's (a
free CPU that shares the program's last-level cache, by the topology), and the doses."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from bandwall.core import manifest, topo
from bandwall.core.errors import UsageError

# The bandit's doses: the share of each millisecond its threads spend reading.
DOSES = (0.25, 0.5, 0.75, 1.0)
# The pirate's doses: shares of the cache it showed it can hold alone.
PIRATE_SHARES = (0.25, 0.5, 0.75, 0.9)
# The pirate's capacity scan: sizes from twice the private cache up, each sqrt(2) times the last.
SCAN_STEP = 2**0.5


@dataclass
class Plan:
    program_cpus: list[int]
    free_cpus: list[int]
    bandit_cpus: list[int]
    pirate_cpu: int | None
    llc_bytes: int | None  # the last-level cache of the program's first CPU, as the topology gives it
    llc_cpus: list[int] = field(default_factory=list)
    private_bytes: int = 0  # the largest cache of the pirate's CPU below the LLC
    cpus_source: str = ""
    doses: tuple[float, ...] = DOSES
    bandit_pattern: str = ""  # bandwall-bandit --pattern (the manifest's bandit patterns)
    notes: list[str] = field(default_factory=list)


def _caches_of(t: dict, cpu: int) -> list[dict]:
    return sorted((c for c in t["result"]["caches"] if cpu in c["cpus"]), key=lambda c: c["level"])


def parse_doses(text: str | None) -> tuple[float, ...]:
    """--doses 0.25,0.5,1: the bandit's duty cycles, each in (0, 1], ascending; UsageError otherwise."""
    if text is None:
        return DOSES
    try:
        doses = sorted({float(w) for w in text.split(",")})
    except ValueError:
        raise UsageError(f"--doses {text!r}: give duty cycles in (0, 1], as 0.25,0.5,1") from None
    if not doses or not all(0 < d <= 1 for d in doses):
        raise UsageError(f"--doses {text!r}: every dose must lie in (0, 1]")
    return tuple(doses)


def make(cpus_text: str | None, doses_text: str | None = None, bandit: str | None = None) -> Plan:
    """The plan; UsageError (before anything runs) when no CPU is left free for the bandit. bandit: one
    of the bandit's patterns (the manifest's; None: its default)."""
    doses = parse_doses(doses_text)
    bandit = bandit or manifest.bandit_pattern_default()
    if bandit not in manifest.bandit_pattern_names():
        raise UsageError(f"unknown bandit {bandit!r} (use {', '.join(manifest.bandit_pattern_names())})")
    allowed = sorted(os.sched_getaffinity(0))
    if cpus_text:
        program = topo.resolve_threads(cpus=cpus_text)
        source = f"given with --cpus {cpus_text}"
    else:
        program = allowed[: max(1, len(allowed) // 2)]
        source = f"the first half of the {len(allowed)} CPU(s) this process may use"
    free = [c for c in allowed if c not in program]
    if not free:
        raise UsageError(
            f"no CPU is left free for the bandit and the pirate: the program has every CPU this process "
            f"may use ({topo.cpu_list(allowed)}); give --cpus a part of them, or run with more CPUs"
        )
    t = topo.topology()
    nodes = [n for n in t["result"]["numa_nodes"] if set(n["cpus"]) & set(program)]
    near = [c for c in free if any(c in n["cpus"] for n in nodes)]
    plan = Plan(
        program, free, near or free, None, None, cpus_source=source, doses=doses, bandit_pattern=bandit
    )
    if not near:
        plan.notes.append("no free CPU on the program's NUMA node(s): the bandit reads on other nodes")
    caches = _caches_of(t, program[0])
    if not caches:
        plan.notes.append("the topology names no cache of the program's CPUs: no pirate")
        return plan
    llc = caches[-1]
    plan.llc_bytes, plan.llc_cpus = llc["size_bytes"], list(llc["cpus"])
    sharing = [c for c in free if c in llc["cpus"]]
    if not sharing:
        plan.notes.append(
            f"no free CPU shares the last-level cache of CPU {program[0]} (its CPUs: {topo.cpu_list(llc['cpus'])})"
        )
        return plan
    # not a CPU that shares a private cache with the program's (an SMT sibling): the pirate would
    # take that cache too
    private_of_program = {
        c for cpu in program for x in _caches_of(t, cpu) if x["level"] < llc["level"] for c in x["cpus"]
    }
    apart = [c for c in sharing if c not in private_of_program]
    plan.pirate_cpu = (apart or sharing)[-1]
    private = [c["size_bytes"] for c in _caches_of(t, plan.pirate_cpu) if c["level"] < llc["level"]]
    plan.private_bytes = max(private, default=0)
    return plan


def scan_sizes(plan: Plan) -> list[int]:
    """The sizes the pirate tries to hold alone, smallest first: from twice its private cache to
    seven eighths of the LLC."""
    if plan.llc_bytes is None:
        return []
    top = int(plan.llc_bytes * 7 / 8)
    size = max(2 * plan.private_bytes, plan.llc_bytes // 16)
    out = []
    while size < top:
        out.append(size // 64 * 64)
        size = int(size * SCAN_STEP)
    return [*out, top // 64 * 64]
