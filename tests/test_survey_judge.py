"""bandwall survey judges what it can and names what it cannot: files in a folder of node records
that cannot be judged (cut short, empty, another tool's, a second record of a node, a failed own
check, no figures) are skipped with why and the folder left as it was; nodes of an allocation that
give no record are missing, with why, and the others judged. And a node's figure is an outlier only
by the decision rule on its rounds against the other nodes' median, with its claim and the claim's
words in the record, the JSON and the terminal (tables of constructed cases)."""

from __future__ import annotations

import copy
import json
import os
import statistics
from pathlib import Path

import pytest

from bandwall.core.claims import FALLS, RISES, Claim, say
from bandwall.core.spread import NOISE
from bandwall.survey import gather, judge
from bandwall.survey.judge import NOT_OUTLIER, OUTLIER
from test_survey import scaled, write_population

GOOD = ("node1", "node2", "node3")
OLD_DATE = "2000-01-01T00:00:00Z"


def bad_files(real_node, make_record) -> list[tuple[str, str, bytes, str]]:
    def text(rec: dict) -> bytes:
        return json.dumps(rec, indent=1).encode()

    whole = text(scaled(real_node, "node4"))
    older = scaled(real_node, "node1")
    older["provenance"]["date"] = OLD_DATE
    failed = scaled(real_node, "node5")
    failed["validation"].update(checked=True, passed=False)
    bare = scaled(real_node, "node6")
    del bare["result"]["figures"]
    return [
        ("truncated", "node4.json", whole[: len(whole) // 2], "truncated"),
        ("empty", "node7.json", b"", "empty (0 bytes)"),
        ("another tool", "stream.json", text(make_record()), "a 'stream' record, not a survey-node record"),
        ("two of one node", "node1-old.json", text(older), "another record of node 'node1'"),
        ("own check failed", "node5.json", text(failed), "its own check failed"),
        ("no figures", "node6.json", text(bare), "a survey-node record without figures"),
    ]


CASES = ["truncated", "empty", "another tool", "two of one node", "own check failed", "no figures"]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_record_cut_anywhere_reads_as_truncated_and_a_broken_one_does_not(tmp_path):
    """A file cut short at any byte reads as truncated, wherever the cut falls (inside a string, a
    number such as 1.5e-05, a literal, between values); a file whose structure is broken before its
    end reads as not a JSON record."""
    whole = json.dumps(
        {"tool": "survey-node", "result": {"figures": [1.5e-05, -2, True, None, "a, b"], "n": {"x": 12.25}}},
        indent=1,
    )
    f = tmp_path / "node.json"
    for cut in range(1, len(whole)):
        if not whole[:cut].strip():
            continue
        f.write_text(whole[:cut])
        with pytest.raises(gather.Skip, match="^truncated") as e:
            gather.examine(f)
        assert f"stops after {cut} bytes" in str(e.value)
    for broken in ('{"tool": "x" "result": {}}', '{"tool": , "result": {}}', '{"tool": "x"}}'):
        f.write_text(broken)
        with pytest.raises(gather.Skip, match="^not a JSON record"):
            gather.examine(f)


@pytest.mark.parametrize("case", CASES)
def test_a_file_that_cannot_be_judged_is_skipped_and_named(real_node, make_record, tmp_path, capfd, case):
    from conftest import run_in_process

    folder = tmp_path / "nodes"
    write_population(folder, [scaled(real_node, n) for n in GOOD])
    _, name, data, why = next(b for b in bad_files(real_node, make_record) if b[0] == case)
    (folder / name).write_bytes(data)
    before = snapshot(folder)
    code, out, err = run_in_process(["survey", "--judge", "--no-store", "--format", "json", folder], capfd)
    assert code == 0, err
    r = json.loads(out)["result"]
    assert sorted(n["node"] for n in r["nodes"]) == list(GOOD)
    ((skip),) = r["skipped"]
    assert skip["file"] == str(folder / name) and why in skip["reason"]
    assert err == f"bandwall: skipped {folder / name}: {skip['reason']}\n"
    assert r["missing"] == [] and snapshot(folder) == before


def test_a_folder_with_every_bad_kind_judges_the_good_nodes_and_is_left_as_it_was(
    run_bandwall, real_node, make_record, tmp_path
):
    folder = tmp_path / "nodes"
    write_population(folder, [scaled(real_node, n) for n in GOOD])
    bad = bad_files(real_node, make_record)
    for _, name, data, _ in bad:
        (folder / name).write_bytes(data)
    before = snapshot(folder)
    stamps = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    proc = run_bandwall("survey", "--judge", "--no-store", "--format", "json", folder)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)["result"]
    assert sorted(n["node"] for n in r["nodes"]) == list(GOOD) and r["flagged"] == []
    assert r["judged"] == "against the other nodes"
    skipped = {Path(s["file"]).name: s["reason"] for s in r["skipped"]}
    assert set(skipped) == {name for _, name, _, _ in bad}
    lines = proc.stderr.splitlines()
    assert len(lines) == len(bad)
    for _, name, _, why in bad:
        assert why in skipped[name]
        assert f"bandwall: skipped {folder / name}: {skipped[name]}" in lines
    # the node1 kept is the newer record; the older one is skipped naming the one kept
    assert "node1.json" in skipped["node1-old.json"]
    assert snapshot(folder) == before
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == stamps


def test_a_folder_with_only_bad_files_exits_2_with_one_line(run_bandwall, real_node, make_record, tmp_path):
    folder = tmp_path / "nodes"
    folder.mkdir()
    bad = [b for b in bad_files(real_node, make_record) if b[0] != "two of one node"]
    for _, name, data, _ in bad:
        (folder / name).write_bytes(data)
    before = snapshot(folder)
    proc = run_bandwall("survey", "--judge", "--no-store", folder)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no node record to judge" in proc.stderr
    for _, name, _, why in bad:
        assert f"{folder / name}: " in proc.stderr and why in proc.stderr
    assert snapshot(folder) == before


@pytest.mark.parametrize(
    "dates,kept",
    [
        # (date of a-node1.json, date of node1.json): the newer is kept, whatever its name
        (("2026-01-02T03:04:05Z", OLD_DATE), "a-node1.json"),
        ((OLD_DATE, "2026-01-02T03:04:05Z"), "node1.json"),
        # the same time: the last by name
        (("2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z"), "node1.json"),
        # times compare as times, not as text: 05:00+02:00 is 03:00Z, before 03:30Z
        (("2026-01-02T03:30:00Z", "2026-01-02T05:00:00+02:00"), "a-node1.json"),
    ],
)
def test_of_two_records_of_a_node_the_newest_is_kept(real_node, tmp_path, dates, kept):
    for name, date in zip(("a-node1.json", "node1.json"), dates):
        rec = scaled(real_node, "node1")
        rec["provenance"]["date"] = date
        rec["result"]["knee_cores"] = 1 if name == kept else 2  # tells the two apart
        (tmp_path / name).write_text(json.dumps(rec))
    got = gather.read([tmp_path])
    ((rec),) = got.records
    assert rec["result"]["knee_cores"] == 1
    ((skip),) = got.skipped
    assert Path(skip["file"]).name != kept and kept in skip["reason"]


@pytest.mark.parametrize(
    "text,names",
    [
        ("node1", ["node1"]),
        ("node[1-3]", ["node1", "node2", "node3"]),
        ("cn[08-10,12],gpu1", ["cn08", "cn09", "cn10", "cn12", "gpu1"]),
        ("r[1-2]n[1-2]", ["r1n1", "r1n2", "r2n1", "r2n2"]),
    ],
)
def test_the_allocations_node_list_is_read(text, names):
    assert gather.hostnames(text) == names


def test_nodes_that_give_no_record_are_missing_and_the_others_judged(real_node, tmp_path):
    """run_tasks with stand-ins for each node's srun: two write their record, one hangs past the
    timeout (and is stopped), one fails, one ends without a record (an earlier run's record of it is
    left, not judged), one writes a record that cannot be judged."""
    src = tmp_path / "src"
    write_population(src, [scaled(real_node, n) for n in ("good1", "good2")])
    folder = tmp_path / "nodes"
    folder.mkdir()
    stale = json.dumps(scaled(real_node, "quiet"))
    (folder / "quiet.json").write_text(stale)
    pid_file = tmp_path / "hang.pid"
    commands = {
        "good1": ["cp", str(src / "good1.json"), str(folder / "good1.json")],
        "hang": ["sh", "-c", f"echo $$ > {pid_file}; exec sleep 600"],
        "good2": ["cp", str(src / "good2.json"), str(folder / "good2.json")],
        "broken": ["sh", "-c", "echo 'srun: error: node broken: task 0: Exited' >&2; exit 3"],
        "quiet": ["true"],
        "cut": ["sh", "-c", f'printf \'{{"tool": "surv\' > {folder / "cut.json"}'],
    }
    got = gather.run_tasks(commands, folder, timeout=5)
    assert sorted(r["result"]["node"] for r in got.records) == ["good1", "good2"]
    why = {m["node"]: m["reason"] for m in got.missing}
    assert list(why) == ["hang", "broken", "quiet", "cut"]  # in the allocation's order
    assert why["hang"] == "no record after 5 s: its task was still running, stopped"
    assert why["broken"] == "its task failed (srun exit 3): srun: error: node broken: task 0: Exited"
    assert why["quiet"] == "its task ended without writing a record"
    assert why["cut"].startswith("its record was not judged: truncated")
    assert got.skipped == []  # a node without a usable record is missing, not also a file skipped
    assert (folder / "quiet.json").read_text() == stale
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists()  # stopped and reaped


@pytest.mark.parametrize("spelled", ["as the nodes name themselves", "otherwise in the hostfile"])
def test_both_launch_paths_name_a_node_without_a_usable_record_missing_and_only_missing(
    real_node, tmp_path, spelled
):
    """srun (one step a node) and mpirun (one launch for all) give one answer for a node whose task
    wrote a record that cannot be judged: missing, with the file's reason, and not a file skipped."""
    src = tmp_path / "src"
    write_population(src, [scaled(real_node, "good1")])
    answers = []
    for path in ("srun", "mpirun"):
        folder = tmp_path / path
        folder.mkdir()
        good = ["cp", str(src / "good1.json"), str(folder / "good1.json")]
        cut = ["sh", "-c", f'printf \'{{"tool": "surv\' > {folder / "cut.json"}']
        if path == "srun":
            got = gather.run_tasks({"good1": good, "cut": cut}, folder, timeout=60)
        else:
            both = f"{' '.join(good)}; {cut[2]}"
            hosts = ["good1", "cut"] if spelled.startswith("as") else ["h1.example", "h2.example"]
            got = gather.launch(["sh", "-c", both, "sh"], folder, True, hosts, timeout=60)
        answers.append(
            (
                [r["result"]["node"] for r in got.records],
                got.skipped,
                [(m["node"], m["reason"]) for m in got.missing],
            )
        )
    assert answers[0] == answers[1]
    records, skipped, missing = answers[0]
    assert records == ["good1"] and skipped == []
    ((name, why),) = missing
    assert name == "cut" and why.startswith("its record was not judged: truncated")


FAKE_SRUN = """#!/bin/sh
# a stand-in for srun: a node with a record in {src} 'measures' it into --out-dir; another's launch fails
for a in "$@"; do case "$a" in --nodelist=*) node="${{a#--nodelist=}}";; esac; done
prev=""; for a in "$@"; do [ "$prev" = "--out-dir" ] && out="$a"; prev="$a"; done
if [ -f "{src}/$node.json" ]; then cp "{src}/$node.json" "$out/$node.json"; exit 0; fi
echo "srun: error: Task launch for StepId=7.0 failed on node $node: Communication connection failure" >&2
echo "srun: error: Application launch failed: Communication connection failure" >&2
exit 1
"""


def test_inside_slurm_a_node_that_gives_no_record_is_missing_and_fails_the_health_check(
    run_bandwall, real_node, tmp_path
):
    """The Slurm path with srun stood in for: one step a node; node4's launch fails, the three others
    are judged, node4 is named on stderr and in result.missing, and --fail exits 1 naming it."""
    src, bin_dir, folder = tmp_path / "src", tmp_path / "bin", tmp_path / "nodes"
    write_population(src, [scaled(real_node, n) for n in GOOD])
    bin_dir.mkdir()
    (bin_dir / "srun").write_text(FAKE_SRUN.format(src=src))
    (bin_dir / "srun").chmod(0o755)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "SLURM_JOB_ID": "7",
        "SLURM_JOB_NODELIST": "node[1-4]",
        "SLURM_JOB_CPUS_PER_NODE": "2(x4)",
    }
    argv = ["survey", "--short", "--no-store", "--fail", "--timeout", "60", "--format", "json"]
    proc = run_bandwall(*argv, "--out-dir", folder, env=env)
    assert proc.returncode == 1, proc.stderr
    r = json.loads(proc.stdout)
    assert r["config"]["timeout_s"] == 60
    r = r["result"]
    assert [n["node"] for n in r["nodes"]] == list(GOOD)
    why = "its task failed (srun exit 1): srun: error: Task launch for StepId=7.0 failed on node node4"
    ((miss),) = r["missing"]
    assert miss["node"] == "node4" and miss["reason"].startswith(why)
    assert "node4" in r["links_note"] and r["links"] == []
    lines = proc.stderr.splitlines()
    assert lines[0] == f"bandwall: missing node4: {miss['reason']}"
    assert lines[1].startswith("bandwall: error: 1 node(s) missing: node4 (first: node4: its task failed")
    assert len(lines) == 2


def test_the_view_names_the_files_not_judged_and_the_nodes_missing():
    from bandwall.views.survey import notes

    r = {
        "skipped": [{"file": "node3.json", "reason": "empty (0 bytes): no record"}],
        "missing": [{"node": "node4", "reason": "its task did not end within 120 s"}],
    }
    assert notes(r) == [
        "not judged: node3.json: empty (0 bytes): no record",
        "missing: node node4: its task did not end within 120 s",
    ]


# The decision rule's verdicts on constructed figures: each node's figure is the values of its rounds,
# judged against the other nodes' median (the rounds are not paired across nodes).

KEY = "stream_triad_all_GBps"
PEERS = {  # three nodes whose rounds lie around 100, each of median 100
    "peer1": [100.0, 99.0, 101.0, 100.5, 99.5],
    "peer2": [99.5, 100.0, 100.5, 101.0, 99.0],
    "peer3": [101.0, 99.5, 100.0, 99.0, 100.5],
}


def link(a: str, b: str, latency_us: list[float], bandwidth_GBps: list[float]) -> dict:
    """A ring's link from a to b with its rounds of latency and bandwidth."""

    def fig(v: list[float]) -> dict:
        return {"median": statistics.median(v), "min": min(v), "max": max(v), "values": v}

    return {"from": a, "to": b, "latency_us": fig(latency_us), "bandwidth_GBps": fig(bandwidth_GBps)}


def ring_survey(links: list[dict], rounds: list[float]) -> dict:
    """judge.survey_record of one node a link's start, each on a host of its own with these rounds
    of STREAM, and a constructed ring record of the links."""
    ring = {
        "schema_version": 1,
        "tool": "mpi-ring",
        "config": {},
        "result": {"links": links},
        "validation": {"checked": True, "passed": True, "method": "constructed"},
        "provenance": {},
    }
    recs = [node_rec(ln["from"], rounds) for ln in links]
    for k, rec in enumerate(recs):
        rec["result"]["host"] = f"host{k}"
    return judge.survey_record(recs, ring=ring)


def node_rec(name: str, values: list[float] | None, median: float | None = None, **figures) -> dict:
    """A schema-valid survey-node record whose STREAM figure has these rounds in the order they ran
    (values None: a record from before rounds were kept, with median alone), and other figures
    given as key=values."""
    from conftest import SAMPLE_PROVENANCE

    def fig(vals, med=None, unit="GB/s") -> dict:
        if vals is None:
            return {"median": med, "min": med, "max": med, "unit": unit}
        return {
            "median": statistics.median(vals),
            "min": min(vals),
            "max": max(vals),
            "unit": unit,
            "values": vals,
        }

    return {
        "schema_version": 1,
        "tool": "survey-node",
        "config": {"node": name, "short": True, "cores": 4},
        "result": {
            "node": name,
            "digest": "d0",
            "cpu_model": "test",
            "knee_cores": 2,
            "figures": {KEY: fig(values, median), **{k: fig(v) for k, v in figures.items()}},
            "settings": {
                "thp": "always",
                "numa_balancing": "0",
                "governor": "performance",
                "kernel": "6.1",
                "memory_bytes": 1 << 34,
            },
        },
        "validation": {"checked": True, "passed": True, "method": "test record"},
        "provenance": copy.deepcopy(SAMPLE_PROVENANCE),
    }


def surveyed(subject: list[float] | None, median: float | None = None) -> dict:
    recs = [node_rec(n, v) for n, v in PEERS.items()] + [node_rec("subject", subject, median)]
    return judge.survey_record(recs)


# (case, the subject's rounds (None: no rounds kept, median 70), outlier, its claim's direction,
#  what its words say)
JUDGED = [
    ("slow in every round", [80.0, 81.0, 79.0, 80.5, 79.5], True, FALLS, "lies wholly below 90.0 GB/s"),
    ("slower by its median, within noise", [84.0, 99.0, 70.0, 101.0, 88.0], False, NOISE, "no difference"),
    ("a single round", [70.0], False, NOISE, "too few for a 90% interval"),
    ("no rounds kept", None, False, NOISE, "no paired rounds to compare"),
    ("slower beyond noise, within the margin", [95.0, 94.0, 96.0, 95.5, 94.5], False, FALLS, "does not lie"),
    ("faster in every round", [120.0, 121.0, 119.0, 120.5, 119.5], False, RISES, "rises"),
    ("alike", [100.0, 99.5, 100.5, 99.0, 101.0], False, NOISE, "no difference"),
]


@pytest.mark.parametrize("case,values,outlier,direction,says", JUDGED, ids=[j[0] for j in JUDGED])
def test_a_nodes_figure_is_an_outlier_only_by_the_decision_rule(case, values, outlier, direction, says):
    r = surveyed(values, median=70.0)["result"]
    (k,) = [k for k in r["comparisons"] if k["node"] == "subject"]
    (c,) = [Claim.from_json(c) for c in k["claims"]]
    assert (k["outlier"], c.direction) == (outlier, direction)
    assert k["words"].startswith(say(c)) and says in k["words"]
    assert k["words"].endswith(OUTLIER if outlier else NOT_OUTLIER)
    assert (c.start.label, c.end.label) == ("the other nodes' median", "subject")
    assert c.start.value == 100.0 and k["limit"] == pytest.approx(90.0)
    assert r["flagged"] == (["subject"] if outlier else [])
    if outlier:
        (row,) = r["outliers"]
        assert row["reason"] == k["words"] and row["claims"] == k["claims"]
    # the peers are alike: no difference beyond noise, however the subject stands
    assert all(k["outlier"] is False for k in r["comparisons"] if k["node"] != "subject")


def test_a_node_slower_by_its_median_alone_is_named_in_its_own_words_not_as_an_outlier():
    from bandwall.views.survey import verdict_lines

    r = surveyed([84.0, 99.0, 70.0, 101.0, 88.0])["result"]
    (words,) = [k["words"] for k in r["comparisons"] if k["node"] == "subject"]
    assert words.startswith(f"{NOISE} in STREAM triad, all cores between the other nodes' median and subject")
    lines = verdict_lines(r)
    assert lines[0] == f"no node stands out (4 comparisons by the decision rule: 4 {NOISE})"
    assert words in lines[1:]


@pytest.mark.parametrize(
    "rounds,outlier",
    [
        ([2.0, 2.02, 1.98, 2.01, 1.99], False),  # alike
        ([4.0, 4.1, 3.9, 4.05, 3.95], True),  # twice the latency in every round: rises, an outlier
        ([2.4, 1.5, 2.6, 1.8, 3.0], False),  # higher by its median, within noise
    ],
)
def test_a_links_latency_is_an_outlier_when_it_rises_beyond_noise(rounds, outlier):
    """Latency is lower-is-better: the outlier's claim rises."""
    names = ["n1", "n2", "n3", "n4"]
    links = [
        link(
            a,
            names[(k + 1) % 4],
            rounds if a == "n4" else [2.0, 2.01, 1.99, 2.02, 1.98],
            [10.0, 10.1, 9.9, 10.05, 9.95],
        )
        for k, a in enumerate(names)
    ]
    r = ring_survey(links, PEERS["peer1"])["result"]
    (k,) = [k for k in r["comparisons"] if k["node"] == "n4-n1" and k["metric"] == "link_latency_us"]
    c = Claim.from_json(k["claims"][0])
    assert k["outlier"] is outlier and k["worse"] == RISES
    assert c.direction == (RISES if outlier else NOISE)
    assert r["flagged"] == (["n4-n1"] if outlier else [])


def test_a_fact_of_the_node_carries_no_claim():
    recs = [node_rec(n, v) for n, v in PEERS.items()] + [node_rec("odd", PEERS["peer1"])]
    recs[-1]["result"]["settings"]["thp"] = "never"
    r = judge.survey_record(recs)["result"]
    (row,) = r["outliers"]
    assert (row["metric"], row["claims"]) == ("thp", [])


def test_the_json_and_the_terminal_carry_the_claims_words(tmp_path, capfd):
    from conftest import run_in_process

    folder = tmp_path / "nodes"
    slow = [80.0, 81.0, 79.0, 80.5, 79.5]
    write_population(folder, [node_rec(n, v) for n, v in PEERS.items()] + [node_rec("subject", slow)])
    code, out, err = run_in_process(["survey", "--judge", "--no-store", "--format", "json", folder], capfd)
    assert code == 0, err
    r = json.loads(out)["result"]
    (row,) = r["outliers"]
    (c,) = [Claim.from_json(c) for c in row["claims"]]
    assert c.direction == FALLS and row["reason"].startswith(say(c))
    code, out, err = run_in_process(["survey", "--judge", "--no-store", folder], capfd)
    assert code == 0, err
    assert " ".join(row["reason"].split()) in " ".join(out.split())


@pytest.mark.parametrize(
    "subject",
    [
        [80.0, 81.0, 79.0, 80.5, 79.5],  # an outlier: its claim's words
        [84.0, 99.0, 70.0, 101.0, 88.0],  # none: the tally, and the near-miss in its own words
        [100.0, 99.5, 100.5, 99.0, 101.0],  # none, and no near-miss
    ],
    ids=["outlier", "near-miss", "alike"],
)
def test_the_reports_survey_section_says_what_the_terminal_says(subject):
    """The HTML section's verdict is the terminal's lines (verdict_lines), each a paragraph, in their
    order; the outliers' table leaves their reasons to those lines, as the terminal does."""
    import html

    from bandwall.report.sections.survey import SurveySection
    from bandwall.views.survey import OUTLIER_COLUMNS, verdict_lines

    rec = surveyed(subject)
    lines = verdict_lines(rec["result"])
    assert lines
    page = SurveySection().html(None, {"record": rec})
    at = [page.find(f'<p class="note">{html.escape(line)}</p>') for line in lines]
    assert all(k >= 0 for k in at) and at == sorted(at)
    if rec["result"]["outliers"]:
        assert lines[0] == rec["result"]["outliers"][0]["reason"] and "no node stands out" not in page
        assert f"<th>{OUTLIER_COLUMNS[-1]}</th>" not in page
    else:
        assert lines[0].startswith("no node stands out (4 comparisons by the decision rule: ")
