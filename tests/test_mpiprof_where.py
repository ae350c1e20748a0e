"""mpiprof's record describes where the ranks ran (each rank's host and CPUs, as the profiler saw
them in the rank), not the machine running the front end."""

from __future__ import annotations

import os

import pytest

from bandwall.core import topo
from bandwall.mpi import mpiprof
from test_mpiprof import TOOLS, build, profile  # noqa: F401 (build is a fixture)

HERE = os.uname().nodename


# Open MPI binds its ranks to cores of its own choosing: the test's process must be allowed them all.
@pytest.mark.cpus(ids=(0, 1))
@pytest.mark.parametrize("impl", list(TOOLS))
def test_ranks_say_where_they_ran(run_bandwall, build, tmp_path, impl):  # noqa: F811
    # bandwall and the launcher run on CPU 1 only. MPICH's ranks inherit that; Open MPI binds its
    # ranks itself (one core each), so they run elsewhere than the front end: the record says
    # what the ranks saw either way.
    exe = build(impl, "c")
    rec = profile(run_bandwall, tmp_path, impl, exe, 2, prefix=["taskset", "-c", "1"])
    per_rank = rec["result"]["per_rank"]
    assert [(r["rank"], r["host"]) for r in per_rank] == [(0, HERE), (1, HERE)]
    cpus = [topo.resolve_cpus(r["cpus"]) for r in per_rank]
    assert all(c and set(c) <= os.sched_getaffinity(0) for c in cpus)
    if impl == "mpich":
        assert cpus == [[1], [1]]
    assert rec["result"]["hosts"] == [{"host": HERE, "ranks": [0, 1], "cpus": [r["cpus"] for r in per_rank]}]
    assert rec["provenance"]["cpus"] == topo.cpu_list(sorted({c for each in cpus for c in each}))
    assert rec["provenance"]["topology_digest"] == topo.topology()["provenance"]["topology_digest"]


def test_ranks_elsewhere_leave_the_topology_unknown():
    rec = {
        "result": {
            "per_rank": [
                {"rank": 0, "host": "node-a", "cpus": "0-63"},
                {"rank": 1, "host": "node-b", "cpus": "0-63"},
                {"rank": 2, "host": "node-a", "cpus": "64-127"},
            ]
        },
        "provenance": {"host": "node-a", "cpus": "", "topology_digest": "unknown"},
    }
    mpiprof.where_ranks_ran(rec)
    assert rec["result"]["hosts"] == [
        {"host": "node-a", "ranks": [0, 2], "cpus": ["0-63", "64-127"]},
        {"host": "node-b", "ranks": [1], "cpus": ["0-63"]},
    ]
    assert rec["provenance"]["topology_digest"] == (
        f"unknown: the ranks ran on node-a, node-b, not on {HERE} where bandwall ran"
    )
    assert rec["provenance"]["cpus"] == ""  # not this machine's CPUs
