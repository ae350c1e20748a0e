"""bandwall pin --compare's verdict from constructed rounds (no program runs): the decision rule on
the paired rounds of bound threads against unbound ones and against every thread on one CPU, the
words rendered from its claims, the terminal and JSON views, the default rounds, and the report's
pinning summary. The runs themselves are test_pin.py's."""

from __future__ import annotations

import json
import statistics

import pytest

from bandwall.pinning import pin as pinmod
from conftest import run_in_process

# --compare's verdict from constructed rounds (no program runs): the decision rule on the paired rounds
# of bound threads against unbound ones and against every thread on one CPU, the words from its claims.


def compare_record(bound: list[float], one: list[float], unbound: list[float]) -> dict:
    """A pin-compare record built by the same function as compare() from each mode's rounds."""
    from bandwall.core import records
    from conftest import SAMPLE_PROVENANCE

    rounds = {"bound": bound, "one-cpu": one, "unbound": unbound}
    result = pinmod.compare_result(
        "runs per second (from wall time)",
        "runs/s",
        2,
        {
            name: {"title": name, "cpus": [], "rounds": v, "wall_s": [1 / x if x > 0 else 1.0 for x in v]}
            for name, v in rounds.items()
        },
    )
    return {
        "schema_version": 1,
        "tool": "pin-compare",
        "config": {"command": ["./app"], "rounds": len(bound), "modes": list(rounds)},
        "result": result,
        "validation": records.not_applicable("compares the speed of runs under three bindings"),
        "provenance": dict(SAMPLE_PROVENANCE),
    }


FAST = [10.0, 10.2, 9.9, 10.1, 10.0]
WITHIN = [10.05, 9.95, 10.0, 10.1, 9.9]
SLOW = [5.0, 5.1, 4.9, 5.05, 5.0]
FOM = "runs per second (from wall time)"
NOISE = "no difference beyond noise"
COMPARE_CASES = [
    # id, bound, one-cpu, unbound, then for the claim against unbound and the one against one CPU:
    # its direction, the answer and how its sentence begins
    ("bound faster every round", FAST, SLOW, [6.0, 6.1, 5.9, 6.0, 6.2],
     ("rises", "pays", "binding one thread per CPU pays beside leaving threads to the scheduler: "
      f"{FOM} rises from unbound threads to bound threads (6.00 to 10.0 runs/s; 1.67x"),
     ("rises", "pays", "binding one thread per CPU pays beside putting every thread on one CPU: "
      f"{FOM} rises from every thread on one CPU to bound threads (5.00 to 10.0 runs/s; 2.00x")),
    ("within noise", WITHIN, FAST, FAST,
     (NOISE, NOISE, f"{NOISE} in {FOM} between unbound threads and bound threads"),
     (NOISE, NOISE, f"{NOISE} in {FOM} between every thread on one CPU and bound threads")),
    ("reversed", SLOW, FAST, FAST,
     ("falls", "costs", "binding one thread per CPU costs beside leaving threads to the scheduler: "
      f"{FOM} falls from unbound threads to bound threads"),
     ("falls", "costs", "binding one thread per CPU costs beside putting every thread on one CPU: "
      f"{FOM} falls from every thread on one CPU to bound threads")),
    ("one round only", [10.0], [5.0], [5.0],
     (NOISE, NOISE, f"{NOISE} in {FOM} between unbound threads and bound threads"),
     (NOISE, NOISE, f"{NOISE} in {FOM} between every thread on one CPU and bound threads")),
]  # fmt: skip


@pytest.mark.parametrize(
    "bound, one, unbound, vs_unbound, vs_one", [pytest.param(*c[1:], id=c[0]) for c in COMPARE_CASES]
)
def test_compare_verdict_is_the_rule_on_the_paired_rounds(bound, one, unbound, vs_unbound, vs_one):
    from bandwall.core import records

    rec = compare_record(bound, one, unbound)
    assert records.problems(rec) == []
    r = rec["result"]
    assert len(r["claims"]) == 2
    said = r["verdict"]["claims_said"]
    assert r["verdict"]["text"] == "; ".join(said)
    for c, answer, line, (direction, want, begins) in zip(
        r["claims"], r["verdict"]["answers"], said, (vs_unbound, vs_one)
    ):
        assert c["figure"] == FOM and c["unit"] == "runs/s" and c["rounds"] == len(bound)
        assert c["to"]["label"] == "bound threads"
        assert (c["direction"], answer) == (direction, want)
        assert line.startswith(begins), line
        assert ("too few for a 90% interval" in line) == (len(bound) < 5)
    if len(bound) == 1:
        assert "over 1 paired rounds, too few" in said[0]
    # the ratios of the medians stay for older readers
    assert r["bound_over_unbound"] == pytest.approx(statistics.median(bound) / statistics.median(unbound))
    assert r["bound_over_one_cpu"] == pytest.approx(statistics.median(bound) / statistics.median(one))


def test_compare_view_prints_the_verdict_lines_and_json_carries_the_claims(capsys):
    import io

    from bandwall.display import console, emit
    from bandwall.views.pin import render_compare

    rec = compare_record(FAST, SLOW, [6.0, 6.1, 5.9, 6.0, 6.2])
    con = console(file=io.StringIO(), width=400)
    render_compare(con, rec)
    shown = con.file.getvalue()
    for line in rec["result"]["verdict"]["claims_said"]:
        assert line in shown
    assert "bound / unbound" not in shown  # the bare ratio is no verdict
    emit(rec, "json", lambda con: None)
    out = json.loads(capsys.readouterr().out)
    assert out["result"]["claims"] == rec["result"]["claims"]
    assert out["result"]["verdict"] == rec["result"]["verdict"]


def test_compare_view_of_an_older_record_shows_the_ratios():
    import io

    from bandwall.display import console
    from bandwall.views.pin import render_compare

    rec = compare_record(FAST, SLOW, SLOW)
    del rec["result"]["claims"], rec["result"]["verdict"]
    con = console(file=io.StringIO(), width=400)
    render_compare(con, rec)
    assert "bound / unbound: 2.00x" in con.file.getvalue()


def test_compare_rounds_default_to_the_rule(monkeypatch, capsys):
    from bandwall.core import decide

    asked = {}

    def fake(command, fom, rounds, *args, **kw):
        asked["rounds"] = rounds
        return compare_record(FAST[:rounds], SLOW[:rounds], SLOW[:rounds])

    monkeypatch.setattr(pinmod, "compare", fake)
    got, out, err = run_in_process(
        ["pin", "--compare", "--no-store", "--format", "json", "--", "true"], capsys
    )
    assert got == 0, err
    assert asked["rounds"] == decide.rule().rounds
    assert json.loads(out)["result"]["verdict"]["answers"] == ["pays", "pays"]
    got, out, err = run_in_process(
        ["pin", "--compare", "--rounds", "2", "--no-store", "--format", "json", "--", "true"], capsys
    )
    assert got == 0, err
    assert asked["rounds"] == 2
    assert json.loads(out)["result"]["verdict"]["answers"] == [
        "no difference beyond noise",
        "no difference beyond noise",
    ]
    got, _out, err = run_in_process(["pin", "--no-store", "--rounds", "2", "--", "true"], capsys)
    assert got == 2 and "go with --compare" in err


def test_the_reports_pinning_summary_says_the_records_verdict():
    """The report's pinning section states each spin's verdict as the record words it (rendered from
    its claims), and a record stored before the claims gets the same words from its rounds."""
    from bandwall.report.sections import pinning

    passive = compare_record(FAST, SLOW, [6.0, 6.1, 5.9, 6.0, 6.2])["result"]
    spin = compare_record(WITHIN, FAST, FAST)["result"]
    text = pinning.summary({"passive": passive, "spin": spin})
    assert passive["verdict"]["text"] in text and spin["verdict"]["text"] in text
    assert "pays beside putting every thread on one CPU" in text and NOISE in text
    old = {k: v for k, v in spin.items() if k not in ("verdict", "claims")}
    assert pinning.verdict(old) == spin["verdict"]["text"]
