#!/usr/bin/env python3
"""The instruction-set variants of bandwall-peak and bandwall-stream in one binary, side by side.

A build for a portable baseline (BANDWALL_ARCH=x86-64-v2, as the NUMA guests use) carries an
AVX-512, an AVX2 + FMA and a generic (baseline: SSE2, multiply + add) variant of the FMA chains and
of the STREAM kernels, and picks the best the CPU runs. This runs each variant the CPU offers with
--isa, one thread, in an order alternated from round to round: the FMA peak per core (best of 3
repetitions) and the non-temporal-store STREAM copy and triad (best of 20 repetitions, 128 MiB
arrays). Medians over the rounds, and each variant's ratio to generic.

  cmake -S . -B build/v2 -G Ninja -DBANDWALL_ARCH=x86-64-v2 -DBANDWALL_TESTS=OFF
  cmake --build build/v2 -j2 --target bandwall-peak bandwall-stream
  python3 bench/isa_variants.py --bindir build/v2/bin --rounds 5
"""

from __future__ import annotations

import statistics
import subprocess

import common


def offered(peak: str) -> list[str]:
    """The variants this CPU runs: bandwall-peak refuses the others with exit 2."""
    isas = []
    for isa in ("avx512", "avx2", "generic"):
        probe = subprocess.run(
            [peak, "--isa", isa, "--seconds", "0.001", "--reps", "1", "--threads", "1"], capture_output=True
        )
        if probe.returncode == 0:
            isas.append(isa)
    return isas


def main() -> None:
    a = common.parse(common.parser(__doc__, rounds=5, min_rounds=3))
    peak, stream = common.tool(a.bindir, "bandwall-peak"), common.tool(a.bindir, "bandwall-stream")
    isas = offered(peak)
    res: dict[tuple[str, str], list[float]] = {}
    detail = {}
    for r in range(a.rounds):
        for isa in common.order(isas, r, reverse=True):
            p = common.record([peak, "--isa", isa, "--threads", "1", "--reps", "3"])
            res.setdefault(("FMA peak, double, GFlop/s per core", isa), []).append(
                p["result"]["per_core_gflops_dp"]
            )
            res.setdefault(("FMA peak, single, GFlop/s per core", isa), []).append(
                p["result"]["per_core_gflops_sp"]
            )
            for k in ("copy", "triad"):
                s = common.record([stream, "--isa", isa, "--kernel", k, "--threads", "1", "--size", "128M"])
                res.setdefault((f"STREAM {k}, NT stores, best GB/s", isa), []).append(
                    s["result"]["best_GBps"]
                )
            c = p["config"]
            detail[isa] = f"{c['vector_bits']}-bit, {'FMA' if c['fma_instruction'] else 'multiply + add'}"
    print("variants:", "; ".join(f"{i}: {d}" for i, d in detail.items()))
    print(
        "| measure | "
        + " | ".join(isas)
        + " | "
        + " | ".join(f"{i} / generic" for i in isas if i != "generic")
        + " |"
    )
    print("|---|" + "---:|" * (2 * len(isas) - 1))
    for what in dict.fromkeys(w for w, _ in res):
        med = {i: statistics.median(res[(what, i)]) for i in isas}
        ratios = [f"{med[i] / med['generic']:.2f}x" for i in isas if i != "generic"]
        print(f"| {what} | " + " | ".join(f"{med[i]:.2f}" for i in isas) + " | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    main()
