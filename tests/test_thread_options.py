"""--threads, --cpus and --bind mean the same in every command that places threads: every CPU-list
form (taskset's and likwid-pin's) and every binding policy of the native table, through each such
command, read by the one native parser; the CPUs each record says its threads ran on are checked."""

from __future__ import annotations

import json
import os

import pytest

from bandwall.core import policies, topo

ALLOWED = sorted(os.sched_getaffinity(0))
needs_two = pytest.mark.skipif(len(ALLOWED) < 2, reason="needs 2 CPUs this process may use")

# (list, the CPUs it names here), on a machine whose first two allowed CPUs are 0 and 1 of one node.
LISTS = [
    ("1,0", [1, 0]),
    ("0-1", [0, 1]),
    ("0-1:1", [0, 1]),
    ("N:1,0", [1, 0]),
    ("S0:0-1", [0, 1]),
    ("M0:1", [1]),
    ("C0:0", [0]),
    ("S0:0@S0:1", [0, 1]),
    ("E:N:2", [0, 1]),
    ("E:N:2:1:1", [0, 1]),
]

# Each command that places threads: argv before the list, the option taking it, how to read the
# CPUs its threads ran on from its JSON record.
SMALL_STREAM = ["--kernel", "triad", "--size", "4M", "--reps", "2"]


def _stream_cpus(rec):
    return rec["result"]["threads_ran_on"]


def _prov_cpus(rec):
    return topo.resolve_cpus(rec["provenance"]["cpus"])


COMMANDS = {
    "stream": (["stream", *SMALL_STREAM], _stream_cpus),
    "balance": (["balance", *SMALL_STREAM], lambda rec: _prov_cpus(rec)),
    "iso3dfd": (["iso3dfd", "--grid", "40x40x40", "--iters", "2", "--no-roofline"], _prov_cpus),
}


@needs_two
@pytest.mark.skipif(ALLOWED[:2] != [0, 1], reason="the table's CPUs are 0 and 1 of one node")
@pytest.mark.parametrize("text,cpus", LISTS, ids=[t for t, _ in LISTS])
def test_every_list_form_resolves_natively(text, cpus):
    assert topo.resolve_cpus(text) == cpus


@needs_two
@pytest.mark.skipif(ALLOWED[:2] != [0, 1], reason="the table's CPUs are 0 and 1 of one node")
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    "text,cpus", [LISTS[0], LISTS[4], LISTS[7], LISTS[9]], ids=["taskset", "S0", "@", "E"]
)
def test_every_command_takes_every_list_form(run_bandwall, command, text, cpus):
    argv, ran_on = COMMANDS[command]
    p = run_bandwall(*argv, "--cpus", text, "--format", "json", "--no-store")
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert ran_on(rec) == cpus
    assert rec["provenance"]["threads"] == len(cpus)


BINDINGS = [row["syntax"].replace("node:N", "node:0") for row in policies.table()["binding"]]


@needs_two
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("bind", BINDINGS)
def test_every_command_takes_every_binding_policy(run_bandwall, command, bind):
    argv, _ = COMMANDS[command]
    p = run_bandwall(*argv, "--bind", bind, "--threads", "2", "--format", "json", "--no-store")
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["provenance"]["binding"] == bind and rec["provenance"]["threads"] == 2
    if bind != "none":
        # The same CPUs the native binding table gives for this policy.
        expected = topo.topology(order=bind, threads=2)["result"]["order"]
        assert topo.resolve_cpus(rec["provenance"]["cpus"]) == expected


@needs_two
def test_pipeline_takes_likwid_lists_for_compute_and_engine_cpus(run_bandwall):
    p = run_bandwall(
        "stream", *SMALL_STREAM, "--cpus", "S0:0", "--engine", "helper", "--engine-cpus", "S0:1",
        "--format", "json", "--no-store",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["result"]["threads_ran_on"] == [ALLOWED[0]]
    assert rec["validation"]["checked"] is True and rec["validation"]["passed"] is True


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    "args,fragment",
    [
        (["--cpus", "S9:0"], "CPU list 'S9:0'"),
        (["--cpus", "0,0"], "names CPU 0 twice"),
        (["--cpus", "E:N:0"], "needs COUNT and CHUNK of at least 1"),
        (["--cpus", "S0:0@"], "empty part between @"),
        (["--bind", "sideways"], "unknown binding 'sideways'"),
        (["--cpus", ""], "is empty"),
        (["--threads", "0"], "0 is not in the range x>=1"),
    ],
)
def test_bad_lists_and_policies_are_refused_alike(run_bandwall, command, args, fragment, tmp_path):
    argv, _ = COMMANDS[command]
    p = run_bandwall(*argv, *args, "--db", tmp_path / "x.db")
    assert p.returncode == 2, p.stderr
    assert fragment in p.stderr and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert not (tmp_path / "x.db").exists()
