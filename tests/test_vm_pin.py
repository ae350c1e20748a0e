"""Pinning proven on the simulated 2-node and 4-node machines: MP_BLIST=1,0 puts OpenMP thread 0 on CPU 1
and thread 1 on CPU 0, and the topology policies put threads where the topology says, for programs built
with gcc, g++ (C++), clang (LLVM libomp) and gfortran; bandwall-pin's record of where each thread was seen agrees.
The cases run in the placement batch (tests/vm/pin_cases.py), one boot per guest."""

from __future__ import annotations

import json

import pytest

from vm import pin_cases
from vm import placement_cases as pc

pytestmark = pytest.mark.vm
_reason = pc.skip_reason()
if _reason:
    pytestmark = [pytest.mark.vm, pytest.mark.skip(reason=_reason)]

GUESTS = list(pc.TOPOLOGIES)
KINDS = list(pin_cases.PROBES)


def outcome(name: str, case: str) -> dict:
    got = pc.results(name)
    if case not in got:
        pytest.skip(f"{case} was not run (its probe program was not built)")
    out = got[case]
    assert out.exit == 0, f"{case} in the {name} guest exited {out.exit}: {out.stderr}"
    assert out.record is not None
    return out.record


def program_cpus(rec: dict) -> list[int]:
    text = rec["result"]["stdout"]
    return json.loads([ln for ln in text.splitlines() if ln.startswith("{")][-1])["thread_cpus"]


def seen(rec: dict) -> dict[int, tuple[int | None, dict[str, float]]]:
    return {
        t["index"]: (t["cpu_intended"], t["cpus_seen"])
        for t in rec["result"]["threads"]
        if t["index"] is not None
    }


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", GUESTS)
def test_mp_blist_preloaded_by_hand(name, kind):
    rec = outcome(name, f"pin-hand-{kind}")  # the probe's own line
    assert rec["thread_cpus"] == [1, 0]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", GUESTS)
def test_mp_blist_under_bandwall_pin_despite_a_hostile_environment(name, kind):
    rec = outcome(name, f"pin-blist-{kind}")
    assert rec["config"]["cpus"] == [1, 0]
    assert program_cpus(rec) == [1, 0]
    s = seen(rec)
    assert s[0] == (1, {"1": 1.0}) and s[1] == (0, {"0": 1.0})


@pytest.mark.parametrize("kind", ["gcc"])
@pytest.mark.parametrize("name", GUESTS)
def test_policies_put_threads_where_the_topology_says(name, kind):
    nodes, cpn = pc.TOPOLOGIES[name][:2]
    for policy, threads in pin_cases.policies(nodes, cpn).items():
        rec = outcome(name, f"pin-{policy}-{kind}")
        expect = pin_cases.policy_order(policy, nodes, cpn, threads)
        assert rec["config"]["cpus"] == expect, policy
        assert program_cpus(rec) == expect, policy
        s = seen(rec)
        assert sorted(s) == list(range(threads)), policy
        for i, cpu in enumerate(expect):
            assert s[i] == (cpu, {str(cpu): 1.0}), (policy, i)
