"""bench/isa_choices.py's choice of a kernel's variant: the decision rule from the machine model's
default, a winner confirmed by a second race of it alone against the default, and the row's earlier
variant held against a newcomer unless beaten alone, so that one race passing the rule by chance
among a run's many comparisons does not change the row."""

from __future__ import annotations

import types

import pytest

import bench_scripts

ic = bench_scripts.load("isa_choices.py", "isa_choices")


def choose(monkeypatch, races: list[dict[str, float]], held: str | None = None):
    """isa_choices.choose on stream.triad.nt at 1 and 2 threads with made-up runs: race k of `races`
    gives each variant it runs that figure in every round (0.9x-1.1x of it, round by round alike for
    every variant, so the rounds pair). Returns the choice, the second and third races, and the
    variants each race ran."""
    left, calls, shape = list(races), [], [1.0, 1.1, 0.9, 1.05, 0.95]

    def fake_measure(a, key, threads, pick):
        calls.append(list(pick))
        got = left.pop(0)
        runs = {(f"{t}t", i): [got[i] * f for f in shape] for t in threads for i in pick}
        return runs, {i: [got[i] / got[pick[0]] * f for f in shape] for i in pick}

    monkeypatch.setattr(ic, "measure", fake_measure)
    a = types.SimpleNamespace(bindir=bench_scripts.BENCH, rounds=5)
    isas = ["avx512", "avx2", "generic"]
    _, _, best, _, confirm, standing = ic.choose(a, "stream.triad.nt", [1, 2], isas, isas, held)
    assert not left  # every race offered was run
    return best, confirm, standing, calls


LEVEL = {"avx512": 100.0, "avx2": 101.0, "generic": 99.0}
AVX2 = {"avx512": 100.0, "avx2": 116.0, "generic": 99.0}


@pytest.mark.parametrize(
    "races, held, best, second, third",
    [
        ([LEVEL], None, "avx512", False, False),  # nothing beyond noise: the default stands
        ([AVX2, {"avx512": 100.0, "avx2": 116.0}], None, "avx2", True, False),  # confirmed alone
        ([AVX2, {"avx512": 100.0, "avx2": 100.5}], None, "avx512", True, False),  # not confirmed
        # the row's generic holds against the confirmed avx2 unless avx2 beats it alone twice in a row
        (
            [AVX2, {"avx512": 100.0, "avx2": 116.0}, {"generic": 100.0, "avx2": 101.0}],
            "generic",
            "generic",
            True,
            True,
        ),
        (
            [
                AVX2,
                {"avx512": 100.0, "avx2": 116.0},
                {"generic": 100.0, "avx2": 120.0},
                {"generic": 100.0, "avx2": 100.5},
            ],
            "generic",
            "generic",
            True,
            True,
        ),
        (
            [AVX2, {"avx512": 100.0, "avx2": 116.0}, *[{"generic": 100.0, "avx2": 120.0}] * 2],
            "generic",
            "avx2",
            True,
            True,
        ),
        ([AVX2, {"avx512": 100.0, "avx2": 116.0}], "avx512", "avx2", True, False),  # the row's is the default
        ([AVX2, {"avx512": 100.0, "avx2": 116.0}], "avx2", "avx2", True, False),  # the row's won again
    ],
)
def test_a_variant_replaces_the_default_only_when_two_races_say_so_and_the_rows_holds(
    monkeypatch, races, held, best, second, third
):
    got, confirm, standing, calls = choose(monkeypatch, races, held)
    assert got == best
    assert (confirm is not None, standing is not None) == (second, third)
    assert calls[0] == ["avx512", "avx2", "generic"]  # every variant
    if second:
        assert calls[1] == ["avx512", "avx2"] and confirm["variant"] == "avx2"
    if third:
        assert calls[2] == ["generic", "avx2"] and standing["held"] == "generic"


def test_the_others_race_the_default_fastest_first(monkeypatch):
    """avx2 and generic both beyond noise of the default, generic a little ahead of avx2 (within
    noise of it): the entry names generic, the fastest of its figures, though avx2 came first."""
    fast = {"avx512": 100.0, "avx2": 116.0, "generic": 117.0}
    got, _, _, calls = choose(monkeypatch, [fast, {"avx512": 100.0, "generic": 117.0}])
    assert got == "generic" and calls[1] == ["avx512", "generic"]
