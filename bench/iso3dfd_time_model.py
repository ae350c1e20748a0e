#!/usr/bin/env python3
"""Measures, for this CPU, the figure the ISO3DFD temporal-blocking model weighs its cache traffic
by: how many times memory's bandwidth the last-level cache feeds the team with (the table of
measured choices' row for this CPU, its "models" entry "iso3dfd.time_model", `llc_over_memory`;
without it the model assumes 2).

Each round runs STREAM triad with cached stores (`bandwall-stream --kernel triad --stores regular`,
the threads pinned compact) twice, in an order alternated round by round: on arrays the last-level
cache holds (each a twelfth of it, at most --llc-size, at least four times the team's L2) and on
arrays four times the last-level cache (bandwall-stream's default size). The ratio of a round's two
best rates is that round's figure; the entry holds the median over the rounds with its interval
(bandwall.core.decide), the rates, the command and the date.

With --write, this CPU's micro-architecture row (named as in native/common/machine.cpp) gets the
entry; without it, it is printed.

    python3 bench/iso3dfd_time_model.py --rounds 9 --write
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

import common
from choice_table import ROOT, write

sys.path.insert(0, str(ROOT / "python"))
KEY = "iso3dfd.time_model"
MiB = 1 << 20


def parse():
    p = common.parser(__doc__, rounds=9, min_rounds=5)
    p.add_argument("--threads", type=int, default=2, help="threads, pinned compact (default 2)")
    p.add_argument(
        "--llc-size",
        type=int,
        default=16,
        help="most MiB an array in the last-level cache takes (default 16)",
    )
    p.add_argument("--pause", type=float, default=0.5, help="seconds of rest before each run (default 0.5)")
    p.add_argument("--write", action="store_true", help="write the entry into this CPU's row of the table")
    return common.parse(p)


def llc_array_bytes(l2: int, l3: int, threads: int, most: int) -> int:
    """Bytes per array of a triad the last-level cache holds: a twelfth of it (the three arrays a
    quarter), at most `most`, at least four times the team's L2 over the three arrays."""
    size = min(l3 // 12, most)
    return max(size, (4 * l2 * threads) // 3, MiB)


def cache_bytes(level: int, cpu: int = 0) -> int:
    """The size of this CPU's cache of `level` (sysfs), 0 when unknown."""
    base = Path(f"/sys/devices/system/cpu/cpu{cpu}/cache")
    for index in base.glob("index*"):
        try:
            if (
                int((index / "level").read_text()) != level
                or (index / "type").read_text().strip() == "Instruction"
            ):
                continue
            text = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        unit = {"K": 1 << 10, "M": MiB, "G": 1 << 30}.get(text[-1:], 1)
        return int(text.rstrip("KMG")) * unit
    return 0


def main() -> int:
    from bandwall.core import decide

    a = parse()
    l2 = cache_bytes(2) or MiB
    l3 = cache_bytes(3) or 32 * MiB
    size = llc_array_bytes(l2, l3, a.threads, a.llc_size * MiB)
    stream = common.tool(a.bindir, "bandwall-stream")
    base = [stream, "--kernel", "triad", "--stores", "regular", "--threads", a.threads, "--bind", "compact"]
    runs = {
        "llc": lambda: common.record([*base, "--size", size, "--reps", 100], valid=True),
        "memory": lambda: common.record([*base, "--reps", 10], valid=True),
    }
    got = common.alternate(runs, a.rounds, reverse=True, pause=a.pause)
    rates = {k: [r["result"]["best_GBps"] for r in recs] for k, recs in got.items()}
    ratio = decide.ratio_interval(rates["llc"], rates["memory"])
    today = datetime.date.today().isoformat()
    command = common.command_line()
    entry = {
        "llc_over_memory": round(ratio.median, 3),
        "interval": ratio.to_json(),
        "figures": {k: round(sorted(v)[len(v) // 2], 2) for k, v in rates.items()},
        "unit": "GB/s",
        "runs": {k: common.spread(v) for k, v in rates.items()},
        "threads": a.threads,
        "llc_array_bytes": size,
        "memory_array_bytes": got["memory"][0]["config"]["size_per_array_bytes"],
        "command": command,
        "measured": today,
    }
    print(
        f"last-level cache over memory, triad at {a.threads} threads: {ratio.text()}; "
        f"llc {entry['runs']['llc']} GB/s, memory {entry['runs']['memory']} GB/s",
        file=sys.stderr,
    )
    a.write = a.write and ratio.enough
    if not ratio.enough:
        print("bench: too few rounds for an interval: nothing written", file=sys.stderr)
    return write(a, {KEY: entry}, command, today, field="models")


if __name__ == "__main__":
    sys.exit(main())
