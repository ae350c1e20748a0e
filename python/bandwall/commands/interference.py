"""`bandwall interference`: the T2K study's resident-daemon experiment on this machine."""

from __future__ import annotations

import shutil

import click

from bandwall.core import decide, store
from bandwall.core.errors import UsageError
from bandwall.core.registry import commands
from bandwall.display import console, emit
from bandwall.interference import experiment as exp
from bandwall.interference import noise as noise_mod
from bandwall.kernels import stream
from bandwall.output import measuring_options, plot_option, refuse_empty
from bandwall.report import interference_plot, sweep_plot
from bandwall.views.interference import csv_rows, render


def target(words: tuple[str, ...], size: str | None, reps: int) -> exp.Kernel:
    """KERNEL (a STREAM kernel; triad when nothing is given) or, after --, a command."""
    if not words:
        return exp.Kernel(name="triad", size=size, reps=reps)
    if len(words) == 1 and words[0] in stream.kernel_names():
        return exp.Kernel(name=words[0], size=size, reps=reps)
    if len(words) == 1 and "/" not in words[0] and shutil.which(words[0]) is None:
        raise UsageError(
            f"unknown kernel {words[0]!r} (known: {', '.join(stream.kernel_names())}); "
            "to measure a program, give it after --"
        )
    if size is not None:
        raise UsageError("--size sizes a STREAM kernel; a command sizes itself")
    return exp.Kernel(command=list(words))


@commands.register("interference")
@click.command("interference")
@click.argument("words", nargs=-1, type=click.UNPROCESSED, metavar="[KERNEL | -- COMMAND...]")
@click.option(
    "--noise",
    "noise_kind",
    default=None,
    help="the noise beside the kernel: memory (a one-thread STREAM), compute (a one-thread FMA loop) or "
    "periodic (wakes every 50 ms to scan memory, as a resident daemon) (default: memory)",
)
@click.option(
    "--noise-cmd",
    "noise_cmd",
    default=None,
    metavar="'CMD ARGS'",
    help="a command of yours as the noise (one quoted string); it must run until stopped",
)
@click.option(
    "--noise-placement",
    type=click.Choice(noise_mod.PLACEMENTS),
    default="pinned",
    show_default=True,
    help="pinned to a surplus CPU, or left to the scheduler as a daemon is",
)
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=None,
    help="rotated rounds of the four cases (default: the decision rule's rounds, 5 unless decision.json says "
    "otherwise; fewer cannot tell a difference beyond noise)",
)
@click.option(
    "--knee",
    type=click.IntRange(min=1),
    default=None,
    help="cores of the knee (default: a stored sweep's knee of this topology, else every CPU but one)",
)
@click.option(
    "--size",
    callback=refuse_empty,
    default=None,
    help="bytes per array of the STREAM kernel (default 4x the LLC)",
)
@click.option(
    "--reps", type=click.IntRange(min=2), default=10, show_default=True, help="STREAM repetitions per run"
)
@plot_option("cases")
@measuring_options
def interference_cmd(
    words, noise_kind, noise_cmd, noise_placement, rounds, knee, size, reps, plot_file, fmt, db, no_store
):
    """Does leaving the surplus cores free pay? The kernel on every core and on the knee's cores, alone and
    beside a noise process (the T2K study's resident daemon), in rotated rounds; a verdict with its figures."""
    noise = noise_mod.check(noise_kind, noise_cmd)
    kernel = target(words, size, reps)
    if not no_store:
        store.check(db)
    err = console(stderr=True)
    rec = exp.experiment(
        kernel,
        noise,
        noise_placement,
        rounds or decide.rule().rounds,
        knee,
        db,
        progress=lambda m: err.print(f"[dim]{m}[/dim]"),
    )
    if not no_store:
        rec["id"] = store.save(rec, db)
    if plot_file:
        sweep_plot.save(interference_plot.figure(rec), plot_file)
    emit(rec, fmt, lambda con: render(con, rec), lambda: csv_rows(rec))
