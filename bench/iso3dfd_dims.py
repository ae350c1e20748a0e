#!/usr/bin/env python3
"""ISO3DFD over MPI ranks: the shapes of the grid of ranks side by side (by default the 3-D 2x2x2
against z-slabs 1x1x8 at 8 ranks), alternated round by round.

Every round runs `bandwall iso3dfd --ranks N --dims D` once per shape, the order rotating from round
to round. For each shape it prints the halo bytes a rank sends per step (the largest rank's), the
median and range of the run's time and MPoints/s, the exchange measured alone (the slowest rank's,
median over rounds), the ping-pong model's prediction of it, and the share of the exchange hidden
behind the inner update, with the per-round time ratio of each shape to the first.

    .venv/bin/python bench/iso3dfd_dims.py --rounds 5
    .venv/bin/python bench/iso3dfd_dims.py --ranks 8 --dims 2x2x2,1x1x8,4x2x1 --grid 192x192x192
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys


def run(args, dims: str) -> dict:
    argv = [sys.executable, "-m", "bandwall", "iso3dfd", "--ranks", str(args.ranks), "--dims", dims]
    argv += ["--grid", args.grid, "--iters", str(args.iters), "--threads", str(args.threads)]
    argv += ["--no-store", "--format", "json"]
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"{' '.join(argv)}: {out.stderr.strip().splitlines()[-1:]}")
    rec = json.loads(out.stdout)
    return rec[0] if isinstance(rec, list) else rec


def spread(vals: list[float], fmt: str = "{:.4g}") -> str:
    return f"{fmt.format(statistics.median(vals))} ({fmt.format(min(vals))}-{fmt.format(max(vals))})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--dims", default="2x2x2,1x1x8")
    ap.add_argument("--grid", default="192x192x192")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1, help="threads a rank")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    shapes = args.dims.split(",")
    got: dict[str, list[dict]] = {s: [] for s in shapes}
    for r in range(args.rounds):
        order = shapes[r % len(shapes) :] + shapes[: r % len(shapes)]
        for s in order:
            got[s].append(run(args, s))
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
        f"time / {first}",
    ]
    print(" | ".join(cols))
    for s in shapes:
        recs = got[s]
        res = [x["result"] for x in recs]
        ratios = [a["result"]["time_s"] / b["result"]["time_s"] for a, b in zip(recs, got[first])]
        model = res[0].get("exchange_model") or {}
        alone = [x["exchange_model"]["alone_max_s"] for x in res if x.get("exchange_model")]
        predicted = model.get("predicted_max_s")
        print(
            " | ".join(
                [
                    s,
                    f"{res[0]['halo_bytes_per_rank_max']:.0f}",
                    spread([x["time_s"] for x in res]),
                    spread([x["mpoints_per_s"] for x in res], "{:.0f}"),
                    spread(alone) if alone else "-",
                    f"{predicted:.3g}" if predicted is not None else "- (no ping-pong model)",
                    spread([x["hidden_share_mean"] for x in res], "{:.2f}"),
                    spread(ratios, "{:.2f}"),
                ]
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
