"""Inside sweeps, for a row of the table of measured choices (bench/iso3dfd_kernel_choices.py --knobs
swept): the variants raced again at the depth the model proposes (tiles held in cache meet the row
kernel's in-core speed, where the wider variant may lead), the race's variant standing only where the
entry's sweeps pay; and at the row's variant, the shapes the sweeps run with.

A script imports it as `import swept_races` (bench/ is first on its path, as for `common`).
"""

from __future__ import annotations

import sys

import common
from choice_races import entry_of, race, said, settle
from shape_races import model_default_isa


def probe(a, isa: str, shape: str, radius: int, n: int, env: dict) -> dict:
    """A short run of the defaults (4 steps, --time-block auto) at the variant and shape: its record
    gives the model's proposal of sweeps (config.time_block.proposal) and the step shape's name."""
    return common.record(
        [common.tool(a.bindir, "bandwall-iso3dfd"), n, n, n, 4, "auto", "auto", "auto", "compact", a.threads]
        + ["--radius", radius, "--isa", isa, "--row-shape", shape, "--json"],
        env=env,
        valid=False,
    )


# An entry's fields from the variants' race inside sweeps (race_swept_variant).
SWEPT_VARIANT = ("step_variant", "runs", "variant_case", "second_race")


def race_swept_variant(a, entry: dict, offered, run, radius: int, n: int, env: dict) -> dict:
    """entry with its variant raced again inside sweeps, where the model proposes them for this grid:
    each variant at its step shape, at the model's depth over the sweeps' steps, by the decision
    rule from the machine model's default (a winner confirmed by a second race alone). From memory
    the variants run level and a step race's winner can be the narrower one (radius 2 on Emerald
    Rapids: AVX2 1.18x step by step), while in tiles held in cache the row kernel runs at its
    in-core speed, where the wider variant leads. The step race's variant, figures and decision stay
    under step_variant; variant_where_it_runs puts them back when the table's sweeps do not pay."""
    from bandwall.core import decide

    if len(offered) < 2 or "shapes" not in entry:
        return entry
    step = {isa: entry["shapes"].get(isa, {}).get("shape", "default") for isa in offered}
    rec = probe(a, entry["isa"], step[entry["isa"]], radius, n, env)
    depth = int(rec["config"]["time_block"].get("proposal", {}).get("depth", 1))
    if depth < 2:
        return entry
    names = [model_default_isa(offered)]
    names += [i for i in offered if i not in names]

    def rates_of(pick: list[str]) -> dict:
        return race(a, pick, lambda isa: run(isa, step[isa], swept=("same", depth)))

    rates = rates_of(names)
    won, d, confirm, _ = settle(names, rates, rates_of, "isa")
    said(f"radius {radius} variants swept at depth {depth}: {won}", names, rates, confirm)
    out = {k: v for k, v in entry.items() if k not in SWEPT_VARIANT}
    # the step race's fields (an earlier swept race's entry keeps them under step_variant)
    out["step_variant"] = entry.get("step_variant") or {
        k: entry[k] for k in ("isa", "figures", "decision", "case") if k in entry
    }
    chosen = entry_of(won, names, rates, d, confirm)
    if confirm and won == names[0]:  # the first race's winner, not confirmed: the default, undecided
        chosen["decision"].update(decisive=False, why=f"{d.why}; then alone: {confirm['why']}")
    out.update(
        isa=won,
        figures=chosen["figures"],
        runs=chosen["runs"],
        decision={**chosen["decision"], "rule": vars(decide.rule())},
        variant_case=f"{a.interior}^3 interior, {a.sweep_steps} steps, {a.threads} threads compact, "
        f"--time-block {depth}, each variant at its step shape",
    )
    if confirm:
        out["second_race"] = confirm
    return out


def variant_where_it_runs(entry: dict, radius: int) -> dict:
    """entry, whose variant was raced inside sweeps (step_variant holds the step race's), with the
    step race's variant back where the table's sweeps at the swept race's variant do not pay (depth
    1 there, in the team-free entry and in every entry per verdict of the probe): the defaults then
    run step by step, where the step race measured them."""
    step = entry.get("step_variant")
    if not step or step.get("isa") == entry.get("isa"):
        return entry
    # the team-free entry, and those per verdict of the probe of a shared last-level cache
    sweeps = [entry.get("sweeps", {}).get(entry["isa"], {})]
    sweeps += list((entry.get("sweeps_by_llc", {}).get(entry["isa"]) or {}).values())
    if any(int(s.get("depth", 1)) > 1 for s in sweeps):
        return entry
    print(
        f"radius {radius}: the sweeps do not pay at {entry['isa']}: the step race's {step['isa']} stands",
        file=sys.stderr,
    )
    out = {k: v for k, v in entry.items() if k not in SWEPT_VARIANT}
    out.update(step)
    return out


def race_swept(a, entry: dict, offered, run, radius: int, n: int, env: dict) -> dict:
    """At the variant the entry names (else the machine model's), the shapes of the sweeps raced at the
    depth the model proposes for this grid, from the step shape (same) by the decision rule."""
    isa = entry.get("isa") or offered[0]
    step = entry.get("shapes", {}).get(isa, {}).get("shape", "default")
    rec = probe(a, isa, step, radius, n, env)
    depth = int(rec["config"]["time_block"].get("proposal", {}).get("depth", 1))
    step_name = rec["config"]["row_shape"]["name"]
    if depth < 2:
        return {isa: {"shape": step_name, "why": f"the model proposes no sweeps at radius {radius} on {n}^3"}}
    # the step shape once (same), then the others by name
    names = [s for s in (a.shapes_swept if isa == "avx512" else a.shapes_avx2).split(",") if s]
    names = ["same"] + [s for s in names if s not in ("same", "default", step_name)]

    def rates_of(pick: list[str]) -> dict:
        return race(a, pick, lambda s: run(isa, step, swept=(s, depth)))

    rates = rates_of(names)
    # the row's earlier choice, under the name it raced as (the step shape: same)
    held = entry.get("swept_shapes", {}).get(isa, {}).get("shape")
    held = "same" if held == step_name else held
    won, d, confirm, standing = settle(names, rates, rates_of, "shape", held)

    def shown(s: str) -> str:
        return step_name if s == "same" else s

    said(
        f"radius {radius} {isa} swept at depth {depth}: {shown(won)}", names, rates, confirm, shown, standing
    )
    case = (
        f"{a.interior}^3 interior, {a.sweep_steps} steps, {a.threads} threads compact, --time-block {depth}"
    )
    return {
        isa: entry_of(
            won,
            names,
            rates,
            d,
            confirm,
            shown,
            standing,
            shape=shown(won),
            step_shape=step_name,
            depth=depth,
            case=case,
        )
    }
