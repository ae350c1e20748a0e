"""bench/iso3dfd_time_model.py's share of the last-level cache: the sizes it climbs, and the largest
size up to which every size runs beyond half-way from memory's rate to the cache's by the decision
rule (the entry's llc_bytes, which the temporal-blocking model plans with when smaller than the
reported cache)."""

from __future__ import annotations

import pytest

import bench_scripts

tm = bench_scripts.load("iso3dfd_time_model.py", "time_model")

MiB = 1 << 20
ROUNDS = 9


def test_the_sizes_climb_by_the_square_root_of_two_within_the_reported_cache():
    sizes = tm.ladder(16 * MiB, 480 * MiB)
    assert sizes[0] == 16 * MiB
    assert all(s % 64 == 0 for s in sizes)
    assert all(b / a == pytest.approx(2**0.5, rel=1e-3) for a, b in zip(sizes, sizes[1:]))
    assert 3 * sizes[-1] <= 480 * MiB < 3 * sizes[-1] * 2**0.5
    assert tm.ladder(16 * MiB, 32 * MiB) == [16 * MiB]  # the first size even beyond it


def rounds(rate: float) -> list[float]:
    return [rate * (1 + 0.01 * (i % 3 - 1)) for i in range(ROUNDS)]


@pytest.mark.parametrize(
    ("rates", "over_memory", "held", "flags"),
    [
        # held up to the third size; the fifth above the line again does not count after a fall
        ([60, 59, 55, 38, 60], 2.0, 3 * 3 * MiB, [True, True, True, False, False]),
        # every size held: the reported cache stands
        ([60, 60, 60, 60, 60], 2.0, None, [True] * 5),
        # the first size already below the line
        ([40, 60, 60, 60, 60], 2.0, None, [False] * 5),
        # a cache no faster than memory beyond the margin holds nothing
        ([30.3, 30.3, 30.3, 30.3, 30.3], 1.01, None, [False] * 5),
    ],
)
def test_the_share_held_is_the_last_size_of_an_unbroken_run_above_half_way(rates, over_memory, held, flags):
    rungs = {(k + 1) * MiB: rounds(r) for k, r in enumerate(rates)}
    got, rows, line = tm.held_bytes(rungs, rounds(30.0), over_memory, 64 * MiB)
    assert line == pytest.approx(over_memory**0.5)
    assert got == held
    assert [r["held"] for r in rows] == flags
    assert [r["bytes"] for r in rows] == [3 * s for s in sorted(rungs)]


def test_a_size_held_only_in_some_rounds_or_too_few_rounds_is_not_held():
    memory = rounds(30.0)
    wavering = [60.0 if i % 2 else 35.0 for i in range(ROUNDS)]  # half the rounds below the line
    got, rows, _ = tm.held_bytes({MiB: rounds(60.0), 2 * MiB: wavering}, memory, 2.0, 64 * MiB)
    assert got == 3 * MiB and [r["held"] for r in rows] == [True, False]
    got, rows, _ = tm.held_bytes({MiB: [60.0, 60.0]}, [30.0, 30.0], 2.0, 64 * MiB)
    assert got is None and not rows[0]["held"]
