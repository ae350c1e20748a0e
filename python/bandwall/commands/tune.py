"""`bandwall tune KERNEL` or `bandwall tune [--fom ...] -- CMD ARGS`: the best configuration (threads,
binding, placement, page size, instruction-set variant, blocks, engine) found with few runs."""

from __future__ import annotations

import signal

import click

from bandwall.core.registry import commands
from bandwall.display import console, emit
from bandwall.output import kernel_option, measuring_options, radius_option, refuse_empty
from bandwall.tune import tune as tuner
from bandwall.tune.space import parse_space
from bandwall.views.tune import csv_rows, render


@commands.register("tune")
@click.command("tune")
@click.argument("words", nargs=-1, type=click.UNPROCESSED, metavar="KERNEL | -- COMMAND...")
@click.option(
    "--space",
    "space_text",
    callback=refuse_empty,
    default=None,
    help="the knobs to search, such as threads,bind,isa (default: every knob of the target; "
    "the others stay at the model's guess)",
)
@click.option(
    "--budget", type=int, default=None, help="runs allowed (default: a quarter of an exhaustive search's)"
)
@click.option("--time", "seconds", type=float, default=None, help="seconds allowed")
@click.option(
    "--fom",
    callback=refuse_empty,
    default=None,
    help="a command's figure of merit: a regular expression whose group 1 in its output is the number, or "
    "record:FIELD of the JSON record it prints (default: wall time)",
)
@click.option("--lower-is-better", "lower", is_flag=True, help="the --fom number is a time")
@click.option(
    "--timeout", type=click.FloatRange(min=0.1), default=None, help="seconds allowed per run of a command"
)
@click.option(
    "--size", callback=refuse_empty, default=None, help="STREAM and pipeline: bytes per array (512M)"
)
@click.option(
    "--reps",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="STREAM and pipeline repetitions",
)
@click.option(
    "--grid", callback=refuse_empty, default="272x272x272", show_default=True, help="iso3dfd: n1xn2xn3"
)
@click.option(
    "--iters", type=click.IntRange(min=1), default=10, show_default=True, help="iso3dfd: time steps"
)
@radius_option("iso3dfd")
@click.option(
    "--ranks",
    type=click.IntRange(min=1),
    default=None,
    help="iso3dfd: over this many MPI ranks, searching the shape of their grid (--dims)",
)
@kernel_option()
@measuring_options
def tune_cmd(
    words,
    space_text,
    budget,
    seconds,
    fom,
    lower,
    timeout,
    size,
    reps,
    grid,
    iters,
    radius,
    ranks,
    kernel,
    fmt,
    db,
    no_store,
):
    """Find the fastest configuration of KERNEL (a STREAM kernel, iso3dfd or pipeline) or of a command
    in few runs: guided by the stored knee and the block model, raced in rotated rounds until the best
    is apart from the rest beyond the measured spread; resumes from stored trials."""
    tuner.check_bounds(budget, seconds)
    names = parse_space(space_text)
    err = console(stderr=True)

    def progress(config, rate, detail, runs):
        what = f"{rate:.2f}" if rate is not None else f"failed: {detail.get('failure')}"
        err.print(
            f"tune: run {runs}: {' '.join(f'{k}={v}' for k, v in config.items())}: {what}", markup=False
        )

    terminated: list[int] = []

    def on_term(signum, frame):  # as Ctrl-C: the trials stay stored and the best so far is printed
        terminated.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        rec = tuner.tune(
            list(words),
            names,
            budget,
            seconds,
            db,
            no_store,
            progress,
            size=size,
            reps=reps,
            grid=grid,
            iters=iters,
            radius=radius,
            ranks=ranks,
            kernel=kernel,
            fom=fom,
            lower=lower,
            timeout=timeout,
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
    emit(rec, fmt, lambda con: render(con, rec), lambda: csv_rows(rec))
    if rec["result"]["stopped"] == "interrupted":
        how = "terminated by SIGTERM" if terminated else "interrupted"
        click.echo(f"bandwall: {how} after {rec['result']['runs']} runs; the best so far is shown", err=True)
        raise SystemExit(143 if terminated else 130)
