"""Copy engines (Intel's DSA article): which exist here and why the others do not, the pipelined STREAM kernels
run by bandwall-pipeline, and the choice of strategy.

The strategy `auto` is decided here, from what was measured on this host:
  1. an engine sweep that measured both strategies for the kernel at this compute-core count: the
     faster of the two;
  2. otherwise a CPU-only sweep of the kernel: `split` (the core streams src1 itself, the engine
     fetches src2) from the knee of that curve on, where the cores alone nearly saturate memory and
     an engine fetching everything only queues up behind them (the DSA article's high core counts);
     `all` below the knee;
  3. otherwise `all`.
Kernels with one input (copy, scale) have nothing to split: always `all`.
"""

from __future__ import annotations

import os
import socket

from bandwall.core import manifest, native, records, topo
from bandwall.core.errors import RunFailed, UsageError

EXECUTABLE = "bandwall-pipeline"
STRATEGIES = ("auto", "all", "split")


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


def choose_strategy(kernel: str, threads: int, db=None) -> tuple[str, str]:
    """(all or split, why) for `auto`, from the sweeps stored for this host (see the module doc)."""
    if inputs(kernel) < 2:
        return "all", f"{kernel} reads one array: nothing to split"
    from bandwall.core import store

    host = socket.gethostname()
    try:
        with store.Store(db, readonly=True) as s:
            for rec in s.list("engine-sweep", limit=20):
                if rec["provenance"].get("host") != host:
                    continue
                pts = {
                    r["strategy"]: r["engine_GBps"]
                    for r in rec["result"]["rows"]
                    if r["kernel"] == kernel and r["cores"] == threads and r.get("engine_GBps")
                }
                if "all" in pts and "split" in pts:
                    best = max(pts, key=pts.get)
                    return best, (
                        f"engine sweep #{rec['id']} measured all {pts['all']:.1f} and split "
                        f"{pts['split']:.1f} GB/s on {threads} cores"
                    )
            for rec in s.list("sweep", limit=50):
                if rec["provenance"].get("host") != host or rec["config"].get("kernel") != kernel:
                    continue
                knee = rec["result"]["knee_cores"]
                pick = "split" if threads >= knee else "all"
                return pick, f"sweep #{rec['id']}: knee at {knee} cores, {threads} compute cores"
    except Exception as e:  # an unreadable store only loses the measured choice
        return "all", f"no stored sweep could be read ({e}): all"
    return "all", f"no stored sweep of {kernel} on this host: all"


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


def run(kernel: str, engine: str = "helper", strategy: str = "auto", db=None, **options) -> dict:
    """Runs one pipelined kernel (options as in pipeline_args) and returns its validated record.

    auto is resolved first (config.strategy says what ran, config.strategy_requested and
    config.strategy_reason how it was chosen). Bad options raise UsageError, a failed validation or
    crash RunFailed: no record comes back, so nothing can be stored.
    """
    if strategy not in STRATEGIES:
        raise UsageError(f"unknown strategy {strategy!r} (use {', '.join(STRATEGIES)})")
    check_engine(engine)
    chosen, reason = strategy, "asked for"
    if strategy == "auto":
        threads = options.get("threads")
        if threads == "auto":  # chosen by the executable: the strategy is read for the largest team
            threads = None
        if threads is None and options.get("cpus"):
            threads = len(topo.resolve_cpus(options["cpus"]))
        chosen, reason = choose_strategy(kernel, threads or 1, db)
    rec = native.run_record(EXECUTABLE, pipeline_args(kernel, engine, chosen, **options))
    rec = records.finish(rec)
    if not records.passed(rec):
        raise RunFailed(f"pipelined {kernel} did not validate")
    rec["config"]["strategy_requested"] = strategy
    rec["config"]["strategy_reason"] = reason
    rec["config"]["engines_here"] = availability()
    if engine.startswith("dsa"):
        rec["config"]["dsa_hardware_verified"] = False
    return rec


def allowed_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))
