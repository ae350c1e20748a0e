"""`bandwall engine`: the copy engines here (`list`) and the CPU-only against engine + CPU sweep."""

from __future__ import annotations

import click

from bandwall.core import manifest, store, topo
from bandwall.core.errors import UsageError
from bandwall.core.registry import commands
from bandwall.display import console, emit, table
from bandwall.engine import engine_sweep
from bandwall.engine import pipeline as engine
from bandwall.kernels import sweep
from bandwall.output import (
    FromManifest,
    ManifestChoice,
    TableHelp,
    db_option,
    format_option,
    no_store_option,
    pages_option,
    placing_options,
    refuse_empty,
)
from bandwall.report import engine_plot, sweep_plot
from bandwall.views.engine import SWEEP_COLUMNS, render_sweep, sweep_rows

BOTH = "both"  # --strategy: every strategy of the manifest


@click.group("engine")
def engine_group() -> None:
    """Copy engines (as in Intel's DSA article): DSA where present, helper cores elsewhere."""


@engine_group.command("list")
@format_option
def list_cmd(fmt):
    """The engines, whether each can run here, and why not."""
    rows = engine.public_engines()
    emit(
        rows,
        fmt,
        lambda con: con.print(
            table(
                "copy engines",
                ["engine", "here", "what"],
                [
                    [
                        e["name"],
                        "available" if e["available"] else f"unavailable: {e['reason']}",
                        e["summary"],
                    ]
                    for e in rows
                ],
            )
        ),
        lambda: (
            ["name", "available", "reason", "summary"],
            [[e["name"], e["available"], e["reason"], e["summary"]] for e in rows],
        ),
    )


def _ints(text: str, what: str) -> list[int]:
    try:
        return sweep.parse_cores(text, limit=1 << 16) if text else []
    except UsageError as e:
        raise UsageError(f"{what}: {e}") from e


@engine_group.command("sweep")
@click.option(
    "--kernels", callback=refuse_empty, default=",".join(engine_sweep.DEFAULT_KERNELS), show_default=True
)
@click.option(
    "--cores",
    callback=refuse_empty,
    default=None,
    help="compute core counts: 1,2,4 or 1-8 (default 1..CPUs of --threads, --cpus or --bind)",
)
@placing_options(
    note="; compute threads take the first CPUs of the policy's order (or of --cpus), helpers the next ones"
)
@click.option(
    "--engine",
    "engine_name",
    cls=TableHelp,
    callback=refuse_empty,
    default=FromManifest(manifest.default_engine),
    show_default=True,
    help_from=lambda: "copy engine: " + ", ".join(e["name"] for e in engine.public_engines()),
    fallback="copy engine (bandwall engine list)",
)
@click.option(
    "--helpers",
    callback=refuse_empty,
    default="1",
    show_default=True,
    help="helper core counts (engines that run on CPUs of their own)",
)
@click.option(
    "--strategy",
    type=ManifestChoice(lambda: [BOTH, *manifest.strategy_names()]),
    default=BOTH,
    show_default=True,
    help=f"strategies measured for two-input kernels ({BOTH}: every one)",
)
@click.option("--engine-mode", type=ManifestChoice(engine.modes), default=None)
@click.option("--queue-depth", type=click.IntRange(min=1), default=None)
@click.option("--block", callback=refuse_empty, default=None)
@click.option("--size", callback=refuse_empty, default=None, help="bytes per array (default 4x the LLC)")
@click.option("--reps", type=click.IntRange(min=1), default=20, show_default=True)
@click.option(
    "--heatmap", "heatmap_file", callback=refuse_empty, type=click.Path(dir_okay=False), default=None
)
@pages_option()
@format_option
@db_option
@no_store_option
def sweep_cmd(
    kernels,
    cores,
    threads,
    cpus,
    bind,
    engine_name,
    helpers,
    strategy,
    engine_mode,
    queue_depth,
    block,
    size,
    reps,
    heatmap_file,
    pages,
    fmt,
    db,
    no_store,
):
    """CPU only against engine + CPU over compute cores (and helper cores): the DSA article's table, the
    heat map of speed-ups and the fewest cores with the engine that reach the CPU-only best."""
    from bandwall.kernels import stream

    names = [k.strip() for k in kernels.split(",") if k.strip()]
    for k in names:
        if k not in stream.kernel_names():
            raise UsageError(f"unknown kernel {k!r} (known: {', '.join(stream.kernel_names())})")
    if bind == "none" and not cpus:
        raise UsageError(
            "the engine sweep puts compute and helper threads on CPUs of their own: --bind none would leave "
            "them unplaced (give a policy or --cpus)"
        )
    pool = topo.resolve_threads(threads, cpus, bind)
    counts = sweep.parse_cores(cores, len(pool), f"the sweep's CPUs ({topo.cpu_list(pool)}) allow")
    helper_counts = _ints(helpers, "--helpers")
    keep = store.Series(db, no_store)
    strategies = manifest.strategy_names() if strategy == BOTH else [strategy]
    err = console(stderr=True)
    rows, recs = engine_sweep.run(
        names,
        counts,
        helper_counts,
        engine_name,
        strategies,
        on_record=keep,
        on_step=lambda s: err.print(f"engine sweep: {s}", highlight=False),
        size=size,
        reps=reps,
        pages=pages,
        engine_mode=engine_mode,
        queue_depth=queue_depth,
        block=block,
        cpus=pool,
    )
    rec = engine_sweep.sweep_record(
        rows,
        recs,
        {
            "kernels": names,
            "cores": counts,
            "helpers": helper_counts,
            "engine": engine_name,
            "strategies": strategies,
            "cpus": topo.cpu_list(pool),
            "bind": None if cpus else bind,
        },
        keep.ids,
    )
    if not no_store:
        rec["id"] = store.save(rec, db)
    if heatmap_file:
        sweep_plot.save(engine_plot.figure(rec), heatmap_file)
    emit(
        rec,
        fmt,
        lambda con: render_sweep(con, rec),
        lambda: (SWEEP_COLUMNS, sweep_rows(rec["result"]["rows"])),
    )


commands.register("engine")(engine_group)
