"""bandwall interference: the record of a tiny real run (its shape, the verdict, the noise gone
afterwards), the verdict's rule on made-up cases, and bad input as a table. No speed is asserted."""

from __future__ import annotations

import json
import os
import statistics

import pytest

from bandwall.core import records
from bandwall.interference import verdict

NCPU = len(os.sched_getaffinity(0))
TINY = ["--size", "2M", "--reps", "2", "--rounds", "1", "--no-store"]
needs_two = pytest.mark.skipif(NCPU < 2, reason=f"the experiment needs 2 CPUs; this process may use {NCPU}")


def gone(pid: int) -> bool:
    """The process group pid leads no longer exists (its leader reaped, its children ended)."""
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return True
    return False


@needs_two
@pytest.mark.parametrize(
    "noise", [["--noise", "memory"], ["--noise", "periodic", "--noise-placement", "scheduler"]]
)
def test_tiny_run_record_and_noise_gone(run_bandwall, noise):
    p = run_bandwall("interference", "triad", *noise, *TINY, "--format", "json")
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    records.validate(rec)
    c, r = rec["config"], rec["result"]
    assert rec["tool"] == "interference" and c["cores_all"] == NCPU and 1 <= c["cores_knee"] < NCPU
    assert [x["case"] for x in r["cases"]] == ["all-alone", "all-noise", "knee-alone", "knee-noise"]
    assert [x["cores"] for x in r["cases"]] == [NCPU, NCPU, c["cores_knee"], c["cores_knee"]]
    assert all(len(x["values"]) == 1 and x["min"] <= x["median"] <= x["max"] for x in r["cases"])
    # one round measures no spread: no difference can be claimed beyond it
    assert r["verdict"]["answer"] == verdict.NO_DIFFERENCE
    assert rec["validation"]["checked"] is True and rec["validation"]["passed"] is True
    assert len(r["noise_pids"]) == 2 and all(gone(pid) for pid in r["noise_pids"])
    assert (c["noise_cpu"] is None) == (c["noise_placement"] == "scheduler")


@needs_two
def test_command_kernel_plot_and_store(run_bandwall, tmp_path):
    plot = tmp_path / "i.png"
    db = tmp_path / "s.db"
    p = run_bandwall(
        "interference", "--noise", "compute", "--rounds", "1", "--plot", plot, "--db", db, "--format", "json",
        "--", "sh", "-c", "i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["id"] >= 1 and rec["config"]["command"][0] == "sh" and rec["result"]["unit"] == "s"
    assert rec["validation"]["checked"] is False and plot.stat().st_size > 0
    assert all(gone(pid) for pid in rec["result"]["noise_pids"])


def fake(all_noise, knee_noise, higher=True, alone=(10.0, 10.0)):
    cases = []
    for name, vals in (
        (verdict.ALL_ALONE, [alone[0]] * 3),
        (verdict.ALL_NOISE, all_noise),
        (verdict.KNEE_ALONE, [alone[1]] * 3),
        (verdict.KNEE_NOISE, knee_noise),
    ):
        cases.append(
            {
                "case": name,
                "values": vals,
                "median": statistics.median(vals),
                "min": min(vals),
                "max": max(vals),
            }
        )
    return {
        "config": {"higher_is_better": higher, "cores_knee": 1, "cores_all": 2, "surplus_cpus": "1"},
        "result": {"unit": "GB/s" if higher else "s", "cases": cases},
    }


@pytest.mark.parametrize(
    "all_noise, knee_noise, higher, answer",
    [
        ([5.0, 6.0, 7.0, 5.5, 6.5, 6.0], [8.0, 9.0, 10.0, 8.5, 9.5, 9.0], True, verdict.PAYS),
        ([8.0, 9.0, 10.0, 8.5, 9.5, 9.0], [5.0, 6.0, 7.0, 5.5, 6.5, 6.0], True, verdict.DOES_NOT_PAY),
        # paired round by round: faster in some, slower in others
        ([5.0, 9.0, 6.0, 9.5, 5.5, 9.0], [8.0, 6.0, 9.0, 6.5, 8.5, 6.0], True, verdict.NO_DIFFERENCE),
        ([2.0, 2.1, 2.2, 2.0, 2.1, 2.2], [1.0, 1.1, 1.2, 1.0, 1.1, 1.2], False, verdict.PAYS),  # wall time
        ([5.0, 6.0, 7.0], [8.0, 9.0, 10.0], True, verdict.NO_DIFFERENCE),  # 3 rounds: too few for the rule
        ([6.0], [9.0], True, verdict.NO_DIFFERENCE),  # one round
    ],
)
def test_verdict_rule(all_noise, knee_noise, higher, answer):
    """The command's verdict is the decision rule's on the paired rounds, as the report's card is,
    and carries the claim it rests on."""
    v = verdict.verdict(fake(all_noise, knee_noise, higher))
    assert v["answer"] == answer
    (c,) = v["claims"]
    # the claim is on the figure itself: a run time that falls is the speed-up that pays
    up, down = ("rises", "falls") if higher else ("falls", "rises")
    assert c["direction"] == {verdict.PAYS: up, verdict.DOES_NOT_PAY: down}.get(answer, answer)
    assert c["from"]["label"] == "2 of 2 cores" and c["to"]["label"].startswith("1 of 2 cores")
    assert c["rounds"] == len(all_noise) and f"{c['ratio']:.2f}x" in v["text"]
    assert ("advice" in v) == (answer == verdict.PAYS)
    if answer == verdict.PAYS:
        assert any("--core-spec=1" in a for a in v["advice"]) and any("isolcpus=1" in a for a in v["advice"])


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--noise", "dust"], 2, "unknown noise 'dust'"),
        (["--noise", "memory", "--noise-cmd", "sleep 100"], 2, "not both"),
        (["--noise-cmd", " "], 2, "--noise-cmd is empty"),
        (["trid"], 2, "unknown kernel 'trid'"),
        pytest.param(["--knee", "9999"], 2, "must leave a surplus core", marks=pytest.mark.cpus(2)),
        (["--noise-placement", "nowhere"], 2, "nowhere"),
        (["--rounds", "0"], 2, "0"),
        (["--size", "2M", "--", "true"], 2, "a command sizes itself"),
        pytest.param(
            ["--noise-cmd", "false", "--size", "2M", "--reps", "2", "--rounds", "1"],
            1,
            "noise command 'false' ended",
            marks=pytest.mark.cpus(2),
        ),
        pytest.param(
            ["--noise-cmd", "no-such-noise-x", "--size", "2M", "--rounds", "1"],
            1,
            "cannot start the noise",
            marks=pytest.mark.cpus(2),
        ),
        pytest.param(
            ["--rounds", "1", "--", "sh", "-c", "exit 3"], 1, "exited with code 3", marks=pytest.mark.cpus(2)
        ),
        pytest.param(
            ["--size", "2M", "--reps", "2", "--rounds", "1"],
            1,
            "validation of triad failed",
            marks=pytest.mark.cpus(2),
        ),
        # one CPU: the experiment has no surplus core to leave free
        pytest.param(
            ["--size", "2M", "--rounds", "1"],
            2,
            "needs at least 2 CPUs",
            marks=pytest.mark.skipif(
                len(os.sched_getaffinity(0)) >= 2, reason="a process with one CPU is refused"
            ),
        ),
    ],
)
def test_bad_input(run_bandwall, args, code, message):
    env = {"BANDWALL_STREAM_INJECT_ERROR": "1"} if message == "validation of triad failed" else None
    p = run_bandwall("interference", *args, "--no-store", env=env)
    assert p.returncode == code, p.stderr
    assert message in p.stderr and "Traceback" not in p.stderr
