#!/usr/bin/env python3
"""Fills the ISO3DFD rows of the table of measured choices (native/common/isa_choices.json) for
this CPU: at every radius, which instruction-set variant, which register shape of each variant and
how many rows ahead each variant's row kernel prefetches and into which cache, as `bandwall-iso3dfd`
runs by default.

Per radius R (the table's key iso3dfd.rows at the article's radius 8, iso3dfd.rows.rR at the
others), every candidate (a variant and one of its shapes: --shapes-avx512, --shapes-avx2, each
variant's compiled default first) runs step by step (--time-block 1) on the same grid and threads,
in an order rotated round by round. A variant's shape is chosen by the project's decision rule
(bandwall.core.decide: rounds paired, a shape replacing the variant's compiled default only when
faster beyond noise, and then again in a second race of the two alone: among seven shapes one
passes the rule by chance); the variant then by the same rule, each at its chosen shape, starting from
the machine model's default. Then, at each variant's chosen shape, the prefetch settings (the
distances of --prefetch-rows, each into each cache of --prefetch-caches: --prefetch 2:L1) race the
same way from the compiled default (none at radius 1 and 2, one row beyond, into L2), a setting
replacing it only when faster beyond noise (ring shapes prefetch along their column at any
distance, and their first pass brings the second's rows at any but none: only none and one row
race). With the knob `swept`, where the model proposes sweeps for the grid, the variants race
again inside them first (each at its step shape, at the model's depth, over --sweep-steps steps,
from the machine model's default, a winner confirmed alone): from memory the variants run level,
in tiles held in cache the wider one may lead; the swept race's variant stands where the entry's
sweeps pay (the step race's stays under step_variant and comes back where they do not). Then, at
the variant the row names, the shapes race again inside sweeps (--swept-shape, at the depth the model proposes for the grid, --time-block D,
--sweep-steps steps): tiles held in cache meet the row kernel's in-core speed, where another shape may beat
the one step by step from memory runs best with; the winner goes to the entry's swept_shapes (the
step shape stands unless another is faster beyond noise, and then again in a second race of the two
alone: among many shapes one passes the rule by chance). With the knob `blocks`, at the row's
variant and shape, step by step, the y blocks of --y-blocks race the model's (its window of prev
filling half the L2) the same way, a winner confirmed by a second race alone; the entry's blocks
then keep the share of L2 the winner's window fills (l2_share), which the model takes for any grid
on this CPU at this radius. With the knob `team`, at the row's variant and shape, inside sweeps
at the depth the model proposes, the teams slabs and shared race the model's choice (auto) the
same way; the entry's teams keep a team only when it beat the model's beyond noise twice. With the
knob `sweeps`, at the row's variant and with every other knob as the defaults take it (the table
as it stands), the depth the model proposes for the grid (--time-block D) races single steps
(--time-block 1) over --sweep-steps steps a run (twice the rounds when the first leave the race
unsettled), and beside it the proposals on tiles L2 holds (--tile-cache L2, and each deeper depth
they allow) and on tiles the last-level cache holds (--tile-cache L3) where they differ; the
entry's sweeps keep the winner's depth (and tile_cache L2 or L3 for those) when it was faster
beyond noise twice, the second race the winner alone against single steps (a run whose model
proposes that depth then sweeps from its first step), and say `slower` when the model's proposal was
slower beyond noise twice (a run there then does not race it: a race costs the run what its slower
side takes); within noise runs race as before. So a row never names a coin toss. The races of the
other knobs see a table with no choices in it (BANDWALL_ISA_CHOICES), so `default` is the compiled
default and nothing already in the table decides what is measured; it holds only this CPU's
measured models (iso3dfd_time_model.py's cache figures), so that the knobs of the sweeps race at
the depths and tiles runs on this CPU get (without them the model assumed a cache twice memory's
speed of hwloc's size, and proposed other depths); the sweeps' race sees the table as it stands:
the checkout's table file (a row written by an earlier --write, iso3dfd_time_model.py's included)
with the knobs this run raced before it in this CPU's row, so that one run of every knob needs no
rebuild in between (the programs read that table through BANDWALL_ISA_CHOICES).

With --in-run, the step shapes race inside one run instead of run against run: one
bandwall-iso3dfd of --in-run-steps steps per race, `--row-shape measure:A,B,...` (every candidate of
the variant, its compiled default first), whose trials of a few milliseconds each alternate round by
round on the run's own data (common/knob_race.hpp); the bench takes each candidate's rates from the
run's record and decides by the same rule. A host whose memory bandwidth drifts between runs moves
process-level rounds by up to 1.5x; trials milliseconds apart see one state of it, and so narrow
seven shapes to one with tight intervals. The second race is then whole runs of the winner against
the default, alternated round by round: a shape the row names must hold over the runs users make
(on the Emerald Rapids guest at radius 7 the 8x2 ring won twice inside runs, 1.12x, and stayed
within noise over whole runs, 1.05x and 1.16x).

With --write, this CPU's micro-architecture row (named as in native/common/machine.cpp) gets the
entries, each with its figures, decision, command and date; without it they are printed.

    python3 bench/iso3dfd_kernel_choices.py --rounds 5 --write
    python3 bench/iso3dfd_kernel_choices.py --radii 3,5 --rounds 3
    python3 bench/iso3dfd_kernel_choices.py --knobs prefetch --write  # at the row's shapes
    python3 bench/iso3dfd_kernel_choices.py --knobs swept --write  # the sweeps' shapes
    python3 bench/iso3dfd_kernel_choices.py --knobs blocks --write  # the share of L2 for the y blocks
    python3 bench/iso3dfd_kernel_choices.py --knobs team --write  # the sweep team
    python3 bench/iso3dfd_kernel_choices.py --knobs sweeps --write  # whether sweeps pay
"""

from __future__ import annotations

import datetime
import json
import statistics
import sys

import choice_table
import common
from choice_races import entry_of, more_if_unsettled, race, said, settle
from choice_table import ROOT, microarch_name, row_named, write
from sweeps_race import race_sweeps

sys.path.insert(0, str(ROOT / "python"))
SEED_RADIUS = 8
SHAPES = {
    "avx512": "default,2x4,4x2,4x2-split,4x2-split-y4,8x2-ring,8x2-ring-y4,1x4",
    "avx2": "default,2x2,4x1,2x3,2x2-split,4x2",
}


def parse():
    p = common.parser(__doc__, rounds=5, min_rounds=5)
    p.add_argument("--radii", default="1,2,3,4,5,6,7,8", help="radii, comma-separated (default 1-8)")
    p.add_argument("--interior", type=int, default=256, help="interior points per dimension (default 256)")
    p.add_argument("--steps", type=int, default=10, help="time steps (default 10)")
    p.add_argument("--threads", type=int, default=2, help="OpenMP threads, pinned compact (default 2)")
    for isa, shapes in SHAPES.items():
        p.add_argument(f"--shapes-{isa}", default=shapes, help=f"{isa}'s candidate shapes (default {shapes})")
    p.add_argument(
        "--knobs",
        default="shapes,prefetch,swept,blocks,team,sweeps",
        help="what to race, comma-separated: shapes, prefetch, swept (the sweeps' shapes), blocks (the share "
        "of L2 for the y blocks), team (the sweep team), sweeps (whether sweeps pay), all by default; the others without shapes race at the shapes this CPU's "
        "row already names (else the compiled defaults) and keep the row's shapes and variant",
    )
    p.add_argument(
        "--y-blocks",
        default="8,16,24,32,48,64,96",
        help="the y blocks raced against the model's (default 8,16,24,32,48,64,96; each at most the interior)",
    )
    p.add_argument(
        "--shapes-swept",
        default="same,2x4,4x2,4x2-split,4x2-split-y4,8x2-ring,8x2-ring-y4,16x2-ring,16x2-ring-y4,1x4,8x1",
        help="the sweeps' candidate shapes of the AVX-512 variant (same: the step shape, always raced "
        "first); AVX2 races its --shapes-avx2",
    )
    p.add_argument(
        "--sweep-steps",
        type=int,
        default=40,
        help="time steps a run of the knobs swept, team and sweeps (default 40)",
    )
    p.add_argument("--prefetch-rows", default="0,1,2", help="prefetch distances in rows (default 0,1,2)")
    p.add_argument(
        "--prefetch-caches",
        default="L1,L2",
        help="the caches the prefetches of each distance fill (default L1,L2)",
    )
    p.add_argument(
        "--in-run",
        action="store_true",
        help="race the step shapes inside one run (--row-shape measure:A,B,...), trials alternated within it",
    )
    p.add_argument(
        "--in-run-steps",
        type=int,
        default=300,
        help="time steps of a run that races shapes in it (default 300)",
    )
    p.add_argument("--pause", type=float, default=0.5, help="seconds of rest before each run (default 0.5)")
    p.add_argument("--write", action="store_true", help="write the entries into this CPU's row of the table")
    a = common.parse(p)
    a.radii = common.radii(p, a.radii, SEED_RADIUS)
    a.knobs = set(a.knobs.split(","))
    if not a.knobs or not a.knobs <= {"shapes", "prefetch", "swept", "blocks", "team", "sweeps"}:
        p.error("--knobs takes shapes, prefetch, swept, blocks, team and sweeps, comma-separated")
    a.y_blocks = [int(y) for y in a.y_blocks.split(",")]
    a.prefetch_rows = [int(r) for r in a.prefetch_rows.split(",")]
    a.prefetch_caches = a.prefetch_caches.split(",")
    if not a.prefetch_caches or not set(a.prefetch_caches) <= {"L1", "L2"}:
        p.error("--prefetch-caches takes L1 and L2, comma-separated")
    return a


def key_of(radius: int) -> str:
    return "iso3dfd.rows" if radius == SEED_RADIUS else f"iso3dfd.rows.r{radius}"


def default_prefetch(radius: int) -> str:
    """The compiled default in --prefetch's form (native/iso3dfd/rows.hpp default_prefetch)."""
    return "1:L2" if radius > 2 else "0"


def prefetch_settings(rows, caches) -> list[str]:
    """--prefetch's form of each distance into each cache: 0 (none, no cache), N:L1, N:L2."""
    return ["0" if r == 0 else f"{r}:{c}" for r in sorted(set(rows)) for c in (caches if r else [None])]


def main() -> int:
    a = parse()  # exports --bindir as BANDWALL_BINDIR, which manifest reads
    exe = common.tool(a.bindir, "bandwall-iso3dfd")
    topo = common.record([common.tool(a.bindir, "bandwall-topo")])
    offered = [i for i in topo["result"]["isa"]["offered"] if i in SHAPES]
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    command = "python3 bench/iso3dfd_kernel_choices.py " + " ".join(sys.argv[1:])
    entries = {}
    # what this CPU's row already holds: the shapes a prefetch-only race runs at, and what it keeps
    row_name = microarch_name(a.bindir)
    mine = row_named(choice_table.load(), row_name)
    no_choices = common.scratch() / "models-only-table.json"
    no_choices.write_text(json.dumps(choice_table.models_only(choice_table.load(), row_name)))
    env = {"BANDWALL_ISA_CHOICES": str(no_choices), "BANDWALL_CACHE_DIR": str(no_choices.parent)}
    kept = {} if mine is None else mine["kernels"]
    for radius in a.radii:
        n = a.interior + 2 * radius
        cands = [(isa, s) for isa in offered for s in getattr(a, f"shapes_{isa}").split(",") if s]

        def run(
            isa: str,
            shape: str,
            prefetch: str = "auto",
            radius=radius,
            n=n,
            swept=None,
            y="auto",
            team=None,
            steps=None,
        ) -> dict:
            depth, steps, more = 1, steps or a.steps, []
            # (swept shape, depth) or (team, depth): the sweeps at a forced depth over the sweeps'
            # race's steps (two sweeps alone told nothing apart: 8 steps at depth 4 on 256^3 moved by
            # 1.8x between rounds, and every shape stood within noise)
            if swept is not None:
                depth, steps, more = swept[1], a.sweep_steps, ["--swept-shape", swept[0]]
            if team is not None:
                depth, steps, more = team[1], a.sweep_steps, ["--sweep-team", team[0]]
            return common.record(
                [
                    exe,
                    n,
                    n,
                    n,
                    steps,
                    "auto",
                    y,
                    "auto",
                    "compact",
                    a.threads,
                    "--radius",
                    radius,
                    "--isa",
                    isa,
                    "--row-shape",
                    shape,
                    "--time-block",
                    depth,
                    "--prefetch",
                    prefetch,
                    *more,
                    "--json",
                ],
                env=env,
                valid=False,
            )

        entry = dict(kept.get(key_of(radius), {}))
        if "shapes" in a.knobs:
            before = shapes_of(entry)
            entry = {k: v for k, v in entry.items() if k not in SWEPT_VARIANT}  # raced again below
            entry.update(race_shapes(a, offered, cands, run, radius))
            entry = keep_measured_at(entry, before)
        if "shapes" in a.knobs or not entry:
            how = (
                f"a race inside runs of {a.in_run_steps} steps, the second of runs of {a.steps} steps"
                if a.in_run
                else f"{a.steps} steps"
            )
            entry.update(
                case=f"{a.interior}^3 interior, {how}, {a.threads} threads compact, step by step",
                command=command,
                measured=today,
            )
        if "prefetch" in a.knobs:
            entry["prefetch"] = race_prefetch(a, offered, entry.get("shapes", {}), run, radius)
            for row in entry["prefetch"].values():
                row.update(command=command, measured=today)
        if "swept" in a.knobs:
            entry = race_swept_variant(a, entry, offered, run, radius, n, env)
            entry["swept_shapes"] = race_swept(a, entry, offered, run, radius, n, env)
            for row in entry["swept_shapes"].values():
                row.update(command=command, measured=today)
        if "blocks" in a.knobs:
            entry["blocks"] = race_blocks(a, entry, offered, run, radius)
            for row in entry["blocks"].values():
                row.update(command=command, measured=today)
        if "team" in a.knobs:
            entry["teams"] = race_team(a, entry, offered, run, radius, n, env)
            for row in entry["teams"].values():
                row.update(command=command, measured=today)
        if "sweeps" in a.knobs:
            # the table as this run stands: the knobs raced above (and at earlier radii) included
            raced = {**entries, key_of(radius): {k: v for k, v in entry.items() if k != "sweeps"}}
            table = choice_table.standing(no_choices.parent, row_name, raced, command, today)
            own = {"BANDWALL_CACHE_DIR": env["BANDWALL_CACHE_DIR"], "BANDWALL_ISA_CHOICES": str(table)}
            entry["sweeps"] = race_sweeps(a, entry, offered, radius, n, own)
            for row in entry["sweeps"].values():
                row.update(command=command, measured=today)
        entries[key_of(radius)] = variant_where_it_runs(entry, radius)
    return write(a, entries, command, today)


# The knobs an entry holds per variant that were measured at that variant's step shape.
AT_THE_SHAPE = ("prefetch", "swept_shapes", "blocks", "teams", "sweeps")


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


def model_default_isa(offered: list[str]) -> str:
    """The variant the machine model predicts fastest, among those offered (else the widest)."""
    from bandwall.core import manifest

    default = manifest.manifest()["isa"]["model_default"]["isa"]
    return default if default in offered else offered[0]


def race_shapes(a, offered, cands, run, radius) -> dict:
    """The variant and each variant's shape at one radius, by the decision rule: a shape other than the
    variant's compiled default stands only when a second race of it alone against the default settles
    on it too (among seven shapes one passes the rule by chance), as the other knobs' winners do."""
    from bandwall.core import decide

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

        won, d, confirm = settle(names, rates, again, "shape")
        best_rates[isa] = rates[won]
        shapes[isa] = entry_of(won, names, rates, d, confirm, shape=won)
        said(f"radius {radius} {isa}: {won}", names, rates, confirm)
    default_isa = model_default_isa(offered)
    d = decide.choose_best(offered, [best_rates[i] for i in offered], offered.index(default_isa))
    return {
        "isa": offered[d.chosen],
        "figures": {i: round(statistics.median(best_rates[i]), 1) for i in offered},
        "unit": "MPoints/s",
        "shapes": shapes,
        "decision": {
            "default": default_isa,
            "chosen": offered[d.chosen],
            "decisive": d.decisive,
            "why": d.why,
            "rule": vars(decide.rule()),
        },
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


def race_prefetch(a, offered, shapes: dict, run, radius) -> dict:
    """Per variant, at its shape (the row's, else the compiled default), the prefetch settings raced
    from the compiled default by the decision rule, a winner confirmed by a second race alone (among
    five settings one passes the rule by chance), as the other knobs' winners are."""
    out = {}
    for isa in offered:
        shape = shapes.get(isa, {}).get("shape", "default")
        default = default_prefetch(radius)
        settings = prefetch_settings(a.prefetch_rows, a.prefetch_caches)
        if "-ring" in shape:
            # a ring prefetches along its column whatever the distance and cache; its first pass
            # brings the second's rows to L2 at any distance but none: only none and one row differ
            settings = ["0", "1:L2"]
        # the compiled default first (the decision rule's default), then the others in order
        names = [default, *[s for s in settings if s != default]]
        again = lambda pick, isa=isa, shape=shape: race(a, pick, lambda p: run(isa, shape, p))  # noqa: E731
        rates = again(names)
        won, d, confirm = settle(names, rates, again, "prefetch")
        out[isa] = entry_of(won, names, rates, d, confirm, prefetch=won, shape=shape)
        said(f"radius {radius} {isa} at {shape}: prefetch {won}", names, rates, confirm)
    return out


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
    won, d, confirm = settle(names, rates, rates_of, "isa")
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
    1 there): the defaults then run step by step, where the step race measured them."""
    step = entry.get("step_variant")
    if not step or step.get("isa") == entry.get("isa"):
        return entry
    sweeps = entry.get("sweeps", {}).get(entry["isa"], {})
    if int(sweeps.get("depth", 1)) > 1:
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
    won, d, confirm = settle(names, rates, rates_of, "shape")

    def shown(s: str) -> str:
        return step_name if s == "same" else s

    said(f"radius {radius} {isa} swept at depth {depth}: {shown(won)}", names, rates, confirm, shown)
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
            shape=shown(won),
            step_shape=step_name,
            depth=depth,
            case=case,
        )
    }


def race_blocks(a, entry: dict, offered, run, radius: int) -> dict:
    """At the variant and shape the entry names, step by step, the y blocks of --y-blocks raced against
    the model's by the decision rule (a winner confirmed by a second race alone); the share of L2 the
    winner's window of prev fills, for the model."""
    isa = entry.get("isa") or offered[0]
    shape = entry.get("shapes", {}).get(isa, {}).get("shape", "default")
    rec = run(isa, shape)
    model_y = int(rec["config"]["blocks"][1])
    ys = [model_y] + sorted({min(y, a.interior) for y in a.y_blocks} - {model_y})
    names = [f"y{y}" for y in ys]
    recs = common.alternate(
        {f"y{y}": (lambda y=y: run(isa, shape, y=y)) for y in ys}, a.rounds, pause=a.pause
    )
    rates = {k: [r["result"]["mpoints_per_s"] for r in rs] for k, rs in recs.items()}
    won, d, confirm = settle(
        names, rates, lambda pick: race(a, pick, lambda k: run(isa, shape, y=int(k[1:]))), "y"
    )
    traffic = recs[won][0]["result"]["traffic_model"]
    share = traffic["window_bytes"] / traffic["l2_bytes"] if traffic.get("l2_bytes") else 0.5
    said(f"radius {radius} {isa} {shape} y blocks: {won} (L2 share {share:.2f})", names, rates, confirm)
    return {
        isa: entry_of(
            won,
            names,
            rates,
            d,
            confirm,
            # the model's default share when its own y stands, so a row never moves the blocks by chance
            l2_share=0.5 if won == names[0] else round(share * 1.001, 4),
            y=int(won[1:]),
            model_y=model_y,
            shape=rec["config"]["row_shape"]["name"],
            case=f"{a.interior}^3 interior, {a.steps} steps, {a.threads} threads compact, step by step",
        )
    }


def race_team(a, entry: dict, offered, run, radius: int, n: int, env: dict) -> dict:
    """At the variant and shape the entry names, inside sweeps at the depth the model proposes, the
    teams slabs and shared raced against the model's choice (auto) by the decision rule, a winner
    confirmed by a second race alone."""
    isa = entry.get("isa") or offered[0]
    shape = entry.get("shapes", {}).get(isa, {}).get("shape", "default")
    proposal = probe(a, isa, shape, radius, n, env)["config"]["time_block"].get("proposal", {})
    depth = int(proposal.get("depth", 1))
    if depth < 2 or a.threads < 2:
        return {isa: {"team": "auto", "why": f"no team to choose at radius {radius} on {n}^3: depth {depth}"}}
    names = ["auto", "slabs", "shared"]

    def rates_of(pick: list[str]) -> dict:
        return race(a, pick, lambda t: run(isa, shape, team=(t, depth)))

    rates = rates_of(names)
    won, d, confirm = settle(names, rates, rates_of, "team")
    said(
        f"radius {radius} {isa} {shape} team at depth {depth}: {won} (the model's: {proposal.get('team')})",
        names,
        rates,
        confirm,
    )
    case = (
        f"{a.interior}^3 interior, {a.sweep_steps} steps, {a.threads} threads compact, --time-block {depth}"
    )
    return {
        isa: entry_of(
            won, names, rates, d, confirm, team=won, model_team=proposal.get("team"), depth=depth, case=case
        )
    }


if __name__ == "__main__":
    sys.exit(main())
