"""`bandwall survey`: a node's record measured for real, the judgement of node records by robust
statistics (a slowed node and a node with other settings flagged, the others not), --fail,
--against, the Slurm path on the one-node test cluster, the files that cannot be judged (skipped,
named, left as they were), the nodes that give no record (missing after the timeout), and bad
input."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import threading

import pytest

from bandwall.survey import gather, judge, load, node

NAMES = [f"node{k}" for k in range(1, 7)]
ROUNDS = (1.0, 0.98, 1.02, 0.99, 1.01, 0.995, 1.005)  # a constructed figure's rounds, times its median


def scaled(
    rec: dict, name: str, factor: float = 1.0, wobble: float = 0.0, busy: float = 0.0, **settings
) -> dict:
    """A copy of a node record named name, its figures times factor (each figure's rounds first set
    to 2% either side of its median, in a fixed order: measured rounds depend on what else ran
    meanwhile, and no verdict here may; then widened by wobble), its CPUs busy with others by busy (a
    process 'spin' named when 0.1 or more), its settings changed."""
    out = copy.deepcopy(rec)
    r = out["result"]
    r["node"] = out["config"]["node"] = name
    spin = [{"pid": 4242, "command": "spin", "cpus": busy}] if busy >= 0.1 else []
    r["load"] = {
        "window_s": 0.5,
        "busy_cpus": busy,
        "per_cpu": {"0": busy},
        "processes": spin,
        "waited_s": 0.0,
    }
    for f in r["figures"].values():
        f["median"] *= factor
        f["values"] = [f["median"] * w * (1 + wobble * (w - 1) / 0.02) for w in ROUNDS]
        f["min"], f["max"] = min(f["values"]), max(f["values"])
    r["settings"].update(settings)
    return out


def population(real_node) -> list[dict]:
    """Six nodes: node3 at 60% (a noise process beside it), node5 with THP never, the rest within 2%."""
    recs = []
    for k, name in enumerate(NAMES):
        factor = 0.6 if name == "node3" else 1.0 + 0.005 * (k % 3)
        extra = {"thp": "never"} if name == "node5" else {}
        recs.append(scaled(real_node, name, factor, **extra))
    return recs


def test_the_local_record_has_every_figure_with_its_spread(real_node):
    r = real_node["result"]
    assert set(r["load"]["per_cpu"]) == {str(c) for c in os.sched_getaffinity(0)}
    assert r["host"] == load.host_id()
    assert set(r["figures"]) == set(node.UNITS)
    for key, f in r["figures"].items():
        assert 0 < f["min"] <= f["median"] <= f["max"], key
        assert f["unit"] == node.UNITS[key]
    assert 1 <= r["knee_cores"] <= real_node["config"]["cores"]
    assert {"thp", "numa_balancing", "governor", "kernel", "memory_bytes"} <= set(r["settings"])
    assert real_node["validation"]["checked"] and real_node["validation"]["passed"] is True


def test_slurmd_nodename_names_the_node(monkeypatch):
    monkeypatch.setenv("SLURMD_NODENAME", "cn042")
    assert node.name() == "cn042"


def test_the_slow_node_and_the_odd_setting_are_flagged_and_no_other(real_node):
    rec = judge.survey_record(population(real_node))
    r = rec["result"]
    assert r["flagged"] == ["node3", "node5"]
    slow = {o["metric"] for o in r["outliers"] if o["node"] == "node3"}
    assert slow == set(node.UNITS)
    (odd,) = [o for o in r["outliers"] if o["node"] == "node5"]
    assert (odd["metric"], odd["value"], odd["population_median"]) == (
        "thp",
        "never",
        real_node["result"]["settings"]["thp"],
    )
    assert rec["validation"]["checked"]


def test_a_node_whose_best_reaches_the_floor_is_not_flagged(real_node):
    """A node whose median is low but whose spread reaches within the margin: not beyond noise."""
    recs = population(real_node)
    recs[2] = scaled(real_node, "node3", 0.85, wobble=0.2)
    assert "node3" not in judge.survey_record(recs)["result"]["flagged"]


def test_the_population_spread_widens_the_floor(real_node):
    """Nodes spread widely (a heterogeneous population): a node 15% low is within three robust
    deviations and is not flagged; in a tight population it is."""
    tight = [scaled(real_node, n, 1.0) for n in NAMES[:5]] + [scaled(real_node, "node6", 0.85)]
    assert judge.survey_record(tight)["result"]["flagged"] == ["node6"]
    wide = [scaled(real_node, n, f) for n, f in zip(NAMES[:5], (0.8, 0.9, 1.0, 1.1, 1.2))]
    wide.append(scaled(real_node, "node6", 0.85))
    assert judge.survey_record(wide)["result"]["flagged"] == []


@pytest.mark.parametrize("n", [1, 2])
def test_too_few_nodes_judge_no_figures(real_node, n):
    recs = [scaled(real_node, NAMES[k], 0.5 if k else 1.0) for k in range(n)]
    r = judge.survey_record(recs)["result"]
    assert r["flagged"] == [] and r["judged"].startswith("too few nodes")


def test_against_a_baseline_one_node_is_judged(real_node):
    base = judge.survey_record(population(real_node))
    baseline = judge.baseline_of(base)
    ok = judge.survey_record([scaled(real_node, "node1")], baseline=baseline)["result"]
    assert ok["flagged"] == [] and ok["judged"] == "against the baseline"
    slow = judge.survey_record([scaled(real_node, "node1", 0.7)], baseline=baseline)["result"]
    assert slow["flagged"] == ["node1"]


def test_a_node_busy_with_other_processes_is_flagged_and_they_are_named(real_node):
    recs = [scaled(real_node, n, busy=1.0 if n == "node4" else 0.02) for n in NAMES]
    rec = judge.survey_record(recs)
    assert rec["result"]["flagged"] == ["node4"]
    (row,) = rec["result"]["outliers"]
    assert row["metric"] == "busy_cpus" and "spin (pid 4242) 1" in row["reason"]


def test_a_load_every_node_shares_flags_none(real_node):
    """Against the nodes' median: a background every node carries is not one node's fault."""
    rec = judge.survey_record([scaled(real_node, n, busy=0.7) for n in NAMES])
    assert rec["result"]["flagged"] == []


def test_a_node_measured_on_fewer_cores_is_flagged(real_node):
    recs = [scaled(real_node, n) for n in NAMES]
    recs[1]["config"]["cores"] = recs[0]["config"]["cores"] + 1
    rec = judge.survey_record(recs)
    assert rec["result"]["flagged"] == ["node2"]
    assert rec["result"]["outliers"][0]["metric"] == "cores"


def test_against_a_baseline_a_busy_node_is_flagged_alone(real_node):
    base = judge.baseline_of(judge.survey_record(population(real_node)))
    rec = judge.survey_record([scaled(real_node, "node9", busy=0.6)], baseline=base)
    assert [o["metric"] for o in rec["result"]["outliers"]] == ["busy_cpus"]


def test_a_process_spinning_on_the_nodes_cpu_is_seen_and_named():
    """A spinner pinned to one of this task's CPUs while the node is watched: that CPU busy and
    the spinner named (the survey itself sleeps through the window)."""
    cpu = max(os.sched_getaffinity(0))
    code = f"import os; os.sched_setaffinity(0, {{{cpu}}}); print('go', flush=True)\nwhile True: pass"
    spin = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert spin.stdout.readline() == "go\n"
        seen = load.foreign(0.5)
    finally:
        spin.kill()
        spin.wait()
    assert seen["per_cpu"][str(cpu)] >= 0.5
    assert spin.pid in [p["pid"] for p in seen["processes"]]


def test_nodes_of_one_machine_take_turns():
    """A second turn begins only after the first has ended (the lock, not a clock, orders them)."""
    order: list[str] = []
    first_in, second_tried = threading.Event(), threading.Event()

    def first():
        with load.turn():
            order.append("first in")
            first_in.set()
            second_tried.wait(10)
            order.append("first out")

    def second():
        first_in.wait(10)
        second_tried.set()
        with load.turn():
            order.append("second in")

    threads = [threading.Thread(target=f) for f in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert order == ["first in", "first out", "second in"]


def ring(names: list[str], slow: str | None = None, bandwidth: float = 10.0) -> dict:
    """An mpi-ring record over names, five repetitions a link (the decision rule's rounds); the link
    from slow at a fifth of the bandwidth and five times the latency."""
    links = []
    for k, a in enumerate(names):
        f = 0.2 if a == slow else 1.0
        bw = [bandwidth * f * w for w in (0.98, 1.0, 1.01, 0.99, 1.005)]
        lat = [2.0 / f * w for w in (0.99, 1.0, 1.02, 1.01, 0.995)]
        links.append(
            {
                "from": a,
                "to": names[(k + 1) % len(names)],
                "from_rank": k,
                "to_rank": (k + 1) % len(names),
                "latency_us": {"median": lat[1], "min": min(lat), "max": max(lat), "values": lat},
                "bandwidth_GBps": {"median": bw[1], "min": min(bw), "max": max(bw), "values": bw},
            }
        )
    return {
        "schema_version": 1,
        "tool": "mpi-ring",
        "config": {"ranks": len(names), "latency_bytes": 8, "bandwidth_bytes": 1 << 20},
        "result": {"links": links},
        "validation": {"checked": True, "passed": True, "method": "test"},
        "provenance": {},
    }


def test_a_slow_link_of_the_ring_is_flagged_by_its_two_nodes(real_node):
    recs = [scaled(real_node, n) for n in NAMES]
    for k, r in enumerate(recs):
        r["result"]["host"] = f"host{k}"
    rec = judge.survey_record(recs, ring=ring(NAMES, slow="node3"))
    assert rec["result"]["flagged"] == ["node3-node4"]
    assert {o["metric"] for o in rec["result"]["outliers"]} == {"link_bandwidth_GBps", "link_latency_us"}


def test_links_within_one_machine_are_shown_not_judged(real_node):
    recs = [scaled(real_node, n) for n in NAMES]
    for r in recs:
        r["result"]["host"] = "one"
    rec = judge.survey_record(recs, ring=ring(NAMES, slow="node3"))
    assert rec["result"]["flagged"] == [] and len(rec["result"]["links"]) == len(NAMES)
    assert all(ln["one_machine"] for ln in rec["result"]["links"])


def test_against_a_baseline_the_links_are_judged_too(real_node):
    recs = [scaled(real_node, n) for n in NAMES]
    for k, r in enumerate(recs):
        r["result"]["host"] = f"host{k}"
    base = judge.baseline_of(judge.survey_record(recs, ring=ring(NAMES)))
    pair = recs[:2]
    rec = judge.survey_record(pair, baseline=base, ring=ring(["node1", "node2"], bandwidth=5.0))
    assert {o["metric"] for o in rec["result"]["outliers"]} == {"link_bandwidth_GBps"}


@pytest.mark.parametrize("text,cpus", [("2(x4)", 2), ("8(x3),4", 4), ("16", 16), ("", 1), ("junk", 1)])
def test_each_task_gets_the_fewest_cpus_the_allocation_holds_on_a_node(text, cpus):
    assert gather.cpus_per_node(text) == cpus


def write_population(folder, recs) -> None:
    folder.mkdir(exist_ok=True)
    for rec in recs:
        (folder / f"{rec['result']['node']}.json").write_text(json.dumps(rec))


def test_judge_and_fail_on_records_gathered_by_hand(run_bandwall, real_node, tmp_path):
    write_population(tmp_path / "nodes", population(real_node))
    db = tmp_path / "s.db"
    proc = run_bandwall("survey", "--judge", tmp_path / "nodes", "--db", db, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["result"]["flagged"] == ["node3", "node5"]
    proc = run_bandwall(
        "survey", "--judge", "--fail", "--no-store", *sorted((tmp_path / "nodes").glob("*.json"))
    )
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "2 node(s) flagged: node3, node5" in proc.stderr
    assert "node3" in proc.stdout  # the table was printed before the verdict
    healthy = [r for r in population(real_node) if r["result"]["node"] not in ("node3", "node5")]
    write_population(tmp_path / "healthy", healthy)
    proc = run_bandwall("survey", "--judge", "--fail", "--no-store", tmp_path / "healthy")
    assert proc.returncode == 0 and "no node stands out" in proc.stdout


def test_the_per_node_plot_is_written(run_bandwall, real_node, tmp_path):
    write_population(tmp_path / "nodes", population(real_node))
    proc = run_bandwall(
        "survey", "--judge", "--no-store", "--plot", tmp_path / "nodes.png", tmp_path / "nodes"
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "nodes.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_report_shows_the_stored_survey_node_by_node(run_bandwall, real_node, tmp_path):
    db = tmp_path / "s.db"
    write_population(tmp_path / "nodes", population(real_node))
    assert run_bandwall("survey", "--judge", tmp_path / "nodes", "--db", db).returncode == 0
    out = tmp_path / "rep"
    proc = run_bandwall("report", "--sections", "survey", "--db", db, "--out", out)
    assert proc.returncode == 0, proc.stderr
    page = (out / "index.html").read_text()
    assert all(n in page for n in NAMES) and "setting thp is" in page
    assert page.count("data:image/png;base64") >= 1
    assert "flagged" in proc.stdout and "node3" in proc.stdout


def test_the_report_without_a_stored_survey_says_how_to_make_one(run_bandwall, tmp_path):
    proc = run_bandwall(
        "report",
        "--sections",
        "survey",
        "--db",
        tmp_path / "e.db",
        "--out",
        tmp_path / "r",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    (section,) = [
        s for r in json.loads(proc.stdout) if r["tool"] == "report" for s in r["result"]["sections"]
    ]
    assert section["status"] == "unavailable" and "no survey stored" in section["reason"]


def test_against_a_stored_survey_with_fail(run_bandwall, real_node, tmp_path):
    base = judge.survey_record(population(real_node))
    (tmp_path / "base.json").write_text(json.dumps(base))
    write_population(tmp_path / "one", [scaled(real_node, "node9", 0.5)])
    proc = run_bandwall(
        "survey", "--judge", "--fail", "--no-store", "--against", tmp_path / "base.json", tmp_path / "one"
    )
    assert proc.returncode == 1 and "node9" in proc.stderr


def survey_in_allocation(cluster, nodes: int, out_dir, *extra: str, exclusive: bool = False) -> dict:
    """`bandwall survey --short` inside `salloc -N nodes` on a test cluster: its survey record."""
    alloc = ["salloc", f"-N{nodes}", *(["--exclusive"] if exclusive else [])]
    argv = [sys.executable, "-m", "bandwall", "survey", "--short", "--no-store", *extra]
    out = cluster.run(*alloc, *argv, "--out-dir", str(out_dir), "--format", "json", timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout[out.stdout.index("{") :])


def test_survey_in_a_slurm_allocation_runs_one_task_a_node(slurm_cluster, tmp_path):
    """Inside an allocation (salloc on the one-node test cluster), one srun task measures the node
    into the shared folder and the survey judges it."""
    rec = survey_in_allocation(slurm_cluster, 1, tmp_path / "nodes")
    assert [n["node"] for n in rec["result"]["nodes"]] == [slurm_cluster.node]
    assert (tmp_path / "nodes" / f"{slurm_cluster.node}.json").exists()


def test_survey_through_a_hostfile_runs_one_task_a_host(run_bandwall, tmp_path):
    """--hostfile: Open MPI's mpirun starts one task on every host listed (here this one)."""
    from bandwall.mpi import flavours

    if not flavours.flavours.get("openmpi").available():
        pytest.skip("Open MPI's mpirun is not installed")
    (tmp_path / "hosts").write_text("# the test's one host\nlocalhost slots=2\n")
    proc = run_bandwall(
        "survey",
        "--hostfile",
        tmp_path / "hosts",
        "--short",
        "--no-store",
        "--out-dir",
        tmp_path / "n",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    assert len(rec["result"]["nodes"]) == 1 and len(list((tmp_path / "n").glob("*.json"))) == 1


BAD = [
    (["--judge"], "--judge needs node record files or folders"),
    (["stray.json"], "stray.json: files are judged with --judge"),
    (["--local", "--judge", "x.json"], "--local measures this node and --judge judges records: give one"),
    (["--judge", "missing.json"], "missing.json: no such file"),
    (["--judge", "{garbage}"], "not a JSON record"),
    (["--judge", "{stream}"], "a 'stream' record, not a survey-node record"),
    (["--judge", "{empty}"], "a folder with no *.json node records"),
    (["--margin", "0", "--judge", "x.json"], "--margin 0.0 must be a share between 0 and 1"),
    (["--margin", "1.5", "--judge", "x.json"], "--margin 1.5 must be a share between 0 and 1"),
    (["--against", "missing.json", "--judge", "x.json"], "missing.json: no such file"),
    (["--against", "{stream}", "--judge", "x.json"], "a baseline must be a survey or survey-node record"),
    (["--local", "--plot", "p.png"], "--plot draws the nodes of a survey: it does not go with --local"),
    (["--timeout", "0"], "--timeout 0.0 must be a number of seconds above 0"),
    (["--judge", "--timeout", "5", "x.json"], "--timeout waits for the nodes' tasks: it does not go with"),
    (["--hostfile", "nohosts.json"], "nohosts.json: cannot read the hostfile"),
    (["--hostfile", "{blank}"], "a hostfile with no hosts"),
    (
        ["--hostfile", "{blank}", "--local"],
        "--hostfile starts a task on every host: it does not go with --local",
    ),
]


@pytest.mark.parametrize("args,fragment", BAD)
def test_bad_input(run_bandwall, real_node, make_record, tmp_path, args, fragment):
    (tmp_path / "garbage.json").write_text("{not json")
    (tmp_path / "stream.json").write_text(json.dumps(make_record()))
    (tmp_path / "empty").mkdir()
    (tmp_path / "blank").write_text("# no hosts\n\n")
    names = {
        "{garbage}": "garbage.json",
        "{stream}": "stream.json",
        "{empty}": "empty",
        "{blank}": "blank",
    }
    argv = [str(tmp_path / names[a]) if a in names else a for a in args]
    argv = [str(tmp_path / a) if a.endswith(".json") and "/" not in a else a for a in argv]
    proc = run_bandwall("survey", "--no-store", *argv)
    assert proc.returncode == 2, proc.stderr
    assert fragment in proc.stderr and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


# The files a folder of node records may hold that cannot be judged, each made from a good node
# record: (case, the file, its bytes, a fragment of the reason).
