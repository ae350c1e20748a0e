#!/usr/bin/env python3
"""bandwall tune against the exhaustive search of the same space, per CPU.

Two spaces: ISO3DFD (threads x binding x y blocks x instruction set) and a user's OpenMP program
(bench/omp_triad.c, compiled here, tuned through bandwall pin with --fom on its "triad: X GB/s"
line: threads x binding). For each, the tuner runs --tuner-runs times (default 3: does it name the
same best?), each with its default budget on an empty store
(no stored trials to resume); then the exhaustive search runs every configuration of the same
space (binding words that put the threads on the same CPUs counted once) in `--rounds` rotated
rounds. The tuner's choice is judged by its median in the exhaustive search's own rounds, against
the exhaustive best: "within 5% with at most 25% of the runs" is the target.

    .venv/bin/python bench/tune_vs_exhaustive.py                       # full size (minutes)
    .venv/bin/python bench/tune_vs_exhaustive.py --grid 48x48x48 --iters 2 --program-size 1M \\
        --rounds 2 --out /tmp                                          # a check of the script

Writes a section to bench/results/<date>-<cpu>.md (or --out DIR) and prints it.
"""

from __future__ import annotations

import datetime
import statistics
import sys
import tempfile
from pathlib import Path

import common
from bandwall.core.errors import BandwallError
from bandwall.tune import tune

HERE = Path(__file__).resolve().parent
ISO_KNOBS = ["threads", "bind", "yblock", "isa"]
PROGRAM_KNOBS = ["threads", "bind"]
FOM = r"triad: ([0-9.]+) GB/s"


def cpu_name(bindir: Path) -> tuple[str, str]:
    """('AMD EPYC 9R14 (AuthenticAMD family 25 model 17), 2 CPUs, AMD Zen 4', 'zen4'): /proc/cpuinfo
    and the microarchitecture bandwall's machine model names (the results files are named by it)."""
    info = common.cpu_fields()
    peak = common.tool(bindir, "bandwall-peak")
    rec = common.record([peak, "--threads", "1", "--reps", "1", "--seconds", "0.01"])
    arch = rec["config"]["microarch"].get("name", "")
    slug = arch.split()[-2].lower() + arch.split()[-1] if arch.startswith("AMD Zen") else ""
    name = common.cpu_name()
    return (
        f"{name}, {arch}" if arch else name
    ), slug or f"f{info.get('cpu family', 'x')}-m{info.get('model', 'x')}"


def exhaustive(sp, target, rounds: int) -> dict[str, list[float]]:
    """Every configuration of the space, `rounds` times, the order rotated each round."""
    grid = sp.grid()
    rates: dict[str, list[float]] = {sp.key(c): [] for c in grid}
    for r in range(rounds):
        for c in common.order(grid, r):
            try:
                rates[sp.key(c)].append(target.run({**sp.fixed, **c})[0])
            except BandwallError as e:
                print(f"  failed: {c}: {e}", file=sys.stderr)
        print(f"  exhaustive round {r + 1} of {rounds} done", file=sys.stderr, flush=True)
    return rates


def case(title: str, words: list[str], knobs: list[str], rounds: int, tuner_runs: int, **options) -> dict:
    """tuner_runs runs of bandwall tune, each on an empty store, then the exhaustive search."""
    recs = []
    for i in range(tuner_runs):
        with tempfile.TemporaryDirectory() as tmp:
            recs.append(tune.tune(words, knobs, db=str(Path(tmp) / "tune.db"), **options))
        print(f"  tuner run {i + 1} of {tuner_runs} done", file=sys.stderr, flush=True)
    _, target, sp = tune.prepare(words, knobs, None, lambda r: None, **options)
    rates = exhaustive(sp, target, rounds)
    medians = {k: statistics.median(v) for k, v in rates.items() if v}
    best_key = max(medians, key=medians.get)
    runs = []
    for rec in recs:
        r = rec["result"]
        chosen = sp.key(sp.canonical(r["best"]["config"]))
        mine, top = rates.get(chosen) or [0.0], rates[best_key]
        runs.append(
            {
                "overlap": chosen == best_key or (max(mine) >= min(top) and max(top) >= min(mine)),
                "tuned": chosen,
                "tuned_median": medians.get(chosen),
                "ratio": medians.get(chosen, 0.0) / medians[best_key],
                "runs": r["runs"],
                "why": r["why"],
                "tied": [sp.key(sp.canonical(t["config"])) for t in r["indistinguishable"]],
                "command": r["command"],
            }
        )
    return {
        "title": title,
        "size": sp.size(),
        "distinct": len(rates),
        "exhaustive_best": best_key,
        "exhaustive_median": medians[best_key],
        "exhaustive_runs": rounds * len(rates),
        "grid_runs": rounds * sp.size(),
        "unit": recs[0]["result"]["unit"],
        "tuner": runs,
    }


def stability(runs: list[dict]) -> str:
    """Whether the tuner's runs named the same best, or bests each run reported as indistinguishable
    from its own."""
    names = [r["tuned"] for r in runs]
    if len(set(names)) == 1:
        return f"all {len(runs)} runs named the same best"
    consistent = all(
        b == a or b in ra["tied"] or a in rb["tied"]
        for ra, a in zip(runs, names)
        for rb, b in zip(runs, names)
    )
    return f"{len(set(names))} different bests in {len(runs)} runs; " + (
        "each is in the others' indistinguishable sets (reported as within the spread)"
        if consistent
        else "not all reported as indistinguishable from each other"
    )


def section(rows: list[dict], rounds: int) -> str:
    out = [
        f"Each tuner run started on an empty store; then the exhaustive search ran every distinct "
        f"configuration {rounds} times in rotated rounds. Each tuner choice is judged by its median in "
        "those rounds against the exhaustive best.",
        "",
        "| space | grid (distinct) | exhaustive best | tuner run | tuner's choice | choice / best | "
        "ranges in the exhaustive rounds | tuner runs | share of the grid's runs | share of the distinct runs |",
        "|---|---:|---|---:|---|---:|---|---:|---:|---:|",
    ]
    for r in rows:
        for i, t in enumerate(r["tuner"]):
            head = (
                f"| {r['title']} | {r['size']} ({r['distinct']}) | {r['exhaustive_best']}: "
                f"{r['exhaustive_median']:.1f} {r['unit']} "
                if i == 0
                else "| | | "
            )
            out.append(
                head + f"| {i + 1} | {t['tuned']}: {(t['tuned_median'] or 0):.1f} | {t['ratio']:.3f} | "
                f"{'overlap the best' if t['overlap'] else 'apart from the best'} | {t['runs']} | "
                f"{t['runs'] / r['grid_runs']:.1%} | {t['runs'] / r['exhaustive_runs']:.1%} |"
            )
    out.append("")
    for r in rows:
        out.append(f"- {r['title']}: {stability(r['tuner'])}.")
        for i, t in enumerate(r["tuner"]):
            tied = f"; indistinguishable from {len(t['tied'])} others" if t["tied"] else ""
            out.append(f"  - run {i + 1}: {t['why']}{tied}. Run it: `{t['command']['bandwall']}`")
            if "plain" in t["command"]:
                out.append(f"    Without bandwall: `{t['command']['plain']}`")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = common.parser(__doc__, rounds=3)
    ap.add_argument("--grid", default="256x256x256", help="ISO3DFD grid (default 256x256x256)")
    ap.add_argument("--iters", type=int, default=20, help="ISO3DFD time steps (default 20)")
    ap.add_argument("--program-size", default="32M", help="omp_triad elements (default 32M)")
    ap.add_argument("--program-reps", type=int, default=10, help="omp_triad repetitions (default 10)")
    ap.add_argument(
        "--tuner-runs", type=int, default=3, help="runs of the tuner, each on an empty store (default 3)"
    )
    ap.add_argument("--out", default=str(HERE / "results"), help="folder of the result file")
    a = common.parse(ap)  # BANDWALL_BINDIR for bandwall tune's runs
    size = a.program_size.upper()
    elements = int(size[:-1]) << {"K": 10, "M": 20, "G": 30}[size[-1]] if size[-1] in "KMG" else int(size)
    exe = common.compile_c(HERE / "omp_triad.c", ["-O2", "-fopenmp"], ["-lm"])
    cpu, slug = cpu_name(a.bindir)
    rows = [
        case("ISO3DFD " + a.grid, ["iso3dfd"], ISO_KNOBS, a.rounds, a.tuner_runs, grid=a.grid, iters=a.iters),
        case(
            "omp_triad (a user's OpenMP program)",
            [str(exe), str(elements), str(a.program_reps)],
            PROGRAM_KNOBS,
            a.rounds,
            a.tuner_runs,
            fom=FOM,
        ),
    ]
    text = section(rows, a.rounds)
    title = f"## bandwall tune against the exhaustive search ({cpu})"
    path = Path(a.out) / f"{datetime.date.today().isoformat()}-{slug}.md"
    if not path.exists():
        path.write_text(f"# {datetime.date.today().isoformat()}: {cpu}\n")
    common.append_results(path, text, title)
    print(f"{title}\n\n{text}")
    print(f"written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
