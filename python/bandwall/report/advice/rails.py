"""Network rails, when an MPI profile is stored: the rail count from the profile and a measured rail."""

from __future__ import annotations

from bandwall.core.errors import UsageError
from bandwall.core.spread import fmt
from bandwall.report.advice.base import PROGRAM, Evidence, Line, ids


def rails(ev: Evidence) -> list[Line]:
    """The rail count. No claims: the card compares a model's estimates (mpi_rails.advise, from the
    profile and one measured rail), which have no rounds to decide a difference beyond noise on."""
    from bandwall.mpi import mpi_rails

    profiles, pings = ev.all("mpiprof"), ev.all("mpi-pingpong")
    if not profiles:
        return []
    prof = profiles[-1]
    program = prof["config"].get("program", "the profiled program")
    if not pings:
        return [
            Line(
                "network rails",
                f"MPI profile of {program} ({prof['config'].get('ranks')} ranks)",
                "a rail model measured by bandwall mpi-pingpong",
                "no rail model stored: measure one rail, then ask for the rail count",
                "bandwall mpi-pingpong && bandwall mpi-rails",
                ids([prof]),
            )
        ]
    try:
        a = mpi_rails.advise(prof, mpi_rails.rail_from_pingpong(pings[-1]))
    except UsageError as e:
        return [
            Line("network rails", program, "a rail model", f"cannot advise: {e}", "", ids([prof, pings[-1]]))
        ]
    n = a["recommended_rails"]
    one, best = a["estimates"][0]["total_s"], a["estimates"][n - 1]["total_s"]
    ucx = a["settings"]["Open MPI with UCX"]
    return [
        Line(
            "network rails",
            f"estimated communication time {fmt(one * 1e3)} ms on 1 rail, {fmt(best * 1e3)} ms on {n}",
            f"the fewest rails within {a['tolerance']:.0%} of the best estimate",
            f"use {n} rail{'s' if n > 1 else ''}" + ("; " + "; ".join(a["notes"]) if a["notes"] else ""),
            " ".join(f"{k}={v}" for k, v in ucx.items()) + f" mpirun ... {PROGRAM}",
            f"profile {ids([prof])}, rail model {ids(pings[-1:])}",
        )
    ]
