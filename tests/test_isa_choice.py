"""How --isa auto chooses each kernel's variant, as the records say (config.isa_choice): a row of
the table of measured choices for this micro-architecture, a choice measured and cached on a CPU the
table does not know, and a name given with --isa. The table is replaced through
BANDWALL_ISA_CHOICES; no speed is asserted (the figures of a measured choice are only checked to
be there)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from bandwall.core import decide, native, records, topo

STREAM = ["--kernel", "dot", "--size", "1M", "--reps", "2", "--threads", "1"]
PEAK = ["--reps", "1", "--seconds", "0.01", "--threads", "1"]
ISO = ["48", "48", "48", "2", "32", "8", "8", "compact", "1", "--json"]
TOOLS = {
    "bandwall-stream": (STREAM, "stream.dot"),
    "bandwall-peak": (PEAK, "peak.fma"),
    "bandwall-iso3dfd": (ISO, "iso3dfd.rows"),
}


def run(name: str, *args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [native.executable(name), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


def choice(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr
    rec = records.validate(json.loads(proc.stdout))
    c = rec["config"]
    assert c["isa_choice"]["isa"] == c["isa"]
    return c["isa_choice"]


@pytest.fixture(scope="module")
def machine() -> dict:
    """This CPU's micro-architecture (machine model row) and the variants it offers."""
    peak = json.loads(
        subprocess.check_output([native.executable("bandwall-peak"), *PEAK, "--isa", "generic"])
    )
    topo_rec = json.loads(subprocess.check_output([native.executable("bandwall-topo")]))
    m = peak["config"]["microarch"]
    key = m.get("name") or f"{m['vendor']}-{m['family']}-{m['model']}"
    return {"microarch": m.get("name"), "cpu_key": key, "offered": topo_rec["result"]["isa"]["offered"]}


def topo_digest() -> str:
    return topo.topology()["provenance"]["topology_digest"]


def table_file(tmp_path, microarch: str, entries: dict) -> str:
    path = tmp_path / "choices.json"
    row = {
        "microarch": microarch,
        "cpu": "test",
        "measured": "2026-01-01",
        "command": "test",
        "kernels": entries,
    }
    path.write_text(json.dumps({"rows": [row]}))
    return str(path)


@pytest.mark.parametrize("name", list(TOOLS))
def test_table_row_names_the_variant(name, machine, tmp_path):
    if not machine["microarch"] or len(machine["offered"]) < 2:
        pytest.skip("this CPU has no machine model row or one variant: nothing to choose")
    args, key = TOOLS[name]
    pick = machine["offered"][-1]  # the narrowest: not what the widest-first order would give
    figures = {isa: (2.0 if isa == pick else 1.0) for isa in machine["offered"]}
    env = {
        "BANDWALL_ISA_CHOICES": table_file(
            tmp_path, machine["microarch"], {key: {"isa": pick, "figures": figures, "unit": "x"}}
        ),
        "BANDWALL_CACHE_DIR": str(tmp_path / "cache"),
    }
    c = choice(run(name, *args, env=env))
    assert (c["isa"], c["how"], c["kernel"]) == (pick, "table", key)
    assert c["figures"] == figures and c["source"]["microarch"] == machine["microarch"]
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("name", list(TOOLS))
def test_unknown_cpu_is_measured_under_the_rule(name, machine, tmp_path):
    """A CPU the table does not know times every variant on the run's own data; the record carries
    the rounds and the verdict, and its choice is the decision rule's on those rounds. Kept as it
    settles: the default that stood is read back; a winner is raced once more against the default
    alone, then read back whichever won (which of these happens is the machine's business)."""
    if len(machine["offered"]) < 2:
        pytest.skip("this CPU offers one variant: nothing to measure")
    args, key = TOOLS[name]
    env = {
        "BANDWALL_ISA_CHOICES": table_file(tmp_path, "no such CPU", {}),
        "BANDWALL_CACHE_DIR": str(tmp_path),
    }
    first = choice(run(name, *args, env=env))
    assert first["how"] == "measured" and first["kernel"] == key and first["size_class"]
    assert set(first["figures"]) == set(machine["offered"]) and first["isa"] in machine["offered"]
    d = first["decision"]
    names = list(d["rates"])
    again_rule = decide.choose_best(names, [d["rates"][n] for n in names], names.index(d["default"]))
    assert (names[again_rule.chosen], again_rule.decisive) == (first["isa"], d["decisive"])
    cached = list(tmp_path.glob("isa-choices-*.json"))
    assert len(cached) == 1 and f"{key}@{first['size_class']}" in json.loads(cached[0].read_text())["choices"]
    won = d["decisive"] and first["isa"] != d["default"]
    assert first["source"]["state"] == ("unconfirmed" if won else "default")
    again = choice(run(name, *args, env=env))
    if won:  # the confirming race: the default against the winner alone
        assert again["how"] == "measured" and set(again["figures"]) == {d["default"], first["isa"]}
        assert again["source"]["state"] in ("confirmed", "default")
        kept = again
        again = choice(run(name, *args, env=env))
        assert again["how"] == "cached" and again["isa"] == kept["isa"]
    else:
        assert (
            again["how"] == "cached" and again["isa"] == first["isa"] and again["figures"] == first["figures"]
        )


def test_a_decisive_cached_choice_is_read_back(machine, tmp_path):
    """A cache entry written as the executable writes one (decisive, this CPU, the same candidates
    and size class) is taken without timing; one of another size class or within noise is not."""
    if len(machine["offered"]) < 2:
        pytest.skip("this CPU offers one variant: nothing to measure")
    env = {
        "BANDWALL_ISA_CHOICES": table_file(tmp_path, "no such CPU", {}),
        "BANDWALL_CACHE_DIR": str(tmp_path),
    }
    first = choice(run("bandwall-stream", *STREAM, env=env))
    pick = machine["offered"][-1]
    found = list(tmp_path.glob("isa-choices-*.json"))
    path = found[0] if found else tmp_path / f"isa-choices-{topo_digest()}.json"
    entry = {
        "isa": pick,
        "decisive": True,
        "figures": {i: 1.0 for i in machine["offered"]},
        "unit": "GB/s",
        "candidates": machine["offered"],
        "cpu": machine["cpu_key"],
        "size_class": first["size_class"],
        "measured": "2026-01-01",
    }
    path.write_text(json.dumps({"choices": {f"stream.dot@{first['size_class']}": entry}}))
    c = choice(run("bandwall-stream", *STREAM, env=env))
    assert (c["isa"], c["how"]) == (pick, "cached")
    entry["decisive"] = False
    path.write_text(json.dumps({"choices": {f"stream.dot@{first['size_class']}": entry}}))
    assert choice(run("bandwall-stream", *STREAM, env=env))["how"] == "measured"
    entry["decisive"] = True
    path.write_text(json.dumps({"choices": {"stream.dot@dram-other": entry}}))
    assert choice(run("bandwall-stream", *STREAM, env=env))["how"] == "measured"


@pytest.mark.parametrize("name", list(TOOLS))
def test_forced_isa_is_not_chosen(name, machine, tmp_path):
    args, key = TOOLS[name]
    isa = machine["offered"][-1]
    c = choice(run(name, *args, "--isa", isa, env={"BANDWALL_CACHE_DIR": str(tmp_path)}))
    assert (c["isa"], c["how"]) == (isa, "forced") and "figures" not in c
    assert not list(tmp_path.iterdir())


def test_stream_key_names_the_store_kind(machine, tmp_path):
    env = {
        "BANDWALL_ISA_CHOICES": table_file(tmp_path, "no such CPU", {}),
        "BANDWALL_CACHE_DIR": str(tmp_path),
    }
    for stores in ("nt", "regular"):
        args = ["--kernel", "triad", "--stores", stores, "--size", "1M", "--reps", "2", "--threads", "1"]
        assert choice(run("bandwall-stream", *args, env=env))["kernel"] == f"stream.triad.{stores}"


BAD_TABLES = ["not json", '{"no rows": []}', "[]"]


@pytest.mark.parametrize("text", BAD_TABLES)
def test_bad_table_file_is_refused(text, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(text)
    proc = run("bandwall-stream", *STREAM, env={"BANDWALL_ISA_CHOICES": str(path)})
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "BANDWALL_ISA_CHOICES" in lines[0], proc.stderr
    assert proc.stdout == ""
