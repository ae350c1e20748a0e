"""bench/iso3dfd_kernel_choices.py's entries: racing the step shapes again keeps the knobs measured at
a variant's shape (prefetch, the sweeps' shape, the share of L2, the team) while that shape stands,
and drops them where it changed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))  # the script imports its helper as `common`, for this load only
try:
    _spec = importlib.util.spec_from_file_location("kernel_choices", BENCH / "iso3dfd_kernel_choices.py")
    kc = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(kc)
finally:
    sys.path.remove(str(BENCH))


def test_knobs_measured_at_a_shape_stay_while_it_stands():
    before = {
        "shapes": {"avx512": {"shape": "2x4"}, "avx2": {"shape": "2x2"}},
        "prefetch": {"avx512": {"rows_ahead": 0}, "avx2": {"rows_ahead": 1}},
        "swept_shapes": {"avx512": {"shape": "2x4"}},
        "teams": {"avx512": {"team": "auto"}},
        "blocks": {"avx2": {"l2_share": 0.5}},
        "isa": "avx512",
    }
    raced = {**before, "shapes": {"avx512": {"shape": "2x4"}, "avx2": {"shape": "2x3"}}}
    out = kc.keep_measured_at(raced, kc.shapes_of(before))
    assert out["prefetch"] == {"avx512": {"rows_ahead": 0}}  # avx2's was measured at 2x2
    assert out["swept_shapes"] == before["swept_shapes"] and out["teams"] == before["teams"]
    assert "blocks" not in out  # only avx2's, whose shape changed
    assert out["shapes"] == raced["shapes"] and out["isa"] == "avx512"
    assert kc.keep_measured_at(before, kc.shapes_of(before)) == before
