#!/usr/bin/env python3
"""Fills the ISO3DFD rows of the table of measured choices (native/common/isa_choices.json) for
this CPU: at every radius, which instruction-set variant, which register shape of each variant and
how many rows ahead each variant's row kernel prefetches and into which cache, as `bandwall-iso3dfd`
runs by default.

Per radius R (the table's key iso3dfd.rows at the article's radius 8, iso3dfd.rows.rR at the
others), every candidate (a variant and one of its shapes: --shapes-avx512, --shapes-avx2, by default
the variant's compiled default first and then every shape it has) runs step by step (--time-block 1) on the same grid and threads,
in an order rotated round by round. A variant's shape is chosen by the project's decision rule
(bandwall.core.decide: rounds paired, a shape replacing the variant's compiled default only when
faster beyond noise, and then again in a second race of the two alone: among seven shapes one
passes the rule by chance); where the row named another shape before, that one and the winner race
a third time alone, the row's as the default, so that two shapes within noise of each other do not
take turns from one run of the bench to the next (the prefetch, swept shape, blocks and team knobs
hold the row's earlier choice the same way); the variant then by the same rule, each at its
chosen shape, starting from the machine model's default, confirmed and held the same way (with
--in-run in whole runs alternated: each variant's rates inside runs come from a run of its own). Then, at each variant's chosen shape, the prefetch settings (the
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
beyond noise twice, the second race the winner alone against single steps, on its rounds and
those the row's earlier second race of the same pair kept, the latest 48 (a run whose model
proposes that depth then sweeps from its first step); where the row named other sweeps before, the
winner takes the row only when faster beyond noise than those too, in two races in a row of the
two alone, the row's as the default (the row's depth races beside the others where the model no
longer proposes it), and where the race leaves single steps (no winner, or one its second race did
not confirm) the row's sweeps race single steps alone on their pooled rounds and hold the row only
when faster beyond noise there; and say `slower` when the model's proposal was
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
import sys

import choice_table
import common
from choice_races import entry_of, race, said, settle
from choice_table import ROOT, microarch_name, row_named, write
from shape_races import candidates, keep_measured_at, race_shapes, shapes_of
from sweeps_race import race_sweeps
from swept_races import SWEPT_VARIANT, probe, race_swept, race_swept_variant, variant_where_it_runs

sys.path.insert(0, str(ROOT / "python"))
SEED_RADIUS = 8
VARIANTS = ("avx512", "avx2")  # the vector variants, whose shapes race


def parse():
    p = common.parser(__doc__, rounds=5, min_rounds=5)
    p.add_argument("--radii", default="1,2,3,4,5,6,7,8", help="radii, comma-separated (default 1-8)")
    p.add_argument("--interior", type=int, default=256, help="interior points per dimension (default 256)")
    p.add_argument("--steps", type=int, default=10, help="time steps (default 10)")
    p.add_argument("--threads", type=int, default=2, help="OpenMP threads, pinned compact (default 2)")
    for isa in VARIANTS:
        p.add_argument(
            f"--shapes-{isa}",
            default="all",
            help=f"{isa}'s candidate shapes, comma-separated (default all: the compiled default and every shape "
            "the variant has, as `bandwall-manifest` lists them)",
        )
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
    p.add_argument(
        "--sweeps-llc",
        default="",
        help="the knob sweeps once for each verdict of the probe of a shared last-level cache given "
        "(one, two: forced by BANDWALL_LLC_PROBE, the host's own verdict counted run by run), into the "
        "row's sweeps_by_llc, which runs with that verdict take, instead of once with the team free "
        "into sweeps (default: the team free)",
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
    a.sweeps_llc = [v for v in a.sweeps_llc.split(",") if v]
    if not set(a.sweeps_llc) <= {"one", "two"}:
        p.error("--sweeps-llc takes one and two, comma-separated")
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
    offered = [i for i in topo["result"]["isa"]["offered"] if i in VARIANTS]
    for isa in VARIANTS:
        setattr(a, f"shapes_{isa}", candidates(getattr(a, f"shapes_{isa}"), isa))
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
            before, held_isa = shapes_of(entry), (entry.get("step_variant") or entry).get("isa")
            entry = {k: v for k, v in entry.items() if k not in SWEPT_VARIANT}  # raced again below
            entry.update(race_shapes(a, offered, cands, run, radius, before, held_isa))
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
            held = {isa: row.get("prefetch") for isa, row in entry.get("prefetch", {}).items()}
            entry["prefetch"] = race_prefetch(a, offered, entry.get("shapes", {}), run, radius, held)
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
            raced = {
                **entries,
                key_of(radius): {k: v for k, v in entry.items() if k not in ("sweeps", "sweeps_by_llc")},
            }
            table = choice_table.standing(no_choices.parent, row_name, raced, command, today)
            own = {"BANDWALL_CACHE_DIR": env["BANDWALL_CACHE_DIR"], "BANDWALL_ISA_CHOICES": str(table)}
            if not a.sweeps_llc:
                entry["sweeps"] = race_sweeps(a, entry, offered, radius, n, own)
                for row in entry["sweeps"].values():
                    row.update(command=command, measured=today)
            by_llc = {isa: dict(v) for isa, v in (entry.get("sweeps_by_llc") or {}).items()}
            for llc in a.sweeps_llc:
                for isa, row in race_sweeps(a, entry, offered, radius, n, own, llc).items():
                    by_llc.setdefault(isa, {})[llc] = {**row, "command": command, "measured": today}
            if by_llc:
                entry["sweeps_by_llc"] = by_llc
        entries[key_of(radius)] = variant_where_it_runs(entry, radius)
    return write(a, entries, command, today)


def race_prefetch(a, offered, shapes: dict, run, radius, held: dict | None = None) -> dict:
    """Per variant, at its shape (the row's, else the compiled default), the prefetch settings raced
    from the compiled default by the decision rule, a winner confirmed by a second race alone (among
    five settings one passes the rule by chance) and held against the row's earlier setting (held,
    per variant), as the other knobs' winners are."""
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
        won, d, confirm, standing = settle(names, rates, again, "prefetch", (held or {}).get(isa))
        out[isa] = entry_of(won, names, rates, d, confirm, standing=standing, prefetch=won, shape=shape)
        said(f"radius {radius} {isa} at {shape}: prefetch {won}", names, rates, confirm, standing=standing)
    return out


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
    earlier = entry.get("blocks", {}).get(isa, {}).get("y")
    won, d, confirm, standing = settle(
        names,
        rates,
        lambda pick: race(a, pick, lambda k: run(isa, shape, y=int(k[1:]))),
        "y",
        f"y{earlier}" if earlier else None,
    )
    traffic = recs[won][0]["result"]["traffic_model"]
    share = traffic["window_bytes"] / traffic["l2_bytes"] if traffic.get("l2_bytes") else 0.5
    said(
        f"radius {radius} {isa} {shape} y blocks: {won} (L2 share {share:.2f})",
        names,
        rates,
        confirm,
        standing=standing,
    )
    return {
        isa: entry_of(
            won,
            names,
            rates,
            d,
            confirm,
            standing=standing,
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
    earlier = entry.get("teams", {}).get(isa, {}).get("team")
    won, d, confirm, standing = settle(names, rates, rates_of, "team", earlier)
    said(
        f"radius {radius} {isa} {shape} team at depth {depth}: {won} (the model's: {proposal.get('team')})",
        names,
        rates,
        confirm,
        standing=standing,
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
            standing=standing,
            team=won,
            model_team=proposal.get("team"),
            depth=depth,
            case=case,
        )
    }


if __name__ == "__main__":
    sys.exit(main())
