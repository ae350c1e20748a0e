"""BANDWALL_CACHES: cache sizes by level that replace hwloc's wherever the models read them, so that
a model's branch for another CPU's caches runs on any machine. The sizes reach the records, the
last-level cache the STREAM size and the size classes follow, and a malformed value is refused in
one line with exit 2."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from bandwall.core import native


def native_run(exe: str, *args, caches: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [native.executable(exe), *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "BANDWALL_CACHES": caches},
        timeout=120,
    )


def test_the_forced_sizes_reach_the_records():
    topo = json.loads(native_run("bandwall-topo", caches="L1=16K,L2=768K,L3=24M").stdout)["result"]
    assert topo["caches_forced"] == "BANDWALL_CACHES=L1=16K,L2=768K,L3=24M"
    # the last-level cache: the forced size for each L3 hwloc knows (one shared one when it knows none)
    l3s = [c for c in topo["caches"] if c["level"] == 3]
    assert topo["llc_bytes"] == 24 * 2**20 * max(1, len(l3s))
    proc = native_run(
        "bandwall-iso3dfd",
        40,
        40,
        40,
        2,
        "auto",
        "auto",
        "auto",
        "compact",
        1,
        "--json",
        caches="L1=16K,L2=768K,L3=24M",
    )
    assert proc.returncode == 0, proc.stderr
    model = json.loads(proc.stdout)["result"]["traffic_model"]
    assert (model["l2_bytes"], model["l3_bytes"]) == (768 * 2**10, 24 * 2**20)
    assert model["l1_fills"]["l1d_bytes"] == 16 * 2**10
    assert model["caches_forced"] == "BANDWALL_CACHES=L1=16K,L2=768K,L3=24M"


def test_nothing_forced_leaves_hwloc_sizes():
    proc = subprocess.run([native.executable("bandwall-topo")], capture_output=True, text=True, check=True)
    assert "caches_forced" not in json.loads(proc.stdout)["result"]
    empty = json.loads(native_run("bandwall-topo", caches="").stdout)["result"]
    assert "caches_forced" not in empty


@pytest.mark.parametrize(
    "caches",
    ["L2", "L2=", "L2=0", "L9=1M", "X2=1M", "L2=1M,L2=2M", "L2=1Q", ",", "L2:1M", "L2=-1M", "2=1M"],
)
def test_a_malformed_value_is_refused_in_one_line(caches):
    proc = native_run("bandwall-iso3dfd", 40, 40, 40, 2, "auto", "auto", "auto", "compact", 1, caches=caches)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert f"BANDWALL_CACHES '{caches}'" in lines[0] and "Traceback" not in proc.stderr


# What the executables refuse from the environment before any kernel runs reaches the front end as
# its own line, exit 2 (the manifest, which every command reads first, refuses it too). bandwall topo
# reads no machine model, so the row's name is not its concern.
ISO3DFD = ("iso3dfd", "--grid", "40x40x40", "--iters", "2")
BAD_ENV = [
    (ISO3DFD, {"BANDWALL_CACHES": "L2=lots"}, "BANDWALL_CACHES 'L2=lots'"),
    (ISO3DFD, {"BANDWALL_MICROARCH": "AMD Zen 9"}, "BANDWALL_MICROARCH 'AMD Zen 9'"),
    (ISO3DFD, {"BANDWALL_TOPOLOGY": "no such topology"}, "topology 'no such topology'"),
    (("topo",), {"BANDWALL_CACHES": "L3=1M,L3=2M"}, "BANDWALL_CACHES 'L3=1M,L3=2M'"),
    (("stream", "--size", "1M", "--reps", "2"), {"BANDWALL_CACHES": "L2"}, "BANDWALL_CACHES 'L2'"),
]


@pytest.mark.parametrize(("command", "env", "fragment"), BAD_ENV)
def test_the_front_end_refuses_a_bad_environment_in_one_line(run_bandwall, command, env, fragment):
    proc = run_bandwall(*command, env=env)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert fragment in lines[0] and "Traceback" not in proc.stderr
