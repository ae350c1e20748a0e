"""--threads, --cpus and --bind mean the same in every command that places threads: every CPU-list
form (taskset's and likwid-pin's: domains, @ chains, E: expressions) and every binding policy of the
native table, through each such command, read by the one native parser; the CPUs each record says
its threads ran on (or, for a dry run, the CPUs it plans) are checked. On the described 2-socket SMT
and 4-node machines the same forms and policies go through the resolver and numa-check's plan.

Runs are tiny (1 MiB arrays, two repetitions, 24^3 grids) and in this process, so the whole file
stays within tens of seconds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bandwall.core import policies, topo
from bandwall.numa import numa_matrix
from conftest import run_in_process

ALLOWED = sorted(os.sched_getaffinity(0))
FIXTURES = Path(__file__).parent / "fixtures"
TWO_SOCKET = str(FIXTURES / "two-socket-4numa-smt.xml")  # 2 packages x 2 nodes x 4 cores x 2 threads
FOUR_NODE = str(FIXTURES / "four-node.xml")  # 4 nodes x 2 cores
needs_two = pytest.mark.skipif(ALLOWED[:2] != [0, 1], reason="the table's CPUs are 0 and 1 of one node")

# Every form on this machine: (list, the CPUs it names here, thread by thread).
LISTS = [
    ("1,0", [1, 0]),
    ("0-1", [0, 1]),
    ("0-1:1", [0, 1]),
    ("N:1,0", [1, 0]),
    ("S0:0-1", [0, 1]),
    ("M0:1", [1]),
    ("C0:0", [0]),
    ("D0:1", [1]),
    ("S0:1@S0:0", [1, 0]),
    ("E:N:2", [0, 1]),
    ("E:N:2:1:1", [0, 1]),
]

# Every form on the described machines: (machine, list, CPUs). The 2-socket machine numbers each
# core's second thread 1 apart (0,1 one core), so likwid's domains take the first threads first.
DESCRIBED = [
    (TWO_SOCKET, "0-3,8", [0, 1, 2, 3, 8]),
    (TWO_SOCKET, "3,2,1,0", [3, 2, 1, 0]),
    (TWO_SOCKET, "0-7:2", [0, 2, 4, 6]),
    (TWO_SOCKET, "S1:0-1", [16, 18]),
    (TWO_SOCKET, "M1:0,1", [8, 10]),
    (TWO_SOCKET, "N:0-3", [0, 2, 4, 6]),
    (TWO_SOCKET, "C0:0-1", [0, 2]),
    (TWO_SOCKET, "D0:0-1", [0, 2]),
    (TWO_SOCKET, "S0:0-1@S1:0-1", [0, 2, 16, 18]),
    (TWO_SOCKET, "M0:0@M3:1", [0, 26]),
    (TWO_SOCKET, "E:S0:4", [0, 2, 4, 6]),
    (TWO_SOCKET, "E:N:4:1:2", [0, 4, 8, 12]),
    (FOUR_NODE, "0-3,6", [0, 1, 2, 3, 6]),
    (FOUR_NODE, "3,2,1,0", [3, 2, 1, 0]),
    (FOUR_NODE, "M1:0,1", [2, 3]),
    (FOUR_NODE, "N:0-3", [0, 1, 2, 3]),
    (FOUR_NODE, "C0:0-1", [0, 1]),
    (FOUR_NODE, "M0:0@M3:1", [0, 7]),
    (FOUR_NODE, "E:S0:4", [0, 1, 2, 3]),
    (FOUR_NODE, "E:N:4:1:2", [0, 2, 4, 6]),
]

# Every binding policy on the described machines, for 4 threads.
DESCRIBED_BINDINGS = [
    (TWO_SOCKET, "compact", [0, 1, 2, 3]),
    (TWO_SOCKET, "scatter", [0, 16, 8, 24]),
    (TWO_SOCKET, "spread", [0, 8, 16, 24]),
    (TWO_SOCKET, "node:1", [8, 9, 10, 11]),
    (FOUR_NODE, "compact", [0, 1, 2, 3]),
    (FOUR_NODE, "scatter", [0, 2, 4, 6]),
    (FOUR_NODE, "spread", [0, 2, 4, 6]),
    (FOUR_NODE, "node:3", None),  # node 3 has 2 CPUs: refused, see BAD_DESCRIBED
]

BINDINGS = [row["syntax"].replace("node:N", "node:0") for row in policies.table()["binding"]]


def _machine(path: str) -> str:
    return Path(path).stem


def probe() -> list[str]:
    """A small OpenMP program that prints where its threads ran (its last line, JSON)."""
    from bandwall.core import native

    return [native.executable("bandwall-pin-probe"), "5", "20000"]


def _probe_cpus(text: str) -> list[int]:
    return json.loads([ln for ln in text.splitlines() if ln.startswith('{"probe"')][-1])["thread_cpus"]


SMALL = ["--size", "1M", "--reps", "2"]

# Each command that places threads: its arguments (OPTIONS stands where --cpus/--bind/--threads
# go), and how to read the CPUs its threads ran on (or are planned on) from (record, stderr).
COMMANDS = {
    "stream": (
        ["stream", "--kernel", "triad", *SMALL, "OPTIONS"],
        lambda r, e: r["result"]["threads_ran_on"],
    ),
    "balance": (
        ["balance", "--kernel", "triad", *SMALL, "--peak-reps", "1", "--peak-seconds", "0.01", "OPTIONS"],
        lambda r, e: topo.resolve_cpus(r["provenance"]["cpus"]),
    ),
    "iso3dfd": (
        ["iso3dfd", "--grid", "24x24x24", "--iters", "1", "--no-roofline", "OPTIONS"],
        lambda r, e: topo.resolve_cpus(r["provenance"]["cpus"]),
    ),
    # the largest point of the sweep ran on every CPU named
    "sweep": (["sweep", "triad", *SMALL, "OPTIONS"], lambda r, e: topo.resolve_cpus(r["provenance"]["cpus"])),
    # compute threads take the CPUs in order; the memcpy engine needs no helper CPU
    "engine sweep": (
        ["engine", "sweep", "--kernels", "triad", "--engine", "memcpy", "--cores", "1", *SMALL, "OPTIONS"],
        lambda r, e: topo.resolve_cpus(r["config"]["cpus"]),
    ),
    # the first mode's one process gets the CPUs in order
    "numa-check": (
        ["numa-check", "--plan", "OPTIONS", "stream"],
        lambda r, e: topo.resolve_cpus(r[0]["argv"][2].split("@")[0]),
    ),
    "numa-matrix": (
        ["numa-matrix", *SMALL, "OPTIONS"],
        lambda r, e: topo.resolve_cpus(r["result"]["row_cpus"][0]),
    ),
    "pin": (["pin", "OPTIONS", "--", *probe()], lambda r, e: _probe_cpus(r["result"]["stdout"])),
    "counters": (["counters", "OPTIONS", "--", *probe()], lambda r, e: _probe_cpus(e)),
}


def run_command(name: str, options: list[str], capfd, **env: str) -> tuple[int, object, str]:
    argv, _ = COMMANDS[name]
    at = argv.index("OPTIONS")
    args = [*argv[:at], *options, "--format", "json", "--no-store", *argv[at + 1 :]]
    code, out, err = run_in_process(args, capfd, **env)
    return code, (json.loads(out) if code == 0 else None), err


@pytest.mark.parametrize("text,cpus", LISTS, ids=[t for t, _ in LISTS])
@needs_two
def test_every_list_form_resolves_natively(text, cpus):
    assert topo.resolve_cpus(text) == cpus
    assert topo.resolve_threads(1, text, "scatter") == cpus[:1]  # --cpus wins, --threads caps it


@pytest.mark.parametrize("machine,text,cpus", DESCRIBED, ids=[f"{_machine(m)}-{t}" for m, t, _ in DESCRIBED])
def test_every_list_form_resolves_on_the_described_machines(machine, text, cpus):
    assert topo.resolve_threads(None, text, None, source=machine) == cpus


@pytest.mark.parametrize(
    "machine,bind,cpus",
    [b for b in DESCRIBED_BINDINGS if b[2]],
    ids=[f"{_machine(m)}-{b}" for m, b, c in DESCRIBED_BINDINGS if c],
)
def test_every_binding_resolves_on_the_described_machines(machine, bind, cpus):
    assert topo.resolve_threads(4, None, bind, source=machine) == cpus
    assert topo.resolve_threads(None, None, "none", source=machine) is None


@needs_two
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("text,cpus", LISTS, ids=[t for t, _ in LISTS])
def test_every_command_takes_every_list_form(command, text, cpus, capfd):
    code, rec, err = run_command(command, ["--cpus", text], capfd)
    assert code == 0, err
    ran_on = COMMANDS[command][1](rec, err)
    assert ran_on == cpus


@needs_two
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("bind", BINDINGS)
def test_every_command_takes_every_binding_policy(command, bind, capfd):
    code, rec, err = run_command(command, ["--bind", bind, "--threads", "2"], capfd)
    if command == "engine sweep" and bind == "none":
        assert code == 2 and "--bind none would leave them unplaced" in err
        return
    if bind == "none" and command in ("numa-check", "numa-matrix"):
        # none leaves each mode or row its CPUs: --threads needs a list or a policy there
        assert code == 2 and "--threads needs --cpus or a binding policy" in err
        code, rec, err = run_command(command, ["--bind", bind], capfd)
    assert code == 0, err
    if bind == "none":
        return
    expected = topo.resolve_threads(2, None, bind)  # the native binding table's CPUs
    ran_on = COMMANDS[command][1](rec, err)
    assert ran_on == expected


@pytest.mark.parametrize(
    "machine,options,modes",
    [
        (
            TWO_SOCKET,
            ["--cpus", "S0:0-1@S1:0-1"],
            {"all": ["0,2,16,18@default"], "per-node": ["0,2@bind:0", "16,18@bind:2"]},
        ),
        (
            TWO_SOCKET,
            ["--bind", "spread", "--threads", "4"],
            {"node0": ["0@bind:0"], "per-node": ["0@bind:0", "8@bind:1", "16@bind:2", "24@bind:3"]},
        ),
        (TWO_SOCKET, ["--bind", "node:1"], {"all": ["8-15@default"], "per-node": None}),  # one node: one mode
        (FOUR_NODE, ["--cpus", "M0:0@M3:1"], {"all": ["0,7@default"], "per-node": ["0@bind:0", "7@bind:3"]}),
        (FOUR_NODE, ["--cpus", "E:N:4:1:2"], {"per-node": ["0@bind:0", "2@bind:1", "4@bind:2", "6@bind:3"]}),
        (FOUR_NODE, ["--bind", "scatter", "--threads", "2"], {"per-node": ["0@bind:0", "2@bind:1"]}),
        (
            FOUR_NODE,
            ["--bind", "none"],
            {"all": ["all@default"], "per-node": ["0-1@bind:0", "2-3@bind:1", "4-5@bind:2", "6-7@bind:3"]},
        ),
    ],
    ids=["2s-@", "2s-spread", "2s-node", "4n-@", "4n-E", "4n-scatter", "4n-none"],
)
def test_numa_check_plans_on_the_described_machines(machine, options, modes, capfd):
    code, out, err = run_in_process(
        ["numa-check", "--plan", *options, "--format", "json", "stream"], capfd, BANDWALL_TOPOLOGY=machine
    )
    assert code == 0, err
    plan = {m["mode"]: [a for a in m["argv"] if "@" in a] for m in json.loads(out)}
    for mode, procs in modes.items():
        assert plan.get(mode) == procs


@pytest.mark.parametrize(
    "machine,threads,cpus,bind,rows",
    [
        (TWO_SOCKET, None, "S1:0-1@M0:0", None, {0: [0], 2: [16, 18]}),
        (TWO_SOCKET, 4, None, "scatter", {0: [0], 1: [8], 2: [16], 3: [24]}),
        (FOUR_NODE, None, "E:N:4:1:2", None, {0: [0], 1: [2], 2: [4], 3: [6]}),
        (FOUR_NODE, None, None, "compact", {0: [0, 1], 1: [2, 3], 2: [4, 5], 3: [6, 7]}),
    ],
)
def test_numa_matrix_rows_on_the_described_machines(machine, threads, cpus, bind, rows):
    chosen = topo.resolve_threads(threads, cpus, bind, source=machine)
    cells = numa_matrix.cell_args(topo.topology(machine), chosen=chosen)
    got = {i: a[a.index("--cpus") + 1] for (i, _), a in cells}
    assert got == {i: topo.cpu_list(c) for i, c in rows.items()}


@needs_two
@pytest.mark.parametrize(
    "options,ranks_cpus",
    [(["--cpus", "N:1,0"], [[1], [0]]), (["--bind", "scatter"], [[0], [1]])],
    ids=["cpus", "bind"],
)
def test_iso3dfd_ranks_divide_the_cpus(options, ranks_cpus, capfd):
    from bandwall.mpi import flavours

    if not flavours.available():
        pytest.skip("no MPI implementation here")
    code, out, err = run_in_process(
        [
            "iso3dfd",
            "--ranks",
            "2",
            "--grid",
            "24x24x48",
            "--iters",
            "1",
            *options,
            "--format",
            "json",
            "--no-store",
        ],
        capfd,
    )
    assert code == 0, err
    rec = json.loads(out)
    assert [r["thread_cpus"] for r in rec["result"]["ranks"]] == ranks_cpus
    assert rec["config"]["cpus"] == (options[1] if options[0] == "--cpus" else None)


BAD = [
    (["--cpus", "S9:0"], "CPU list 'S9:0'"),
    (["--cpus", "0,0"], "names CPU 0 twice"),
    (["--cpus", "E:N:0"], "needs COUNT and CHUNK of at least 1"),
    (["--cpus", "S0:0@"], "empty part between @"),
    (["--cpus", "0-1", "--threads", "3"], "3 threads asked for but CPU list '0-1' has only 2 CPUs"),
    (["--bind", "sideways"], "unknown binding 'sideways'"),
    (["--bind", "node:x"], "binding 'node:x' needs a NUMA node number"),
    (["--cpus", ""], "is empty"),
    (["--bind", ""], "is empty"),
    (["--threads", "0"], ("0 is not in the range x>=1", "is neither a thread count of at least 1")),
]


@needs_two
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("args,fragment", BAD, ids=[" ".join(a) or "empty" for a, _ in BAD])
def test_bad_lists_and_policies_are_refused_alike(command, args, fragment, capfd, tmp_path):
    argv, _ = COMMANDS[command]
    at = argv.index("OPTIONS")
    db = tmp_path / "x.db"
    code, _out, err = run_in_process([*argv[:at], *args, "--db", db, *argv[at + 1 :]], capfd)
    assert code == 2, err
    assert any(f in err for f in ((fragment,) if isinstance(fragment, str) else fragment)), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not db.exists()


@pytest.mark.parametrize("command", ["pin", "counters", "stream", "sweep", "numa-matrix"])
def test_cpus_this_process_may_not_use_are_refused_before_running(command, capfd):
    code, _rec, err = run_command(command, ["--cpus", f"{ALLOWED[0]},4096"], capfd)
    assert code == 2 and "4096" in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "args,fragment",
    [
        (
            ["--ranks", "2", "--cpus", "0", "--rank-bind", "core"],
            "--rank-bind and --cpus/--bind both place the ranks",
        ),
        (
            ["--ranks", "2", "--bind", "spread", "--rank-bind", "numa"],
            "--rank-bind and --cpus/--bind both place the ranks",
        ),
    ],
)
def test_iso3dfd_ranks_take_one_placement(args, fragment, capfd):
    code, _out, err = run_in_process(["iso3dfd", "--grid", "24x24x48", *args, "--no-store"], capfd)
    assert code == 2 and fragment in err and err.count("\n") == 1


def test_bad_lists_on_a_described_machine_are_refused(capfd):
    code, _out, err = run_in_process(
        ["numa-check", "--plan", "--cpus", "S1:0", "stream"], capfd, BANDWALL_TOPOLOGY=FOUR_NODE
    )
    assert code == 2 and "this machine has 1 socket" in err and err.count("\n") == 1
    code, _out, err = run_in_process(
        ["numa-check", "--plan", "--bind", "node:3", "--threads", "4", "stream"],
        capfd,
        BANDWALL_TOPOLOGY=FOUR_NODE,
    )
    assert code == 2 and "4 threads asked for but binding 'node:3' has only 2 CPUs" in err


@needs_two
def test_pipeline_takes_likwid_lists_for_compute_and_engine_cpus(capfd):
    code, out, err = run_in_process(
        ["stream", "--kernel", "triad", *SMALL, "--cpus", "S0:0", "--engine", "helper", "--engine-cpus", "S0:1",
         "--format", "json", "--no-store"],
        capfd,
    )  # fmt: skip
    assert code == 0, err
    rec = json.loads(out)
    assert rec["result"]["threads_ran_on"] == [ALLOWED[0]]
    assert rec["validation"]["checked"] is True and rec["validation"]["passed"] is True
