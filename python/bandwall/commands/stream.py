"""`bandwall stream`: one STREAM kernel of bandwall-stream's table, shown and stored."""

from __future__ import annotations

import click

from bandwall.core import store
from bandwall.core.registry import commands
from bandwall.engine import pipeline as engine
from bandwall.kernels import stream
from bandwall.output import (
    ManifestChoice,
    auto_thread_options,
    counters_option,
    emit,
    isa_option,
    kernel_option,
    measuring_options,
    pages_option,
    placement_option,
    refuse_empty,
)
from bandwall.views import counters as counters_view
from bandwall.views.engine import engine_line
from bandwall.views.stream import csv_rows, render


@commands.register("stream")
@click.command("stream")
@kernel_option()
@auto_thread_options
@click.option(
    "--stores",
    default="nt",
    show_default=True,
    type=click.Choice(stream.STORES),
    help="non-temporal or regular stores",
)
@click.option(
    "--size",
    callback=refuse_empty,
    default=None,
    help="bytes per array with units (512M, 2G); default 4x the LLC of the CPUs",
)
@click.option(
    "--reps",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="repetitions (the first is dropped)",
)
@placement_option()
@pages_option("system")
@isa_option("the kernels")
@click.option(
    "--engine",
    "engine_name",
    callback=refuse_empty,
    default=None,
    help="pipeline the kernel with a copy engine: helper, dsa, memcpy or none (default: CPU only)",
)
@click.option(
    "--engine-cpus",
    callback=refuse_empty,
    default=None,
    help="helper CPUs, in the syntax of --cpus (default: the CPUs that do not compute)",
)
@click.option(
    "--engine-mode",
    type=ManifestChoice(engine.modes),
    default=None,
    help="copy into a cached ring, or touch (loads only)",
)
@click.option(
    "--queue-depth",
    type=click.IntRange(min=1),
    default=None,
    help="blocks in flight per thread (triad 2, else 4)",
)
@click.option(
    "--block", callback=refuse_empty, default=None, help="pipeline block size, a multiple of 4K (1M)"
)
@click.option(
    "--strategy",
    type=click.Choice(engine.STRATEGIES),
    default="auto",
    show_default=True,
    help="all: the engine fetches every input; split: the core streams src1; auto: from the stored curves",
)
@counters_option
@measuring_options
def stream_cmd(
    fmt, db, no_store, engine_name, engine_cpus, engine_mode, queue_depth, block, strategy, **options
):
    """Run one STREAM kernel, validate it and store its record (a failed run stores nothing).

    With --engine the kernel is pipelined (as in Intel's DSA article): the engine brings the next blocks into the
    cache while the cores compute the current ones."""
    if not no_store:
        store.check(db)
    pipelined = dict(engine_cpus=engine_cpus, engine_mode=engine_mode, queue_depth=queue_depth, block=block)
    if engine_name is None:
        given = [f"--{k.replace('_', '-')}" for k, v in pipelined.items() if v is not None]
        if given:
            raise click.UsageError(f"{', '.join(given)} need --engine")
        rec = stream.run(db=db, **options)
    else:
        if options.pop("isa") != "auto":
            raise click.UsageError(
                "--isa chooses the CPU-only kernels; with --engine they are the build's own"
            )
        if options.pop("counters", None) is not None:
            raise click.UsageError("--counters counts the CPU-only kernel; it does not go with --engine")
        kernel = options.pop("kernel")
        rec = engine.run(kernel, engine_name, strategy, db=db, **options, **pipelined)
    if not no_store:
        rec["id"] = store.save(rec, db)

    def show(con) -> None:
        render(con, [rec])
        if rec["config"].get("pipelined"):
            con.print(engine_line(rec))
        if "counters" in rec:
            counters_view.render(con, rec)

    emit(rec, fmt, show, lambda: csv_rows([rec]))
