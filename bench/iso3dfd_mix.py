#!/usr/bin/env python3
"""ISO3DFD's row kernel against its own operation mix, per variant and radius: the port model's
cycles per output vector (result.incore_model.cycles_per_vector), the shape's loads, FMAs, adds
and shuffles run independent from registers and L1 on this core (result.incore_model.mix), the
kernel itself on a block of the run's rows that half of L2 holds (result.incore_model.kernel_in_l2),
and the kernel step by step on one thread, at the mix's clock, on a grid L3 holds ((256 + 2R) x 48
x 48, the per-step median): where each rung loses to the one above it. Each run is repeated --runs times, the variants and radii alternating.

    python3 bench/iso3dfd_mix.py --bindir build/py/bin --runs 3
    python3 bench/iso3dfd_mix.py --isas avx2 --radii 4 --row-pitch packed
"""

from __future__ import annotations

import statistics

import common


def main() -> None:
    p = common.parser(__doc__, rounds=None, results=True)
    p.add_argument("--runs", type=int, default=3, help="runs of each variant and radius")
    p.add_argument("--isas", help="variants, comma separated (default: the vector variants this CPU runs)")
    p.add_argument("--radii", default="1,2,3,4,5,6,7,8", help="radii, comma separated")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--row-pitch", default="auto", help="as bandwall-iso3dfd --row-pitch")
    a = common.parse(p)
    exe = common.tool(a.bindir, "bandwall-iso3dfd")
    if not a.isas:
        topo = common.record([common.tool(a.bindir, "bandwall-topo")])
        a.isas = ",".join(i for i in topo["result"]["isa"]["offered"] if i != "generic")
    cases = [(isa, int(r)) for isa in a.isas.split(",") for r in a.radii.split(",")]
    got: dict[tuple[str, int], list[dict]] = {c: [] for c in cases}
    for run in range(a.runs):
        for isa, r in common.order(cases, run):
            n = 256 + 2 * r
            rec = common.record(
                [exe, n, 48, 48, a.steps, "auto", "auto", "auto", "compact", 1, "--radius", r,
                 "--time-block", 1, "--isa", isa, "--row-pitch", a.row_pitch, "--json"],
                env={"OMP_NUM_THREADS": "1"},
                valid=True,
            )  # fmt: skip
            got[(isa, r)].append(rec)
    head = f"ISO3DFD row kernel against its operation mix, cycles per output vector; CPU: {common.cpu_name()}"
    lines = [
        head,
        "",
        "| variant | radius | shape | row pitch | port model | mix as run | clock GHz | kernel in L2 (block) "
        "| kernel step by step (1 thread) | in L2 over mix | step by step over mix |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for isa, r in cases:
        recs = got[(isa, r)]
        model = recs[0]["result"]["incore_model"]
        mixes = [x["result"]["incore_model"]["mix"] for x in recs]
        cycles = [m["cycles_per_vector"] for m in mixes]
        clocks = [m["clock_ghz"] for m in mixes]
        kernel = [
            model["lanes"] * m["clock_ghz"] * 1e3 / x["result"]["step_mpoints_per_s"]["median"]
            for m, x in zip(mixes, recs)
        ]
        in_l2 = [
            model["lanes"]
            * m["clock_ghz"]
            * 1e3
            / x["result"]["incore_model"]["kernel_in_l2"]["mpoints_per_s_per_core"]
            for m, x in zip(mixes, recs)
            if "mpoints_per_s_per_core" in x["result"]["incore_model"]["kernel_in_l2"]
        ]
        k = model["kernel_in_l2"]
        if in_l2:
            block = "x".join(str(n) for n in k["block"])
            in_l2_cells = (
                f"{common.spread(in_l2)} ({block})",
                f"{statistics.median(in_l2) / statistics.median(cycles):.2f}x",
            )
        else:
            in_l2_cells = (f"unavailable: {k.get('unavailable', '?')}", "-")
        lines.append(
            f"| {isa} | {r} | {model['shape']} | {recs[0]['config']['row_pitch']['floats']} | "
            f"{model['cycles_per_vector']:.2f} | {common.spread(cycles)} | {statistics.median(clocks):.2f} | "
            f"{in_l2_cells[0]} | {common.spread(kernel)} | {in_l2_cells[1]} | "
            f"{statistics.median(kernel) / statistics.median(cycles):.2f}x |"
        )
    common.publish("\n".join(lines), a.results)


if __name__ == "__main__":
    main()
