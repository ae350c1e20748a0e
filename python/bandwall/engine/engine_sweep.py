"""The engine sweep (the table of Intel's DSA article): for each kernel and compute-core count, the CPU-only kernel
against the same kernel pipelined with a copy engine (and, for an engine that runs on CPUs of its own,
each number of helper cores that fits beside the compute cores), the speed-up, and the fewest cores with the engine
that reach the CPU-only best ("with the engine, N cores give what the CPU needs M for").

Compute threads run on the first n CPUs of the sweep's CPUs (--cpus, or --bind's order; every
allowed CPU in compact order by default); helpers on the next h, so they never overlap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bandwall.core import manifest, records, topo
from bandwall.core.errors import UsageError
from bandwall.engine import pipeline as engine
from bandwall.kernels import stream

DEFAULT_KERNELS = ("triad", "scale", "dot")


def plan(
    cores: Sequence[int], helpers: Sequence[int], engine_name: str, allowed: Sequence[int]
) -> list[tuple]:
    """(compute cores, helper cores) pairs to measure; helpers only for an engine that runs on CPUs
    of its own (the manifest's takes_cpus), and only where compute + helpers fit in the allowed CPUs."""
    out = []
    with_helpers = engine.takes_cpus(engine_name)
    for n in cores:
        if not with_helpers:
            out.append((n, 0))
            continue
        for h in helpers:
            if n + h <= len(allowed):
                out.append((n, h))
    return out


def run(
    kernels: Sequence[str],
    cores: Sequence[int],
    helpers: Sequence[int],
    engine_name: str,
    strategies: Sequence[str],
    on_record: Callable[[dict], None] | None = None,
    on_step: Callable[[str], None] | None = None,
    cpus: Sequence[int] | None = None,
    **options,
) -> tuple[list[dict], list[dict]]:
    """Measures every point; returns (table rows, the records made). cpus are the CPUs in the order
    compute threads and then helpers take them (default: the allowed CPUs); options go to both
    kernels (size, reps, stores, placement, pages) and to the engine (engine_mode, queue_depth, block)."""
    engine.check_engine(engine_name)
    allowed = list(cpus) if cpus is not None else engine.allowed_cpus()
    pairs = plan(cores, helpers, engine_name, allowed)
    if not pairs:
        raise UsageError(
            f"no point to measure: compute cores {list(cores)} plus helper cores {list(helpers)} exceed the "
            f"{len(allowed)} CPUs of the sweep ({topo.cpu_list(allowed)})"
        )
    common = {k: v for k, v in options.items() if k in ("size", "reps", "stores", "placement", "pages")}
    extra = {k: v for k, v in options.items() if k in ("engine_mode", "queue_depth", "block")}
    rows, recs = [], []

    def keep(rec: dict) -> dict:
        recs.append(rec)
        if on_record:
            on_record(rec)
        return rec

    for k in kernels:
        cpu_only: dict[int, dict] = {}
        for n in sorted({n for n, _ in pairs} | set(cores)):
            if on_step:
                on_step(f"{k}: CPU only on {n} cores")
            cpu_only[n] = keep(stream.run(k, cpus=topo.cpu_list(allowed[:n]), **common))
        for n, h in pairs:
            ks = strategies if engine.inputs(k) > 1 else [manifest.default_strategy()]
            for strat in ks:
                if on_step:
                    on_step(
                        f"{k}: {n} cores + {engine_name}" + (f" on {h} cores" if h else "") + f", {strat}"
                    )
                eng_opts = dict(cpus=topo.cpu_list(allowed[:n]), **common, **extra)
                if h:
                    eng_opts["engine_cpus"] = topo.cpu_list(allowed[n : n + h])
                rec = keep(engine.run(k, engine_name, strat, **eng_opts))
                base = cpu_only[n]["result"]["best_GBps"]
                got = rec["result"]["best_GBps"]
                rows.append(
                    {
                        "kernel": k,
                        "cores": n,
                        "helpers": h,
                        "strategy": rec["config"]["strategy"],
                        "cpu_GBps": base,
                        "engine_GBps": got,
                        "speedup": got / base if base else None,
                        "engine_wait_share": rec["result"]["engine"]["wait_share"],
                    }
                )
        for n, rec in cpu_only.items():
            if not any(r["kernel"] == k and r["cores"] == n for r in rows):
                rows.append(
                    {
                        "kernel": k,
                        "cores": n,
                        "helpers": None,
                        "strategy": None,
                        "cpu_GBps": rec["result"]["best_GBps"],
                        "engine_GBps": None,
                        "speedup": None,
                        "engine_wait_share": None,
                    }
                )
    rows.sort(key=lambda r: (r["kernel"], r["cores"], r["helpers"] or 0, r["strategy"] or ""))
    return rows, recs


def summary(rows: Sequence[dict]) -> list[dict]:
    """Per kernel: the CPU-only best and the cores it took (M), and the fewest compute cores (with
    their helpers) whose engine run reaches it (N), or None when none does."""
    out = []
    for k in sorted({r["kernel"] for r in rows}):
        mine = [r for r in rows if r["kernel"] == k]
        cpu = {r["cores"]: r["cpu_GBps"] for r in mine}
        m = max(cpu, key=lambda c: (cpu[c], -c))
        best = cpu[m]
        reach = sorted(
            (r for r in mine if r["engine_GBps"] is not None and r["engine_GBps"] >= best),
            key=lambda r: (r["cores"] + (r["helpers"] or 0), r["cores"]),
        )
        one = max(
            (r for r in mine if r["cores"] == 1 and r["speedup"]), key=lambda r: r["speedup"], default=None
        )
        first = reach[0] if reach else None
        out.append(
            {
                "kernel": k,
                "cpu_best_GBps": best,
                "cpu_best_cores": m,
                "engine_cores": first["cores"] if first else None,
                "engine_helpers": first["helpers"] if first else None,
                "engine_GBps": first["engine_GBps"] if first else None,
                "one_core_speedup": one["speedup"] if one else None,
                "statement": _statement(k, m, first),
            }
        )
    return out


def _statement(kernel: str, m: int, first: dict | None) -> str:
    if first is None:
        return f"{kernel}: no engine run reached the CPU-only best ({m} cores)"
    helpers = (
        f" + {first['helpers']} helper core{'s' if first['helpers'] != 1 else ''}" if first["helpers"] else ""
    )
    return f"{kernel}: with the engine, {first['cores']} core{'s' if first['cores'] != 1 else ''}{helpers} give what the CPU needs {m} for"


def sweep_record(
    rows: Sequence[dict], recs: Sequence[dict], config: dict, ids: Sequence[int] | None = None
) -> dict:
    """The engine-sweep record from its rows and point records."""
    last = recs[-1]
    result = {"rows": list(rows), "summary": summary(rows)}
    if ids:
        result["point_record_ids"] = list(ids)
    engine_recs = [r for r in recs if r["config"].get("pipelined")]
    first_engine = engine_recs[0]["config"] if engine_recs else {}
    cfg = dict(config)
    cfg.update(
        {
            "queue_depth": sorted({r["config"]["queue_depth"] for r in engine_recs}),
            "block_bytes": first_engine.get("block_bytes"),
            "engine_mode": first_engine.get("engine_mode"),
            "size_per_array_bytes": last["config"]["size_per_array_bytes"],
            "reps": last["config"]["reps"],
            "engines_here": engine.availability(),
        }
    )
    rec = {
        "schema_version": records.SCHEMA_VERSION,
        "tool": "engine-sweep",
        "config": cfg,
        "result": result,
        "validation": records.of_parts(recs, "points"),
        "provenance": records.provenance_of_parts(last, recs),
    }
    return records.finish(rec)
