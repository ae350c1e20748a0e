"""numa-check's planner on synthetic topologies, its verdict on given figures, its runs on this
machine (one NUMA node: it must say it cannot judge and still exit 0), numa-matrix, place, and the
bad-input table. That the planned processes really run on their nodes is proven in the NUMA guests
(test_vm_placement.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bandwall.core import manifest
from bandwall.core.errors import RunFailed, UsageError
from bandwall.core.fom import Fom
from bandwall.numa import numa_check

REPO = Path(__file__).resolve().parents[1]


def bandwall(*args: str, env: dict | None = None, db: Path | None = None) -> subprocess.CompletedProcess:
    full = dict(os.environ, PYTHONPATH=str(REPO / "python"), **(env or {}))
    if db:
        full["BANDWALL_DB"] = str(db)
    return subprocess.run(
        [sys.executable, "-m", "bandwall", *args], capture_output=True, text=True, env=full, timeout=300
    )


def as_json(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize(
    "synthetic, per_node",
    [
        ("numa:2 core:2 pu:1", ["0-1@bind:0", "2-3@bind:1"]),
        ("pack:2 numa:2 core:2 pu:1", ["0-1@bind:0", "2-3@bind:1", "4-5@bind:2", "6-7@bind:3"]),
        ("pack:2 numa:1 core:2 pu:2", ["0-3@bind:0", "4-7@bind:1"]),
    ],
)
def test_plan_on_synthetic_machines(synthetic, per_node):
    plan = as_json(
        bandwall(
            "numa-check",
            "--plan",
            "--format",
            "json",
            "--",
            "/bin/true",
            env={"BANDWALL_TOPOLOGY": synthetic},
        )
    )
    modes = {p["mode"]: p["argv"] for p in plan}
    assert list(modes) == ["all", "node0", "per-node", "interleave"]
    launch = [a for a in modes["per-node"][: modes["per-node"].index("--")] if "@" in a]
    assert launch == per_node
    assert modes["node0"][1:3] == ["--proc", per_node[0]]
    nodes = ",".join(str(i) for i in range(len(per_node)))
    assert modes["interleave"][1:3] == ["--proc", f"all@interleave:{nodes}"]
    assert modes["all"][1:3] == ["--proc", "all@default"]
    assert all(argv[-1] == "/bin/true" for argv in modes.values())


def test_plan_of_a_builtin_gives_each_process_its_cpus():
    plan = as_json(
        bandwall(
            "numa-check",
            "--plan",
            "--format",
            "json",
            "stream",
            "--size",
            "8M",
            env={"BANDWALL_TOPOLOGY": "numa:2 core:2 pu:1"},
        )
    )
    argv = next(p["argv"] for p in plan if p["mode"] == "per-node")
    cmd = argv[argv.index("--") + 1 :]
    assert Path(cmd[0]).name == "bandwall-stream"
    assert cmd[cmd.index("--cpus") + 1] == "{cpus}" and cmd[cmd.index("--threads") + 1] == "{ncpus}"
    assert cmd[cmd.index("--size") + 1] == "8M"


def test_builtin_iso3dfd_runs_the_blocks_of_bandwall_iso3dfd():
    """numa-check's iso3dfd and `bandwall iso3dfd` build one command line: the same cache blocks."""
    grid = "48x40x56"
    plan = as_json(
        bandwall("numa-check", "--plan", "--format", "json", "iso3dfd", "--grid", grid, "--iters", "1")
    )
    cmd = plan[0]["argv"][plan[0]["argv"].index("--") + 1 :]
    assert Path(cmd[0]).name == "bandwall-iso3dfd"
    rec = as_json(
        bandwall(
            "iso3dfd",
            "--grid",
            grid,
            "--iters",
            "1",
            "--threads",
            "1",
            "--no-roofline",
            "--no-store",
            "--format",
            "json",
        )
    )
    c = rec["config"]
    assert cmd[1:5] == [str(c[k]) for k in ("n1", "n2", "n3", "nb_iter")]
    # Both ask the tool to choose the blocks for the CPU (auto), so both run the model's blocks.
    assert cmd[5:8] == c["blocks_choice"]["requested"] == ["auto"] * 3
    # a word not given is the tool's default, the manifest's first
    schedule = (
        cmd[cmd.index("--schedule") + 1]
        if "--schedule" in cmd
        else manifest.iso3dfd_word_names("schedule")[0]
    )
    assert schedule == c["schedule"] and cmd[cmd.index("--placement") + 1] == c["placement"]


def test_one_node_plan_has_only_the_default_mode():
    topo = {"result": {"numa_nodes": [{"os_index": 0, "cpus": [0, 1]}]}}
    assert [m.name for m in numa_check.plan(topo)] == ["all"]


ALL_MODES = ("all", "node0", "per-node", "interleave")


@pytest.mark.parametrize(
    "values, best, judged_cost, advice_word",
    [
        # seed 000: all nodes slower than one; a process per node twice as fast
        (
            {"all": 2765, "node0": 2948, "per-node": 5682, "interleave": 4000},
            "per-node",
            1 - 2765 / 5682,
            "process per",
        ),
        ({"all": 50, "node0": 40, "per-node": 60, "interleave": 90}, "interleave", 1 - 50 / 90, "interleave"),
        (
            {"all": 100, "node0": 52, "per-node": 104, "interleave": 95},
            "per-node",
            1 - 100 / 104,
            "keep the default",
        ),
    ],
)
def test_verdict(values, best, judged_cost, advice_word):
    v = numa_check.verdict(values, 2)
    assert v["judgeable"] and v["best_mode"] == best
    assert v["numa_cost"] == pytest.approx(judged_cost)
    assert any(advice_word in a for a in v["advice"])
    assert ("slower than one node" in v["verdict"]) == (
        values["all"] < values["node0"] * (1 - numa_check.NOISE)
    )


def test_verdict_cannot_judge_one_node():
    v = numa_check.verdict({"all": 10.0}, 1)
    assert v["judgeable"] is False and "1 NUMA node" in v["verdict"] and v["advice"] == []


def test_fom_kinds():
    proc = {
        "rank": 0,
        "proc": "all@default",
        "wall_s": 0.5,
        "stdout": 'time: 2.0 sec\n{"result": {"best_GBps": 12.5}}\n',
    }
    assert Fom.wall().value(proc) == pytest.approx(2.0)
    assert numa_check.builtin("stream").fom.value(proc) == 12.5
    assert Fom.from_regex(r"time: ([0-9.]+)", lower_is_better=True).value(proc) == pytest.approx(0.5)
    assert Fom.from_regex(r"time: [0-9.]+").regex.pattern == r"time: [0-9.]+"
    with pytest.raises(UsageError):
        Fom.from_regex("(")
    with pytest.raises(RunFailed):
        Fom.from_regex("nothing ([0-9]+)").value(proc)
    # per-node modes add up the processes' throughputs
    assert Fom.wall().mode_value([proc, dict(proc, wall_s=0.25)]) == pytest.approx(6.0)


def test_command_on_one_node_cannot_judge_but_succeeds(tmp_path):
    rec = as_json(
        bandwall(
            "numa-check",
            "--rounds",
            "2",
            "--format",
            "json",
            "--",
            "/bin/echo",
            "rate: 7.5",
            "--fom",
            "x",
            db=tmp_path / "db.sqlite",
        )
    )
    assert rec["tool"] == "numa-check" and rec["validation"]["checked"] is False
    r = rec["result"]
    assert r["nodes"] == 1 and r["judgeable"] is False and "cannot judge" in r["verdict"]
    assert list(r["modes"]) == ["all"] and len(r["modes"]["all"]["rounds"]) == 2
    assert r["fom_unit"] == "runs/s" and r["modes"]["all"]["value"] > 0
    assert rec["provenance"]["sizes"] == {} and rec["provenance"]["repetitions"] == 2
    listed = as_json(bandwall("db", "list", "--format", "json", db=tmp_path / "db.sqlite"))
    assert any(x.get("tool") == "numa-check" for x in listed)


def test_fom_regex_reads_the_output():
    rec = as_json(
        bandwall(
            "numa-check",
            "--rounds",
            "1",
            "--no-store",
            "--format",
            "json",
            "--fom",
            r"rate: ([0-9.]+)",
            "--",
            "/bin/echo",
            "rate: 7.5",
        )
    )
    assert rec["result"]["modes"]["all"]["value"] == 7.5


def test_builtin_stream_on_one_node():
    rec = as_json(
        bandwall(
            "numa-check",
            "stream",
            "--size",
            "4M",
            "--reps",
            "2",
            "--rounds",
            "1",
            "--no-store",
            "--format",
            "json",
        )
    )
    mode = rec["result"]["modes"]["all"]
    assert rec["config"]["kind"] == "builtin" and rec["result"]["fom_unit"] == "GB/s"
    assert mode["value"] > 0 and set(mode["page_maps"][0]) == {"a", "b", "c"}
    assert rec["provenance"]["sizes"] == {"a": 4 << 20, "b": 4 << 20, "c": 4 << 20}
    assert rec["provenance"]["repetitions"] == 1


def test_numa_matrix_on_one_node_is_1x1():
    rec = as_json(bandwall("numa-matrix", "--size", "4M", "--reps", "2", "--no-store", "--format", "json"))
    r = rec["result"]
    assert rec["tool"] == "numa-matrix" and r["cpu_nodes"] == [0] and r["memory_nodes"] == [0]
    assert len(r["matrix"]) == 1 and len(r["matrix"][0]) == 1 and r["matrix"][0][0] > 0
    assert r["rounds"] == 3 and len(r["cell_rounds"][0][0]) == 3  # the default: a spread per cell


def test_place_reports_page_maps():
    rec = as_json(bandwall("place", "--size", "4M", "--arrays", "x,y", "--no-store", "--format", "json"))
    assert set(rec["placement"]["page_map"]) == {"x", "y"}
    assert all(sum(m.values()) == pytest.approx(1.0) for m in rec["placement"]["page_map"].values())
    assert rec["result"]["thread_cpus"] == rec["result"]["requested_cpus"]


BAD = [
    (["numa-check", "--", "no-such-command-xyz"], 2, "not found"),
    (["numa-check", "--", "./no/such/file"], 2, "does not exist"),
    (["numa-check", "streem"], 2, "not found"),
    (["numa-check"], 2, "name a kernel"),
    (["numa-check", "--fom", "(", "--", "/bin/true"], 2, "not a regular expression"),
    (["numa-check", "--fom", "rate: ([0-9]+)", "--rounds", "1", "--", "/bin/true"], 1, "matched nothing"),
    (["numa-check", "--rounds", "1", "--", "/bin/false"], 1, "exited with code 1"),
    (["numa-check", "--rounds", "0", "--", "/bin/true"], 2, "--rounds"),
    (["numa-check", "--init", "lazy", "stream"], 2, "unknown --init"),
    (["numa-check", "--grid", "10x10", "iso3dfd"], 2, "N1xN2xN3"),
    # A built-in's bad parameters are bad input (exit 2) naming the value, not a failed process.
    (["numa-check", "--grid", "10x10x10", "iso3dfd"], 2, "N1 10 is out of range [17,"),
    (["numa-check", "--grid", "272x272x2000000", "iso3dfd"], 2, "N3 2000000 is out of range"),
    (["numa-check", "--size", "0", "--rounds", "1", "stream"], 2, "--size '0' must be greater than zero"),
    (["numa-check", "--size", "lots", "--rounds", "1", "stream"], 2, "--size 'lots' is not a size"),
    (["numa-check", "--size", "100T", "--rounds", "1", "stream"], 2, "of memory is available"),
    (["numa-check", "--size", "", "stream"], 2, "'--size': is empty"),
    (["numa-check", "--grid", "", "iso3dfd"], 2, "'--grid': is empty"),
    # A command that exits 2 is a failed run (exit 1), not bad input to bandwall.
    (["numa-check", "--rounds", "1", "--", "/bin/sh", "-c", "exit 2"], 1, "exited with code 2"),
    # A kernel and a command at once.
    (["numa-check", "stream", "--", "true"], 2, "not both"),
    (["numa-check", "iso3dfd", "--", "/bin/true", "x"], 2, "not both"),
    (["numa-check", "stream", "extra"], 2, "kernel 'stream' takes no arguments"),
    (["place", "--placement", "scattered"], 2, "unknown placement"),
    (["place", "--placement", "bind:9"], 2, "does not exist"),
    (["place", "--placement", "interleave:0,7"], 2, "does not exist"),
    (["place", "--placement", "preferred:x"], 2, "needs a NUMA node number"),
    (["place", "--size", "-5M"], 2, "negative"),
    (["numa-matrix", "--kernel", "fma"], 2, "fma"),
    (["numa-matrix", "--size", ""], 2, "'--size': is empty"),
    (["place", "--cpus", ""], 2, "'--cpus': is empty"),
    (["place", "--size", ""], 2, "'--size': is empty"),
    (["place", "--arrays", ""], 2, "'--arrays': is empty"),
]


@pytest.mark.parametrize("args, code, fragment", BAD, ids=[" ".join(a) for a, _, _ in BAD])
def test_bad_input(args, code, fragment, tmp_path):
    proc = bandwall(*args, db=tmp_path / "db.sqlite")
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


LAUNCH_BAD = [
    pytest.param(
        ["--proc", "0@bind:99", "--", "/bin/true"], 2, "does not exist", marks=pytest.mark.cpus(ids=(0,))
    ),
    pytest.param(
        ["--proc", "0@serial", "--", "/bin/true"], 2, "process policy", marks=pytest.mark.cpus(ids=(0,))
    ),
    (["--proc", "0", "--", "/bin/true"], 2, "CPUS@POLICY"),
    (["--proc", "999@default", "--", "/bin/true"], 2, "not available"),
    (["--proc", "all@default", "--", "no-such-command-xyz"], 2, "not found"),
    (["--proc", "all@default"], 2, "usage"),
    (["--proc", "", "--", "/bin/true"], 2, "--proc is empty"),
    # --usage-errors: a process refusing its arguments (exit 2) is the launcher's exit 2, with its message.
    (
        [
            "--usage-errors",
            "--proc",
            "all@default",
            "--",
            "/bin/sh",
            "-c",
            "echo 'x: error: bad --size' >&2; exit 2",
        ],
        2,
        "bad --size",
    ),
    (["--proc", "all@default", "--", "/bin/sh", "-c", "exit 2"], 1, "exited with code 2"),
    (["--usage-errors", "--proc", "all@default", "--", "/bin/sh", "-c", "exit 3"], 1, "exited with code 3"),
]


@pytest.mark.parametrize(
    "args, code, fragment", LAUNCH_BAD, ids=[" ".join(getattr(p, "values", p)[0]) for p in LAUNCH_BAD]
)
def test_launcher_bad_input(args, code, fragment):
    from bandwall.core import native

    proc = subprocess.run([native.executable("bandwall-launch"), *args], capture_output=True, text=True)
    assert proc.returncode == code and fragment in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_launcher_runs_processes_at_once_with_their_cpus():
    from bandwall.core import native

    cpu = os.sched_getaffinity(0)
    first = min(cpu)
    proc = subprocess.run(
        [
            native.executable("bandwall-launch"),
            "--proc",
            f"{first}@default",
            "--proc",
            "all@default",
            "--",
            "/bin/sh",
            "-c",
            "echo {rank} {cpus} {ncpus}; grep Cpus_allowed_list /proc/self/status",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    procs = json.loads(proc.stdout)["result"]["processes"]
    assert procs[0]["stdout"].split()[:3] == ["0", str(first), "1"]
    assert procs[0]["stdout"].split()[-1] == str(first)
    assert procs[1]["stdout"].split()[0] == "1" and procs[1]["stdout"].split()[2] == str(len(cpu))


def test_placement_section_renders_a_two_node_machine():
    from rich.console import Console

    from bandwall.report import Context
    from bandwall.report.sections.placement import PlacementSection

    check = {
        "fom_unit": "MPoints/s",
        "fom": "iso3dfd",
        "nodes": 2,
        "modes": {
            m: {"title": numa_check.MODE_TITLES[m], "procs": ["0-1@bind:0"], "value": v}
            for m, v in zip(ALL_MODES, (2765, 2948, 5682, 4000))
        },
    }
    check.update(numa_check.verdict({m: check["modes"][m]["value"] for m in ALL_MODES}, 2))
    data = {
        "check": check,
        "quick": False,
        "params": {},
        "matrix": {
            "unit": "GB/s",
            "kernel": "triad",
            "cpu_nodes": [0, 1],
            "memory_nodes": [0, 1],
            "matrix": [[40.0, 20.0], [21.0, 39.0]],
            "remote_over_local": 0.52,
        },
        "objects": {
            "iso3dfd, serial": {"prev": {"0": 1.0}, "next": {"0": 1.0}, "vel": {"0": 0.5, "absent": 0.5}}
        },
    }
    console = Console(record=True, width=120)
    ctx = Context(quick=False, out=Path("."), console=console, threads=2)
    section = PlacementSection()
    section.terminal(ctx, data)
    text = console.export_text()
    assert "one process per node" in text.lower() or "process per node" in text
    html = section.html(ctx, data)
    assert html.count("<img") == 2 and "iso3dfd, serial" in html and check["verdict"] in html


def test_advice_says_when_huge_pages_are_coarser_than_a_threads_part():
    from bandwall.numa import numa_check

    coarse = {
        "placement": {
            "page_split": {
                "mode": "base pages throughout: x",
                "huge_page_bytes": 2 << 20,
                "smallest_part_bytes": 512 << 10,
            }
        }
    }
    fine = {"placement": {"page_split": {"mode": "huge pages whole to one thread"}}}
    (line,) = numa_check.page_split_advice([fine, coarse])
    assert "2 MiB" in line and "512 KiB" in line
    assert numa_check.page_split_advice([fine, {}]) == []


def _topology(source: str) -> dict:
    nodes = [{"os_index": 0, "cpus": [0, 1]}, {"os_index": 1, "cpus": [2, 3]}]
    return {"result": {"source": source, "numa_nodes": nodes}}


def test_nodes_keep_only_the_cpus_this_process_may_use(monkeypatch):
    # under taskset -c 1 (or a batch system's cgroup) CPU 0 is not ours: node 0 keeps CPU 1, node 1 none
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {1})
    assert numa_check.nodes_with_cpus(_topology("this machine")) == [(0, [1])]
    # a described machine (synthetic or XML) is planned whole
    assert numa_check.nodes_with_cpus(_topology("numa:2 core:2 pu:1")) == [(0, [0, 1]), (1, [2, 3])]


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")
def test_numa_matrix_under_taskset_uses_the_allowed_cpu(run_bandwall):
    last = max(os.sched_getaffinity(0))
    p = run_bandwall(
        "numa-matrix", "--size", "4M", "--reps", "2", "--format", "json", "--no-store",
        prefix=["taskset", "-c", str(last)],
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["provenance"]["cpus"] == str(last)
