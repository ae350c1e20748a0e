"""The races the benches that fill the table of measured choices run (bench/iso3dfd_kernel_choices.py,
bench/sweeps_race.py): candidates in rounds whose order rotates, the project's decision rule over
their paired rates, a winner confirmed by a second race of it alone against the default and held
against the row's earlier choice unless it wins two more in a row, and the table entry that keeps the figures, the
decision and those races.

A script imports it as `import choice_races` (bench/ is first on its path, as for `common`).
"""

from __future__ import annotations

import statistics
import sys

import common


def settle(names: list[str], rates: dict[str, list[float]], again, label: str, held: str | None = None):
    """The decision rule over the names' paired rates, names[0] the default; a winner then races the
    default again, alone (again(pair) gives their rates), and stands only when that second race settles
    on it too: among many candidates one passes the rule by chance. held: what the table's row chose
    before this race; where the race settles on another name, the newcomer takes the row only when it
    beats the row's in races of the two alone (hold_unless_beaten), so that two candidates within
    noise of each other (both faster than the default, say) do not take turns from one run of the
    bench to the next (at radius 6 on the Emerald Rapids guest the 5x1 ring won one race and 2x4 the
    next, 1.05x [0.96-1.10] the ring head to head inside one run). Returns the name chosen, the first
    decision, the second race's record under `label` (None when the default won the first) and the
    races against the row's (None when there were none)."""
    from bandwall.core import decide

    d = decide.choose_best(names, [rates[k] for k in names], 0)
    won, confirm, standing = names[d.chosen], None, None
    if won != names[0]:
        won, confirm = head_to_head([names[0], won], again, **{label: won})
    if held in names and held != won:
        won, standing = hold_unless_beaten(held, won, again)
    return won, d, confirm, standing


# How many races in a row of the two alone a newcomer must win to replace what a row chose before.
# One race settles at the decision rule's confidence, so about one in twenty would let a newcomer no
# faster take the row, and a bench fills dozens of entries a run: on the Zen 4 guest the campaign
# moved radius 3's sweeps from depth 6 to 3 on one race, 1.41x (1.02 to 1.55 over 10 paired rounds);
# over 40 later rounds depth 3 ran 0.94x depth 6 in the 26 the two vCPUs shared an L3 and 1.34x in
# the 12 they did not (bench/results/2026-12-07-zen4-unseat.md).
# As a run keeps sweeps only after two races in a row (kRacesToKeepSweeps, native/iso3dfd/timemodel.hpp).
UNSEAT_RACES = 2


def hold_unless_beaten(held: str, raced: str, again) -> tuple[str, dict]:
    """The row's earlier choice `held` against a newcomer `raced`, alone (again(pair) gives their
    rates), held as the default: raced takes the row only when it wins UNSEAT_RACES races in a row;
    the first race that keeps held ends it. Returns the name kept and the first race's record
    (head_to_head's, with held and raced), the later races' records under `again` in order."""
    won, standing = head_to_head([held, raced], again, held=held, raced=raced)
    later = []
    while won == raced and len(later) + 1 < UNSEAT_RACES:
        won, rec = head_to_head([held, raced], again)
        later.append(rec)
    if later:
        standing["again"] = later
    return won, standing


def head_to_head(pair: list[str], again, **fields) -> tuple[str, dict]:
    """pair[1] against pair[0] alone (again(pair) gives their rates), pair[0] the default: the name the
    decision rule keeps, and the race's record (fields, each side's figures and spread, the verdict)."""
    from bandwall.core import decide

    rerun = again(pair)
    c = decide.choose_best(pair, [rerun[k] for k in pair], 0)
    return pair[c.chosen], {
        **fields,
        "figures": {k: round(statistics.median(v), 1) for k, v in rerun.items()},
        "runs": {k: common.spread(v) for k, v in rerun.items()},
        "decisive": c.decisive,
        "why": c.why,
    }


def entry_of(
    name: str, names: list[str], rates: dict, d, confirm, shown=lambda k: k, standing=None, **fields
) -> dict:
    """A table entry: the fields, each candidate's figures and spread, the decision, the second race
    and the third against the row's earlier choice (incumbent_race), where they ran."""
    out = {
        **fields,
        "figures": {shown(k): round(statistics.median(rates[k]), 1) for k in names},
        "runs": {shown(k): common.spread(rates[k]) for k in names},
        "decision": {"chosen": shown(name), "default": shown(names[0]), "decisive": d.decisive, "why": d.why},
    }
    if confirm:
        out["second_race"] = confirm
    if standing:
        out["incumbent_race"] = {
            **standing,
            "held": shown(standing["held"]),
            "raced": shown(standing["raced"]),
        }
    return out


def said(head: str, names: list[str], rates: dict, confirm, shown=lambda k: k, standing=None) -> None:
    print(
        head
        + "  "
        + "  ".join(f"{shown(k)} {common.spread(rates[k])}" for k in names)
        + (f"  (second race: {confirm['why']})" if confirm else "")
        + (f"  (against the row's {shown(standing['held'])}: {against(standing)})" if standing else ""),
        file=sys.stderr,
    )


def against(standing: dict) -> str:
    """The verdicts of the races against the row's earlier choice (hold_unless_beaten), in order."""
    return "; then ".join(r["why"] for r in [standing, *standing.get("again", [])])


def race(a, names: list[str], run) -> dict[str, list[float]]:
    """Each name's MPoints/s round by round, the runs rotated round by round."""
    recs = common.alternate({s: (lambda s=s: run(s)) for s in names}, a.rounds, pause=a.pause)
    return {s: [r["result"]["mpoints_per_s"] for r in rs] for s, rs in recs.items()}


def more_if_unsettled(pick: list[str], measure) -> dict[str, list[float]]:
    """measure(pick)'s rates, and a second measure's after them when the first leave a race unsettled
    (the median beyond the rule's margin, the interval not: the host's bandwidth moves within minutes),
    pick[0] the default each other name is compared with."""
    from bandwall.core import decide

    rates = measure(pick)
    if any(decide.unsettled(decide.ratio_interval(rates[k], rates[pick[0]])) for k in pick[1:]):
        more = measure(pick)
        rates = {k: rates[k] + more[k] for k in pick}
    return rates
