"""`bandwall stream`: one STREAM kernel of bandwall-stream's table, shown and stored."""

from __future__ import annotations

import click

from bandwall.core import manifest, store
from bandwall.core.registry import commands
from bandwall.display import emit
from bandwall.engine import pipeline as engine
from bandwall.kernels import stream
from bandwall.output import (
    ManifestChoice,
    TableHelp,
    auto_thread_options,
    counters_option,
    isa_option,
    kernel_option,
    measuring_options,
    pages_option,
    placement_option,
    refuse_empty,
    stores_option,
)
from bandwall.views import counters as counters_view
from bandwall.views.engine import engine_line
from bandwall.views.stream import csv_rows, render


@commands.register("stream")
@click.command("stream")
@kernel_option()
@auto_thread_options
@stores_option()
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
@pages_option()
@isa_option("the kernels")
@click.option(
    "--engine",
    "engine_name",
    cls=TableHelp,
    callback=refuse_empty,
    default=None,
    help_from=lambda: (
        "pipeline the kernel with a copy engine: "
        + ", ".join(e["name"] for e in engine.public_engines())
        + " (default: CPU only; bandwall engine list says which run here)"
    ),
    fallback="pipeline the kernel with a copy engine (bandwall engine list; default: CPU only)",
)
@click.option(
    "--engine-cpus",
    callback=refuse_empty,
    default=None,
    help="CPUs of an engine that runs on CPUs of its own, in the syntax of --cpus (default: the CPUs "
    "that do not compute)",
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
    cls=TableHelp,
    type=ManifestChoice(engine.strategy_choices),
    default=engine.AUTO,
    show_default=True,
    help_from=lambda: f"{manifest.words_help(manifest.strategies())}; {engine.AUTO}: {engine.AUTO_HELP}",
    fallback=f"the pipeline's strategy (bandwall-manifest); {engine.AUTO}: {engine.AUTO_HELP}",
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
