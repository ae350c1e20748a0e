"""bench/iso3dfd_builds.py: builds, or option sets of one build, alternated and judged by the
decision rule, with made-up runs (no program runs)."""

from __future__ import annotations

import pytest

import bench_scripts

bb = bench_scripts.load("iso3dfd_builds.py", "iso3dfd_builds")
common = bb.common


@pytest.fixture
def exe(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("")
    b.write_text("")
    return str(a), str(b)


@pytest.mark.parametrize(
    "sets, expected",
    [
        ([], {"A": ("A", []), "B": ("B", [])}),
        ([("d6", ["--time-block", "6"]), ("d3", [])], {"d6": ("A", ["--time-block", "6"]), "d3": ("A", [])}),
    ],
)
def test_programs_are_builds_or_a_build_with_each_option_set(sets, expected):
    builds = ["A", "B"] if not sets else ["A"]
    assert bb.programs(builds, sets) == expected


def test_several_builds_with_option_sets_are_named_by_both():
    got = bb.programs(["A", "B"], [("x", ["--x"]), ("y", [])])
    assert list(got) == ["A x", "A y", "B x", "B y"] and got["B x"] == ("B", ["--x"])


@pytest.mark.parametrize(
    "argv, says",
    [
        (["{a}"], "at least two"),
        (["{a}", "--with", "d6=--time-block 6"], "at least two"),
        (["{a}", "--with", "--time-block 6", "--with", "x=--y"], "LABEL=OPTIONS"),
        (["{a}", "--with", "d=--x", "--with", "d=--y"], "its own label"),
        (["/no/such/file", "{a}"], "no executable"),
        (["{a}", "{b}", "--rounds", "2"], "at least 3"),
        (["{a}", "{b}", "--rate", "fast"], "invalid choice"),
    ],
)
def test_bad_arguments_say_one_line_and_exit_2(exe, capsys, argv, says):
    with pytest.raises(SystemExit) as e:
        bb.parse([x.format(a=exe[0], b=exe[1]) for x in argv])
    assert e.value.code == 2
    assert says in capsys.readouterr().err


def test_option_sets_alternate_and_the_rule_judges_them_within_each_class_of_probes(exe, monkeypatch, capsys):
    """Two option sets of one build over 10 rounds: each run gets the positional arguments, its set's
    options and --threads; the whole run's rate with --rate run; rounds split by the probes (one L3
    in the first five rounds, two in the last five)."""
    one, two = common.LineTrip(60.0, True), common.LineTrip(300.0, False)
    seen, probes = [], iter([one, one] * 5 + [two, two] * 5)

    def record(cmd, **k):
        seen.append(cmd)
        fast = "6" in cmd
        return {"result": {"mpoints_per_s": 1.0, "run": {"mpoints_per_s": 120.0 if fast else 100.0}}}

    monkeypatch.setattr(common, "record", record)
    monkeypatch.setattr(common, "llc_probe", lambda topo, cpus, samples=3: next(probes))
    bb.main(
        [
            exe[0],
            "--rounds",
            "10",
            "--rate",
            "run",
            "--probe",
            "--args",
            "262 262 262 40 auto auto auto --radius 3",
        ]
        + ["--with", "d3=--time-block 3", "--with", "d6=--time-block 6"]
    )
    assert seen[0] == [
        exe[0],
        *"262 262 262 40 auto auto auto --radius 3 --time-block 3 --threads 2 --json".split(),
    ]
    out = capsys.readouterr().out
    assert "the whole run's MPoints/s" in out
    assert "every round: 10" in out and "one last-level cache: 5" in out and "says two: 5" in out
    d6 = [line for line in out.splitlines() if line.startswith("d6")]
    assert len(d6) == 3 and all("1.20x" in line and "faster" in line for line in d6)
