#!/usr/bin/env python3
"""`--isa auto` against every forced variant, each run of auto starting from an empty cache.

For each kernel (ISO3DFD 256³ interior on 2 threads, STREAM dot and triad at the default size on
all CPUs), every round runs the kernel once with `--isa auto` (its own empty cache folder, so the
choice is made anew: from the table's row, or measured on the run's own data where the table has
none) and once with each variant forced, in an order rotated from round to round. Printed per round:
the variant auto ran and how it chose it, its rate, and its ratio to the best forced variant of the
same round; then the median and range of those ratios. With --no-table, an empty table replaces the
built-in one, so that auto measures every time (the path of a CPU the table does not know).

    python3 bench/auto_vs_forced.py --bindir build/py/bin --rounds 4
    python3 bench/auto_vs_forced.py --bindir build/py/bin --rounds 4 --no-table --kernels iso3dfd
"""

from __future__ import annotations

import sys
from pathlib import Path

import common

KERNELS = {
    "iso3dfd": (
        ["bandwall-iso3dfd", 272, 272, 272, 20, "auto", "auto", "auto", "compact", 2, "--json"],
        "mpoints_per_s",
    ),
    "dot": (["bandwall-stream", "--kernel", "dot", "--reps", 10], "median_GBps"),
    "triad": (["bandwall-stream", "--kernel", "triad", "--reps", 10], "median_GBps"),
}


def run(bindir: Path, args: list, isa: str, env: dict) -> dict:
    return common.record([common.tool(bindir, args[0]), *args[1:], "--isa", isa], env=env, valid=True)


def main() -> int:
    ap = common.parser(__doc__, rounds=4)
    ap.add_argument("--kernels", default="iso3dfd,dot,triad")
    ap.add_argument(
        "--no-table", action="store_true", help="an empty table of measured choices: auto measures"
    )
    a = common.parse(ap)
    topo = common.record([common.tool(a.bindir, "bandwall-topo")])
    isas = topo["result"]["isa"]["offered"]
    tmp = common.scratch("bw-auto-")
    env = {}
    if a.no_table:
        (tmp / "table.json").write_text('{"rows": []}')
        env["BANDWALL_ISA_CHOICES"] = str(tmp / "table.json")
    print(f"CPU: {topo['provenance']['cpu_model']}; variants {', '.join(isas)}", file=sys.stderr)
    for name in a.kernels.split(","):
        args, field = KERNELS[name]
        ratios = []
        for r in range(a.rounds):
            figures, chosen = {}, None
            for isa in common.order(["auto", *isas], r):
                cache = tmp / f"cache-{name}-{r}-{isa}"  # empty: auto chooses anew
                rec = run(a.bindir, args, isa, {**env, "BANDWALL_CACHE_DIR": str(cache)})
                figures[isa] = rec["result"][field]
                if isa == "auto":
                    chosen = rec["config"]["isa_choice"]
            best = max(isas, key=lambda i: figures[i])
            ratio = figures["auto"] / figures[best]
            ratios.append(ratio)
            forced = ", ".join(f"{i} {figures[i]:.1f}" for i in isas)
            print(
                f"{name} round {r + 1}: auto ran {chosen['isa']} ({chosen['how']}) {figures['auto']:.1f}; "
                f"forced {forced}; auto / best forced ({best}) {ratio:.3f}",
                file=sys.stderr,
            )
        print(
            f"{name}: auto / best forced, median {common.spread(ratios, '{:.3f}')} over {len(ratios)} rounds"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
