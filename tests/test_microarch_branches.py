"""Every micro-architecture's branch of the code that depends on the CPU, run on whatever CPU runs the
tests: BANDWALL_MICROARCH forces each machine-model row (the `microarch` fixture), and the records
must follow it: the instruction-set choice comes from that row's table entry or is measured under
the decision rule, the blocks belong to the variant that ran, and the in-core models read that
row's ports. No speed is asserted."""

from __future__ import annotations

import json
import os
import subprocess

from bandwall.core import decide, native, records

THREADS = "2" if len(os.sched_getaffinity(0)) >= 2 else "1"


def record(name: str, *args) -> dict:
    proc = subprocess.run(
        [native.executable(name), *map(str, args)], capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr
    return records.validate(json.loads(proc.stdout))


def offered() -> list[str]:
    return record("bandwall-topo")["result"]["isa"]["offered"]


def check_choice(c: dict, forced: str | None) -> None:
    choice = c["isa_choice"]
    assert choice["isa"] == c["isa"] and c["isa"] in offered()
    if choice["how"] == "table":
        assert forced is None or choice["source"]["microarch"] == forced
    elif choice["how"] == "measured":
        d = choice["decision"]
        names = list(d["rates"])
        again = decide.choose_best(names, [d["rates"][n] for n in names], names.index(d["default"]))
        assert (names[again.chosen], again.decisive) == (c["isa"], d["decisive"])
    else:
        assert choice["how"] in ("only", "cached"), choice


def test_iso3dfd_follows_the_row(microarch):
    rec = record("bandwall-iso3dfd", 48, 48, 48, 4, "auto", "auto", "auto", "compact", THREADS, "--json")
    c = rec["config"]
    check_choice(c, microarch)
    assert c["blocks_choice"]["isa"] == c["isa"] and c["blocks"] == c["blocks_choice"]["model"]["blocks"]
    model = rec["result"]["incore_model"]
    m = model["microarch"]
    if microarch not in (None, "none"):
        assert m.get("name") == microarch and m["forced"] == f"BANDWALL_MICROARCH={microarch}"
    if microarch == "none":
        assert "unavailable" in m and "unavailable" in model
    if "cycles_per_vector" in model:
        assert model["lanes"] == (16 if c["isa"] == "avx512" else 8)
        assert model["ports_per_cycle"]["vector_bits"] == model["lanes"] * 32
    assert rec["validation"]["passed"]


def test_peak_follows_the_row(microarch):
    rec = record("bandwall-peak", "--reps", 1, "--seconds", "0.01", "--threads", 1)
    c = rec["config"]
    check_choice(c, microarch)
    if microarch == "none":
        assert str(c["fma_per_cycle"]).startswith("unavailable: no machine model")
    elif microarch is not None and not str(c["fma_per_cycle"]).startswith("unavailable"):
        assert c["fma_per_cycle"] > 0 and c["microarch"]["name"] == microarch


def test_stream_follows_the_row(microarch):
    rec = record("bandwall-stream", "--kernel", "dot", "--size", "1M", "--reps", 2, "--threads", 1)
    check_choice(rec["config"], microarch)
    assert rec["config"]["isa_choice"]["size_class"] in ("l2", "llc")


def test_an_unknown_row_name_is_refused():
    proc = subprocess.run(
        [native.executable("bandwall-peak"), "--reps", "1", "--seconds", "0.01"],
        capture_output=True,
        text=True,
        env={**os.environ, "BANDWALL_MICROARCH": "AMD Zen 9"},
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "BANDWALL_MICROARCH 'AMD Zen 9'" in lines[0]


def test_model_default_is_offered():
    from bandwall.core import manifest

    d = manifest.manifest()["isa"]["model_default"]
    assert d["isa"] in offered() and d["why"]
