"""A CPU without the host's extensions, for real: guests of QEMU's emulated `max` (AVX2, no AVX-512)
and `Nehalem-v2` (no AVX) run the portable build (tests/vm/isa_cases.py). CPU detection offers
exactly what the emulated CPU executes, auto runs the widest of those, a wider variant is refused
in one line, the ceiling caps or changes nothing, and the native tests of every variant the CPU
has pass. Timings in the guest mean nothing and are never looked at.
"""

from __future__ import annotations

import pytest

from vm import guest
from vm import isa_cases as ic

pytestmark = pytest.mark.vm
_reason = guest.unavailable()
if _reason:
    pytestmark = [pytest.mark.vm, pytest.mark.skip(reason=_reason)]

MODELS = list(ic.MODELS)


def ok(model: str, case: str) -> dict:
    out = ic.results(model)[case]
    assert out.exit == 0, f"{case} in the {model} guest exited {out.exit}: {out.stderr}"
    assert out.record is not None
    return out.record


@pytest.mark.parametrize("model", MODELS)
def test_detection_offers_what_the_emulated_cpu_executes(model):
    isa = ok(model, "topo")["result"]["isa"]
    assert isa["cpu_offered"] == isa["offered"] == ic.MODELS[model]
    assert isa["ceiling"] is None
    above = ok(model, "topo-ceiling-avx512")["result"]["isa"]
    assert above["offered"] == ic.MODELS[model] and above["ceiling"] == "avx512"


@pytest.mark.parametrize("case", ["stream-auto", "iso3dfd-auto", "peak-auto"])
@pytest.mark.parametrize("model", MODELS)
def test_auto_runs_a_variant_the_cpu_has_and_checks_it(model, case):
    rec = ok(model, case)
    assert rec["config"]["isa_choice"]["isa"] in ic.MODELS[model]
    assert rec["validation"]["passed"] is True


@pytest.mark.parametrize("model", MODELS)
def test_the_prefetch_distance_runs_on_the_variant_the_cpu_has(model):
    """--prefetch 2:L1 at radius 1: the vector row kernel where the CPU has AVX2 or better, which
    prefetches (into L1 here, the block function's other copy of the update), the generic loops
    elsewhere, which do not; the answer checked either way."""
    rec = ok(model, "iso3dfd-prefetch")
    isa = rec["config"]["isa"]
    assert isa in ic.MODELS[model] and rec["validation"]["passed"] is True
    vector = isa != "generic"
    assert rec["config"]["radius_path"] == ("templated" if vector else "generic")
    assert (rec["config"]["prefetch"]["rows_ahead"], rec["config"]["prefetch"]["cache"]) == (2, "L1")
    assert rec["config"]["prefetch"]["used"] is vector


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
@pytest.mark.parametrize("model", MODELS)
def test_a_variant_the_cpu_lacks_is_refused_in_one_line(model, isa):
    out = ic.results(model)[f"stream-{isa}"]
    if isa in ic.MODELS[model]:
        assert out.exit == 0 and out.record["config"]["isa"] == isa, out.stderr
    else:
        assert out.exit == 2 and out.record is None
        assert (
            f"isa '{isa}' is not supported by this CPU (it offers {', '.join(ic.MODELS[model])})"
            in out.stderr
        )


@pytest.mark.parametrize("model", MODELS)
def test_a_generic_ceiling_caps_the_kernels(model):
    rec = ok(model, "stream-ceiling-generic")
    assert rec["config"]["isa"] == "generic" and rec["config"]["isa_choice"]["ceiling"] == "generic"


@pytest.mark.parametrize("model", MODELS)
def test_the_native_variant_tests_pass(model):
    if not ic.has_native_tests():
        pytest.skip(f"{ic.NATIVE_TESTS} is not in {guest.BIN} (a build without tests)")
    report = ok(model, "native-tests")
    assert report["failures"] == 0 and report["errors"] == 0, report
    ran = [
        t["name"]
        for suite in report["testsuites"]
        for t in suite["testsuite"]
        if t.get("result") == "COMPLETED" and suite["name"].startswith("Isa")
    ]
    assert ran, "no variant test ran"
    suites = {suite["name"] for suite in report["testsuites"]}
    assert {"Bandit", "Pirate"} <= suites, (
        suites
    )  # the sensitivity co-runners on a CPU without the host's extensions
