"""`bandwall sensitivity -- PROGRAM ARGS`: is a program bound by memory bandwidth, latency or cache,
told without hardware counters: a bandwidth bandit and a cache pirate on the CPUs it leaves free."""

from __future__ import annotations

import signal

import click

from bandwall.core import manifest, store
from bandwall.core.registry import commands
from bandwall.display import console, emit
from bandwall.output import measuring_options, refuse_empty, words_option
from bandwall.report import sensitivity_plot, sweep_plot
from bandwall.sensitivity import experiment, plan, program
from bandwall.views.sensitivity import csv_rows, render


def _terminate(signum, frame):
    raise KeyboardInterrupt  # the bandit, the pirate and the program end on the way out


@commands.register("sensitivity")
@click.command("sensitivity")
@click.argument("words", nargs=-1, type=click.UNPROCESSED, metavar="-- PROGRAM [ARGS...]")
@click.option(
    "--cpus",
    callback=refuse_empty,
    default=None,
    metavar="LIST",
    help="the program's CPUs (0-3,8; likwid's S0:0-3); the bandit and the pirate take the others "
    "(default: the first half of the CPUs this process may use)",
)
@click.option(
    "--doses",
    callback=refuse_empty,
    default=None,
    metavar="LIST",
    help="the bandit's doses: shares of each millisecond its threads read, in (0, 1] (default 0.25,0.5,0.75,1)",
)
@words_option(
    "--bandit",
    words=manifest.bandit_patterns,
    what="how the bandit takes bandwidth without cache",
    default=manifest.bandit_pattern_default,
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=None,
    help="runs of the program in a row for one timed run (default: 1, more for a program under 50 ms)",
)
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=None,
    help="rotated rounds of every dose (default: the decision rule's, more when a dose is unsettled)",
)
@click.option(
    "--plot",
    "plot_file",
    callback=refuse_empty,
    type=click.Path(dir_okay=False),
    default=None,
    help="write the slowdown against bandwidth taken and against cache left, the controls in the same axes, "
    "and the copies' throughput (PNG, SVG or PDF by extension)",
)
@click.option(
    "--copies/--no-copies",
    default=True,
    help="after the doses, run the program as 1, 2, ... copies at once and time them (default: on)",
)
@measuring_options
def sensitivity_cmd(words, cpus, doses, bandit, repeat, rounds, plot_file, copies, fmt, db, no_store):
    """How bandwidth-bound is your program? It runs whole, again and again, while a bandwidth bandit
    takes measured bandwidth (and next to no cache) and a cache pirate holds measured cache on the
    CPUs it leaves free; from how it slows: bandwidth-bound, latency-bound, cache-bound or insensitive,
    its own bandwidth, its working set. Controls in the same rounds (a STREAM triad under the bandit,
    a cache reader under the pirate, a placebo) show whether the method works here: where one fails
    the verdict is undetermined, with why. Then copies of it run at once, 1, 2, ... as the CPUs hold:
    how many are worth running. No hardware counters."""
    argv = program.check(words)
    where = plan.make(cpus, doses, bandit)  # no free CPU: refused here, before anything runs
    if not no_store:
        store.check(db)
    err = console(stderr=True)
    old = signal.signal(signal.SIGTERM, _terminate)
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with it ignored
    try:
        rec = experiment.measure(
            argv,
            where,
            rounds,
            repeat,
            more_rounds=rounds is None,
            progress=lambda m: err.print(f"[dim]{m}[/dim]"),
            copies=copies,
        )
    finally:
        signal.signal(signal.SIGTERM, old)
        signal.signal(signal.SIGINT, old_int)
    if not no_store:
        rec["id"] = store.save(rec, db)
    if plot_file:
        sweep_plot.save(sensitivity_plot.figure(rec), plot_file)
    emit(rec, fmt, lambda con: render(con, rec), lambda: csv_rows(rec))
