"""`bandwall pin [OPTIONS] -- COMMAND ...`: runs an unmodified program with its threads bound to CPUs
(PGI's MP_BIND / MP_BLIST / MP_SPIN, CPU lists, topology policies) and, with --report, records
where each thread ran; `--compare` runs PGI's MP_BIND experiment (bound, one CPU, unbound) side by side
and says whether binding pays as the decision rule finds it on their paired rounds (the record's claims)."""

from __future__ import annotations

import click

from bandwall.core import decide, store
from bandwall.core.errors import UsageError
from bandwall.core.fom import Fom
from bandwall.core.registry import commands
from bandwall.core.topo import resolve_threads
from bandwall.display import emit
from bandwall.output import db_option, format_option, no_store_option, placing_options, refuse_empty
from bandwall.pinning import pin
from bandwall.views.pin import echo_output, render, render_compare


@commands.register("pin")
@click.command("pin", context_settings={"allow_interspersed_args": False})
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="-- COMMAND...")
@placing_options(
    None,
    " (default: MP_BLIST/MP_BIND if set, else compact); the main thread takes the first CPU, each "
    "thread it creates the next (wrapping around past the last)",
)
@click.option(
    "--skip",
    callback=refuse_empty,
    default=None,
    help="bit mask of created threads left unpinned, as likwid-pin -s (0x1: the first)",
)
@click.option(
    "--spin",
    callback=refuse_empty,
    default=None,
    help="cycles idle threads spin at barriers before sleeping, -1 (forever) or passive (default: MP_SPIN, else 1000000)",
)
@click.option("--report", is_flag=True, help="record where each thread ran (sampled) and its migrations")
@click.option(
    "--interval", default=10, show_default=True, type=click.IntRange(1, 10000), help="ms between samples"
)
@click.option("--compare", is_flag=True, help="run bound, all on one CPU and unbound, and compare")
@click.option(
    "--fom",
    "fom_regex",
    callback=refuse_empty,
    default=None,
    help="--compare: regular expression whose group 1 in the output is the figure of merit, or record:FIELD "
    "for a number of the JSON record the command prints (record:result.best_GBps); default: wall time",
)
@click.option("--lower-is-better", "lower", is_flag=True, help="the --fom number is a time")
@click.option(
    "--rounds",
    default=None,
    type=click.IntRange(1, 100),
    help="--compare: alternating rounds (default: the decision rule's rounds; fewer can tell no difference)",
)
@click.option("--timeout", default=None, type=click.FloatRange(min=0.1), help="seconds allowed per run")
@format_option
@db_option
@no_store_option
def pin_cmd(
    command,
    threads,
    cpus,
    bind,
    skip,
    spin,
    report,
    interval,
    compare,
    fom_regex,
    lower,
    rounds,
    timeout,
    fmt,
    db,
    no_store,
):
    """Run COMMAND with its threads bound to CPUs: the main thread on the first CPU of the list, each
    thread it creates on the next (wrapping around). PGI's MP_BIND=yes, MP_BLIST=3,2,1,0 and
    MP_SPIN=N|-1 are honoured here and when libbandwall-pin.so is preloaded by hand."""
    if not command:
        raise UsageError("no command given (bandwall pin [OPTIONS] -- COMMAND ...)")
    if not no_store:
        store.check(db)
    if compare:
        if cpus or bind or report:
            raise UsageError("--compare chooses the CPUs itself: leave out --cpus, --bind and --report")
        fom = Fom.parse(fom_regex, lower) if fom_regex else Fom.wall()
        rounds = rounds or decide.rule().rounds
        rec = pin.compare(list(command), fom, rounds, threads or 0, spin, timeout, skip=skip)
        if not no_store:
            store.save(rec, db)
        emit(rec, fmt, lambda con: render_compare(con, rec))
        return
    if fom_regex or lower or rounds is not None:
        raise UsageError("--fom, --lower-is-better and --rounds go with --compare")
    if cpus or bind:  # refused as every command refuses them (more threads than CPUs, a bad list)
        resolve_threads(threads, cpus, bind)
    rec = pin.pin(
        list(command),
        timeout=timeout,
        cpus=cpus,
        bind=bind,
        threads=threads or 0,
        skip=skip,
        spin=spin,
        report=report,
        interval_ms=interval,
    )
    if not no_store:
        store.save(rec, db)
    echo_output(rec, fmt)
    emit(rec, fmt, lambda con: render(con, rec))
