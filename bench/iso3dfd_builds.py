#!/usr/bin/env python3
"""Builds of bandwall-iso3dfd, or option sets of one build, against each other: the same arguments,
rounds alternated.

For a kernel change, copy the executable aside before it (cp build/py/bin/bandwall-iso3dfd
/tmp/before), rebuild, and run both; or build one executable per register shape. For a knob, give
one build and an option set a program (--with LABEL=OPTIONS, the first the baseline): every build
runs with every option set. Every round runs each program once (every other round in the reverse
order, so that none always follows the same one); the script prints each program's median and
range of MPoints/s, the median and range of its per-round ratios to the first program (a pair of
runs in one round sees the same state of a noisy host), and the decision rule's verdict on them:
their 90% interval against its margin, as bandwall's own choices are made. A program whose run
fails or whose record does not pass its check stops the comparison.

--rate run takes the whole run's rate (result.run: every step, what the defaults spend choosing
included) instead of the timed steps'. --probe times a cache line's round trip between the first
two CPUs before each run (bandwall-topo --llc-probe, from the first build's folder) and gives the verdicts again over the rounds whose
every probe says one last-level cache, and over those whose every probe says two: a virtual
machine's host may move two vCPUs the guest sees on one L3 onto two and back.

    python3 bench/iso3dfd_builds.py --rounds 12 /tmp/before build/py/bin/bandwall-iso3dfd
    python3 bench/iso3dfd_builds.py --rounds 12 --threads 1 --args "272 272 272 20 272 8 128" A B C
    python3 bench/iso3dfd_builds.py --rounds 40 --rate run --probe --args "262 262 262 40 auto auto auto
        --radius 3" --with "d6=--time-block 6" --with "d3=--time-block 3" build/py/bin/bandwall-iso3dfd
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
from pathlib import Path

import common


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = common.parser(__doc__, rounds=10, min_rounds=3, bindir=False)
    p.add_argument("builds", nargs="+", help="bandwall-iso3dfd executables; the first is the baseline")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--args",
        default="272 272 272 20 auto auto auto",
        help="the positional arguments: n1 n2 n3 steps n1_block n2_block n3_block (and options every program takes)",
    )
    p.add_argument(
        "--with",
        dest="options",
        action="append",
        default=[],
        metavar="LABEL=OPTIONS",
        help="an option set every build runs with, as a program of its own (repeat; the first the baseline)",
    )
    p.add_argument(
        "--rate", choices=["timed", "run"], default="timed", help="the timed steps' rate or the whole run's"
    )
    p.add_argument(
        "--probe", action="store_true", help="a cache line's round trip between the first two CPUs"
    )
    a = common.parse(p, argv)
    for b in a.builds:
        if not Path(b).is_file():
            p.error(f"no executable {b}")
    sets = []
    for o in a.options:
        label, eq, opts = o.partition("=")
        if not eq or not label:
            p.error(f"--with takes LABEL=OPTIONS, not {o!r}")
        sets.append((label, shlex.split(opts)))
    if len({label for label, _ in sets}) < len(sets):
        p.error("give each --with its own label")
    a.programs = programs(a.builds, sets)
    if len(a.programs) < 2:
        p.error("give at least two builds, or two option sets with --with")
    return a


def programs(builds: list[str], sets: list[tuple[str, list[str]]]) -> dict[str, tuple[str, list[str]]]:
    """Label -> (build, its extra options): each build alone without option sets; otherwise each
    build with each set, labelled by the set (and the build too when there are several)."""
    if not sets:
        return {b: (b, []) for b in builds}
    return {(f"{b} {label}" if len(builds) > 1 else label): (b, opts) for b in builds for label, opts in sets}


def run(build: str, args: list[str], threads: int, rate: str) -> float:
    rec = common.record([build, *args, "--threads", str(threads), "--json"], valid=True)
    return float((rec["result"]["run"] if rate == "run" else rec["result"])["mpoints_per_s"])


def verdicts(rates: dict[str, list[float]], rounds: list[int]) -> list[str]:
    """A line a program over the given rounds: its median and range, its per-round ratios to the
    first program's and the decision rule's verdict on them."""
    from bandwall.core import decide

    names = list(rates)
    base = [rates[names[0]][r] for r in rounds]
    lines = []
    for n in names:
        xs = [rates[n][r] for r in rounds]
        line = f"{n:<40}{statistics.median(xs):>10.1f}{f'{min(xs):.1f}-{max(xs):.1f}':>20}"
        line += f"{common.spread(common.ratios(xs, base), '{:.3f}', 'x'):>26}"
        if n != names[0] and len(rounds) >= 3:
            i = decide.ratio_interval(xs, base)
            line += f"  {i.text()} {decide.verdict(i)}"
        lines.append(line)
    return lines


def trip_text(trip: common.LineTrip | None) -> str:
    return "-" if trip is None else f"{trip.ns:.0f}"


def main(argv: list[str] | None = None) -> None:
    a = parse(argv)
    args = shlex.split(a.args)
    probes: dict[str, list[common.LineTrip | None]] = {n: [] for n in a.programs}
    topo = Path(a.builds[0]).parent

    def one(name: str) -> float:
        if a.probe:
            probes[name].append(common.llc_probe(topo, [0, 1]))
        build, opts = a.programs[name]
        return run(build, [*args, *opts], a.threads, a.rate)

    mp = common.alternate(
        {n: (lambda n=n: one(n)) for n in a.programs},
        a.rounds,
        reverse=True,
        after=lambda r, mp: print(
            f"round {r + 1}: "
            + ", ".join(f"{mp[n][-1]:.1f}" for n in a.programs)
            + (" probes " + " ".join(trip_text(probes[n][-1]) for n in a.programs) if a.probe else ""),
            file=sys.stderr,
        ),
    )
    rate = "the whole run's" if a.rate == "run" else "the timed steps'"
    print(f"bandwall-iso3dfd {a.args} --threads {a.threads}, {a.rounds} alternated rounds ({rate} MPoints/s)")
    head = f"{'program':<40}{'median':>10}{'range':>20}{'per round vs first':>26}  decision rule"
    groups = {"every round": list(range(a.rounds))}
    if a.probe:
        one_llc = [
            r for r in range(a.rounds) if all(p and p.one_llc for p in (probes[n][r] for n in a.programs))
        ]
        two = [
            r for r in range(a.rounds) if all(p and not p.one_llc for p in (probes[n][r] for n in a.programs))
        ]
        groups |= {
            "rounds whose every probe says one last-level cache": one_llc,
            "rounds whose every probe says two": two,
        }
    for title, rounds in groups.items():
        print(f"{title}: {len(rounds)}")
        if rounds:
            print(head)
            print("\n".join(verdicts(mp, rounds)))


if __name__ == "__main__":
    main()
