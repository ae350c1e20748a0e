"""The rail advisor: from an mpiprof record's message-size histograms and a model of one network
rail (latency, bandwidth), the communication time with 1..R rails, the rail count worth using, and
the settings that ask Open MPI/UCX and MVAPICH for it.

Model (per message of b bytes on one rail: latency + b / bandwidth): a message at least stripe_min
bytes long is striped over r rails (latency + b / (r * bandwidth)); a smaller one goes over one rail
whatever r is. Each size bin contributes count * latency + bytes / (bandwidth * rails used), with
the bin's exact bytes from the record (size_bytes_hist), so nothing is approximated by bin centres.
Point-to-point traffic counts the sending side only (each message once); collectives are counted
as one message of their bytes per call, which their algorithms do not respect: when they weigh
much, the estimate is flagged uncertain, as MPI-PROF found on T2K-Tsukuba.
"""

from __future__ import annotations

from dataclasses import dataclass

from bandwall.core.errors import UsageError

P2P_KINDS = ("send", "sendrecv", "rma")
COLL_KIND = "coll"
UNCERTAIN_SHARE = 0.2


@dataclass(frozen=True)
class Rail:
    latency_s: float
    bandwidth_Bps: float
    source: str

    def __post_init__(self):
        if not (self.latency_s >= 0 and self.bandwidth_Bps > 0):
            raise UsageError("a rail needs a latency >= 0 and a bandwidth > 0")


def rail_from_pingpong(rec: dict) -> Rail:
    r = rec["result"]
    return Rail(
        r["latency_us"] * 1e-6, r["bandwidth_GBps"] * 1e9, f"mpi-pingpong record {rec.get('id', '?')}"
    )


def bins(calls: list[dict], kinds: tuple[str, ...]) -> dict[int, tuple[int, int]]:
    """Lower bound of each size bin -> (messages, bytes), summed over the calls of kinds."""
    out: dict[int, tuple[int, int]] = {}
    for c in calls:
        if c.get("kind") not in kinds:
            continue
        sizes, size_bytes = c["size_hist"], c.get("size_bytes_hist", {})
        for low, n in sizes.items():
            b = int(size_bytes.get(low, int(low) * n))
            m0, b0 = out.get(int(low), (0, 0))
            out[int(low)] = (m0 + n, b0 + b)
    return out


def time_s(hist: dict[int, tuple[int, int]], rail: Rail, rails: int, stripe_min: int) -> float:
    t = 0.0
    for low, (n, b) in hist.items():
        used = rails if low >= stripe_min else 1
        t += n * rail.latency_s + b / (rail.bandwidth_Bps * used)
    return t


def advise(
    rec: dict, rail: Rail, max_rails: int = 4, stripe_min: int = 16384, tolerance: float = 0.05
) -> dict:
    """The advice as a dict: estimated times per rail count, recommended rails, settings, caveats."""
    if rec.get("tool") != "mpiprof":
        raise UsageError(f"record {rec.get('id', '?')} is a {rec.get('tool')!r} record, not an mpiprof one")
    if max_rails < 1:
        raise UsageError("--rails must be at least 1")
    calls = rec["result"]["calls"]
    p2p, coll = bins(calls, P2P_KINDS), bins(calls, (COLL_KIND,))
    rows = []
    for r in range(1, max_rails + 1):
        tp, tc = time_s(p2p, rail, r, stripe_min), time_s(coll, rail, r, stripe_min)
        rows.append({"rails": r, "p2p_s": tp, "collective_s": tc, "total_s": tp + tc})
    best = rows[-1]["total_s"]
    recommended = next(row["rails"] for row in rows if row["total_s"] <= best * (1 + tolerance))
    one = rows[0]["total_s"]
    coll_share = rows[0]["collective_s"] / one if one > 0 else 0.0
    p2p_msgs = sum(n for n, _ in p2p.values())
    p2p_bytes = sum(b for _, b in p2p.values())
    striped = sum(n for low, (n, _) in p2p.items() if low >= stripe_min)
    notes = []
    if coll_share > UNCERTAIN_SHARE:
        notes.append(
            f"collectives carry {100 * coll_share:.0f}% of the estimated time: their algorithms split and "
            f"combine messages, so the rail count for them is uncertain"
        )
    if p2p_msgs == 0 and not coll:
        notes.append("the profile has no messages: any rail count does")
    return {
        "rail": {
            "latency_us": rail.latency_s * 1e6,
            "bandwidth_GBps": rail.bandwidth_Bps * 1e-9,
            "source": rail.source,
        },
        "stripe_min": stripe_min,
        "tolerance": tolerance,
        "estimates": rows,
        "recommended_rails": recommended,
        "p2p_messages": p2p_msgs,
        "p2p_mean_bytes": p2p_bytes / p2p_msgs if p2p_msgs else 0.0,
        "p2p_striped_share": striped / p2p_msgs if p2p_msgs else 0.0,
        "collective_share": coll_share,
        "uncertain": coll_share > UNCERTAIN_SHARE,
        "notes": notes,
        "settings": settings(recommended, stripe_min),
    }


def settings(rails: int, stripe_min: int) -> dict[str, dict[str, str]]:
    """Environment settings asking each MPI stack for rails rails above stripe_min bytes."""
    return {
        "Open MPI with UCX": {
            "OMPI_MCA_pml": "ucx",
            "UCX_MAX_RNDV_RAILS": str(rails),
            "UCX_MAX_EAGER_RAILS": "1",
            "UCX_RNDV_THRESH": str(stripe_min),
        },
        "Open MPI with the openib BTL": {"OMPI_MCA_btl_openib_max_btls": str(rails)},
        "MVAPICH2": {"MV2_NUM_HCAS": str(rails), "MV2_STRIPING_THRESHOLD": str(stripe_min)},
    }


def parse_size(text: str) -> int:
    """Bytes of "16K", "1M", "4096" (binary units)."""
    units = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = t[-1] if t and t[-1] in "KMG" else ""
    try:
        value = int(float(t[: len(t) - len(unit)]) * units[unit])
    except ValueError as e:
        raise UsageError(f"{text!r} is not a size (16K, 1M, 4096)") from e
    if value < 0:
        raise UsageError(f"{text!r} is not a size (16K, 1M, 4096)")
    return value
