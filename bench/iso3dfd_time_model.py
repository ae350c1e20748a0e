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

The same rounds measure how much of the last-level cache the team's data stays in (a guest may
report far more than the share of the host's cache it gets): triad on arrays from the in-cache size
up to the reported cache, in steps of the square root of 2, each run's median rate (of its
repetitions) paired with the memory run's of its round. A size holds when the decision rule's
interval of that ratio lies above half-way (geometrically) from memory's rate to the cache's; the
largest size up to which every size holds, counted as the three arrays' bytes, is the entry's
`llc_bytes` when it is smaller than the reported cache, and the temporal-blocking model then plans
with it (native/iso3dfd/caches.hpp).

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


def ladder(first: int, l3: int) -> list[int]:
    """Bytes per array from `first` up, in steps of the square root of 2 (whole 64-byte lines), while
    the three arrays fit in the reported last-level cache `l3` (at least `first`)."""
    sizes, k = [first], 1
    while 3 * int(first * 2 ** (k / 2)) <= l3:
        sizes.append(int(first * 2 ** (k / 2)) // 64 * 64)
        k += 1
    return sizes


def held_bytes(rungs: dict[int, list[float]], memory: list[float], over_memory: float, reported: int):
    """The bytes (the triad's three arrays) of the largest rung up to which every rung runs, by the
    decision rule's interval of its rates paired with memory's, above half-way (geometrically) from
    memory's rate to the cache's (over_memory times it); None when the last does too (the reported
    size stands), when even the first does not, or when the cache is no faster than memory beyond
    the rule's margin. Returns it with one row a rung (its ratio to memory: median, lo, hi)."""
    from bandwall.core import decide

    line = over_memory**0.5
    rows, held, going = [], None, over_memory > 1 + decide.rule().margin
    for size, rates in sorted(rungs.items()):
        iv = decide.ratio_interval(rates, memory)
        ok = going and iv.enough and iv.lo > line
        going = ok
        held = 3 * size if ok else held
        rows.append(
            {"bytes": 3 * size, **{k: round(getattr(iv, k), 3) for k in ("median", "lo", "hi")}, "held": ok}
        )
    if going or (held is not None and held >= reported):  # the last size (within a step of it) held
        held = None
    return held, rows, line


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
    sizes = ladder(size, l3)

    def triad(bytes_: int):
        return lambda: common.record(
            [*base, "--size", bytes_, "--reps", 100 if bytes_ == size else 20], valid=True
        )

    runs = {"memory": lambda: common.record([*base, "--reps", 10], valid=True)}
    runs |= {s: triad(s) for s in sizes}
    got = common.alternate(runs, a.rounds, reverse=True, pause=a.pause)
    got["llc"] = got.pop(size)
    rates = {k: [r["result"]["best_GBps"] for r in got[k]] for k in ("llc", "memory")}
    ratio = decide.ratio_interval(rates["llc"], rates["memory"])
    typical = {k: [r["result"]["median_GBps"] for r in recs] for k, recs in got.items()}
    held, rungs, line = held_bytes(
        {s: typical[s if s != size else "llc"] for s in sizes},
        typical["memory"],
        ratio.median,
        l3,
    )
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
        **({"llc_bytes": held} if held else {}),
        "llc_reported_bytes": l3,
        "llc_sizes": {"half_way_over_memory": round(line, 3), "rungs": rungs},
        "command": command,
        "measured": today,
    }
    print(
        f"last-level cache over memory, triad at {a.threads} threads: {ratio.text()}; "
        f"llc {entry['runs']['llc']} GB/s, memory {entry['runs']['memory']} GB/s",
        file=sys.stderr,
    )
    for r in rungs:
        print(
            f"  {r['bytes'] / MiB:7.1f} MiB of arrays: {r['median']:.2f}x memory [{r['lo']:.2f}-{r['hi']:.2f}]"
            f"{'' if r['held'] else ' (not held)'}",
            file=sys.stderr,
        )
    print(
        f"the team's share of the last-level cache: "
        f"{f'{held / MiB:.0f} MiB' if held else 'the reported size'} (reported {l3 / MiB:.0f} MiB)",
        file=sys.stderr,
    )
    a.write = a.write and ratio.enough
    if not ratio.enough:
        print("bench: too few rounds for an interval: nothing written", file=sys.stderr)
    return write(a, {KEY: entry}, command, today, field="models")


if __name__ == "__main__":
    sys.exit(main())
