#!/usr/bin/env python3
"""ISO3DFD at every space order: bandwall at its defaults, bandwall step by step, Devito's default
operator at space_order=2R, and the memory wall, round by round.

Per radius R (space order 2R) on the same grid, the same equation (next = 2*prev - next +
vel*lap(prev), lap the central Laplacian of order 2R with spacing 50: the exact weights, the NUMA
3DFD article's own at R = 8), the article's source, single precision, the same threads pinned the
same way:
  - bandwall: bandwall-iso3dfd --radius R with its defaults (blocks auto, --time-block auto: sweeps
    in time when its model and a race on the run's data say they pay);
  - bandwall step by step: the same with --time-block 1;
  - Devito: its default operator (no autotuning) at space_order=2R;
  - the memory wall: bandwall-stream triad on the same threads, over the 16 bytes a point a step by
    step moves (prev, vel and next read, next written): the rate no step-by-step run exceeds with its
    grid in memory;
  - before each bandwall run, a cache line's round trip between the first two threads' CPUs
    (bandwall-topo --llc-probe): the "one L3" column counts the probes bandwall's own threshold
    judges one last-level cache (a virtual machine's host may move its vCPUs onto two L3s and back, which moves
    what sweeps by the team together get);
  - step by step against the row kernel's in-core roof: its operation mix as this core ran it, from
    registers and L1, times the threads (each record's incore_model; bandwall.kernels.roofs.mix_bound);
  - both bandwall runs against the row kernel itself with its data in L2, timed on one core, times
    the threads (bandwall.kernels.roofs.kernel_bound): what L3 and memory cost them.
Every round runs them all, every other round in the reverse order, with a rest before each; the
median of the rounds is kept, and the ratios are given as the ratio of the medians and as the
median and range of the ratios within each round (a pair sees the same state of a noisy host).
Throughput counts interior points x steps per second (Devito's compilation is left out); bandwall's
is the whole run's (result.run: every step over the seconds from the end of the data's first
initialisation, what the defaults spend choosing, their races and checks, included), not the timed
steps' after the choosing alone.

With --without-row, every round runs the defaults a third time, as on a CPU the table does not know:
with a copy of the table of measured choices that leaves this CPU's row out (BANDWALL_ISA_CHOICES)
and a cache folder of their own, so that their first run races its variant, shape, prefetch and
sweeps on its own data and the later rounds take what it kept. Their columns: the rate, their ratio
to step by step, and bandwall's (with the row) to theirs: what this CPU's row is worth.

Run with the Python that has Devito (bench/setup makes it); --no-devito runs without it:
  ./bootstrap setup && bench/setup
  build/devito-venv/bin/python bench/iso3dfd_orders.py --rounds 5 --results bench/results/FILE.md
  python3 bench/iso3dfd_orders.py --radii 1 --interior 512 --no-devito
  build/devito-venv/bin/python bench/iso3dfd_orders.py --rounds 5 --without-row
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import choice_table
import common
from iso3dfd_vs_devito import ALL_CPUS, DevitoRun, pin_openmp, rates, run_bandwall

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
from bandwall.kernels import roofs  # noqa: E402
from bandwall.views.host import SHOWN_STEAL  # noqa: E402

SEED_RADIUS = 8
STEP_BYTES = 16  # a point's compulsory bytes step by step


def parse() -> argparse.Namespace:
    p = common.parser(__doc__, rounds=5, min_rounds=3, results=True)
    p.add_argument(
        "--radii", default="1,2,3,4,5,6,7,8", help="radii to run, comma-separated (default every radius, 1-8)"
    )
    p.add_argument("--interior", type=int, default=256, help="interior points per dimension (default 256)")
    p.add_argument("--steps", type=int, default=40, help="time steps (default 40)")
    p.add_argument("--threads", type=int, default=2, help="OpenMP threads, pinned compact (default 2)")
    p.add_argument("--pause", type=float, default=2.0, help="seconds of rest before each program (default 2)")
    p.add_argument("--no-devito", action="store_true", help="leave Devito out")
    p.add_argument(
        "--without-row",
        action="store_true",
        help="also run the defaults with the table of measured choices without this CPU's row (a CPU the table "
        "does not know), paired round by round",
    )
    a = common.parse(p)
    a.radii = common.radii(p, a.radii, SEED_RADIUS)
    if a.interior < 1 or a.steps < 1 or a.threads < 1:
        p.error("--interior, --steps and --threads must be at least 1")
    return a


def bandwall(exe: str, r: int, n: int, steps: int, threads: int, time_block: str, env: dict) -> dict:
    cpus = sorted(ALL_CPUS)[:threads]  # this process's own mask narrows once Devito has run
    # on the CPUs the bandwall run gets (Devito's pinned master thread narrows this process's mask)
    wide = {"preexec_fn": lambda: os.sched_setaffinity(0, ALL_CPUS)}
    trip = common.llc_probe(Path(exe).parent, cpus, **wide) if len(cpus) > 1 else None
    rec = run_bandwall(
        [exe, *(str(n + 2 * r),) * 3, str(steps), "auto", "auto", "auto", "compact", str(threads)]
        + ["--radius", str(r), "--time-block", time_block, "--json"],
        env,
    )
    tb = rec["config"].get("time_block", {})
    mp = common.whole_run_rate(rec)
    model = rec["result"].get("incore_model", {})
    mix = roofs.mix_bound(model, threads, mp)
    kernel = roofs.kernel_bound(model, threads, mp)
    return {
        "mpoints_per_s": mp,
        "norm": rec["result"]["norm"],
        "isa": f"{rec['config']['isa']} {rec['config']['row_shape']['name']} ({rec['config']['radius_path']})",
        "depth": tb.get("depth", 1),
        "depth_how": tb.get("how", ""),
        "llc_probe": trip,
        "mix_bound": mix.get("mix_bound_mpoints_per_s"),  # the row kernel's in-core roof
        "kernel_bound": kernel.get("kernel_bound_mpoints_per_s"),  # the row kernel with its data in L2
        "steal": stolen(rec),
    }


def wall(exe: str, threads: int) -> dict:
    rec = run_bandwall([exe, "--kernel", "triad", "--threads", str(threads), "--bind", "compact"])
    gbps = float(rec["result"]["best_GBps"])
    return {"mpoints_per_s": gbps * 1e3 / STEP_BYTES, "GBps": gbps, "steal": stolen(rec)}


def stolen(rec: dict) -> float | None:
    """The share of its CPUs' time the host took while a native run ran (provenance.steal)."""
    s = rec["provenance"].get("steal")
    return s["share"] if s else None


def steal_cell(samples: list[dict]) -> str:
    """The host's steal over a row's native runs: the most it took of a run's CPU time, and in how
    many runs it took a hundredth or more."""
    shares = [x["steal"] for x in samples if x.get("steal") is not None]
    if not shares:
        return "-"
    return f"{max(shares):.0%} ({sum(x >= SHOWN_STEAL for x in shares)}/{len(shares)})"


def paired(a: list[dict], b: list[dict]) -> str:
    return common.spread(common.ratios(rates(a), rates(b)), "{:.2f}", "x")


def incore(samples: list[dict], roof: str = "mix_bound") -> str:
    """The runs' median rate against the median of their records' roof (mix_bound: the in-core roof of
    the row kernel's operation mix; kernel_bound: the row kernel with its data in L2)."""
    found = [x[roof] for x in samples if x.get(roof)]
    if not found:
        return "-"
    top = statistics.median(found)
    return f"{100 * median(samples) / top:.0f}% of {top:.0f}"


def in_l2(s: dict) -> str:
    """The defaults' and step by step's medians against the median of their records' roof of the row
    kernel with its data in L2: what a run would reach were nothing beyond L2 to slow it."""
    shown = [incore(s[name], "kernel_bound") for name in ("bandwall", "step by step")]
    return "-" if "-" in shown else f"{shown[0]}, {shown[1]}"


# How a run came to its depth without racing on its own steps (config.time_block.how): a run at
# depth 1 that way ran step by step's configuration, so its ratio to step by step is the rounds' noise.
UNRACED = {"cached": "k", "model": "=", "table": "="}


def depth_mark(x: dict) -> str:
    """A bandwall run's depth for the table: k when an earlier run's race kept it, = when it is
    depth 1 that no race chose (the model or the table proposed no sweeps)."""
    mark = UNRACED.get(x["depth_how"], "")
    return f"{x['depth']}{mark if mark == 'k' or x['depth'] == 1 else ''}"


def median(samples: list[dict]) -> float:
    return statistics.median(rates(samples))


def main() -> None:
    a = parse()
    pin_openmp(a.threads)
    iso, stream = common.tool(a.bindir, "bandwall-iso3dfd"), common.tool(a.bindir, "bandwall-stream")
    devitos = {} if a.no_devito else {r: DevitoRun(a.interior, False, r) for r in a.radii}
    for d in devitos.values():
        d.run(1)  # compilation, outside the timed runs
    names = ["bandwall", "step by step", "memory wall"] + ([] if a.no_devito else ["devito"])
    no_row, cpu = {}, None
    if a.without_row:
        names.append("no row")
        cpu = choice_table.microarch_name(a.bindir)
        work = common.scratch("bandwall-bench-no-row-")
        without = work / "table-without-this-cpu.json"
        without.write_text(json.dumps(choice_table.without_row(choice_table.load(), cpu)))
        no_row = {"BANDWALL_ISA_CHOICES": str(without), "BANDWALL_CACHE_DIR": str(work / "cache")}

    def runner(r: int, name: str):
        if name == "bandwall":
            return lambda: bandwall(iso, r, a.interior, a.steps, a.threads, "auto", {})
        if name == "no row":
            return lambda: bandwall(iso, r, a.interior, a.steps, a.threads, "auto", no_row)
        if name == "step by step":
            return lambda: bandwall(iso, r, a.interior, a.steps, a.threads, "1", {})
        if name == "memory wall":
            return lambda: wall(stream, a.threads)
        return lambda: devitos[r].run(a.steps)

    got = common.alternate(
        {(r, name): runner(r, name) for r in a.radii for name in names},
        a.rounds,
        reverse=True,
        pause=a.pause,
        after=lambda k, got: print(
            f"round {k + 1}: "
            + "; ".join(
                f"R={r} " + ", ".join(f"{n} {got[(r, n)][-1]['mpoints_per_s']:.0f}" for n in names)
                for r in a.radii
            ),
            file=sys.stderr,
        ),
    )
    samples = {r: {name: got[(r, name)] for name in names} for r in a.radii}
    lines = [
        f"ISO3DFD {a.interior}^3 interior, {a.steps} steps, {a.threads} threads compact, single precision, "
        f"median of {a.rounds} rounds; CPU: {common.cpu_name()}"
        + (
            f"; no row: the defaults without this CPU's row ({cpu or 'none'}) in the table"
            if a.without_row
            else ""
        ),
        "",
        "| radius (order) | bandwall MPoints/s | step by step | memory wall | vs wall | vs step by step "
        + ("| Devito | vs Devito " if not a.no_devito else "")
        + "| depths | kernel | norm vs Devito | one L3 | step by step / in-core "
        + "| bandwall, step by step / kernel in L2 | host steal "
        + (
            "| no row MPoints/s | no row vs step by step | bandwall vs no row | no row's depths | no row's kernel "
            if a.without_row
            else ""
        )
        + "|",
        "|---|---|---|---|---|---|"
        + ("---|---|" if not a.no_devito else "")
        + "---|---|---|---|---|---|---|"
        + ("---|---|---|---|---|" if a.without_row else ""),
    ]
    for r in a.radii:
        s = samples[r]
        depths = ",".join(depth_mark(x) for x in s["bandwall"])
        row = [
            f"{r} ({2 * r})",
            f"{median(s['bandwall']):.0f}",
            f"{median(s['step by step']):.0f}",
            f"{median(s['memory wall']):.0f} (triad {statistics.median(x['GBps'] for x in s['memory wall']):.1f} GB/s)",
            paired(s["bandwall"], s["memory wall"]),
            paired(s["bandwall"], s["step by step"]),
        ]
        agree = "-"
        if not a.no_devito:
            row += [f"{median(s['devito']):.0f}", paired(s["bandwall"], s["devito"])]
            bw, dv = s["bandwall"][-1]["norm"], s["devito"][-1]["norm"]
            agree = f"{abs(bw - dv) / dv:.1e}"
        trips = [x["llc_probe"] for x in s["bandwall"] + s["step by step"] if x["llc_probe"] is not None]
        one = f"{sum(t.one_llc for t in trips)}/{len(trips)}" if trips else "-"
        native = s["bandwall"] + s["step by step"] + s["memory wall"]
        row += [
            depths,
            s["bandwall"][-1]["isa"],
            agree,
            one,
            incore(s["step by step"]),
            in_l2(s),
            steal_cell(native),
        ]
        if a.without_row:
            n = s["no row"]
            row += [
                f"{median(n):.0f}",
                paired(n, s["step by step"]),
                paired(s["bandwall"], n),
                ",".join(depth_mark(x) for x in n),
                n[-1]["isa"],
            ]
        lines.append("| " + " | ".join(row) + " |")
    if not a.no_devito:
        lines += ["", f"Devito: {samples[a.radii[0]]['devito'][-1]['isa']}"]
    lines += [
        "",
        "depths: bandwall's time steps per sweep round by round (k: kept from an earlier run's race; =: one, as "
        "the model or the table proposed, with no race: step by step's configuration, so its ratio to step by "
        "step is the rounds' noise)",
        "one L3: of the probes run just before each bandwall run (bandwall-topo --llc-probe), those in which a "
        "cache line went from the first thread's CPU to the second's and back fast enough for bandwall's "
        "threshold (the two share a last-level cache; a virtual machine's host may move its vCPUs onto two L3s "
        "and back)",
        "step by step / in-core: the step-by-step runs' median against the median of their records' in-core "
        "roof (the row kernel's operation mix as this core ran it, from registers and L1, times the threads), "
        "with that roof in MPoints/s",
        "bandwall, step by step / kernel in L2: the two runs' medians against the median of their records' "
        "timing of the row kernel on a block of its rows that half of L2 holds, one core, times the threads "
        "(incore_model.kernel_in_l2; bandwall.kernels.roofs.kernel_bound): its loads, L1 misses and dependences "
        "counted, nothing from beyond L2; the swept shape may differ from the step shape timed there",
        "host steal: the most a virtual machine's host took of a bandwall, step-by-step or triad run's CPU time "
        f"(/proc/stat's steal), and in how many of those runs it took {SHOWN_STEAL:.0%} or more: a round it fell "
        "in ran slow, and its ratios with it",
    ]
    common.publish("\n".join(lines), a.results)


if __name__ == "__main__":
    main()
