#!/usr/bin/env python3
"""Fills the table of measured variant choices (native/common/isa_choices.json) for this CPU.

For each STREAM kernel (with non-temporal and regular stores) and the FMA peak, runs each variant
this CPU offers with --isa, in an order alternated from round to round: STREAM at 1 thread and at
all threads (default size, 4x the LLC), bandwall-peak per core. (The ISO3DFD row kernel's variant
races with its shapes and other knobs in bench/iso3dfd_kernel_choices.py.) A variant's figure is the median over
rounds (STREAM: the mean of its 1-thread and all-thread medians' ratios to the widest variant, times
the widest's figure, so both thread counts weigh alike); the spread (min-max over rounds) is
printed beside it. The entry names the variant the project's decision rule chooses on the rounds
(bandwall.core.decide: each round's figures paired, a variant replacing the machine model's default
only when faster beyond noise, and then again in a second race of the two alone; where the row named
another variant before, that one and the winner race a third time alone, the row's as the
default) and keeps the decision and those races, so a row never names a coin toss.

With --write, the row of this CPU's micro-architecture (named as in
native/common/machine.cpp, which bandwall-peak's record reports) gets these entries, each with
the command, the date and the CPU, beside the entries other benches wrote there (the ISO3DFD rows
are bench/iso3dfd_kernel_choices.py's, the models bench/iso3dfd_time_model.py's); without it the
entries are printed.

    python3 bench/isa_choices.py --rounds 5 --write
    python3 bench/isa_choices.py --rounds 3 --kernels stream.dot,peak.fma
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import sys
from pathlib import Path

import choice_races
import choice_table
import common
from choice_table import ROOT, TABLE

sys.path.insert(0, str(ROOT / "python"))
STREAM_KERNELS = ["copy", "scale", "add", "triad", "nstream", "dot"]


def keys(selected: str | None) -> list[str]:
    out = []
    for k in STREAM_KERNELS:
        out += [f"stream.{k}"] if k == "dot" else [f"stream.{k}.nt", f"stream.{k}.regular"]
    out += ["peak.fma"]
    if selected:
        want = selected.split(",")
        unknown = [w for w in want if w not in out]
        if unknown:
            raise SystemExit(f"unknown kernels {unknown} (known: {', '.join(out)})")
        out = [k for k in out if k in want]
    return out


def runs_of(key: str, threads: list[int]) -> list[tuple[str, list, str]]:
    """(tag, arguments, figure path) of each run that measures key (STREAM: one per thread count)."""
    part = key.split(".")
    if part[0] == "stream":
        stores = part[2] if len(part) > 2 else "nt"
        return [
            (
                f"{t}t",
                [
                    "bandwall-stream",
                    "--kernel",
                    part[1],
                    "--stores",
                    stores,
                    "--threads",
                    t,
                    "--bind",
                    "compact",
                    "--reps",
                    10,
                ],
                "avg_GBps",
            )
            for t in threads
        ]
    if key == "peak.fma":
        return [
            ("1t", ["bandwall-peak", "--threads", 1, "--reps", 3, "--seconds", "0.1"], "per_core_gflops_dp")
        ]
    raise ValueError(f"no runs measure {key}")


def describe(isa: str, figure: float, runs: dict) -> str:
    """One variant's figure with each thread count's median and range."""
    parts = [f"{t} {r['median']:.1f} [{r['min']:.1f}-{r['max']:.1f}]" for t, r in runs.items()]
    return f"{isa} {figure:.2f} ({', '.join(parts)})"


def measure(a, key: str, threads: list[int], pick: list[str]) -> tuple[dict, dict]:
    """The variants of pick in a.rounds rounds, their order alternated round by round: each run's
    figure per (thread tag, variant), and each round's figure per variant (its runs as shares of
    pick[0]'s median at each thread count, so that the rounds pair across variants and both thread
    counts weigh alike)."""
    runs = {(tag, isa): [] for tag, _, _ in runs_of(key, threads) for isa in pick}
    for r in range(a.rounds):
        for tag, args, path in runs_of(key, threads):
            for isa in common.order(pick, r, reverse=True):
                rec = common.record([common.tool(a.bindir, args[0]), *args[1:], "--isa", isa], valid=True)
                runs[(tag, isa)].append(rec["result"][path])
    tags = list(dict.fromkeys(tag for tag, _ in runs))
    norm = {t: statistics.median(runs[(t, pick[0])]) for t in tags}
    per_round = {
        isa: [statistics.mean(runs[(t, isa)][r] / norm[t] for t in tags) for r in range(a.rounds)]
        for isa in pick
    }
    return runs, per_round


def choose(a, key: str, threads: list[int], isas: list[str], names: list[str], held: str | None):
    """Every variant of isas raced on key, the decision rule choosing from names[0] (the machine
    model's default); a winner races the default again alone, and the row's earlier variant (held)
    holds against a newcomer unless beaten alone twice in a row (choice_races.settle), so that a row does not change
    with one race that passed the rule by chance among the 24 comparisons of a run. Returns the runs,
    the variant chosen, the first decision, the second race and the third (None where none ran)."""
    runs, per_round = measure(a, key, threads, isas)
    # the others fastest first: the rule takes a candidate over the one it holds only when faster
    # beyond noise, so in the order given a slower variant beyond noise of the default stays ahead
    # of a faster one within noise of it, and the entry would name a variant below its figures' best
    ranked = [names[0], *sorted(names[1:], key=lambda i: -statistics.median(per_round[i]))]
    best, d, confirm, standing = choice_races.settle(
        ranked,
        per_round,
        lambda pair: measure(a, key, threads, pair)[1],
        "variant",
        held if held != names[0] else None,
    )
    return runs, ranked, best, d, confirm, standing


def offered(bindir: Path) -> list[str]:
    rec = common.record([common.tool(bindir, "bandwall-topo")])
    return rec["result"]["isa"]["offered"]


def main() -> int:
    ap = common.parser(__doc__, rounds=5, min_rounds=3)
    ap.add_argument("--kernels", default=None, help="comma-separated keys (default: all)")
    ap.add_argument("--threads", default=None, help="STREAM thread counts (default: 1 and all CPUs)")
    ap.add_argument(
        "--write", action="store_true", help="write the entries into this CPU's row of isa_choices.json"
    )
    a = common.parse(ap)  # exports --bindir as BANDWALL_BINDIR, which manifest reads
    threads = (
        [int(t) for t in a.threads.split(",")] if a.threads else sorted({1, len(os.sched_getaffinity(0))})
    )
    from bandwall.core import decide, manifest

    isas = offered(a.bindir)
    default = manifest.manifest()["isa"]["model_default"]
    peak = common.record(
        [common.tool(a.bindir, "bandwall-peak"), "--reps", 1, "--seconds", "0.001", "--threads", 1]
    )
    micro = peak["config"]["microarch"]
    if "name" not in micro:
        raise SystemExit(f"no machine model knows this CPU: {micro.get('unavailable')}")
    kernels: dict = {}
    command = "python3 bench/isa_choices.py " + " ".join(sys.argv[1:])
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    held_row = (choice_table.row_named(choice_table.load(), micro["name"]) or {}).get("kernels", {})
    names = [default["isa"]] + [i for i in isas if i != default["isa"]]
    for key in keys(a.kernels):
        runs, ranked, best, d, confirm, standing = choose(
            a, key, threads, isas, names, (held_row.get(key) or {}).get("isa")
        )
        tags = list(dict.fromkeys(tag for tag, _ in runs))
        med = {k: statistics.median(v) for k, v in runs.items()}
        widest = isas[0]
        figures = {
            isa: round(
                statistics.mean(med[(t, isa)] / med[(t, widest)] for t in tags)
                * statistics.mean(med[(t, widest)] for t in tags),
                2,
            )
            for isa in isas
        }
        per_run = {
            isa: {
                t: {
                    "median": round(med[(t, isa)], 2),
                    "min": round(min(runs[(t, isa)]), 2),
                    "max": round(max(runs[(t, isa)]), 2),
                }
                for t in tags
            }
            for isa in isas
        }
        unit = {"peak": "GFlop/s per core"}.get(key.split(".")[0], "GB/s")
        kernels[key] = {
            "isa": best,
            "figures": figures,
            "unit": unit,
            "runs": per_run,
            "decision": {
                "default": default["isa"],
                "default_why": default["why"],
                "chosen": best,
                # decided: the first race's winner, confirmed alone and not held off by the row's
                # earlier variant (a variant the row held stands within noise: not decided anew)
                "decisive": d.decisive and best == ranked[d.chosen],
                "why": d.why,
                "rule": vars(decide.rule()),
                **({"second_race": confirm} if confirm else {}),
                **({"incumbent_race": standing} if standing else {}),
            },
            "command": command,
            "measured": today,
        }
        print(
            f"{key}: {best}  "
            + "  ".join(describe(i, figures[i], per_run[i]) for i in isas)
            + (f"  (second race: {confirm['why']})" if confirm else "")
            + (
                f"  (against the row's {standing['held']}: {choice_races.against(standing)})"
                if standing
                else ""
            ),
            file=sys.stderr,
        )
    row = {
        "microarch": micro["name"],
        "cpu": f"{platform.processor() or 'x86_64'}: {peak['provenance'].get('cpu_model', '?')}, {micro['vendor']} "
        f"family {micro['family']} model {micro['model']}, {len(os.sched_getaffinity(0))} CPUs",
        "measured": today,
        "command": command,
        "kernels": kernels,
    }
    if not a.write:
        print(json.dumps(row, indent=1))
        return 0
    table = choice_table.load()
    old = choice_table.row_named(table, row["microarch"])
    if old:  # the row's other entries (the ISO3DFD rows, the models) are other benches' to write
        old["kernels"].update(kernels)
        old["cpu"] = row["cpu"]
    else:
        table["rows"].append(row)
    choice_table.save(table)
    print(f"wrote the {row['microarch']} row of {TABLE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
