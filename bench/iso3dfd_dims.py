#!/usr/bin/env python3
"""ISO3DFD over MPI ranks: the shapes of the grid of ranks, and the time steps per sweep, side by side
(by default the 3-D 2x2x2 against z-slabs 1x1x8 at 8 ranks, step by step), alternated round by round.

Every round runs `bandwall iso3dfd --ranks N --dims D --time-block T` once per case (each shape at
each depth), the order rotating from round to round, a pause before each run (a guest that hands
freed memory back to its host runs a program started right after another's exit slowly at first).
For each case it prints the halo bytes a rank sends per step (the largest rank's), the median and
range of the run's time and MPoints/s, the exchange measured alone (the slowest rank's, median over
rounds: one a step, or one a sweep), the ping-pong model's prediction of it, the share of the
exchange hidden behind the inner update (step by step only), the points a rank computed again (its
deep halo, with sweeps), and the per-round time ratio of each case to the first.

    .venv/bin/python bench/iso3dfd_dims.py --rounds 5
    .venv/bin/python bench/iso3dfd_dims.py --ranks 8 --dims 2x2x2,1x1x8,4x2x1 --grid 192x192x192
    .venv/bin/python bench/iso3dfd_dims.py --ranks 2 --dims 1x1x2 --time-blocks 1,4 --grid 272x272x272 --iters 40
"""

from __future__ import annotations

import sys

import common


def run(args, case: tuple[str, str]) -> dict:
    dims, depth = case
    argv = [common.tool(args.bindir, "bandwall"), "iso3dfd", "--ranks", str(args.ranks), "--dims", dims]
    argv += ["--time-block", depth]
    argv += ["--grid", args.grid, "--iters", str(args.iters), "--threads", str(args.threads)]
    argv += ["--no-store", "--format", "json"]
    rec = common.record(argv)
    return rec[0] if isinstance(rec, list) else rec


def main() -> int:
    ap = common.parser(__doc__, rounds=5, summary=True)
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--dims", default="2x2x2,1x1x8")
    ap.add_argument("--grid", default="192x192x192")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1, help="threads a rank")
    ap.add_argument("--time-blocks", default="1", help="time steps per sweep, comma-separated")
    ap.add_argument("--pause", type=float, default=3.0, help="seconds before each run")
    args = common.parse(ap)
    cases = [(d, t) for d in args.dims.split(",") for t in args.time_blocks.split(",")]
    shapes = [f"{d} t{t}" if len(args.time_blocks.split(",")) > 1 else d for d, t in cases]
    got = common.alternate(
        {s: (lambda c=c: run(args, c)) for s, c in zip(shapes, cases)}, args.rounds, pause=args.pause
    )
    first = shapes[0]
    print(
        f"ISO3DFD {args.grid}, {args.iters} steps, {args.ranks} ranks x {args.threads} thread(s), "
        f"{args.rounds} rounds; CPU: {got[first][0]['provenance'].get('cpu_model', '?')}"
    )
    cols = [
        "dims",
        "halo B/rank/step",
        "time s",
        "MPoints/s",
        "exchange alone s",
        "model s",
        "hidden",
        "computed again",
        f"time / {first}",
    ]
    print(" | ".join(cols))
    for s in shapes:
        recs = got[s]
        res = [x["result"] for x in recs]
        ratios = common.ratios([x["time_s"] for x in res], [x["result"]["time_s"] for x in got[first]])
        model = res[0].get("exchange_model") or {}
        alone = [x["exchange_model"]["alone_max_s"] for x in res if x.get("exchange_model")]
        predicted = model.get("predicted_max_s")
        print(
            " | ".join(
                [
                    s,
                    f"{res[0]['halo_bytes_per_rank_max']:.0f}",
                    common.spread([x["time_s"] for x in res], "{:.4g}"),
                    common.spread([x["mpoints_per_s"] for x in res], "{:.0f}"),
                    common.spread(alone, "{:.4g}") if alone else "-",
                    f"{predicted:.3g}" if predicted is not None else "- (no ping-pong model)",
                    common.spread([x["hidden_share_mean"] for x in res], "{:.2f}"),
                    f"{max(p.get('redundant_share', 0) for p in res[0]['ranks']):.1%}",
                    common.spread(ratios, "{:.2f}"),
                ]
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
