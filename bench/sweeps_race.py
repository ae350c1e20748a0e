"""Whether sweeps pay, raced for a row of the table of measured choices (bench/iso3dfd_kernel_choices.py
--knobs sweeps): at a radius and variant, the depth the temporal-blocking model proposes for the
bench's grid, every shallower depth from 2 up, and the proposals on tiles L2 holds, against
single steps.

A script imports it as `import sweeps_race` (bench/ is first on its path, as for `common`).
"""

from __future__ import annotations

import os
import statistics
import time

import common
from choice_races import entry_of, hold_unless_beaten, more_if_unsettled, race, said


def shallower(depth: int) -> list[int]:
    """The depths raced beside the model's proposal of `depth`: every one from 2 up. From half of it
    up, as before, left depth 2 and 3 out at radius 3 on the Emerald Rapids guest, where the model
    proposed 5 and tiles L2 holds ran 1.09x (depth 2) and 1.11x (3) single steps while 5 ran 0.97x
    (256^3, 40 steps, 2 threads, 3-5 alternated rounds)."""
    return list(range(2, depth))


# The most rounds a second race decides on, its own and those of the row's earlier second races of
# the same pair pooled before them (pooled()): the latest ones, so that what the host did months ago
# does not hold a verdict for ever.
POOLED_ROUNDS = 48


def pooled(
    earlier: dict | None, pick: list[str], case: str, rates: dict[str, list[float]]
) -> tuple[dict, dict]:
    """A second race's rates with those the row's earlier entry kept from its own second race of the
    same pair on the same case (`earlier`: the entry's sweeps record of this variant before this run)
    before them, the latest POOLED_ROUNDS rounds, and what was pooled ({} when nothing was). On the
    Emerald Rapids guest at radius 3, depth 3 ran 1.08x-1.09x single steps in three races in a row
    (the first race beyond noise, 1.02 to 1.12 over 24 rounds), and each second race of 12-24
    rounds left it within noise: a race that cannot tell is not thrown away, as a run's own race
    pools its rounds with the next (iso3dfd/timemodel.hpp's pool_race)."""
    before = (earlier or {}).get("second_race") or {}
    kept = before.get("rates") or {}
    if (
        (earlier or {}).get("case") != case
        or before.get("raced") != pick[1]
        or not all(k in kept for k in pick)
    ):
        return rates, {}
    n = min(len(kept[k]) for k in pick)  # paired rounds: as many of each
    out = {k: (list(kept[k][-n:]) + list(rates[k]))[-POOLED_ROUNDS:] for k in pick}
    races = int((before.get("pooled") or {}).get("races", 1)) + 1
    return out, {"pooled": {"races": races, "rounds": len(out[pick[0]])}}


def held_sweeps(earlier: dict | None, case: str) -> str | None:
    """The sweeps the row's earlier entry chose on the same case, as a race names them ("2", or
    "7 L3" with its tile cache), or None where it chose single steps or measured another case."""
    e = earlier or {}
    if e.get("case") != case or int(e.get("depth", 1)) <= 1:
        return None
    return f"{e['depth']} {e['tile_cache']}" if e.get("tile_cache") else str(e["depth"])


# How long a run forced to a verdict of the probe waits for the host to agree before it runs anyway:
# probes this far apart, at most this many. On the Zen 4 guest the host moved the two vCPUs between
# one L3 and two every 1-6 s (one probe a second, 2026-12-07), and a run of the race takes about one.
# After HOST_GIVE_UP waits in a row in vain a race stops waiting (one probe a run) until the host
# agrees again: on a machine whose two CPUs never leave their cache a wait would only cost time.
HOST_PROBES = 300
HOST_PROBE_GAP_S = 0.05
HOST_GIVE_UP = 2


def host_on(bindir, cpus: list[int], one: bool, probes: int = HOST_PROBES) -> bool:
    """Probes the CPUs until the host has them on one last-level cache (one) or on two, or `probes`
    probes have said otherwise (or not answered): whether it agreed."""
    for k in range(probes):
        trip = common.llc_probe(bindir, cpus)
        if trip is not None and trip.one_llc == one:
            return True
        if k + 1 < probes:
            time.sleep(HOST_PROBE_GAP_S)
    return False


def race_sweeps(a, entry: dict, offered, radius: int, n: int, env: dict, llc: str | None = None) -> dict:
    """At the variant the entry names, every other knob as the defaults take it (the table as it
    stands, which env's BANDWALL_ISA_CHOICES names, when it does; an empty cache folder), the depth the model proposes for this grid and
    each shallower depth from 2 up against single steps by the decision rule, a.sweep_steps steps a run, twice the rounds when the first leave it unsettled;
    beside them, when tiles sized for L2 (--tile-cache L2) make another proposal, that one and each
    deeper depth such tiles allow, and when tiles sized for the last-level cache (--tile-cache L3)
    make another, that one. Sweeps faster beyond noise stand only when a second race of single steps
    and the winner alone says so too (the entry then names its depth, and tile_cache L2 or L3 for
    those proposals); the model's
    proposal slower beyond noise in both races says `slower`; otherwise the entry says depth 1, and
    runs race as before. The second race decides on its rounds pooled with those of the row's
    earlier second race of the same pair (pooled), and keeps them for the next. Where the row chose
    other sweeps before (held_sweeps) and this race's winner passed both races, the two race alone,
    the row's as the default, and the winner takes the row only when it wins two such races in a row,
    as the other knobs' choices are held (choice_races.hold_unless_beaten);
    where this race leaves single steps and the row's sweeps were not the winner it raced alone, they
    race single steps alone, on their pooled rounds, and hold the row only when faster beyond noise
    there (the failed winner's race kept as unconfirmed_race);
    the row's sweeps race in the first race too where the model no longer proposes them:
    two depths both faster than single steps, within noise of each other, do not take turns from one
    run of the bench to the next.

    With llc ("one" or "two"), every run takes that verdict of the probe of a shared last-level
    cache (BANDWALL_LLC_PROBE), so the model proposes the team and depth a run with that verdict
    gets (on one cache the team together, deeper; on two, slabs), and the race is the row's
    sweeps_by_llc entry for it, held against that entry's earlier choice; before each run the bench
    probes the CPUs itself and waits for the host to agree (host_on; no longer after HOST_GIVE_UP
    waits in a row in vain, until it agrees again), then probes again after it,
    and the entry says in how many runs the host agreed before and after (a virtual machine's host
    moves two vCPUs between one L3 and two within seconds: without the wait, the races of two L3s
    on the Zen 4 guest ran on two in 0-29% of their runs)."""
    from bandwall.core import decide

    isa = entry.get("isa") or offered[0]
    own = {k: env[k] for k in ("BANDWALL_CACHE_DIR", "BANDWALL_ISA_CHOICES") if k in env}
    if llc:
        own["BANDWALL_LLC_PROBE"] = llc
    agreed = {"runs": 0, "agreed": 0}  # the host's verdict before and after each run, against llc
    vain = [0]  # waits in a row the host did not end

    def run(name: str) -> dict:
        depth, _, tiles = name.partition(" ")
        cpus = sorted(os.sched_getaffinity(0))[:2]
        probed = bool(llc) and a.threads > 1 and len(cpus) == 2
        before = probed and host_on(
            a.bindir, cpus, llc == "one", HOST_PROBES if vain[0] < HOST_GIVE_UP else 1
        )
        vain[0] = 0 if before else vain[0] + probed
        rec = common.record(
            [common.tool(a.bindir, "bandwall-iso3dfd"), n, n, n, a.sweep_steps, "auto", "auto", "auto"]
            + ["compact", a.threads, "--radius", radius, "--isa", isa, "--time-block", depth]
            + ["--tile-cache", tiles or "model", "--json"],
            env=own,
            valid=False,
        )
        if probed:
            trip = common.llc_probe(a.bindir, cpus)
            agreed["runs"] += 1
            agreed["agreed"] += before and trip is not None and trip.one_llc == (llc == "one")
        return rec

    def level(depth: int) -> str:
        """Where the tiles of sweeps of `depth` on tiles L2 holds stay (L2, else the model's)."""
        rec = common.record(
            [common.tool(a.bindir, "bandwall-iso3dfd"), n, n, n, depth, "auto", "auto", "auto", "compact"]
            + [
                a.threads,
                "--radius",
                radius,
                "--isa",
                isa,
                "--time-block",
                depth,
                "--tile-cache",
                "L2",
                "--json",
            ],
            env=own,
            valid=False,
        )
        return rec["result"]["traffic_model"]["time_block"]["level"]

    model = run("auto")["config"]["time_block"]
    proposal = model.get("proposal", {})
    depth = int(proposal.get("depth", 1))
    in_l2 = run("auto L2")["config"]["time_block"].get("proposal", {})
    l2_depth = int(in_l2.get("depth", 1))
    case = f"{a.interior}^3 interior, {a.sweep_steps} steps, {a.threads} threads compact"
    names = ["1"] + ([str(depth)] if depth > 1 else [])
    # and the shallower depths from 2 up, on the model's tiles for each: the
    # model's cost of a depth misses what a deeper window costs in a last-level cache other tenants
    # share (on the Zen 4 guest at radius 3 it proposed 6, which ran 0.78x depth 4 by hand, median of 5
    # alternated rounds' ratios, where depth 4 ran 1.32x single steps)
    names += [str(d) for d in shallower(depth)]
    if l2_depth > 1 and (l2_depth != depth or proposal.get("level") != "L2"):
        names.append(f"{l2_depth} L2")
        # and each deeper depth a tile L2 holds allows: the model takes the shallower of depths
        # within 5% of each other's cost, which the race decides instead
        deeper = l2_depth + 1
        while deeper <= min(8, int(model.get("max_depth", 8)), a.sweep_steps // 4) and level(deeper) == "L2":
            names.append(f"{deeper} L2")
            deeper += 1
    # and the proposal on tiles the last-level cache holds, where it differs (for a shape whose
    # sweeps run faster from tiles taller than L2 holds)
    in_l3 = run("auto L3")["config"]["time_block"].get("proposal", {})
    l3_depth = int(in_l3.get("depth", 1))
    if l3_depth > 1 and in_l3.get("level") == "L3" and (l3_depth != depth or proposal.get("level") != "L3"):
        names.append(f"{l3_depth} L3")
    # and the row's earlier sweeps on this case, where the model no longer proposes them (on the Zen
    # 4 guest radius 2's row named depth 8 and the model, its cache figures measured again, proposed
    # 6): the hold below needs them raced
    earlier = (
        ((entry.get("sweeps_by_llc") or {}).get(isa) or {}).get(llc)
        if llc
        else (entry.get("sweeps") or {}).get(isa)
    )
    held = held_sweeps(earlier, case)
    if held and held not in names:
        names.append(held)
    if len(names) < 2:
        return {
            isa: {
                "depth": 1,
                "proposed": depth,
                "case": case,
                "threads": a.threads,
                "why": "the model proposes no sweeps here",
                **({"llc": llc} if llc else {}),
            }
        }

    def measured(pick: list[str]) -> dict:
        """a.rounds rounds, twice as many when they leave a race unsettled (the median beyond the
        margin, the interval not: the host's bandwidth moves within minutes)."""
        return more_if_unsettled(pick, lambda p: race(a, p, run))

    def second(pick: list[str]) -> tuple[dict, str]:
        """The winner (or the model's proposal) alone against single steps, on this race's rounds and
        those the row's earlier second race of the pair kept (pooled)."""
        rerun, pool = pooled(earlier, pick, case, measured(pick))
        c = decide.choose_best(pick, [rerun[k] for k in pick], 0)
        confirm = {
            "raced": pick[1],
            "verdict": c.comparisons[0]["verdict"],
            "figures": {k: round(statistics.median(x), 1) for k, x in rerun.items()},
            "runs": {k: common.spread(x) for k, x in rerun.items()},
            "decisive": c.decisive,
            "why": c.why,
            **pool,
            "rates": {k: [round(x, 1) for x in rerun[k]] for k in pick},  # for the next race to pool
        }
        return confirm, confirm["verdict"]

    rates = measured(names)
    d = decide.choose_best(names, [rates[k] for k in names], 0)
    won, confirm, slower, standing = names[0], None, False, None
    if d.chosen != 0:  # faster beyond noise: a second race of the winner alone must say so too
        confirm, w = second([names[0], names[d.chosen]])
        won = names[d.chosen] if w == decide.FASTER else names[0]
    elif depth > 1 and d.comparisons[0]["verdict"] == decide.SLOWER:  # the model's proposal, slower
        confirm, w = second(names[:2])
        slower = w == decide.SLOWER
    if won != names[0] and held in names and held != won:  # both sweeps pay: the row's holds unless beaten
        won, standing = hold_unless_beaten(held, won, measured)
    unconfirmed = None
    if won == names[0] and held in names and (confirm or {}).get("raced") != held:
        # The row's sweeps, neither this race's choice nor raced alone by it: a first race that chose
        # nothing, or another depth whose second race then failed, says nothing of them. They race
        # single steps alone, on their rounds pooled with those the row's earlier second race of them
        # kept, and hold the row only when faster beyond noise there (on the Zen 4 guest at radius 4
        # depth 2 won the first race, failed its second at 1.25x, and the row's depth 3, 1.22x single
        # steps in the race before, would have gone unraced).
        unconfirmed = confirm
        confirm, w = second([names[0], held])
        won = held if w == decide.FASTER else names[0]
    said(
        f"radius {radius} {isa} sweeps ({', '.join(names[1:])}) against single steps"
        + (
            f" with {llc} last-level cache{'s' if llc == 'two' else ''} (the host agreed "
            f"{agreed['agreed']}/{agreed['runs']})"
            if llc
            else ""
        )
        + f": {won}"
        + (" (slower twice)" if slower else "")
        + (f" (the row's {held} alone: {unconfirmed['raced']} unconfirmed)" if unconfirmed else "")
        + (f" (the row's {held} alone)" if confirm and confirm["raced"] == held and not unconfirmed else ""),
        names,
        rates,
        confirm,
        standing=standing,
    )
    tiles = {"tile_cache": won.split()[1]} if " " in won else {}
    return {
        isa: entry_of(
            won,
            names,
            rates,
            d,
            confirm,
            standing=standing,
            depth=int(won.split()[0]),
            slower=slower,
            proposed=depth,
            **({"proposed_in_l2": l2_depth} if any(k.endswith(" L2") for k in names) else {}),
            **({"proposed_in_l3": l3_depth} if any(k.endswith(" L3") for k in names) else {}),
            **tiles,
            case=case,
            threads=a.threads,  # a run of another team does not take the verdict
            **({"unconfirmed_race": unconfirmed} if unconfirmed else {}),
            **({"llc": llc, "host_agreed": f"{agreed['agreed']}/{agreed['runs']}"} if llc else {}),
        )
    }
