"""`bandwall numa-check [KERNEL | -- COMMAND...]`: the NUMA experiment of Intel's 3DFD article for a built-in kernel
or any command: all nodes as the OS places memory, one node only, one process per node, and
interleaved memory; then a verdict on whether NUMA costs the program speed and what to do.

The plan comes from bandwall.numa.numa_check; each mode is one run of bandwall-launch, which binds the
processes natively and times them. Rounds alternate the modes (a b c d, a b c d, ...) and each
mode's figure of merit is the median over rounds.
"""

from __future__ import annotations

import click

from bandwall.core import manifest, store
from bandwall.core.registry import commands
from bandwall.core.topo import topology
from bandwall.display import emit
from bandwall.numa import numa_check, numa_target
from bandwall.output import TableHelp, given, measuring_options, placing_options, refuse_empty
from bandwall.views import numa_check as view


class TargetCommand(click.Command):
    """Remembers how many words followed "--", to tell `KERNEL` from `-- COMMAND` (click drops the "--")."""

    def parse_args(self, ctx, args):
        if "--" in args:
            ctx.meta["numa_check.after_dashes"] = len(args) - args.index("--") - 1
        return super().parse_args(ctx, args)


@commands.register("numa-check")
@click.command("numa-check", cls=TargetCommand)
@click.argument("target", nargs=-1, type=click.UNPROCESSED, metavar="[KERNEL | -- COMMAND...]")
@click.option(
    "--fom",
    "fom_regex",
    callback=refuse_empty,
    default=None,
    help="regular expression whose group 1 (or whole match) in the output is the figure of merit, or "
    "record:FIELD for a number of the JSON record the command prints (record:result.best_GBps)",
)
@click.option(
    "--lower-is-better", "lower", is_flag=True, help="the --fom number is a time: smaller is faster"
)
@click.option(
    "--rounds", default=3, show_default=True, type=click.IntRange(1, 100), help="alternating rounds; medians"
)
@click.option(
    "--init",
    cls=TableHelp,
    callback=refuse_empty,
    default=None,
    help_from=lambda: (
        "built-ins: who first touches the data (default: the first): "
        + manifest.words_help(manifest.iso3dfd_words("init"))
    ),
    fallback="built-ins: who first touches the data (bandwall-manifest)",
)
@click.option(
    "--size", callback=refuse_empty, default="256M", show_default=True, help="stream: bytes per array"
)
@click.option(
    "--reps", default=5, show_default=True, type=click.IntRange(1, 10000), help="stream: repetitions"
)
@click.option(
    "--grid",
    callback=refuse_empty,
    default="272x272x272",
    show_default=True,
    help="iso3dfd: grid with halo, N1xN2xN3",
)
@click.option(
    "--iters", default=5, show_default=True, type=click.IntRange(1, 100000), help="iso3dfd: time steps"
)
@click.option("--timeout", default=None, type=click.FloatRange(min=0.1), help="seconds allowed per mode")
@placing_options(
    note="; the modes share out these CPUs (default: every allowed CPU): all nodes takes them all, each "
    "node's process those on its node; none leaves a built-in's threads free on its process's CPUs"
)
@click.option("--plan", "plan_only", is_flag=True, help="print the modes and their processes without running")
@measuring_options
@click.pass_context
def numa_check_cmd(ctx, plan_only, fmt, db, no_store, **request):
    """Does NUMA cost this program speed? Runs KERNEL (stream, iso3dfd) or -- COMMAND on all nodes, on
    one node, as one process per node and with interleaved memory, and says what to do.

    A command is scored by --fom (a number in its output) or else by its wall time; each mode's
    processes are summed as throughput of the whole machine. In COMMAND's arguments {cpus}, {ncpus}
    and {rank} become each process's CPU list, CPU count and index (e.g. OMP_NUM_THREADS-style
    thread counts)."""
    threads, cpus, bind = request.pop("threads"), request.pop("cpus"), request.pop("bind")
    argv, fom, builtin_name = numa_target.check(
        after_dashes=ctx.meta.get("numa_check.after_dashes"), free=bind == "none" and not cpus, **request
    )
    if not plan_only and not no_store:
        store.check(db)
    chosen = numa_check.chosen_cpus(threads, cpus, bind, any(given(o) for o in ("threads", "cpus", "bind")))
    topo = topology()
    if plan_only:
        plan = numa_check.plan_commands(topo, argv, chosen)
        emit(
            plan,
            fmt,
            lambda con: view.render_plan(con, plan),
            lambda: (view.PLAN_COLUMNS, view.plan_rows(plan)),
        )
        return
    rec = numa_check.run(argv, fom, request["rounds"], topo, builtin_name, request["timeout"], chosen)
    if not no_store:
        store.save(rec, db)
    emit(rec, fmt, lambda con: view.render(con, rec))
