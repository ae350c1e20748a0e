"""Copy engines (Intel's DSA article): which exist here and why the others do not, the pipelined STREAM kernels
run by bandwall-pipeline, and the choice of strategy. Engines and strategies are the manifest's rows
(bandwall.core.manifest): what an engine takes (CPUs of its own, a device) is read from its row, the
default strategy is the first row, and the one where the core streams the first input itself is the
row that says so.

The strategy `auto` is decided here, from what was measured on this host:
  1. an engine sweep of the same engine that measured every strategy for the kernel at this
     compute-core count: the decision rule (bandwall.core.decide.choose_best) over the rates of each
     interleaved round (a row's engine_rounds_GBps); another strategy replaces the default only when
     faster beyond noise. A sweep whose rows keep no per-round rates cannot tell a difference from
     noise: the default stands, and the reason says so;
  2. otherwise a CPU-only sweep of the kernel: the strategy in which the core streams the first input
     itself (the engine fetching the others) from the knee of that curve on, where the cores alone
     nearly saturate memory and an engine fetching everything only queues up behind them (the DSA
     article's high core counts); the default below the knee;
  3. otherwise the default.
Kernels with one input (copy, scale) have nothing to split: always the default.
"""

from __future__ import annotations

import os
import socket

from bandwall.core import decide, manifest, native, records, topo
from bandwall.core.errors import RunFailed, UsageError

EXECUTABLE = "bandwall-pipeline"
AUTO = "auto"
AUTO_HELP = "chosen from the sweeps stored for this host"


def strategy_choices() -> list[str]:
    """The --strategy words: auto and every strategy of the manifest, the default first."""
    return [AUTO, *manifest.strategy_names()]


def takes_cpus(name: str) -> bool:
    """Whether the engine runs on CPUs of its own (--engine-cpus)."""
    e = manifest.engine(name)
    return bool(e and e["takes_cpus"])


def needs_device(name: str) -> bool:
    """Whether the engine needs hardware beyond the CPUs (a device), not CPUs of its own."""
    e = manifest.engine(name)
    return bool(e and e["hardware"] and not e["takes_cpus"])


def modes() -> list[str]:
    """The --engine-mode words: every mode a user-facing engine serves (the manifest)."""
    return manifest.engine_modes()


def engines() -> list[dict]:
    """Every registered engine, the test-only ones too (the software model of a DSA work queue):
    name, summary, modes, takes_cpus, hardware, hidden, available, reason (the manifest)."""
    return manifest.engines(hidden=True)


def public_engines() -> list[dict]:
    """The engines a user picks (the test-only ones are left out)."""
    return manifest.engines()


def availability() -> dict[str, str]:
    """name -> "available" or "unavailable: <reason>" of the public engines, for topo and records."""
    return {
        e["name"]: "available" if e["available"] else f"unavailable: {e['reason']}" for e in public_engines()
    }


def check_engine(name: str) -> None:
    """UsageError for a name that is not an engine, or one that cannot run here (with why)."""
    known = {e["name"]: e for e in engines()}
    if name not in known:
        raise UsageError(f"unknown engine {name!r} (known: {', '.join(e['name'] for e in public_engines())})")
    if not known[name]["available"]:
        raise UsageError(f"{name}: unavailable: {known[name]['reason']}")


def inputs(kernel: str) -> int:
    """How many arrays the kernel reads (split needs two)."""
    from bandwall.kernels import stream

    k = next(k for k in stream.kernel_table() if k["name"] == kernel)
    arrays = round(k["bytes_per_element"] / 8)
    return arrays - (1 if k["stores"] else 0)


def choose_strategy(kernel: str, threads: int, db=None, engine: str | None = None) -> tuple[str, str]:
    """(strategy, why) for `auto`, from the sweeps stored for this host (see the module doc); engine
    names the pipeline's engine, whose sweeps alone count (None: any engine's)."""
    default = manifest.default_strategy()
    if inputs(kernel) < 2:
        return default, f"{kernel} reads one array: nothing to split"
    from bandwall.core import store

    host = socket.gethostname()
    try:
        with store.Store(db, readonly=True) as s:
            for rec in s.list("engine-sweep", limit=20):
                if rec["provenance"].get("host") != host:
                    continue
                if engine is not None and rec["config"].get("engine") not in (None, engine):
                    continue
                found = sweep_choice(rec, kernel, threads)
                if found is not None:
                    return found
            split = manifest.cpu_streams_strategy()
            for rec in s.list("sweep", limit=50):
                if rec["provenance"].get("host") != host or rec["config"].get("kernel") != kernel:
                    continue
                knee = rec["result"]["knee_cores"]
                pick = split if split and threads >= knee else default
                # an undecided knee stays at every core: the split only where all of them compute
                d = rec["result"].get("knee_decision")
                at = "knee undecided, kept at" if d is not None and not d["decisive"] else "knee at"
                return pick, f"sweep #{rec['id']}: {at} {knee} cores, {threads} compute cores"
    except Exception as e:  # an unreadable store only loses the measured choice
        return default, f"no stored sweep could be read ({e}): {default}"
    return default, f"no stored sweep of {kernel} on this host: {default}"


def sweep_choice(rec: dict, kernel: str, threads: int) -> tuple[str, str] | None:
    """(strategy, why) from an engine-sweep record that measured every strategy of the manifest for
    kernel on threads compute cores (with the same helper cores), or None when it did not. The
    decision rule compares the rates of each interleaved round (a row's engine_rounds_GBps); rows
    without them leave the default."""
    names = manifest.strategy_names()
    groups: dict[int, dict[str, dict]] = {}
    for r in rec["result"]["rows"]:
        if r["kernel"] == kernel and r["cores"] == threads and r.get("engine_GBps") and r.get("strategy"):
            groups.setdefault(r.get("helpers") or 0, {})[r["strategy"]] = r
    helpers, rows = next(
        ((h, g) for h, g in sorted(groups.items()) if all(n in g for n in names)), (None, None)
    )
    if rows is None:
        return None
    where = f"engine sweep #{rec.get('id', '?')} on {threads} cores" + (
        f" + {helpers} helper cores" if helpers else ""
    )
    rates = [rows[n].get("engine_rounds_GBps") or [] for n in names]
    if not all(rates):
        best = ", ".join(f"{n} {rows[n]['engine_GBps']:.1f}" for n in names)
        return names[0], (
            f"{where} measured {best} GB/s without per-round rates, so no difference can be told from "
            f"noise: the default {names[0]} stands"
        )
    choice = decide.choose_best(names, rates, 0)
    return names[choice.chosen], f"{where}: {choice.why}"


def pipeline_args(
    kernel: str,
    engine: str,
    strategy: str,
    threads: int | None = None,
    cpus: str | None = None,
    bind: str | None = None,
    engine_cpus: str | None = None,
    engine_mode: str | None = None,
    queue_depth: int | None = None,
    block: str | None = None,
    stores: str | None = None,
    size: str | None = None,
    reps: int | None = None,
    placement: str | None = None,
    pages: str | None = None,
) -> list[str]:
    """Command-line arguments of bandwall-pipeline; None leaves the executable's default."""
    args = ["--kernel", kernel, "--engine", engine, "--strategy", strategy]
    for flag, value in (
        ("--threads", threads),
        ("--cpus", cpus),
        ("--bind", bind),
        ("--engine-cpus", engine_cpus),
        ("--engine-mode", engine_mode),
        ("--queue-depth", queue_depth),
        ("--block", block),
        ("--stores", stores),
        ("--size", size),
        ("--reps", reps),
        ("--placement", placement),
        ("--pages", pages),
    ):
        if value is not None:
            args += [flag, str(value)]
    return args


def run(kernel: str, engine: str | None = None, strategy: str = AUTO, db=None, **options) -> dict:
    """Runs one pipelined kernel (options as in pipeline_args) and returns its validated record.

    engine None is the manifest's default engine. auto is resolved first (config.strategy says what
    ran, config.strategy_requested and config.strategy_reason how it was chosen). Bad options raise
    UsageError, a failed validation or crash RunFailed: no record comes back, so nothing can be stored.
    """
    engine = engine or manifest.default_engine()
    if strategy not in strategy_choices():
        raise UsageError(f"unknown strategy {strategy!r} (use {', '.join(strategy_choices())})")
    check_engine(engine)
    chosen, reason = strategy, "asked for"
    if strategy == AUTO:
        threads = options.get("threads")
        if threads == "auto":  # chosen by the executable: the strategy is read for the largest team
            threads = None
        if threads is None and options.get("cpus"):
            threads = len(topo.resolve_cpus(options["cpus"]))
        chosen, reason = choose_strategy(kernel, threads or 1, db, engine)
    rec = native.run_record(EXECUTABLE, pipeline_args(kernel, engine, chosen, **options))
    rec = records.finish(rec)
    if not records.passed(rec):
        raise RunFailed(f"pipelined {kernel} did not validate")
    rec["config"]["strategy_requested"] = strategy
    rec["config"]["strategy_reason"] = reason
    rec["config"]["engines_here"] = availability()
    if needs_device(engine):  # its hardware path is untested on the device (docs/guides/engines.md)
        rec["config"]["dsa_hardware_verified"] = False
    return rec


def allowed_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))
