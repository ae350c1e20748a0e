"""The constructed sensitivity experiment the tests of its rules share: a plan of CPUs and caches
that no machine was asked for, the doses, and what the pirate held, so that the words and claims
of a verdict can be built from constructed rounds."""

from __future__ import annotations

from bandwall.sensitivity.plan import Plan

MiB = 2**20
DOSES = (0.5, 1.0)
HELD = 16 * MiB
PIRATE = [HELD // 4, HELD * 3 // 4]


def plan(free_cpus: tuple[int, ...] = (1,)) -> Plan:
    """The program on CPU 0, the bandit and the pirate on CPU 1, a 32 MiB last-level cache."""
    return Plan(
        program_cpus=[0],
        free_cpus=list(free_cpus),
        bandit_cpus=[1],
        pirate_cpu=1,
        llc_bytes=32 * MiB,
        llc_cpus=[0, 1],
        private_bytes=2 * MiB,
        cpus_source="constructed",
        doses=DOSES,
        bandit_pattern="mixed",
    )
