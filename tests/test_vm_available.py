"""Under CI the simulated NUMA guests must run: their placement tests skip only where QEMU or cpio
cannot be had, and a CI run that skipped them would prove nothing about placement."""

from __future__ import annotations

import os

import pytest

from vm import placement_cases as pc


@pytest.mark.skipif(os.environ.get("CI") != "true", reason="only a CI run (CI=true) must have the guests")
def test_ci_runs_the_numa_guests():
    assert pc.skip_reason() is None
