"""The front end's decision rule (bandwall.core.decide) against the table of cases the native rule is
held to as well (tests/fixtures/decision_cases.json), and the rule the manifest carries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bandwall.core import decide

CASES = json.loads((Path(__file__).parent / "fixtures" / "decision_cases.json").read_text())
RULE = decide.Rule.from_json(CASES["rule"])


def test_the_manifests_rule_is_the_one_the_cases_assume():
    assert decide.rule() == RULE


@pytest.mark.parametrize("c", CASES["coverage"], ids=lambda c: f"n{c['n']}k{c['k']}")
def test_coverage(c):
    assert decide.coverage(c["n"], c["k"]) == pytest.approx(c["coverage"], abs=1e-12)


@pytest.mark.parametrize("c", CASES["intervals"], ids=lambda c: c["name"])
def test_intervals(c):
    i = decide.ratio_interval(c["a"], c["b"], RULE)
    assert (i.median, i.lo, i.hi) == pytest.approx((c["median"], c["lo"], c["hi"]), abs=1e-9)
    assert i.coverage == pytest.approx(c["coverage"], abs=1e-12)
    assert decide.verdict(i, RULE) == c["verdict"]
    assert decide.unsettled(i, RULE) == c["unsettled"]


@pytest.mark.parametrize("c", CASES["best"], ids=lambda c: c["name"])
def test_best(c):
    ch = decide.choose_best(c["names"], c["rates"], c["default"], RULE)
    assert (c["names"][ch.chosen], ch.decisive) == (c["chosen"], c["decisive"])
    assert ch.why


@pytest.mark.parametrize("c", CASES["fewest"], ids=lambda c: c["name"])
def test_fewest(c):
    ch = decide.choose_fewest(c["counts"], c["rates"], RULE)
    assert (c["counts"][ch.chosen], ch.decisive) == (c["chosen"], c["decisive"])


def test_mismatched_candidates_are_refused():
    with pytest.raises(ValueError):
        decide.choose_best(["a", "b"], [[1.0]], 0, RULE)
