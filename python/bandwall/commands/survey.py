"""`bandwall survey`: every node of an allocation measured alike, and the slow or odd ones named."""

from __future__ import annotations

import os
from pathlib import Path

import click

from bandwall.core import store
from bandwall.core.errors import RunFailed, Unavailable, UsageError
from bandwall.core.registry import commands
from bandwall.display import emit
from bandwall.mpi import flavours as mpi
from bandwall.mpi import ring as links
from bandwall.output import measuring_options
from bandwall.report import survey_plot, sweep_plot
from bandwall.survey import gather, judge, node
from bandwall.views.survey import render, render_node

# The settings every node's task must see as this shell does (the dispatch ceiling).
FORWARDED = ("BANDWALL_MAX_ISA",)


@commands.register("survey")
@click.command("survey")
@click.option("--local", is_flag=True, help="measure this node only and print (or --out-dir) its node record")
@click.option(
    "--judge",
    "judging",
    is_flag=True,
    help="judge the node records in the FILES (or folders of them) given after the options, however gathered",
)
@click.option("--short", is_flag=True, help="short runs: at most about 30 s a node")
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="where node records are written, one <node>.json each (a folder every node sees; inside Slurm "
    "default ./bandwall-survey-<job id>)",
)
@click.option(
    "--against",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="judge against this earlier survey record (its nodes' medians) or node record instead of the "
    "other nodes",
)
@click.option(
    "--margin",
    type=float,
    default=judge.DEFAULT_MARGIN,
    show_default=True,
    help="how far beyond the other nodes' median (as a share) a figure must lie to be flagged: the decision "
    "rule's interval of the node's rounds wholly below it (above, for latency), beyond noise",
)
@click.option(
    "--hostfile",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="outside Slurm: one task on every host of this MPI hostfile, through Open MPI's mpirun (the "
    "hosts must see --out-dir and this Python)",
)
@click.option(
    "--timeout",
    type=float,
    default=None,
    help="seconds the nodes' tasks are waited for (inside Slurm or with --hostfile); a node with no record "
    f"by then is listed as missing and the others are judged [default: {gather.TIMEOUT_TIMES} times a "
    f"node's expected time: {gather.default_timeout(True):g} s with --short, {gather.default_timeout(False):g} s "
    "without; nodes that are one machine take turns, give them more]",
)
@click.option(
    "--fail",
    is_flag=True,
    help="exit 1 when a node is flagged or missing (a health check or prolog step)",
)
@click.option(
    "--plot",
    "plot_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="write the per-node plot: each figure's median and range per node, flagged nodes marked "
    "(PNG, SVG or PDF by extension)",
)
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@measuring_options
def survey_cmd(
    local,
    judging,
    short,
    out_dir,
    against,
    margin,
    hostfile,
    timeout,
    fail,
    plot_file,
    files,
    fmt,
    db,
    no_store,
):
    """Measure every node of a Slurm allocation alike (STREAM triad at the knee and on all cores, the
    FMA peak, a short ISO3DFD, the settings that explain differences, what else keeps its CPUs busy),
    the links between them (a ring of MPI ping-pongs), and name the nodes and links that stand out;
    outside Slurm, this node alone. Nodes that are one machine take turns. A file that cannot be judged
    is skipped and a node that gives no record is missing, each named on stderr and in the record; the
    others are judged."""
    judge.check_margin(margin)
    if local and plot_file:
        raise UsageError("--plot draws the nodes of a survey: it does not go with --local")
    if local and judging:
        raise UsageError("--local measures this node and --judge judges records: give one")
    if files and not judging:
        raise UsageError(f"{files[0]}: files are judged with --judge")
    if judging and not files:
        raise UsageError("--judge needs node record files or folders after the options")
    if hostfile is not None and (local or judging):
        raise UsageError("--hostfile starts a task on every host: it does not go with --local or --judge")
    if timeout is not None and (local or judging):
        raise UsageError("--timeout waits for the nodes' tasks: it does not go with --local or --judge")
    if timeout is not None and not timeout > 0:
        raise UsageError(f"--timeout {timeout!r} must be a number of seconds above 0")
    wait_s = timeout if timeout is not None else gather.default_timeout(short)
    baseline = judge.baseline_of(gather.load(against)) if against is not None else None
    if not no_store:
        store.check(db)
    if local:
        rec = node.measure(short)
        if out_dir is not None:
            gather.write(rec, out_dir)
        if not no_store:
            rec["id"] = store.save(rec, db)
        emit(rec, fmt, lambda con: render_node(con, rec))
        return
    ring, links_note, waited = None, None, None
    if judging:
        got = gather.read(list(files))
    elif hostfile is not None:
        names = gather.hosts(hostfile)
        flavour = mpi.flavours.get("openmpi")
        if not flavour.available():
            raise Unavailable(
                f"--hostfile runs Open MPI's {flavour.mpirun} (Debian: apt-get install {flavour.packages})"
            )
        prefix = flavour.mpirun_args(len(names), len(os.sched_getaffinity(0)))
        prefix += ["--hostfile", str(hostfile), "--map-by", "ppr:1:node"]
        # mpirun gives remote hosts none of this environment: a dispatch ceiling set for identical
        # numerics must reach every node
        prefix += mpi.pass_env("openmpi", {k: os.environ[k] for k in FORWARDED if os.environ.get(k)})
        folder = out_dir or Path("bandwall-survey")
        got = gather.launch(prefix, folder, short, names, wait_s, flavour.mpirun_env(), "mpirun")
        waited = wait_s
        if got.missing:
            links_note = _no_ring(got)
        else:
            ring, links_note = links.hostfile_ring(hostfile, len(names), short)
    elif gather.in_slurm():
        folder = out_dir or Path(f"bandwall-survey-{os.environ['SLURM_JOB_ID']}")
        got = gather.slurm(folder, short, wait_s)
        waited = wait_s
        if got.missing:
            links_note = _no_ring(got)
        else:
            ring, links_note = links.slurm_ring(len(got.records), short)
    else:
        got = gather.Gathered([node.measure(short)])
        if out_dir is not None:
            gather.write(got.records[0], out_dir)
    for s in got.skipped:
        click.echo(f"bandwall: skipped {s['file']}: {s['reason']}", err=True)
    for m in got.missing:
        click.echo(f"bandwall: missing {m['node']}: {m['reason']}", err=True)
    rec = judge.survey_record(
        got.records, margin, baseline, ring, links_note, got.skipped, got.missing, waited
    )
    if not no_store:
        rec["id"] = store.save(rec, db)
    if plot_file:
        sweep_plot.save(survey_plot.figure(rec), plot_file)
    emit(rec, fmt, lambda con: render(con, rec))
    r = rec["result"]
    if fail and (r["flagged"] or r["missing"]):
        parts = []
        if r["missing"]:
            first = r["missing"][0]
            parts.append(
                f"{len(r['missing'])} node(s) missing: {', '.join(m['node'] for m in r['missing'])} "
                f"(first: {first['node']}: {first['reason']})"
            )
        if r["flagged"]:
            first = r["outliers"][0]
            parts.append(
                f"{len(r['flagged'])} node(s) flagged: {', '.join(r['flagged'])} "
                f"(first: {first['node']} {first['metric']}: {first['reason']})"
            )
        raise RunFailed("; ".join(parts))


def _no_ring(got: gather.Gathered) -> str:
    """Why the ring is not run: it would go through the nodes that gave no record (and fail there or
    hang)."""
    names = ", ".join(m["node"] for m in got.missing)
    return f"the ring would pass through the node(s) that gave no record ({names})"
