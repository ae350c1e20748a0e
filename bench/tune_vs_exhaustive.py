#!/usr/bin/env python3
"""bandwall tune against the exhaustive search of the same space, per CPU.

Two spaces: ISO3DFD (threads x binding x y blocks x instruction set) and a user's OpenMP program
(bench/omp_triad.c, compiled here, tuned through bandwall pin with --fom on its "triad: X GB/s"
line: threads x binding). For each, the tuner runs first with its default budget on an empty store
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

import argparse
import datetime
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bandwall.core.errors import BandwallError
from bandwall.tune import tune

HERE = Path(__file__).resolve().parent
ISO_KNOBS = ["threads", "bind", "yblock", "isa"]
PROGRAM_KNOBS = ["threads", "bind"]
FOM = r"triad: ([0-9.]+) GB/s"


def build_program(out: Path) -> Path:
    exe, src = out / "omp_triad", HERE / "omp_triad.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        out.mkdir(parents=True, exist_ok=True)
        cc = os.environ.get("CC", "cc")
        subprocess.run([cc, "-O2", "-fopenmp", "-o", str(exe), str(src), "-lm"], check=True)
    return exe


def cpu_name() -> tuple[str, str]:
    """('AMD EPYC family 25 model 17', 'amd-epyc-f25-m17') from /proc/cpuinfo."""
    info: dict[str, str] = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            k, _, v = line.partition(":")
            info.setdefault(k.strip(), v.strip())
    name = f"{info.get('model name', 'unknown CPU')} family {info.get('cpu family', '?')} model {info.get('model', '?')}"
    slug = "-".join(info.get("model name", "cpu").lower().split()[:2])
    return name, f"{slug}-f{info.get('cpu family', 'x')}-m{info.get('model', 'x')}"


def exhaustive(sp, target, rounds: int) -> dict[str, list[float]]:
    """Every configuration of the space, `rounds` times, the order rotated each round."""
    grid = sp.grid()
    rates: dict[str, list[float]] = {sp.key(c): [] for c in grid}
    for r in range(rounds):
        for c in grid[r % len(grid) :] + grid[: r % len(grid)]:
            try:
                rates[sp.key(c)].append(target.run({**sp.fixed, **c})[0])
            except BandwallError as e:
                print(f"  failed: {c}: {e}", file=sys.stderr)
        print(f"  exhaustive round {r + 1} of {rounds} done", file=sys.stderr, flush=True)
    return rates


def case(title: str, words: list[str], knobs: list[str], rounds: int, **options) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "tune.db")
        rec = tune.tune(words, knobs, db=db, **options)
        _, target, sp = tune.prepare(words, knobs, None, lambda r: None, **options)
        rates = exhaustive(sp, target, rounds)
    medians = {k: statistics.median(v) for k, v in rates.items() if v}
    best_key = max(medians, key=medians.get)
    chosen = sp.key(sp.canonical(rec["result"]["best"]["config"]))
    r = rec["result"]
    return {
        "title": title,
        "size": sp.size(),
        "distinct": len(rates),
        "exhaustive_best": best_key,
        "exhaustive_median": medians[best_key],
        "tuned": chosen,
        "tuned_median": medians.get(chosen),
        "ratio": medians.get(chosen, 0.0) / medians[best_key],
        "runs": r["runs"],
        "exhaustive_runs": rounds * len(rates),
        "grid_runs": rounds * sp.size(),
        "why": r["why"],
        "tied": [t["config"] for t in r["indistinguishable"]],
        "unit": r["unit"],
        "command": r["command"],
    }


def section(rows: list[dict], cpu: str, argv: list[str], rounds: int) -> str:
    date = datetime.date.today().isoformat()
    out = [
        f"## bandwall tune against the exhaustive search ({date}, {cpu})",
        "",
        "    .venv/bin/python bench/tune_vs_exhaustive.py " + shlex.join(argv),
        "",
        f"The exhaustive search ran every distinct configuration {rounds} times in rotated rounds; the "
        "tuner's choice is its median in those rounds against the exhaustive best.",
        "",
        "| space | grid (distinct) | exhaustive best | tuner's choice | choice / best | tuner runs | "
        "share of the grid's runs | share of the distinct runs |",
        "|---|---:|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['title']} | {r['size']} ({r['distinct']}) | {r['exhaustive_best']}: "
            f"{r['exhaustive_median']:.1f} {r['unit']} | {r['tuned']}: "
            f"{(r['tuned_median'] or 0):.1f} | {r['ratio']:.3f} | {r['runs']} | "
            f"{r['runs'] / r['grid_runs']:.1%} | {r['runs'] / r['exhaustive_runs']:.1%} |"
        )
    out.append("")
    for r in rows:
        tied = f"; indistinguishable from {len(r['tied'])} others" if r["tied"] else ""
        out.append(f"- {r['title']}: the tuner said: {r['why']}{tied}. Run it: `{r['command']['bandwall']}`")
        if "plain" in r["command"]:
            out.append(f"  Without bandwall: `{r['command']['plain']}`")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grid", default="256x256x256", help="ISO3DFD grid (default 256x256x256)")
    ap.add_argument("--iters", type=int, default=20, help="ISO3DFD time steps (default 20)")
    ap.add_argument("--program-size", default="32M", help="omp_triad elements (default 32M)")
    ap.add_argument("--program-reps", type=int, default=10, help="omp_triad repetitions (default 10)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the exhaustive search (default 3)")
    ap.add_argument("--out", default=str(HERE / "results"), help="folder of the result file")
    a = ap.parse_args()
    size = a.program_size.upper()
    elements = int(size[:-1]) << {"K": 10, "M": 20, "G": 30}[size[-1]] if size[-1] in "KMG" else int(size)
    exe = build_program(HERE.parent / "build" / "bench")
    cpu, slug = cpu_name()
    rows = [
        case("ISO3DFD " + a.grid, ["iso3dfd"], ISO_KNOBS, a.rounds, grid=a.grid, iters=a.iters),
        case(
            "omp_triad (a user's OpenMP program)",
            [str(exe), str(elements), str(a.program_reps)],
            PROGRAM_KNOBS,
            a.rounds,
            fom=FOM,
        ),
    ]
    text = section(rows, cpu, sys.argv[1:], a.rounds)
    path = Path(a.out) / f"{datetime.date.today().isoformat()}-{slug}.md"
    new = not path.exists()
    with open(path, "a") as f:
        f.write((f"# {datetime.date.today().isoformat()}: {cpu}\n\n" if new else "\n") + text)
    print(text)
    print(f"written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
