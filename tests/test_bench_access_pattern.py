"""bench/access_pattern.py: the kernels it is given, and a record's rate as cycles a vector; and its
C program's bad input (one line on stderr, exit 2)."""

from __future__ import annotations

import argparse
import subprocess

import pytest

import bench_scripts

ap = bench_scripts.load("access_pattern.py", "access_pattern")


@pytest.mark.parametrize(
    "text, parsed",
    [
        ("3:2x4", [(3, "2x4")]),
        ("3:2x4,4:8x2-ring", [(3, "2x4"), (4, "8x2-ring")]),
        ("8:4x2-split-y4", [(8, "4x2-split-y4")]),
    ],
)
def test_kernels_are_radius_and_shape_pairs(text, parsed):
    assert ap.kernels(argparse.ArgumentParser(), text) == parsed


@pytest.mark.parametrize("text", ["2x4", "0:2x4", "9:2x4", "x:2x4", "3:", "3:2x4,"])
def test_a_kernel_without_a_radius_1_to_8_and_a_shape_is_refused(text, capsys):
    with pytest.raises(SystemExit) as e:
        ap.kernels(argparse.ArgumentParser(prog="access_pattern.py"), text)
    assert e.value.code == 2
    assert "RADIUS:SHAPE" in capsys.readouterr().err


def test_a_record_rate_becomes_cycles_a_vector_at_the_mix_clock():
    rec = {
        "result": {
            "mpoints_per_s": 2000.0,
            "incore_model": {"lanes": 16, "mix": {"clock_ghz": 4.0, "cycles_per_vector": 16.0}},
        }
    }
    got = ap.kernel_cycles(rec)
    # 4e9 cycles a second over 2e9 / 16 vectors a second
    assert got["cycles_per_vector"] == pytest.approx(32.0)
    assert got["mix_cycles_per_vector"] == 16.0
    assert got["mpoints_per_s"] == 2000.0


def test_the_kernel_runs_step_by_step_on_one_cpu_in_cache():
    cmd = [str(c) for c in ap.kernel_command("bw", "1", 4, "8x2-ring", 10)]
    assert cmd[:5] == ["bw", "264", "48", "48", "10"]
    assert cmd[cmd.index("--cpus") + 1] == "1"
    assert cmd[cmd.index("--time-block") + 1] == "1"
    assert cmd[cmd.index("--row-shape") + 1] == "8x2-ring"


@pytest.mark.parametrize("args", [[], ["0"], ["0", "16"], ["0", "768", "0"]])
def test_the_pattern_program_refuses_bad_input(args, tmp_path):
    cc = subprocess.run(["cc", "--version"], capture_output=True, check=False)
    if cc.returncode != 0:
        pytest.skip("no C compiler")
    exe = tmp_path / "access_pattern"
    # the widest set every x86-64 CPU of this project's runs has (its bad input is checked before any
    # vector instruction runs)
    subprocess.run(
        ["cc", "-O1", "-mavx", "-o", str(exe), str(bench_scripts.BENCH / "access_pattern.c")], check=True
    )
    run = subprocess.run([str(exe), *args], capture_output=True, text=True, check=False)
    assert run.returncode == 2
    assert len(run.stderr.strip().splitlines()) == 1
    assert run.stdout == ""
