"""`bandwall survey` on a four-node Slurm cluster on this one host (four `slurmd -N nodeK`), the
whole path from an allocation to a verdict: node2 is bound to a CPU of its own, beside a process
that spins there; node3's tasks read other settings (a task prolog points them at a copy of /proc
and /sys with another transparent-huge-page mode); node1 and node4 are left alone (they and node3
share the other CPU).

The four nodes are one machine, so they take turns (the survey's own rule for nodes that share a
boot id). No verdict asserted here may depend on scheduling. The settings, topology and core counts
the nodes record are decided by the construction, so the survey's verdicts on them are asserted as
it gave them. Figures and busy CPUs are not: they are measured one node after another on one host
whose speed drifts, and a node's busy CPUs are what anything else did on its CPU in its half-second
window (the other nodes' tasks starting up, whatever else the machine runs), which the judgement
compares with the nodes' median; so the verdict on node2 is asserted on the gathered records with
their figures and loads constructed (node2's, the spinner's, seen by the survey itself, is checked
as an observation).

A node that never answers: one whose task sleeps (the test hook BANDWALL_TEST_SURVEY_HANG), and one
whose slurmd is stopped inside the allocation (restarted afterwards); each is listed as missing,
the others judged, and --fail exits 1 naming it. The only timing the outcome rests on is the
timeout firing (the three other nodes take about a quarter of it)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bandwall.mpi import flavours as mpi
from bandwall.survey import node as survey_node
from bandwall.survey import settings
from test_survey import survey_in_allocation

NODES = ("node1", "node2", "node3", "node4")
NOISY, ODD, SILENT = "node2", "node3", "node4"
TIMEOUT_S = 90  # a node's task that never answers is waited for this long
SETTLE_S = 30  # how long a stopped step's processes may take to go


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


def constructed(recs: list[dict], busy: dict[str, dict]) -> list[dict]:
    """The gathered node records with what timing decides made up: every node's figures node1's
    (so no figure stands out), every node's load idle but for busy's."""
    figures = recs[0]["result"]["figures"]
    out = []
    for rec in recs:
        rec = copy.deepcopy(rec)
        rec["result"]["figures"] = copy.deepcopy(figures)
        load = busy.get(rec["result"]["node"], {"busy_cpus": 0.0, "processes": []})
        cpus = list(rec["result"]["load"]["per_cpu"])
        rec["result"]["load"].update(load, per_cpu={c: load["busy_cpus"] / len(cpus) for c in cpus})
        out.append(rec)
    return out


def test_the_survey_flags_the_noisy_node_and_the_odd_one_and_no_other(
    four_nodes, spinner, run_bandwall, tmp_path
):
    cluster, own, mode = four_nodes
    rec = survey_in_allocation(cluster, len(NODES), tmp_path / "nodes", exclusive=True)
    r = rec["result"]
    assert sorted(n["node"] for n in r["nodes"]) == list(NODES)
    assert r["missing"] == [] and r["skipped"] == []
    # what the construction decides, as the survey judged it: node3's setting, and no other node's
    # setting, topology or core count
    decided = {
        (o["node"], o["metric"], o["value"])
        for o in r["outliers"]
        if o["metric"] in ("topology", "cores") or o["metric"] in r["nodes"][0]["settings"]
    }
    assert decided == {(ODD, "thp", mode)}
    assert r["shared_hosts"] == [list(NODES)]
    for n in r["nodes"]:  # every node's task ran on its own slurmd's CPUs, not on the host's all
        assert set(n["load"]["per_cpu"]) == {str(c) for c in own[n["node"]]}
    noisy = next(n for n in r["nodes"] if n["node"] == NOISY)
    seen = [p for p in noisy["load"]["processes"] if p["pid"] == spinner.pid]
    assert seen, noisy["load"]  # the survey saw the spinner on node2's CPU
    if "mpich" in mpi.available():  # its pmi2 wire-up works with several slurmd on one host
        assert [(ln["from"], ln["to"]) for ln in r["links"]] == list(zip(NODES, NODES[1:] + NODES[:1]))
        assert all(ln["one_machine"] for ln in r["links"])  # shown, not judged
    else:
        assert r["links"] or r["links_note"]

    # the verdict on the gathered records, with what timing decides constructed: node2's CPU kept
    # busy by the spinner, the others idle, every node's figures alike
    recs = [json.loads((tmp_path / "nodes" / f"{n}.json").read_text()) for n in NODES]
    busy = {NOISY: {"busy_cpus": 1.0, "processes": [{**seen[0], "cpus": 1.0}]}}
    judged = tmp_path / "judged"
    judged.mkdir()
    for rec in constructed(recs, busy):
        (judged / f"{rec['result']['node']}.json").write_text(json.dumps(rec))
    proc = run_bandwall("survey", "--judge", "--fail", "--no-store", "--format", "json", judged)
    assert proc.returncode == 1, proc.stderr
    v = json.loads(proc.stdout)["result"]
    assert v["flagged"] == [NOISY, ODD], v["outliers"]
    assert {(o["node"], o["metric"]) for o in v["outliers"]} == {(NOISY, "busy_cpus"), (ODD, "thp")}
    busy_row = next(o for o in v["outliers"] if o["metric"] == "busy_cpus")
    assert f"(pid {spinner.pid})" in busy_row["reason"]
    assert "2 node(s) flagged: node2, node3" in proc.stderr


def survey_with_a_silent_node(cluster, out_dir: Path, *prefix: str, env: dict | None = None):
    """`bandwall survey --short --fail` in `salloc -N4` (after prefix, a command that execs the rest),
    node4 expected to give no record: the completed process and the survey record."""
    alloc = ["salloc", "--no-kill", f"-N{len(NODES)}", "--exclusive"]
    argv = [sys.executable, "-m", "bandwall", "survey", "--short", "--no-store", "--fail"]
    argv += ["--timeout", str(TIMEOUT_S), "--out-dir", str(out_dir), "--format", "json"]
    out = cluster.run(*alloc, *prefix, *argv, env=env, timeout=TIMEOUT_S + 300)
    assert out.returncode == 1, out.stderr
    return out, json.loads(out.stdout[out.stdout.index("{") :])


def assert_silent_node_missing(out, rec: dict, out_dir: Path) -> dict:
    """node4 missing, named on stderr and by --fail; the three others judged."""
    r = rec["result"]
    assert sorted(n["node"] for n in r["nodes"]) == [n for n in NODES if n != SILENT]
    ((miss),) = r["missing"]
    assert miss["node"] == SILENT and miss["reason"]
    assert not (out_dir / f"{SILENT}.json").exists()
    assert rec["config"]["timeout_s"] == TIMEOUT_S
    assert SILENT in r["links_note"] and r["links"] == []
    err = out.stderr.splitlines()
    assert f"bandwall: missing {SILENT}: {miss['reason']}" in err
    (verdict,) = [ln for ln in err if ln.startswith("bandwall: error:")]
    assert f"1 node(s) missing: {SILENT}" in verdict
    return miss


def _running(marker: str) -> list[int]:
    """Processes whose command line holds marker."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and int(d.name) != os.getpid():
            try:
                if marker.encode() in (d / "cmdline").read_bytes():
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


def test_a_node_whose_task_hangs_is_missing_after_the_timeout(four_nodes, tmp_path):
    cluster, _, _ = four_nodes
    out_dir = tmp_path / "nodes"
    out, rec = survey_with_a_silent_node(cluster, out_dir, env={survey_node.TEST_HANG: SILENT})
    miss = assert_silent_node_missing(out, rec, out_dir)
    assert miss["reason"] == f"no record after {TIMEOUT_S} s: its task was still running, stopped"
    # the hung task was stopped with its step: wait for it to be gone
    end = time.monotonic() + SETTLE_S
    while _running(str(out_dir)) and time.monotonic() < end:
        time.sleep(0.5)
    assert _running(str(out_dir)) == []


KILL_SLURMD = """
import os, signal, sys, time
pid = int(sys.argv[1])
os.killpg(pid, signal.SIGTERM)
def gone():
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True
while not gone():
    time.sleep(0.1)
os.execvp(sys.argv[2], sys.argv[2:])
"""


@pytest.fixture
def stopped_slurmd(four_nodes):
    """node4's slurmd: stopped by the test inside its allocation, started again afterwards (and the
    cluster waited for until every node is idle)."""
    import slurm

    cluster, own, _ = four_nodes
    name = f"slurmd-{SILENT}"
    yield cluster.procs[name].pid
    old = cluster.procs[name]
    if old.poll() is None:
        os.killpg(old.pid, signal.SIGTERM)
    old.wait()
    argv = ["slurmd", "-D", "-f", str(cluster.conf), "-N", SILENT]
    slurm._spawn(cluster, name, argv, own[SILENT])
    slurm.wait_idle(cluster)


def test_a_node_whose_slurmd_is_gone_is_missing(four_nodes, stopped_slurmd, tmp_path):
    """node4's slurmd stopped once the allocation is granted (and gone before the survey starts): its
    step cannot start there. The allocation is made with --no-kill, or Slurm revokes it when it
    finds the node gone."""
    cluster, _, _ = four_nodes
    out_dir = tmp_path / "nodes"
    kill = [sys.executable, "-c", KILL_SLURMD, str(stopped_slurmd)]
    out, rec = survey_with_a_silent_node(cluster, out_dir, *kill)
    miss = assert_silent_node_missing(out, rec, out_dir)
    # srun says its launch failed there; were it to wait instead, the timeout names the node
    assert miss["reason"].startswith(("its task failed (srun exit", f"no record after {TIMEOUT_S} s")), miss
