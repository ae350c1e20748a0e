"""`bandwall numa-check [KERNEL | -- COMMAND...]`: seed 000's NUMA experiment for a built-in kernel
or any command: all nodes as the OS places memory, one node only, one process per node, and
interleaved memory; then a verdict on whether NUMA costs the program speed and what to do.

The plan comes from bandwall.numacheck; each mode is one run of bandwall-launch, which binds the
processes natively and times them. Rounds alternate the modes (a b c d, a b c d, ...) and each
mode's figure of merit is the median over rounds.
"""

from __future__ import annotations

import os
import shutil

import click

from bandwall import iso3dfd, native, numacheck, records, store
from bandwall.commands.topo import topology
from bandwall.errors import UsageError
from bandwall.output import db_option, emit, format_option, no_store_option, refuse_empty, table
from bandwall.registry import commands


def resolve_command(argv: list[str]) -> list[str]:
    """argv with its program made absolute; UsageError when it does not exist."""
    prog = argv[0]
    if "/" in prog:
        if not os.path.isfile(prog) or not os.access(prog, os.X_OK):
            raise UsageError(f"command {prog!r} does not exist or is not executable")
        return [os.path.abspath(prog)] + argv[1:]
    found = shutil.which(prog)
    if not found:
        raise UsageError(f"command {prog!r} not found in PATH")
    return [found] + argv[1:]


def run(
    target: list[str],
    fom: numacheck.Fom,
    rounds: int,
    topo: dict,
    builtin_name: str | None,
    timeout: float | None,
) -> dict:
    """Runs every mode `rounds` times, alternating, and returns the numa-check record.

    A built-in that refuses its parameters (exit 2) makes bandwall-launch exit 2 with its message
    (--usage-errors), which reads as bad input (UsageError); a command's exit 2 is a failed run."""
    modes = numacheck.plan(topo)
    values: dict[str, list[float]] = {m.name: [] for m in modes}
    last: dict[str, list[dict]] = {}
    usage = ["--usage-errors"] if builtin_name else []
    for _ in range(rounds):
        for mode in modes:
            rec = native.run_record(
                "bandwall-launch", usage + mode.launcher_args() + ["--"] + target, timeout=timeout
            )
            procs = rec["result"]["processes"]
            values[mode.name].append(fom.mode_value(procs))
            last[mode.name] = procs
    medians = {name: numacheck.median(v) for name, v in values.items()}
    nodes = len(numacheck.nodes_with_cpus(topo))
    result = {"fom_unit": fom.unit, "fom": fom.description, "nodes": nodes, "modes": {}}
    for mode in modes:
        entry = {
            "title": mode.title,
            "procs": [p.spec() for p in mode.procs],
            "value": medians[mode.name],
            "rounds": values[mode.name],
            "wall_s": [p["wall_s"] for p in last[mode.name]],
        }
        if builtin_name:
            entry["page_maps"] = [
                numacheck.last_record(p["stdout"]).get("placement", {}).get("page_map", {})
                for p in last[mode.name]
            ]
        result["modes"][mode.name] = entry
    result.update(numacheck.verdict(medians, nodes))
    prov = dict(topo["provenance"])
    all_cpus = sorted(c for _, cpus in numacheck.nodes_with_cpus(topo) for c in cpus)
    # What each built-in process worked on (its arrays or grid), as its own record says; a command's is unknown.
    sizes = (
        numacheck.last_record(last[modes[0].name][0]["stdout"]).get("provenance", {}).get("sizes", {})
        if builtin_name
        else {}
    )
    prov.update(
        date=prov.get("date", ""),
        threads=len(all_cpus),
        cpus=_cpu_list(all_cpus),
        binding="numa-check modes",
        placement=" | ".join(f"{m.name}: {' '.join(p.spec() for p in m.procs)}" for m in modes),
        sizes=sizes,
        repetitions=rounds,
    )
    config = {
        "target": builtin_name or target,
        "kind": "builtin" if builtin_name else "command",
        "rounds": rounds,
        "modes": [m.name for m in modes],
    }
    rec = {
        "schema_version": records.SCHEMA_VERSION,
        "tool": "numa-check",
        "config": config,
        "result": result,
        "validation": {"passed": True},
        "provenance": prov,
    }
    return records.finish(rec)


def _cpu_list(cpus: list[int]) -> str:
    return numacheck.Proc(cpus, "default").spec().split("@")[0] if cpus else ""


def render(con, rec: dict) -> None:
    r = rec["result"]
    rows = [[name, m["title"], " ".join(m["procs"]), m["value"]] for name, m in r["modes"].items()]
    con.print(
        table(
            f"numa-check: {r['fom']}",
            ["mode", "what", "processes (CPUs@memory)", f"median {r['fom_unit']}"],
            rows,
        )
    )
    con.print(f"[bold]{r['verdict']}[/bold]")
    for a in r.get("advice", []):
        con.print(f"  - {a}")


def check(
    argv: tuple[str, ...],
    fom_regex: str | None,
    lower: bool,
    rounds: int,
    init: str,
    size: str,
    reps: int,
    grid: str,
    iters: int,
    timeout: float | None,
    after_dashes: int | None = None,
) -> tuple[list[str], numacheck.Fom, str | None]:
    """Validates the request before anything runs; returns the target command, its scoring and the built-in.

    after_dashes: how many of argv's words came after "--" (None when there was no "--"): the
    words before it may only name a kernel, and only when none follow it."""
    if not argv:
        raise UsageError(f"name a kernel ({', '.join(numacheck.BUILTINS)}) or a command after --")
    before = list(argv[: len(argv) - after_dashes]) if after_dashes is not None else list(argv)
    command = list(argv[len(before) :])
    if before and command:
        raise UsageError(
            f"name a kernel or give -- COMMAND, not both (got {' '.join(before)!r} before -- and "
            f"{' '.join(command)!r} after it)"
        )
    if after_dashes is None and len(argv) > 1 and argv[0] in numacheck.BUILTINS:
        raise UsageError(
            f"kernel {argv[0]!r} takes no arguments (got {' '.join(argv[1:])!r}); its options go "
            f"before it, and a command goes after --"
        )
    fom = numacheck.Fom.from_regex(fom_regex, lower) if fom_regex else None
    if not command and len(before) == 1 and before[0] in numacheck.BUILTINS:
        b = numacheck.builtin(before[0], init=init, size=size, reps=reps, grid=parse_grid(grid), iters=iters)
        return [native.executable(b.executable)] + b.args, fom or b.fom, before[0]
    return resolve_command(list(argv)), fom or numacheck.Fom.wall(), None


MAX_DIM = 1 << 20  # bandwall-iso3dfd's largest dimension


def parse_grid(text: str) -> tuple[int, int, int]:
    """N1xN2xN3 for the iso3dfd built-in, each dimension within what bandwall-iso3dfd accepts
    (at least 2*HALF_LENGTH+1: the halo on both sides and one interior point)."""
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise UsageError(f"--grid {text!r} must read N1xN2xN3 (e.g. 272x272x272)")
    least = 2 * iso3dfd.HALF_LENGTH + 1
    for name, p in zip(("N1", "N2", "N3"), parts):
        if not least <= int(p) <= MAX_DIM:
            raise UsageError(
                f"--grid {text!r}: {name} {int(p)} is out of range [{least}, {MAX_DIM}] "
                f"(the halo of {iso3dfd.HALF_LENGTH} on each side and at least one interior point)"
            )
    return int(parts[0]), int(parts[1]), int(parts[2])


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
    help="regular expression whose group 1 (or whole match) in the output is the figure of merit",
)
@click.option(
    "--lower-is-better", "lower", is_flag=True, help="the --fom number is a time: smaller is faster"
)
@click.option(
    "--rounds", default=3, show_default=True, type=click.IntRange(1, 100), help="alternating rounds; medians"
)
@click.option(
    "--init",
    callback=refuse_empty,
    default="first-touch",
    show_default=True,
    help="built-ins: first-touch or serial initialisation",
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
@click.option("--plan", "plan_only", is_flag=True, help="print the modes and their processes without running")
@format_option
@db_option
@no_store_option
@click.pass_context
def numa_check(
    ctx,
    target,
    fom_regex,
    lower,
    rounds,
    init,
    size,
    reps,
    grid,
    iters,
    timeout,
    plan_only,
    fmt,
    db,
    no_store,
):
    """Does NUMA cost this program speed? Runs KERNEL (stream, iso3dfd) or -- COMMAND on all nodes, on
    one node, as one process per node and with interleaved memory, and says what to do.

    A command is scored by --fom (a number in its output) or else by its wall time; each mode's
    processes are summed as throughput of the whole machine. In COMMAND's arguments {cpus}, {ncpus}
    and {rank} become each process's CPU list, CPU count and index (e.g. OMP_NUM_THREADS-style
    thread counts)."""
    argv, fom, builtin_name = check(
        target,
        fom_regex,
        lower,
        rounds,
        init,
        size,
        reps,
        grid,
        iters,
        timeout,
        ctx.meta.get("numa_check.after_dashes"),
    )
    if not plan_only and not no_store:
        store.check(db)
    topo = topology()
    if plan_only:
        plan = [
            {
                "mode": m.name,
                "title": m.title,
                "argv": [native.executable("bandwall-launch"), *m.launcher_args(), "--", *argv],
            }
            for m in numacheck.plan(topo)
        ]
        emit(
            plan,
            fmt,
            lambda con: con.print(
                table(
                    "numa-check plan",
                    ["mode", "what", "command"],
                    [[p["mode"], p["title"], " ".join(p["argv"])] for p in plan],
                )
            ),
            lambda: (["mode", "title", "argv"], [[p["mode"], p["title"], " ".join(p["argv"])] for p in plan]),
        )
        return
    rec = run(argv, fom, rounds, topo, builtin_name, timeout)
    if not no_store:
        store.save(rec, db)
    emit(rec, fmt, lambda con: render(con, rec))
