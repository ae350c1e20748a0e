"""The batches of the guests whose emulated CPU lacks the host's extensions: QEMU's `max` (AVX2 and
FMA, no AVX-512) and `Nehalem-v2` (no AVX at all: the build's x86-64-v2 baseline and nothing more).
Each boots once per session; its cases run the portable executables as an older node of a mixed
cluster would: CPU detection, the variants chosen and refused, the dispatch ceiling, and the native
tests whose outcome depends on the variant.
"""

from __future__ import annotations

from vm import guest

# Emulated model -> the variants its CPU executes, widest first.
MODELS = {"max": ["avx2", "generic"], "Nehalem-v2": ["generic"]}
# The native tests that depend on the variant: each kernel's variants against their references,
# the ceiling, the pipelined dot's head at every offset, and the stencil at every radius against a
# reference written apart (the generic loops' every radius where the CPU has no AVX). (The
# time-block depths are exact at every variant on the host, under each ceiling; emulated they would
# take minutes.) The sensitivity co-runners' patterns (non-temporal stores, cache-line flushes) run
# there too.
NATIVE_FILTER = "Isa/*:IsaCeiling*:Engines/Pipeline.TinyArrays*:Radii/*:Iso3dfdOrders.*:Bandit.*:Pirate.*"
NATIVE_TESTS = "bandwall-native-tests"

_results: dict[str, dict[str, guest.Outcome] | Exception] = {}


def bin_path(name: str) -> str:
    return str(guest.BIN / name)


def has_native_tests() -> bool:
    return (guest.BIN / NATIVE_TESTS).exists()


def cases() -> list[guest.Case]:
    stream = [
        bin_path("bandwall-stream"),
        "--kernel",
        "triad",
        "--size",
        "1M",
        "--reps",
        "2",
        "--threads",
        "2",
    ]
    iso = [bin_path("bandwall-iso3dfd"), "37", "29", "41", "2", "13", "7", "9", "compact", "2", "--verify"]
    out = [
        guest.Case("topo", [bin_path("bandwall-topo")]),
        guest.Case("stream-auto", stream),
        guest.Case("stream-avx2", [*stream, "--isa", "avx2"]),
        guest.Case("stream-avx512", [*stream, "--isa", "avx512"]),
        guest.Case("iso3dfd-auto", [*iso, "--json"]),
        # the row kernel's prefetch distance and cache at radius 1, on the variant the guest's CPU runs
        guest.Case("iso3dfd-prefetch", [*iso, "--radius", "1", "--prefetch", "2:L1", "--json"]),
        guest.Case(
            "peak-auto", [bin_path("bandwall-peak"), "--reps", "1", "--seconds", "0.01", "--threads", "1"]
        ),
        # A ceiling above what the CPU runs changes nothing; a generic one caps every kernel.
        guest.Case("topo-ceiling-avx512", [bin_path("bandwall-topo")], env={"BANDWALL_MAX_ISA": "avx512"}),
        guest.Case("stream-ceiling-generic", stream, env={"BANDWALL_MAX_ISA": "generic"}),
    ]
    if has_native_tests():
        # gtest's JSON report, on one line, is the case's record; its exit code the case's.
        run = (
            f"{bin_path(NATIVE_TESTS)} --gtest_filter='{NATIVE_FILTER}' --gtest_output=json:/tmp/gtest.json"
            " > /tmp/gtest.txt 2>&1; rc=$?; tr -d '\\n' < /tmp/gtest.json; echo;"
            " grep '^\\[  FAILED  \\]' /tmp/gtest.txt | tr '\\n' ' ' >&2; exit $rc"
        )
        # An emulated CPU runs the tests tens of times slower: the radii step by step on one thread
        # there (BANDWALL_TESTS_EMULATED); their threads and sweeps run on the host, under each ceiling.
        out.append(guest.Case("native-tests", ["/bin/sh", "-c", run], env={"BANDWALL_TESTS_EMULATED": "1"}))
    return out


def results(model: str) -> dict[str, guest.Outcome]:
    """The outcomes of a one-node guest of the emulated model, booted once per session."""
    return guest.once(_results, model, lambda: guest.boot(1, 2, 512, cases(), cpu=model))
