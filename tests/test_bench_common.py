"""bench/common.py, the helper every bench script shares: rounds alternate their order and keep each
round's results paired, the results header names the CPU, a missing executable stops the script
with one line and exit 2; and every script in bench/ uses the helper and answers --help."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bandwall.core import native

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
# modules the scripts import, not scripts
HELPERS = {
    "common.py",
    "choice_table.py",
    "choice_races.py",
    "sweeps_race.py",
    "shape_races.py",
    "swept_races.py",
}
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if p.name not in HELPERS)

_spec = importlib.util.spec_from_file_location("bench_common", BENCH / "common.py")
common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(common)

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC 9R14 96-Core Processor
flags\t\t: fpu avx2 avx512f

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC 9R14 96-Core Processor
"""


def test_order_rotates_and_reverses():
    names = ["a", "b", "c"]
    assert [common.order(names, r) for r in range(4)] == [
        ["a", "b", "c"],
        ["b", "c", "a"],
        ["c", "a", "b"],
        ["a", "b", "c"],
    ]
    assert [common.order(names, r, reverse=True) for r in range(3)] == [
        ["a", "b", "c"],
        ["c", "b", "a"],
        ["a", "b", "c"],
    ]


def test_rounds_alternate_the_order_and_pair_each_rounds_results():
    calls: list[str] = []
    count = {"a": 0, "b": 0, "c": 0}

    def runner(name):
        def run():
            calls.append(name)
            count[name] += 1
            return (name, count[name])  # the round this run belongs to

        return run

    ends = []
    got = common.alternate({n: runner(n) for n in "abc"}, 3, after=lambda r, g: ends.append(r))
    # every round runs each runner once, a different one first each round
    rounds = [calls[i : i + 3] for i in range(0, 9, 3)]
    assert rounds == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    assert ends == [0, 1, 2]
    # results[name][r] is round r's: the pairs of one round line up for per-round ratios
    assert got == {n: [(n, 1), (n, 2), (n, 3)] for n in "abc"}
    assert common.ratios([2.0, 3.0], [1.0, 2.0]) == [2.0, 1.5]
    assert common.spread([1.0, 1.05, 0.98], "{:.3f}", "x") == "1.000x [0.980-1.050]"


def test_header_names_the_cpu_command_and_revision(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text(CPUINFO)
    text = common.header(["bench/x.py", "--rounds", "1"], cpuinfo=info)
    lines = text.splitlines()
    assert lines[0].startswith("- date: 20") and lines[0].endswith(" UTC")
    assert lines[1] == (
        f"- CPU: AMD EPYC 9R14 96-Core Processor (AuthenticAMD family 25 model 17), "
        f"{len(os.sched_getaffinity(0))} CPUs"
    )
    assert lines[2] == f"- command: `{Path(sys.executable).name} bench/x.py --rounds 1`"
    assert lines[3].startswith("- revision: ") and lines[3] != "- revision: "
    out = tmp_path / "results.md"
    common.append_results(out, "| a | b |", "### title")
    assert out.read_text().startswith("\n### title\n\n- date: ")
    assert out.read_text().endswith("\n\n| a | b |\n")


def test_a_missing_executable_is_one_line_and_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        common.tool(tmp_path, "bandwall-nothing")
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bandwall-nothing not found in" in err and str(tmp_path) in err
    exe = tmp_path / "bandwall-something"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert common.tool(tmp_path, "bandwall-something") == str(exe)


def test_a_script_with_a_missing_executable_exits_2_with_one_line(tmp_path):
    """A whole script: its --bindir has no bandwall-iso3dfd."""
    r = subprocess.run(
        [sys.executable, str(BENCH / "iso3dfd_shapes.py"), "--bindir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "bandwall-iso3dfd not found" in r.stderr


def test_parse_checks_rounds_and_exports_the_bindir(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BANDWALL_BINDIR", "")  # recorded, so that the folder parse exports goes at the end
    monkeypatch.delenv("BANDWALL_BINDIR")
    p = common.parser("doc", rounds=5, min_rounds=3, results=True)
    assert p.get_default("bindir") == common.DEFAULT_BINDIR == ROOT / ".venv" / "bin"
    a = common.parse(p, ["--bindir", str(tmp_path), "--results", "r.md"])
    assert (a.rounds, a.bindir, a.results) == (5, tmp_path.resolve(), "r.md")
    assert os.environ["BANDWALL_BINDIR"] == str(tmp_path.resolve())
    with pytest.raises(SystemExit) as e:
        common.parse(p, ["--rounds", "2"])
    assert e.value.code == 2 and "at least 3" in capsys.readouterr().err
    bare = common.parse(common.parser("doc", rounds=None, bindir=False), [])
    assert not hasattr(bare, "rounds") and not hasattr(bare, "bindir")


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("1,x", "is not whole numbers"),
        ("", "is not whole numbers"),
        ("0,2", "must lie in 1..8"),
        ("9", "1..8"),
    ],
)
def test_radii_refuse_bad_input_in_one_line(text, fragment, capsys):
    p = common.parser("doc", rounds=None, bindir=False)
    assert common.radii(p, "1,2,8") == [1, 2, 8]
    with pytest.raises(SystemExit) as e:
        common.radii(p, text)
    err = capsys.readouterr().err
    assert (
        e.value.code == 2 and fragment in err and len(err.strip().splitlines()) == 2
    )  # usage, then the line


def test_record_stops_on_a_failed_run_or_check():
    ok = [sys.executable, "-c", "print('noise'); print('{\"result\": 1}')"]
    assert common.record(ok) == {"result": 1}
    fail = [sys.executable, "-c", "import sys; sys.exit('first\\nlast line')"]
    with pytest.raises(SystemExit) as e:
        common.record(fail)
    assert str(e.value.code).endswith("failed: last line")
    invalid = [sys.executable, "-c", 'print(\'{"validation": {"passed": false}}\')']
    with pytest.raises(SystemExit, match="its check did not pass"):
        common.record(invalid, valid=True)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_bench_script_uses_the_helper_and_answers_help(script):
    assert "import common" in script.read_text()
    r = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: ")


def test_the_llc_probe_is_bandwalls_own_and_none_where_it_cannot_run(monkeypatch):
    """common.llc_probe reads bandwall-topo --llc-probe's record: the round trip and bandwall's own
    verdict (no threshold of the benches' own); a probe that fails (a CPU it may not use) gives None,
    and the bench goes on."""
    allowed = sorted(os.sched_getaffinity(0))
    bindir = Path(native.executable("bandwall-topo")).parent
    assert common.llc_probe(bindir, [allowed[0], os.cpu_count() + 64]) is None
    if len(allowed) < 2:
        pytest.skip("one CPU: no two to probe")
    trip = common.llc_probe(bindir, allowed[:2], samples=2)
    if trip is None:
        pytest.skip("the two threads did not answer each other in time")
    assert trip.ns > 0 and isinstance(trip.one_llc, bool)


def test_a_scratch_folder_is_the_runs_own_and_gone_at_exit(tmp_path):
    """common.scratch: a fresh folder under the temporary directory (never the user's), removed with
    what it holds when the script exits."""
    code = "import common; f = common.scratch('bw-test-'); (f / 'x').write_text('1'); print(f)"
    env = {**os.environ, "PYTHONPATH": str(BENCH), "TMPDIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    folder = Path(out.stdout.strip())
    assert folder.parent == tmp_path and folder.name.startswith("bw-test-")
    assert not folder.exists()
