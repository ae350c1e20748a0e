"""`bandwall topo` on this machine and on recorded XML machines (tests/fixtures), and its bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bandwall.core import records

FIXTURES = Path(__file__).parent / "fixtures"
TWO_SOCKET = FIXTURES / "two-socket-4numa-smt.xml"  # 2 packages x 2 NUMA nodes x 4 cores x 2 threads
FOUR_NODE = FIXTURES / "four-node.xml"  # 4 NUMA nodes x 2 cores


def bandwall(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bandwall", *args], capture_output=True, text=True, timeout=60
    )


def topo_json(*args: str) -> dict:
    proc = bandwall("topo", "--format", "json", *args)
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    records.validate(rec)
    return rec


def test_this_machine_has_nodes_cores_caches():
    r = topo_json()["result"]
    assert r["pus"] >= 1 and r["cores"] >= 1
    assert len(r["numa_nodes"]) >= 1
    assert sum(len(n["cpus"]) for n in r["numa_nodes"]) == r["pus"]
    assert r["llc_bytes"] > 0
    assert any(c["level"] >= 2 for c in r["caches"])
    assert r["pmu"] == "available" or r["pmu"].startswith("unavailable: ")


def test_this_machine_lists_its_instruction_sets():
    isa = topo_json()["result"]["isa"]
    f = isa["features"]
    assert isa["offered"][-1] == "generic"
    assert ("avx2" in isa["offered"]) == (f["avx2"] and f["fma"])
    assert ("avx512" in isa["offered"]) == all(f[k] for k in ("avx512f", "avx512bw", "avx512dq", "avx512vl"))


def test_a_recorded_machine_has_no_instruction_sets():
    assert "isa" not in topo_json("--topology", str(FOUR_NODE))["result"]


def test_two_cpus_are_probed_for_one_last_level_cache():
    """--llc-probe A,B: the round trip between the two CPUs and the verdict by bandwall's threshold,
    in the record and in the table's last line."""
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("one CPU: no two to probe")
    pair = f"{allowed[0]},{allowed[1]}"
    proc = bandwall("topo", "--format", "json", "--llc-probe", pair)
    if proc.returncode == 1 and "did not answer" in proc.stderr:
        pytest.skip(proc.stderr)  # a host that stole a CPU for 20 ms: the probe says so and fails
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    records.validate(rec)
    p = rec["result"]["llc_probe"]
    assert p["ran"] and p["cpus"] == allowed[:2] and p["round_trip_ns"] > 0
    assert p["shared"] == (p["round_trip_ns"] < p["one_llc_below_ns"])
    table = bandwall("topo", "--llc-probe", pair)
    if table.returncode == 0:
        assert f"round trip between CPU {allowed[0]} and CPU {allowed[1]} took" in table.stdout


@pytest.mark.parametrize(("value", "code"), [("one", 0), ("two", 0), ("three", 2), ("One", 2)])
def test_the_probes_verdict_is_forced_or_refused_in_one_line(value, code):
    """BANDWALL_LLC_PROBE=one or two: the verdict given, nothing timed, and the record says so
    (where the process has two CPUs; with one, the pair is refused as ever); another value: one
    line, exit 2."""
    allowed = sorted(os.sched_getaffinity(0))
    pair = f"{allowed[0]},{allowed[-1]}"  # one CPU twice where the process has one: refused unless forced value bad
    proc = subprocess.run(
        [sys.executable, "-m", "bandwall", "topo", "--format", "json", "--llc-probe", pair],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "BANDWALL_LLC_PROBE": value},
    )
    if code == 2:
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        if len(allowed) > 1:  # with one CPU the pair is refused first
            assert f"BANDWALL_LLC_PROBE '{value}' is neither one nor two" in proc.stderr
        return
    if len(allowed) < 2:
        assert proc.returncode == 2 and "names CPU" in proc.stderr and "twice" in proc.stderr
        return
    assert proc.returncode == 0, proc.stderr
    p = json.loads(proc.stdout)["result"]["llc_probe"]
    assert (p["forced"], p["shared"], p["ran"]) == (f"BANDWALL_LLC_PROBE={value}", value == "one", True)
    assert "round_trip_ns" not in p


def test_two_socket_xml_shape_and_distances():
    rec = topo_json("--topology", str(TWO_SOCKET))
    r = rec["result"]
    assert (r["packages"], len(r["numa_nodes"]), r["cores"], r["pus"]) == (2, 4, 16, 32)
    assert r["distances"][0] == [10, 12, 21, 21]
    assert [n["package"] for n in r["numa_nodes"]] == [0, 0, 1, 1]
    assert rec["provenance"]["topology_digest"] != topo_json()["provenance"]["topology_digest"]


def _node_of(r: dict) -> dict[int, int]:
    return {c: n["os_index"] for n in r["numa_nodes"] for c in n["cpus"]}


def test_scatter_on_two_socket_covers_every_node_first():
    r = topo_json("--topology", str(TWO_SOCKET), "--order", "scatter", "--threads", "4")["result"]
    node = _node_of(r)
    assert sorted(node[c] for c in r["order"]) == [0, 1, 2, 3]
    # Alternates packages: threads 0 and 1 on different sockets.
    pkg = {n["os_index"]: n["package"] for n in r["numa_nodes"]}
    assert pkg[node[r["order"][0]]] != pkg[node[r["order"][1]]]


def test_compact_on_two_socket_stays_on_node_zero():
    r = topo_json("--topology", str(TWO_SOCKET), "--order", "compact", "--threads", "8")["result"]
    node = _node_of(r)
    assert {node[c] for c in r["order"]} == {0}
    cores = {c: core["logical_index"] for core in r["core_list"] for c in core["cpus"]}
    assert len({cores[c] for c in r["order"]}) == 4  # SMT siblings first: 8 threads on 4 cores


def test_node_order_on_four_node_machine():
    r = topo_json("--topology", str(FOUR_NODE), "--order", "node:3")["result"]
    node = _node_of(r)
    assert len(r["order"]) == 2 and {node[c] for c in r["order"]} == {3}


def test_synthetic_description():
    r = topo_json("--topology", "pack:2 numa:2 core:2 pu:2")["result"]
    assert (r["packages"], len(r["numa_nodes"]), r["pus"]) == (2, 4, 16)


@pytest.mark.parametrize(
    "cpus, expect",
    [
        ("3,2,1,0", [3, 2, 1, 0]),
        # physical cores first: CPUs of node 0 are 0-7, two hardware threads per core
        ("M0:0-3", None),
        ("S0:0-1@S1:0-1", None),
        ("E:N:2", None),
    ],
)
def test_cpus_show_what_a_list_names_on_a_recorded_machine(cpus, expect):
    rec = topo_json("--topology", str(TWO_SOCKET), "--cpus", cpus)
    got = rec["result"]["order"]
    cores = rec["result"]["core_list"]
    first = [c["cpus"][0] for c in cores]  # likwid's domain numbering: first hardware thread of each core
    nodes = {n["os_index"]: n["cpus"] for n in rec["result"]["numa_nodes"]}
    if expect is not None:
        assert got == expect
    elif cpus == "M0:0-3":
        assert got == [c for c in first if c in nodes[0]][:4]
    elif cpus == "S0:0-1@S1:0-1":
        socket1 = set(nodes[2]) | set(nodes[3])
        assert got == first[:2] + [c for c in first if c in socket1][:2]
    else:
        assert got == first[:2]


@pytest.mark.parametrize(
    "args, code, fragment",
    [
        (["--order", "spiral"], 2, "unknown binding"),
        (["--order", "node:99"], 2, "does not exist"),
        (["--order", "compact", "--threads", "100000"], 2, "threads asked for"),
        (["--threads", "-1"], 2, "-1"),
        (["--topology", "no such machine"], 2, "neither an hwloc XML file nor a synthetic"),
        (["--format", "yaml"], 2, "yaml"),
        (["--order", ""], 2, "'--order': is empty"),
        (["--topology", ""], 2, "'--topology': is empty"),
        (["--cpus", ""], 2, "'--cpus': is empty"),
        (["--cpus", "S0:0", "--order", "compact"], 2, "exclude each other"),
        (["--topology", str(TWO_SOCKET), "--cpus", "S2:0"], 2, "this machine has 2 sockets"),
        (["--topology", str(TWO_SOCKET), "--cpus", "M0:8"], 2, "of a domain of 8"),
        (["--llc-probe", ""], 2, "'--llc-probe': is empty"),
        (["--llc-probe", "0"], 2, "two different CPUs"),
        (["--llc-probe", "0,0"], 2, "names CPU 0 twice"),
        (["--llc-probe", "0,100000"], 2, "names CPU 100000"),
        (["--llc-probe", "0,x"], 2, "not a whole number"),
        (["--topology", str(TWO_SOCKET), "--llc-probe", "0,1"], 2, "leave out --topology"),
    ],
)
def test_bad_input(args, code, fragment):
    proc = bandwall("topo", *args)
    assert proc.returncode == code
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert fragment in lines[0]
    assert "Traceback" not in proc.stderr
