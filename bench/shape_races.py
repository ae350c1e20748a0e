"""The step shapes raced for a row of the table of measured choices (bench/iso3dfd_kernel_choices.py
--knobs shapes): at a radius, every variant's candidate shapes step by step, run against run or inside
one run (--in-run), a winner confirmed by a second race of whole runs against the variant's compiled
default; then the variant, each at its chosen shape. And what an entry keeps of the knobs measured at
a variant's shape when that shape changes.

A script imports it as `import shape_races` (bench/ is first on its path, as for `common`).
"""

from __future__ import annotations

import statistics
import sys

import common
from choice_races import entry_of, more_if_unsettled, race, said, settle

# The knobs an entry holds per variant that were measured at that variant's step shape.
AT_THE_SHAPE = ("prefetch", "swept_shapes", "blocks", "teams", "sweeps", "sweeps_by_llc")


def shapes_of(entry: dict) -> dict[str, str | None]:
    """The step shape the entry names per variant."""
    return {isa: row.get("shape") for isa, row in entry.get("shapes", {}).items()}


def keep_measured_at(entry: dict, before: dict[str, str | None]) -> dict:
    """entry, after its shapes were raced again, without the knobs of a variant whose shape changed
    (they were measured at the old one); those of the others stay as they were measured."""
    after = shapes_of(entry)
    out = dict(entry)
    for sub in AT_THE_SHAPE:
        if sub in out:
            out[sub] = {isa: row for isa, row in out[sub].items() if before.get(isa) == after.get(isa)}
            if not out[sub]:
                del out[sub]
    return out


def candidates(given: str, isa: str) -> str:
    """--shapes-ISA's candidates: `all` is the compiled default and every shape the variant has (the
    manifest's kernels.iso3dfd.row_shapes), so that no shape the kernels offer goes unraced on a CPU
    (on the Emerald Rapids guest 8x1, left out of an earlier hand-picked list, ran 1.21x the 2x4 at
    radius 4 with the grid in L2); a list given stays as it is."""
    if given != "all":
        return given
    from bandwall.core import manifest

    shapes = manifest.manifest()["kernels"]["iso3dfd"]["row_shapes"].get(isa, [])
    return ",".join(["default", *(s["name"] for s in shapes)])


def model_default_isa(offered: list[str]) -> str:
    """The variant the machine model predicts fastest, among those offered (else the widest)."""
    from bandwall.core import manifest

    default = manifest.manifest()["isa"]["model_default"]["isa"]
    return default if default in offered else offered[0]


def race_shapes(
    a,
    offered,
    cands,
    run,
    radius,
    incumbent: dict[str, str | None] | None = None,
    held_isa: str | None = None,
) -> dict:
    """The variant and each variant's shape at one radius, by the decision rule: a shape other than the
    variant's compiled default stands only when a second race of it alone against the default settles
    on it too (among seven shapes one passes the rule by chance), as the other knobs' winners do.

    incumbent: the shape per variant the row named before this race, which a winner must beat in two
    races in a row of the two alone to replace (choice_races.settle); held_isa: the row's variant, the
    same way (race_variants)."""
    if a.in_run:
        # each candidate's name as it runs (default: the compiled default), one short run each
        shape_of = {c: run(c[0], "compiled" if c[1] == "default" else c[1], steps=1) for c in cands}
        shape_of = {c: r["config"]["row_shape"]["name"] for c, r in shape_of.items()}
    else:
        recs = common.alternate({c: (lambda c=c: run(*c)) for c in cands}, a.rounds, pause=a.pause)
        shape_of = {c: rs[0]["config"]["row_shape"]["name"] for c, rs in recs.items()}
    shapes, best_rates = {}, {}
    for isa in offered:
        # each shape once under the name it ran as, the first candidate of a name kept ("default"
        # first: the compiled default)
        mine: dict[str, tuple] = {}
        for c in cands:
            if c[0] == isa:
                mine.setdefault(shape_of[c], c)
        names = list(mine)
        if a.in_run:
            if len(names) > 1:
                rates = in_run_race(a, isa, names, run, radius)
            else:  # the variant's default alone: its rates for the variants' race
                rates = race(a, names, lambda s, isa=isa: run(isa, s))
        else:
            rates = {name: [r["result"]["mpoints_per_s"] for r in recs[c]] for name, c in mine.items()}

        # the second race: whole runs of the winner against the default (after a race inside runs
        # too), twice the rounds when the first leave it unsettled
        def again(pick, isa=isa):
            return more_if_unsettled(pick, lambda p: race(a, p, lambda shape: run(isa, shape)))

        won, d, confirm, standing = settle(names, rates, again, "shape", (incumbent or {}).get(isa))
        best_rates[isa] = rates[won]
        shapes[isa] = entry_of(won, names, rates, d, confirm, standing=standing, shape=won)
        said(f"radius {radius} {isa}: {won}", names, rates, confirm, standing=standing)
    return race_variants(a, offered, shapes, best_rates, run, radius, held_isa)


def race_variants(
    a, offered, shapes: dict, best_rates: dict, run, radius: int, held: str | None = None
) -> dict:
    """The variant at one radius, each at its chosen shape, by the decision rule from the machine
    model's default: a winner confirmed by a second race of the two alone and held against the row's
    earlier variant by a third (choice_races.settle), as the shapes are. Run against run, the shapes'
    rounds pair the variants too (best_rates); inside runs (--in-run) each variant's rates come from a
    run of its own, minutes apart, so the variants race whole runs alternated round by round instead
    (on the Zen 4 guest at radius 3 the rates of two such runs put AVX2 1.11x ahead, 15 alternated
    rounds 1.02x, within noise)."""
    from bandwall.core import decide

    default_isa = model_default_isa(offered)
    names = [default_isa, *(i for i in offered if i != default_isa)]

    def again(pick):
        return more_if_unsettled(pick, lambda p: race(a, p, lambda isa: run(isa, shapes[isa]["shape"])))

    rates = again(names) if a.in_run and len(names) > 1 else {i: best_rates[i] for i in names}
    won, d, confirm, standing = settle(names, rates, again, "variant", held)
    said(f"radius {radius} variant: {won}", names, rates, confirm, standing=standing)
    decision = {
        "default": default_isa,
        "chosen": won,
        "decisive": d.decisive,
        "why": d.why,
        "rule": vars(decide.rule()),
    }
    if confirm:
        decision["second_race"] = confirm
    if standing:
        decision["incumbent_race"] = standing
    return {
        "isa": won,
        "figures": {i: round(statistics.median(rates[i]), 1) for i in offered},
        "unit": "MPoints/s",
        "shapes": shapes,
        "decision": decision,
    }


def in_run_race(a, isa: str, names: list[str], run, radius: int) -> dict[str, list[float]]:
    """The names raced inside one run of --in-run-steps steps (--row-shape measure:A,B,..., names[0]
    the race's default): each name's MPoints/s round by round, as the run's record gives them."""
    rec = run(isa, "measure:" + ",".join(names), prefetch="compiled", steps=a.in_run_steps)
    race_rec = rec["config"]["row_shape"].get("race") or {}
    rates = (race_rec.get("race") or {}).get("rates")
    if race_rec.get("how") != "raced" or not rates:
        sys.exit(
            f"iso3dfd_kernel_choices.py: radius {radius} {isa}: the run raced no shapes "
            f"({race_rec.get('why', 'no race in its record')}); give it more steps (--in-run-steps)"
        )
    return {name: rates[name] for name in names}
