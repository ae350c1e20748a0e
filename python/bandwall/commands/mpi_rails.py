"""`bandwall mpi-rails`: how many network rails a profiled MPI program would use well."""

from __future__ import annotations

import click

from bandwall.core import store
from bandwall.core.errors import UsageError
from bandwall.core.registry import commands
from bandwall.display import emit
from bandwall.mpi import mpi_rails
from bandwall.output import db_option, format_option, refuse_empty
from bandwall.views import mpi as mpi_views


def _latest(db, tool: str, record_id: int | None) -> dict:
    with store.Store(db, readonly=True) as s:
        if record_id is not None:
            return s.get(record_id)
        found = s.list(tool=tool, limit=1)
    if not found:
        raise UsageError(f"no {tool} record in the database: run bandwall {tool} first or give --id")
    return found[0]


@commands.register("mpi-rails")
@click.command("mpi-rails")
@click.option(
    "--id", "record_id", type=click.IntRange(min=1), default=None, help="mpiprof record (default: the latest)"
)
@click.option(
    "--pingpong",
    "pingpong_id",
    type=click.IntRange(min=1),
    default=None,
    help="mpi-pingpong record for the rail model (default: the latest)",
)
@click.option(
    "--latency", type=click.FloatRange(min=0), default=None, help="latency of one rail, microseconds"
)
@click.option(
    "--bandwidth",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="bandwidth of one rail, GB/s",
)
@click.option(
    "--rails",
    "max_rails",
    type=click.IntRange(min=1, max=64),
    default=4,
    show_default=True,
    help="rails available",
)
@click.option(
    "--stripe-min",
    callback=refuse_empty,
    default="16K",
    show_default=True,
    help="smallest message striped across rails",
)
@click.option(
    "--tolerance",
    type=click.FloatRange(min=0),
    default=0.05,
    show_default=True,
    help="fewest rails within this share of the best time",
)
@format_option
@db_option
def mpi_rails_cmd(record_id, pingpong_id, latency, bandwidth, max_rails, stripe_min, tolerance, fmt, db):
    """Estimate the communication time of a stored mpiprof profile with 1..--rails rails and name
    the settings for the rail count worth using."""
    if (latency is None) != (bandwidth is None):
        raise UsageError(
            "give both --latency and --bandwidth, or neither (then an mpi-pingpong record is used)"
        )
    rec = _latest(db, "mpiprof", record_id)
    if latency is not None:
        rail = mpi_rails.Rail(latency * 1e-6, bandwidth * 1e9, "command line")
    else:
        rail = mpi_rails.rail_from_pingpong(_latest(db, "mpi-pingpong", pingpong_id))
    advice = mpi_rails.advise(
        rec, rail, max_rails=max_rails, stripe_min=mpi_rails.parse_size(stripe_min), tolerance=tolerance
    )
    advice["profile_id"] = rec.get("id")
    emit(
        advice,
        fmt,
        lambda con: mpi_views.advice(con, advice),
        lambda: (mpi_views.ADVICE_COLUMNS, mpi_views.advice_rows(advice)),
    )
