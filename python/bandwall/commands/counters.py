"""`bandwall counters`: software and hardware events counted around any command."""

from __future__ import annotations

import sys

import click

from bandwall.core import store
from bandwall.core.registry import commands
from bandwall.core.topo import resolve_threads
from bandwall.counters import events as counters
from bandwall.counters import groups as countergroups
from bandwall.display import emit
from bandwall.output import (
    db_option,
    format_option,
    given,
    no_store_option,
    placing_options,
    refuse_empty,
    refuse_options_as_command,
)
from bandwall.views import counters as counters_view


@commands.register("counters")
@click.command(
    "counters", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
)
@click.option(
    "--group",
    callback=refuse_empty,
    default=None,
    help=f"counter group of PAPI events and metrics ({', '.join(countergroups.group_names())}; "
    f"default {counters.DEFAULT_GROUP}: cycles, instructions, branches, branch and cache misses); "
    "software events are always counted",
)
@placing_options(
    None,
    " (default: the command's threads are not placed); given any of --threads, --cpus or --bind, "
    "libbandwall-pin.so binds the main thread to the first CPU and each thread it creates to the next",
)
@format_option
@db_option
@no_store_option
@click.argument(
    "command", nargs=-1, required=True, type=click.UNPROCESSED, callback=refuse_options_as_command
)
def counters_cmd(group, threads, cpus, bind, fmt, db, no_store, command):
    """Run COMMAND (after --) and count around it: task clock, page faults, context switches and
    CPU migrations always; the group's hardware events where the PMU has them (without --group,
    perf stat's: cycles, instructions, branches, branch misses, cache misses), otherwise each reads
    "unavailable: <reason>". The command's output goes to stderr, the record to stdout;
    bandwall exits with the command's exit code."""
    if not no_store:
        store.check(db)
    place = None
    if any(given(o) for o in ("threads", "cpus", "bind")):
        place = (resolve_threads(threads, cpus, bind), threads)
    rec, code = counters.run(list(command), group, place)
    if not no_store:
        rec["id"] = store.save(rec, db)
    emit(rec, fmt, lambda con: counters_view.render(con, rec), lambda: counters_view.csv_rows([rec]))
    sys.exit(code)
