"""bench/iso3dfd_orders.py's table: how each bandwall run's depth is shown, so that a row whose runs
were step by step's configuration says so."""

from __future__ import annotations

import pytest

import bench_scripts

orders = bench_scripts.load("iso3dfd_orders.py", "orders")


@pytest.mark.parametrize(
    "depth, how, shown",
    [
        (1, "model", "1="),  # the model proposed no sweeps: step by step's configuration
        (1, "table", "1="),  # the table said sweeps do not pay here
        (1, "cached", "1k"),  # an earlier run's race kept depth 1
        (1, "race", "1"),  # this run raced and kept one step
        (4, "race and model", "4"),
        (7, "table", "7"),  # the table's sweeps: not step by step's configuration
        (6, "cached", "6k"),
    ],
)
def test_a_depth_says_whether_the_run_raced(depth, how, shown):
    assert orders.depth_mark({"depth": depth, "depth_how": how}) == shown


@pytest.mark.parametrize(
    "steals, shown",
    [
        ([], "-"),
        ([None, None], "-"),
        ([0.0, 0.004], "0% (0/2)"),
        ([0.02, None, 0.0, 0.13], "13% (2/3)"),
        ([0.01], "1% (1/1)"),  # a hundredth counts
    ],
)
def test_the_hosts_steal_over_a_rows_runs(steals, shown):
    assert orders.steal_cell([{"steal": s} for s in steals]) == shown


@pytest.mark.parametrize(
    "defaults, singles, shown",
    [
        # rates and roofs of the runs, round by round: medians against medians
        ([(300, 1000), (500, 1000)], [(200, 800), (300, 1200)], "40% of 1000, 25% of 1000"),
        ([(300, None)], [(200, 1000)], "-"),  # a record without its kernel in L2: no figure
        ([(300, 1000)], [], "-"),
    ],
)
def test_the_runs_against_their_kernel_in_l2(defaults, singles, shown):
    def runs(pairs):
        return [{"mpoints_per_s": mp, "kernel_bound": top} for mp, top in pairs]

    assert orders.in_l2({"bandwall": runs(defaults), "step by step": runs(singles)}) == shown
