#!/usr/bin/env python3
"""ISO3DFD on a CPU without a row in the table of measured choices: what the race of the register
shape and the prefetch distance on the run's own steps keeps, against the compiled defaults and
against the CPU's own row, round by round.

This CPU is made one without a row by a copy of the table that leaves its row out
(BANDWALL_ISA_CHOICES), so that its runs meet the other CPUs' rows' choices as a new CPU's would.
Per radius, every round runs on the same grid, threads and variant (--isa, else the row's, else
auto), step by step (--time-block 1: the race of sweeps stays out), each program once, in rotated order:
  - compiled: --row-shape compiled --prefetch compiled, the knobs compiled in;
  - raced: the defaults without this CPU's row, with a cache folder of their own: the first runs
    race on their own steps and keep what the race settles, later runs take it (config.row_shape
    and config.prefetch say how: raced, kept or default, and the race's why);
  - row: the defaults with the built-in table, this CPU's row, when it has one.
Each run's rate is its whole run's (result.run: the race's steps and seconds included). The ratios
are the medians and ranges of per-round ratios; the last columns give what the raced
runs ran in the last round and how it was chosen.

  ./bootstrap setup
  python3 bench/iso3dfd_knob_race.py --rounds 5 --results bench/results/FILE.md
"""

from __future__ import annotations

import json
import statistics

import common
from choice_table import load, microarch_name, row_named, without_row

SEED_RADIUS = 8


def parse():
    p = common.parser(__doc__, rounds=5, min_rounds=3, results=True)
    p.add_argument("--radii", default="1,2,3,4,5,6,7,8", help="radii, comma-separated (default 1-8)")
    p.add_argument("--interior", type=int, default=256, help="interior points per dimension (default 256)")
    p.add_argument("--steps", type=int, default=40, help="time steps (default 40)")
    p.add_argument("--threads", type=int, default=2, help="OpenMP threads, pinned compact (default 2)")
    p.add_argument("--pause", type=float, default=1.0, help="seconds of rest before each run (default 1)")
    p.add_argument("--isa", default=None, help="the variant every run takes (default: the row's, else auto)")
    a = common.parse(p)
    a.radii = common.radii(p, a.radii, SEED_RADIUS)
    if a.interior < 1 or a.steps < 1 or a.threads < 1:
        p.error("--interior, --steps and --threads must be at least 1")
    return a


def key_of(r: int) -> str:
    return "iso3dfd.rows" if r == SEED_RADIUS else f"iso3dfd.rows.r{r}"


def knob(c: dict, name: str, value: str) -> str:
    """'2x4 (kept)': what a run ran and how it was chosen."""
    return f"{c[name][value]} ({c[name]['how']})"


def main() -> int:
    a = parse()
    exe = common.tool(a.bindir, "bandwall-iso3dfd")
    cpu = microarch_name(a.bindir)
    table = load()
    mine = row_named(table, cpu)
    work = common.scratch("bandwall-bench-knobs-")
    without = work / "table-without-this-cpu.json"
    without.write_text(json.dumps(without_row(table, cpu)))
    lines = [
        f"CPU model: {cpu or 'none'}; its row {'left out' if mine else 'absent'} for the raced runs; "
        f"{a.interior}³ interior, {a.steps} steps, {a.threads} threads, step by step, MPoints/s",
        "",
        "| radius | variant | compiled | raced | row | raced / compiled | raced / row | raced ran (last round) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in a.radii:
        n = a.interior + 2 * r
        row_isa = a.isa or (mine or {}).get("kernels", {}).get(key_of(r), {}).get("isa", "auto")
        base = [exe, n, n, n, a.steps, "auto", "auto", "auto", "compact", a.threads]
        base += ["--radius", r, "--isa", row_isa, "--time-block", 1, "--json"]
        cache = work / f"cache-r{r}"
        runs = {
            "compiled": lambda base=base: common.record(
                [*base, "--row-shape", "compiled", "--prefetch", "compiled"],
                env={"BANDWALL_ISA_CHOICES": str(without), "BANDWALL_CACHE_DIR": str(work / "none")},
                valid=True,
            ),
            "raced": lambda base=base, cache=cache: common.record(
                base, env={"BANDWALL_ISA_CHOICES": str(without), "BANDWALL_CACHE_DIR": str(cache)}, valid=True
            ),
        }
        if mine:
            runs["row"] = lambda base=base: common.record(
                base, env={"BANDWALL_CACHE_DIR": str(work / "none")}, valid=True
            )
        recs = common.alternate(runs, a.rounds, pause=a.pause)
        rate = {k: [common.whole_run_rate(x) for x in v] for k, v in recs.items()}
        med = {k: f"{statistics.median(v):.0f}" for k, v in rate.items()}
        last = recs["raced"][-1]["config"]
        ran = f"{knob(last, 'row_shape', 'name')}, prefetch {knob(last, 'prefetch', 'rows_ahead')}"
        vs_row = common.spread(common.ratios(rate["raced"], rate["row"]), "{:.2f}", "x") if mine else "-"
        vs_compiled = common.spread(common.ratios(rate["raced"], rate["compiled"]), "{:.2f}", "x")
        lines.append(
            f"| {r} | {last['isa']} | {med['compiled']} | {med['raced']} | {med.get('row', '-')} | "
            f"{vs_compiled} | {vs_row} | {ran} |"
        )
        print(lines[-1], flush=True)
        for i, x in enumerate(recs["raced"]):
            c = x["config"]
            why = [c[k].get("race", {}).get("why", "") for k in ("row_shape", "prefetch")]
            print(f"  round {i + 1}: {knob(c, 'row_shape', 'name')}: {why[0]}", flush=True)
            print(f"           prefetch {knob(c, 'prefetch', 'rows_ahead')}: {why[1]}", flush=True)
    common.publish("\n".join(lines) + "\n", a.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
