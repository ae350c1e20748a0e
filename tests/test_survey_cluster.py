"""`bandwall survey` on a four-node Slurm cluster on this one host (four `slurmd -N nodeK`), the
whole path from an allocation to a verdict: node2 is bound to a CPU of its own, beside a process that
spins there; node3's tasks read other settings (a task prolog points them at a copy of /proc and
/sys with another transparent-huge-page mode); node1 and node4 are left alone. The survey must flag
node2 and node3 and no other.

The four nodes are one machine, so they take turns (the survey's own rule for nodes that share a
boot id); node1, node3 and node4 share a CPU. Their figures are measured one after another on one
host whose speed drifts, so the margin here is 60%: no drift between two turns halves a node's best
repetition, so no clean node is flagged by its figures, and the verdicts asserted come from the
busy CPU and the settings, which no timing decides."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bandwall.mpi import flavours as mpi
from bandwall.survey import settings
from test_survey import survey_in_allocation

NODES = ("node1", "node2", "node3", "node4")
NOISY, ODD = "node2", "node3"
MARGIN = "0.6"


def other_settings_root(root: Path) -> str:
    """A copy of this machine's settings files with another THP mode; returns the mode written."""
    for rel in (
        "proc/sys/kernel/numa_balancing",
        "proc/sys/kernel/osrelease",
        "proc/meminfo",
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
        "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
    ):
        if Path("/", rel).exists():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path("/", rel), root / rel)
    mode = "always" if settings.read()["thp"] != "always" else "never"
    thp = root / "sys/kernel/mm/transparent_hugepage/enabled"
    thp.parent.mkdir(parents=True, exist_ok=True)
    thp.write_text(" ".join(f"[{m}]" if m == mode else m for m in ("always", "madvise", "never")) + "\n")
    return mode


@pytest.fixture(scope="module")
def four_nodes(tmp_path_factory):
    import slurm

    reason = slurm.unavailable()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("the noisy node needs a CPU of its own beside the others': two CPUs at least")
    root = tmp_path_factory.mktemp("survey-cluster")
    fake = root / "node3-settings"
    mode = other_settings_root(fake)
    prolog = root / "task-prolog"
    prolog.write_text(
        f'#!/bin/sh\n[ "$SLURMD_NODENAME" = {ODD} ] && echo "export {settings.ROOT_VARIABLE}={fake}"\nexit 0\n'
    )
    prolog.chmod(0o755)
    own = {n: {cpus[1] if n == NOISY else cpus[0]} for n in NODES}
    with slurm.cluster(root / "slurm", nodes=len(NODES), task_prolog=prolog, node_cpus=own) as cluster:
        yield cluster, own, mode


@pytest.fixture
def spinner(four_nodes):
    """A process spinning on the noisy node's CPU for the length of a test."""
    _, own, _ = four_nodes
    (cpu,) = own[NOISY]
    code = f"import os,sys; os.sched_setaffinity(0, {{{cpu}}}); print('go', flush=True)\nwhile True: pass"
    spin = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert spin.stdout.readline() == "go\n"
    yield spin
    spin.kill()
    spin.wait()


def test_the_survey_flags_the_noisy_node_and_the_odd_one_and_no_other(four_nodes, spinner, tmp_path):
    cluster, own, mode = four_nodes
    rec = survey_in_allocation(cluster, len(NODES), tmp_path / "nodes", "--margin", MARGIN, exclusive=True)
    r = rec["result"]
    assert sorted(n["node"] for n in r["nodes"]) == list(NODES)
    assert r["flagged"] == [NOISY, ODD], r["outliers"]
    why = {(o["node"], o["metric"]) for o in r["outliers"]}
    assert (NOISY, "busy_cpus") in why and (ODD, "thp") in why
    busy = next(o for o in r["outliers"] if o["metric"] == "busy_cpus")
    assert f"(pid {spinner.pid})" in busy["reason"]
    assert next(o for o in r["outliers"] if o["metric"] == "thp")["value"] == mode
    assert r["shared_hosts"] == [list(NODES)]
    for n in r["nodes"]:  # every node's task ran on its own slurmd's CPUs, not on the host's all
        assert set(n["load"]["per_cpu"]) == {str(c) for c in own[n["node"]]}
    if "mpich" in mpi.available():  # its pmi2 wire-up works with several slurmd on one host
        assert [(ln["from"], ln["to"]) for ln in r["links"]] == list(zip(NODES, NODES[1:] + NODES[:1]))
        assert all(ln["one_machine"] for ln in r["links"])  # shown, not judged
    else:
        assert r["links"] or r["links_note"]
