"""What bandwall already knows, used to prune the space before a trial runs: the knee of a STREAM
sweep (stored for this topology, or a quick one) prunes thread counts of memory-bound kernels, and
the ISO3DFD model's cache window (of its own record) prunes y blocks."""

from __future__ import annotations

from bandwall.core import store
from bandwall.core.errors import BandwallError
from bandwall.kernels import iso3dfd, stream, sweep

QUICK_SWEEP_REPS = 5
MAX_Y_BLOCKS = 6


def decided_knee(rec: dict, what: str) -> tuple[int | None, str]:
    """(knee or None, why) of a sweep record: None when the decision rule left the knee undecided
    (no smaller core count shown within the knee's tolerance), so no thread count is pruned."""
    r = rec["result"]
    k = r["knee_cores"]
    d = r.get("knee_decision")
    if d is not None and not d["decisive"]:
        return None, f"{what}: knee undecided ({d['why']}), every thread count kept"
    return k, f"{what}: knee at {k} cores"


def stored_knee(kernel: str, digest: str, db) -> tuple[int | None, str] | None:
    """(knee cores or None when undecided, why) of the newest sweep of kernel stored for this
    topology digest."""
    try:
        with store.Store(db, readonly=True) as s:
            for rec in s.list("sweep", limit=200):
                if (
                    rec["provenance"].get("topology_digest") == digest
                    and rec["config"].get("kernel") == kernel
                ):
                    return decided_knee(rec, f"sweep #{rec['id']} of {kernel}")
    except BandwallError:
        return None
    return None


def knee(kernel: str, counts: tuple[int, ...], digest: str, db, size, keep) -> tuple[int | None, str, int]:
    """(knee or None, why, runs spent): from a stored sweep, else a quick sweep (QUICK_SWEEP_REPS
    repetitions per core count, stored through keep) when there are more than two counts to prune."""
    found = stored_knee(kernel, digest, db)
    if found:
        return found[0], found[1], 0
    if len(counts) <= 2:
        return (
            None,
            f"no stored sweep of {kernel}; {len(counts)} thread counts are cheaper to race than to sweep",
            0,
        )
    points = [
        stream.run(kernel, threads=n, size=size, reps=QUICK_SWEEP_REPS) for n in range(1, max(counts) + 1)
    ]
    rec = sweep.sweep_record(kernel, points, config={"bind": "compact", "quick": True})
    keep(rec)
    k, why = decided_knee(rec, f"a quick sweep of {kernel} ({len(points)} runs)")
    return k, why, len(points)


def prune_threads(counts: tuple[int, ...], knee_cores: int | None) -> tuple[int, ...]:
    """Thread counts of a memory-bound kernel from the knee on: below it the cores do not reach the
    knee's share of the best bandwidth, so none of them can be the best."""
    if knee_cores is None:
        return counts
    kept = tuple(n for n in counts if n >= knee_cores)
    return kept or counts[-1:]


def y_blocks(model: dict, n2: int) -> tuple[tuple[int, ...], int, str]:
    """(y blocks, the model's, why) from the record of a 0-step run with blocks auto: powers of two
    and the model's own y block, up to the interior, pruned where the window of prev (the model's
    window, scaled by its rows: y block + 2 x the radius) overflows the L2, where every point
    would fetch its z neighbours from beyond the L2 again and the memory roof falls."""
    choice = model["config"]["blocks_choice"].get("model", {})
    y0 = int(model["config"]["blocks"][1])
    window = float(model["result"]["traffic_model"]["window_bytes"])
    l2 = int(choice.get("l2_bytes", 0))
    radius = int(model["config"].get("radius", iso3dfd.default_radius()))
    interior = n2 - 2 * radius
    halo = 2 * radius
    cands = {y0} | {2**i for i in range(2, 12) if 2**i <= interior}

    def fits(y: int) -> bool:
        return not l2 or window * (y + halo) / (y0 + halo) <= l2

    kept = sorted(y for y in cands if fits(y))
    kept = sorted(sorted(kept, key=lambda y: abs(y - y0))[:MAX_Y_BLOCKS])
    dropped = sorted(y for y in cands if not fits(y))
    why = f"the model's y block {y0}, powers of two up to the interior {interior}"
    if dropped:
        why += f"; {', '.join(map(str, dropped))} left out: their window of prev overflows the {l2 // 1024} KiB L2"
    return tuple(kept), y0, why
